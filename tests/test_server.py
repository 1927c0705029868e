"""The REST API on the sample corpus: answers, records, images by id only, and 4xx on bad input."""

from __future__ import annotations

import io
import shutil

import pytest
from fastapi.testclient import TestClient

from figlink.corpus import Corpus
from figlink.index import build_index
from figlink.server import create_app

from conftest import ENRICHED, readers_running, write_png


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
    ({"q": "cell", "year_min": 2020, "year_max": 2010}, 400), ({"q": "cell", "paper_id": "x" * 2000}, 422),
    ({"q": "cell", "k": 1001}, 422), ({"q": "cell", "offset": -1}, 422), ({"q": "cell", "offset": 990, "k": 11}, 400),
    ({"q": "cell", "is_medical": "true", "medical": "false"}, 400),
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


# ---- paging, counts, facets, the k cap -------------------------------------------------------------------


def test_k_cap_is_the_one_the_readme_states(client):
    """The README's REST section states the cap on k; the server accepts exactly up to it."""
    import re

    from conftest import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    cap = int(re.search(r"k at most ([\d,]+)", readme).group(1).replace(",", ""))
    assert client.get("/api/search", params={"q": "cell", "k": cap}).status_code == 200
    assert client.get("/api/search", params={"q": "cell", "k": cap + 1}).status_code == 422


def test_pages_continue_one_ranking_and_count_it(client):
    q = {"q": "cell recording lysis time", "level": "panel"}
    whole = client.get("/api/search", params={**q, "k": 12}).json()
    first = client.get("/api/search", params={**q, "k": 5}).json()
    second = client.get("/api/search", params={**q, "k": 7, "offset": first["next_offset"]}).json()
    key = [(h["paper_id"], h["figure_id"], h["panel"]) for h in whole["hits"]]
    assert first["next_offset"] == 5 and first["offset"] == 0
    assert [(h["paper_id"], h["figure_id"], h["panel"]) for h in first["hits"] + second["hits"]] == key
    assert [h["rank"] for h in second["hits"]] == list(range(6, 13))
    # 7 small papers: every panel is a candidate of the dense signal, so the count is exact and is the
    # number of panels the index holds
    assert whole["total_exact"] and whole["total"] == client.get("/api/health").json()["index"]["panels"]
    last = client.get("/api/search", params={**q, "k": 10, "offset": whole["total"] - 3}).json()
    assert len(last["hits"]) == 3 and last["next_offset"] is None


def test_facets_and_filtered_count(client):
    f = client.get("/api/facets").json()
    health = client.get("/api/health").json()
    assert f["figures"] == health["index"]["figures"]
    types = {t["label"]: t["figures"] for t in f["figure_type"]}
    assert types.get("histogram", 0) >= 1  # the enriched figure of conftest
    assert 1990 <= f["year"]["min"] <= f["year"]["max"] <= 2030
    assert sum(f["is_medical"].values()) == f["figures"] == sum(f["open"].values())
    # a filter narrows the count to what the facet says
    r = client.get("/api/search", params={"q": "recording", "figure_type": "histogram", "k": 50}).json()
    assert r["total_exact"] and r["total"] == len(r["hits"]) == types["histogram"]
    # medical= is the README's name of the is_medical filter
    a = client.get("/api/search", params={"q": "cell", "medical": "false", "k": 50}).json()
    b = client.get("/api/search", params={"q": "cell", "is_medical": "false", "k": 50}).json()
    assert a["hits"] == b["hits"] and a["total"] == f["is_medical"]["false"]


def test_hits_and_records_carry_the_image_size(client):
    hit = client.get("/api/search", params={"q": "sample recordings from strain IN63", "level": "panel"}).json()["hits"][0]
    assert hit["image_size"] == [400, 150]  # conftest draws a 400 x 150 image
    rec = client.get("/api/papers/PMC3166277/figures/F2").json()
    assert rec["image_size"] == [400, 150]
    assert client.get("/api/papers/PMC3166277/figures/F1").json()["image_size"] is None
    from figlink.server.image_search import available

    assert client.get("/api/health").json()["features"] == {"image_search": available()}


def test_downscaled_copy_on_request(client):
    from PIL import Image

    r = client.get("/api/papers/PMC3166277/figures/F2/image", params={"max_side": 100})
    assert r.status_code == 200 and Image.open(io.BytesIO(r.content)).size == (100, 38)
    r = client.get("/api/papers/PMC3166277/figures/F2/image", params={"max_side": 1000})
    assert r.headers["content-type"] == "image/png" and Image.open(io.BytesIO(r.content)).size == (400, 150)
    assert client.get("/api/papers/PMC3166277/figures/F2/image", params={"max_side": 5}).status_code == 422


# ---- ids outside [A-Za-z0-9._-] --------------------------------------------------------------------------

ODD_PAPER = "10.1000/odd id?#%ü"
ODD_FIGURES = ("fig 1/a..b", "../../images/PMC3166277/F2.png", "x%2Fy", "panels")


@pytest.fixture(scope="module")
def odd_client(corpus_dir, tmp_path_factory, searcher):
    """A copy of the corpus with a paper and figures whose ids hold '/', '?', '#', '%', spaces, '..'."""
    from figlink.model import Figure

    d = tmp_path_factory.mktemp("odd") / "c"
    shutil.copytree(corpus_dir, d)
    with Corpus(d) as c:
        p = c.paper(ENRICHED[0])
        src = p.figure(ENRICHED[1])
        p.paper_id = ODD_PAPER
        p.figures = [Figure.from_dict({**src.to_dict(), "figure_id": fid, "label": f"Figure {i}"})
                     for i, fid in enumerate(ODD_FIGURES, 1)]
        c.put_paper(p, "odd", "odd")
        c.commit()
    return TestClient(create_app(d, searcher))


@pytest.mark.parametrize("fid", ODD_FIGURES)
def test_any_stored_id_opens(odd_client, fid):
    from PIL import Image

    from figlink.server.records import figure_url

    base = figure_url(ODD_PAPER, fid)
    rec = odd_client.get(base)
    assert rec.status_code == 200, rec.text
    assert (rec.json()["paper"]["paper_id"], rec.json()["figure"]["figure_id"]) == (ODD_PAPER, fid)
    assert rec.json()["image_url"] == base + "/image"
    img = odd_client.get(base + "/image")  # the record's image, whatever the id looks like
    assert img.status_code == 200 and Image.open(io.BytesIO(img.content)).size == (400, 150)
    crop = odd_client.get(rec.json()["panels"][1]["image_url"])
    assert crop.status_code == 200 and Image.open(io.BytesIO(crop.content)).size == (200, 150)
    assert odd_client.get(base + "/panels/b").json()["figure_id"] == fid


def test_odd_ids_are_not_paths(odd_client):
    # the same characters unencoded are other routes or other ids, never files
    assert odd_client.get("/api/papers/10.1000/odd id/figures/panels").status_code == 404
    r = odd_client.get("/api/papers/PMC3166277/figures/..%2F..%2Fimages%2FPMC3166277%2FF2.png/image")
    assert r.status_code == 404 and "has no figure" in r.json()["detail"]
    # an id with invalid UTF-8 is just an unknown id
    assert odd_client.get("/api/papers/%FF%FE/figures/F1").status_code == 404


# ---- security headers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["/", "/static/app.js", "/api/search?q=cell", "/api/health", "/api/facets",
                                 "/api/papers/PMC3166277/figures/F2/image", "/api/papers/NOPE/figures/F1",
                                 "/api/search", "/nothing-here", "/openapi.json"])
def test_security_headers_on_every_answer(client, url):
    r = client.get(url)
    csp = r.headers["content-security-policy"]
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp and "default-src 'self'" in csp
    assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"
    assert r.headers["referrer-policy"] == "no-referrer"


def test_page_has_no_inline_script_or_style(client):
    """The page must work under its own CSP: scripts and styles from files only, no event attributes."""
    import re

    html = client.get("/").text
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all('src="/static/' in attrs and not body.strip() for attrs, body in scripts)
    assert "<style" not in html and not re.search(r"\s(on\w+|style)\s*=", html)
    assert not re.search(r"(src|href)=\"(https?:)?//", html)  # no CDN, nothing from another origin
    docs = client.get("/docs").headers["content-security-policy"]
    assert "unsafe-inline" not in docs and "'sha256-" in docs


# ---- images that cannot be decoded whole -----------------------------------------------------------------

def _halves(width: int, left: bytes, right: bytes) -> bytes:
    """One row: the left half in one colour, the right half in another."""
    return left * (width // 2) + right * (width - width // 2)


@pytest.fixture(scope="module")
def big_client(corpus_dir, tmp_path_factory, searcher):
    """A copy of the corpus whose enriched paper has figures that no request may decode whole: 20000 x 10000
    grey (past PIL's bomb limit), 12000 x 6000 RGB, a header claiming 40000 x 40000, and a truncated PNG.
    Each has panel a on its left half and b on its right half."""
    from figlink.model import Box, Figure, Panel

    d = tmp_path_factory.mktemp("big") / "c"
    shutil.copytree(corpus_dir, d)
    with Corpus(d) as c:
        p = c.paper(ENRICHED[0])
        folder = c.image_dir_for(p.paper_id)
        sizes = {"GREY": (20000, 10000), "RGB": (12000, 6000), "HUGE": (40000, 40000), "CUT": (3000, 2000),
                 "JPG": (12000, 6000)}
        grey = _halves(20000, b"\x32", b"\xc8")
        rgb = _halves(12000, b"\xff\x00\x00", b"\x00\x00\xff")
        write_png(folder / "GREY.png", *sizes["GREY"], "L", lambda y: grey)
        write_png(folder / "RGB.png", *sizes["RGB"], "RGB", lambda y: rgb)
        write_png(folder / "HUGE.png", 40000, 40000, "L", lambda y: b"")  # header only: no rows follow
        noise = (bytes(range(256)) * 36)[:9000]
        write_png(folder / "CUT.png", 3000, 2000, "RGB", lambda y: noise)
        from PIL import Image

        Image.frombytes("L", (12000, 1), grey[:12000]).resize((12000, 6000)).save(folder / "JPG.jpg", quality=90)
        cut = (folder / "CUT.png").read_bytes()
        (folder / "CUT.png").write_bytes(cut[: len(cut) // 2])
        src = p.figure(ENRICHED[1])
        for fid, (w, h) in sizes.items():
            ext = "jpg" if fid == "JPG" else "png"
            f = Figure.from_dict({**src.to_dict(), "figure_id": fid, "image": f"images/{p.paper_id}/{fid}.{ext}"})
            f.panels = [Panel("a", Box.pixels((0, 0, w / 2, h))), Panel("b", Box.pixels((w / 2, 0, w, h)))]
            p.figures.append(f)
        c.put_paper(p, "big", "big")
        c.commit()
    from figlink.server.images import ImageStore

    store = ImageStore()
    return TestClient(create_app(d, searcher, images=store)), store


def test_crop_of_a_figure_past_the_bomb_limit(big_client):
    """20000 x 10000 pixels: PIL's decompression-bomb error was an HTTP 500; now a crop from the working image."""
    from PIL import Image

    cl, store = big_client
    base = "/api/papers/PMC3166277/figures/GREY"
    assert cl.get(base).json()["image_size"] == [20000, 10000]
    r = cl.get(base + "/panels/b/image")
    assert r.status_code == 200, r.text
    crop = Image.open(io.BytesIO(r.content))
    assert crop.size == (1000, 1000) and crop.convert("L").getextrema() == (200, 200)  # 20000 / 2048 -> 1/10
    whole = Image.open(io.BytesIO(cl.get(base + "/image").content))
    assert whole.size == (2000, 1000)  # a bounded copy, never the 200-megapixel file
    left = whole.convert("L").crop((0, 0, 990, 1000)).getextrema()
    assert left == (50, 50)


def test_jpeg_is_reduced_while_decoding(big_client):
    """12000 x 6000 JPEG: decoded at half size by the JPEG decoder, then reduced to the working size; the
    panel boxes still land on their halves."""
    from PIL import Image, ImageStat

    cl, store = big_client
    r = cl.get("/api/papers/PMC3166277/figures/JPG/panels/a/image")
    assert r.status_code == 200, r.text
    crop = Image.open(io.BytesIO(r.content)).convert("L")
    assert crop.size == (1000, 1000) and abs(ImageStat.Stat(crop).mean[0] - 50) < 2
    r = cl.get("/api/papers/PMC3166277/figures/JPG/image", params={"max_side": 300})
    assert r.headers["content-type"] == "image/jpeg" and Image.open(io.BytesIO(r.content)).size == (300, 150)


def test_concurrent_crops_share_one_bounded_decode(big_client):
    """Eight concurrent crops of a 12000 x 6000 RGB figure: one decode (288 MB in PIL) instead of eight, and
    the server's memory grows by well under the eight decodes the old code made at once."""
    import threading
    import time

    import psutil
    from PIL import Image

    cl, store = big_client
    proc = psutil.Process()
    base_rss = proc.memory_info().rss
    peak = [base_rss]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.01)

    results: list = []

    def crop(label: str) -> None:
        t = time.perf_counter()
        r = cl.get(f"/api/papers/PMC3166277/figures/RGB/panels/{label}/image")
        results.append((label, r.status_code, r.content, time.perf_counter() - t))

    before = store.decodes
    sampler = threading.Thread(target=sample)
    sampler.start()
    threads = [threading.Thread(target=crop, args=("ab"[i % 2],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    sampler.join()
    growth = (peak[0] - base_rss) / 2**20
    slowest = max(r[3] for r in results)
    print(f"\n8 concurrent crops of a 12000x6000 RGB figure: peak RSS +{growth:.0f} MB, slowest {slowest:.2f} s, "
          f"{store.decodes - before} decode(s)")
    assert [r[1] for r in results] == [200] * 8
    for label, _, content, _ in results:
        im = Image.open(io.BytesIO(content)).convert("RGB")
        assert im.size == (1000, 1000)  # 12000 / 2048 -> reduced 6 times
        assert im.getpixel((500, 500)) == ((255, 0, 0) if label == "a" else (0, 0, 255))
    assert store.decodes - before == 1
    assert growth < 700, growth  # one decode is 288 MB; the old code held eight at once (2.3 GB and more)


@pytest.mark.parametrize("url,words", [
    ("/api/papers/PMC3166277/figures/HUGE/panels/a/image", "too large to decode"),
    ("/api/papers/PMC3166277/figures/HUGE/image", "too large to decode"),
    ("/api/papers/PMC3166277/figures/CUT/panels/b/image", "damaged or truncated image"),
])
def test_unservable_images_are_a_clear_4xx(big_client, url, words):
    """A 40000 x 40000 header and a truncated PNG: a 422 that says why (was a 500)."""
    cl, _ = big_client
    r = cl.get(url)
    assert r.status_code == 422, (url, r.status_code)
    assert words in r.json()["detail"] and "\n" not in r.json()["detail"]
    fid = url.split("/")[5]
    size = {"HUGE": [40000, 40000], "CUT": [3000, 2000]}[fid]
    assert cl.get(f"/api/papers/PMC3166277/figures/{fid}").json()["image_size"] == size
