"""The REST API on the sample corpus: answers, records, images by id only, and 4xx on bad input."""

from __future__ import annotations

import io
import shutil

import pytest
from fastapi.testclient import TestClient

from figlink.corpus import Corpus
from figlink.index import build_index
from figlink.server import create_app

from conftest import ENRICHED, readers_running


@pytest.fixture(scope="module")
def client(corpus_dir, searcher):
    return TestClient(create_app(corpus_dir, searcher))


def test_health_and_openapi(client):
    h = client.get("/api/health").json()
    assert h["status"] == "ok" and h["index"]["papers"] == 7 and h["index"]["figures"] >= 40
    schema = client.get("/openapi.json").json()
    assert "/api/search" in schema["paths"] and "/api/papers/{paper_id}/figures/{figure_id}" in schema["paths"]


def test_search_figure_and_panel(client):
    r = client.get("/api/search", params={"q": "holin hole formation", "k": 3})
    assert r.status_code == 200
    top = r.json()["hits"][0]
    assert (top["rank"], top["paper_id"], top["figure_id"], top["panel"]) == (1, "PMC3166277", "F1", None)
    assert top["image_url"] is None and top["figure_url"] == "/api/papers/PMC3166277/figures/F1"
    r = client.get("/api/search", params={"q": "sample recordings from strain IN63", "level": "panel",
                                          "figure_type": "histogram", "open": "true", "year_min": 2000})
    top = r.json()["hits"][0]
    assert (top["figure_id"], top["panel"], top["bbox"]) == ("F2", "a", [0, 0, 200, 150])
    assert top["image_url"] == "/api/papers/PMC3166277/figures/F2/image"


@pytest.mark.parametrize("params,status", [
    ({}, 422), ({"q": ""}, 422), ({"q": "   "}, 400), ({"q": "x" * 10_000}, 422), ({"q": "cell", "k": 0}, 422),
    ({"q": "cell", "k": 10**9}, 422), ({"q": "cell", "k": "ten"}, 422), ({"q": "cell", "level": "page"}, 422),
    ({"q": "cell", "colour": "red"}, 400), ({"q": "cell", "open": "maybe"}, 422),
    ({"q": "cell", "year_min": 2020, "year_max": 2010}, 400), ({"q": "cell", "paper_id": "../x"}, 422),
])
def test_bad_search_requests_are_4xx(client, params, status):
    r = client.get("/api/search", params=params)
    assert r.status_code == status, r.text
    assert isinstance(r.json()["detail"], str) and r.json()["detail"]


def test_figure_and_panel_records(client):
    rec = client.get("/api/papers/PMC3166277/figures/F2").json()
    assert rec["paper"]["license"]["open"] is True and rec["figure"]["label"] == "Figure 2"
    assert {p["label"] for p in rec["panels"]} >= {"a", "b"}
    p = client.get("/api/papers/PMC3166277/figures/F2/panels/B").json()
    assert p["label"] == "b" and p["bbox"] == [200, 0, 400, 150] and p["inline_refs"]
    assert p["image_url"] == "/api/papers/PMC3166277/figures/F2/panels/b/image"


def test_images_and_crops_by_id(client):
    from PIL import Image

    r = client.get("/api/papers/PMC3166277/figures/F2/image")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    r = client.get("/api/papers/PMC3166277/figures/F2/panels/b/image")
    assert r.status_code == 200 and Image.open(io.BytesIO(r.content)).size == (200, 150)
    assert client.get("/api/papers/PMC3166277/figures/F1/image").status_code == 404  # no image


@pytest.mark.parametrize("url", [
    "/api/papers/NOPE/figures/F1", "/api/papers/PMC3166277/figures/F99", "/api/papers/PMC3166277/figures/F2/panels/z",
    "/api/papers/PMC3166277/figures/F2/panels/z/image", "/api/papers/NOPE/figures/F1/image",
    "/api/papers/..%2F..%2Fetc/figures/passwd/image", "/api/papers/PMC3166277/figures/..%2Fcorpus.sqlite/image",
    "/static/..%2F..%2Fcorpus.py", "/static/app.py", "/api/papers/PMC3166277/figures/F2/panels/abcdefgh",
])
def test_unknown_ids_are_404_or_422(client, url):
    r = client.get(url)
    assert r.status_code in (404, 422), (url, r.status_code)
    assert "root:" not in r.text


def test_image_outside_corpus_is_never_served(corpus_dir, tmp_path, searcher):
    """A record whose stored image path points outside images/ is refused."""
    d = tmp_path / "c"
    shutil.copytree(corpus_dir, d)
    with Corpus(d) as c:
        p = c.paper(ENRICHED[0])
        p.figure(ENRICHED[1]).image = "../../../../etc/passwd"
        p.figure("F1").image = "corpus.sqlite"
        c.put_paper(p, "x", "x")
        c.commit()
    cl = TestClient(create_app(d, searcher))
    assert cl.get("/api/papers/PMC3166277/figures/F2/image").status_code == 404
    assert cl.get("/api/papers/PMC3166277/figures/F1/image").status_code == 404
    assert cl.get("/api/papers/PMC3166277/figures/F2/panels/a/image").status_code == 404


def test_page_and_assets(client):
    r = client.get("/")
    assert r.status_code == 200 and "figlink" in r.text and "text/html" in r.headers["content-type"]
    assert client.get("/static/app.js").status_code == 200


def test_no_index_is_503_not_500(corpus_dir, tmp_path, searcher):
    d = tmp_path / "c"
    shutil.copytree(corpus_dir, d)
    shutil.rmtree(d / "index")
    cl = TestClient(create_app(d))
    assert cl.get("/api/health").json()["status"] == "no-index"
    r = cl.get("/api/search", params={"q": "cell"})
    assert r.status_code == 503 and "figlink index" in r.json()["detail"]


def test_concurrent_requests_during_index_update(corpus_dir, tmp_path, searcher):
    d = tmp_path / "c"
    shutil.copytree(corpus_dir, d)
    from figlink.index import Searcher

    cl = TestClient(create_app(d, Searcher(d, searcher._embedder)))
    codes: list[int] = []

    def read() -> None:
        r = cl.get("/api/search", params={"q": "holin hole formation", "level": "panel", "k": 5})
        codes.append(r.status_code if r.json().get("hits") else -1)

    with readers_running(read, 4) as errors:
        with Corpus(d) as c:
            for i in range(2):
                p = c.paper("PMC3166277")
                p.paper_id = f"NEW{i}"
                c.put_paper(p, f"sha{i}", p.paper_id)
                c.commit()
                build_index(d)
    assert not errors, errors[0]
    assert codes and set(codes) == {200}
    assert cl.get("/api/health").json()["index"]["papers"] == 9
