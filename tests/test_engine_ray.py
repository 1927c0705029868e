"""The Ray engine builds the corpus the local engine builds: same papers, figures, inline references,
error records and resumability, with one writer (the driver).

One local Ray (2 CPUs) is started for the whole module through the engine's own ``ray_session``; the
ingests inside find it initialized and reuse it. Without ``ray`` installed, only the tests of the
missing-Ray message run.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import corpus_content as _content
from figlink.cli import app
from figlink.corpus import Corpus
from figlink.engine.local import ingest as ingest_local
from figlink.pipeline import PipelineOptions

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
NO_VISION = PipelineOptions(vision=False)


@pytest.fixture(scope="module")
def ray_up():
    """A local Ray with 2 CPUs for the module, started and shut down by the engine's own session code."""
    ray = pytest.importorskip("ray")
    from figlink.engine.ray import ray_session

    assert not ray.is_initialized()
    with ray_session(workers=2, address="local") as r:
        yield r
    assert not ray.is_initialized()  # the session shut down the Ray it started


def _assert_same(got, want, where: str = "") -> None:
    """Equal, with floats equal to 1e-6 relative."""
    if isinstance(want, float) and isinstance(got, float):
        assert got == pytest.approx(want, rel=1e-6, abs=1e-9), where
    elif isinstance(want, dict) and isinstance(got, dict):
        assert got.keys() == want.keys(), where
        for k in want:
            _assert_same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list) and isinstance(got, list):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(g, w, f"{where}[{i}]")
    else:
        assert got == want, where


def test_local_ray_is_loopback_only_with_the_cpus_asked_for(ray_up):
    assert ray_up.cluster_resources()["CPU"] == 2
    assert ray_up.util.get_node_ip_address() == "127.0.0.1"
    assert ray_up.get_runtime_context().gcs_address.startswith("127.0.0.1:")
    # the settings used to start it were put back
    assert os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") is None
    assert ray_up._private.ray_constants.ENABLE_RAY_CLUSTER is (sys.platform not in ("darwin", "win32"))


def test_ray_builds_the_same_corpus_as_local(ray_up, tmp_path):
    from figlink.engine.ray import ingest as ingest_ray

    sources = [SAMPLES / "jats", SAMPLES / "elife"]  # 7 JATS articles and a PDF merged with its XML
    local = ingest_local(sources, tmp_path / "local", workers=1, options=NO_VISION, progress=False)
    ray = ingest_ray(sources, tmp_path / "ray", options=NO_VISION, progress=False)
    assert (local.seen, local.ok, local.failed, local.skipped) == (8, 8, 0, 0)
    assert (ray.seen, ray.ok, ray.failed, ray.skipped) == (8, 8, 0, 0)

    a, b = _content(tmp_path / "local"), _content(tmp_path / "ray")
    assert [p["paper_id"] for p in b["papers"]] == [p["paper_id"] for p in a["papers"]]
    for pa, pb in zip(a["papers"], b["papers"]):
        assert pb == pa, pa["paper_id"]
    assert b["paper_cols"] == a["paper_cols"]  # recorded under the paths as given, not the workers' paths
    assert b["figures"] == a["figures"] and b["inputs"] == a["inputs"] and b["errors"] == a["errors"] == []
    assert b["images"].keys() == a["images"].keys() and len(b["images"]) > 0  # the PDF's figure crops
    assert b["images"] == a["images"]
    n_refs = sum(len(f["inline_refs"]) for p in b["papers"] for f in p["figures"])
    assert len(b["papers"]) == 8 and n_refs > 100


def test_bad_inputs_are_recorded_the_batch_goes_on_and_a_rerun_skips_done_inputs(ray_up, tmp_path, monkeypatch):
    from figlink.engine import ray as ray_engine

    src = tmp_path / "src"
    shutil.copytree(SAMPLES / "jats", src)
    data = (SAMPLES / "jats" / "elife05031.xml").read_bytes()
    (src / "truncated.xml").write_bytes(data[: len(data) // 2])
    (src / "empty.nxml").write_bytes(b"")
    (src / "fake.tar.gz").write_bytes(b"\x1f\x8b not really gzip")
    missing = tmp_path / "missing.xml"
    corpus_dir = tmp_path / "corpus"

    report = ray_engine.ingest([src, missing], corpus_dir, options=NO_VISION, progress=False)
    assert (report.seen, report.ok, report.failed, report.skipped) == (11, 7, 4, 0)
    failures = {Path(p).name: (stage, reason) for p, stage, reason in report.failures}
    assert failures["missing.xml"] == ("read", "no such file")
    assert failures["empty.nxml"] == ("read", "empty file")
    assert failures["truncated.xml"][0] == "parse" and "malformed XML" in failures["truncated.xml"][1]
    assert set(failures) == {"missing.xml", "empty.nxml", "truncated.xml", "fake.tar.gz"}
    with Corpus(corpus_dir, readonly=True) as c:
        assert c.stats().papers == 7 and c.stats().inputs_failed == 3  # the missing file has no hash
        assert {(Path(e["path"]).name, e["stage"], e["reason"]) for e in c.errors()} == {
            (name, stage, reason) for name, (stage, reason) in failures.items()}
    assert len((corpus_dir / "errors.jsonl").read_text().splitlines()) == 4

    again = ray_engine.ingest([src], corpus_dir, options=NO_VISION, progress=False)
    assert (again.ok, again.skipped, again.failed) == (0, 7, 3)  # failed inputs are tried again

    # nothing left to do: Ray is not even asked for
    def no_ray(*args, **kwargs):
        raise AssertionError("a run with nothing to do started Ray")

    monkeypatch.setattr(ray_engine, "ray_session", no_ray)
    third = ray_engine.ingest([src / "elife05031.xml", src / "elife06726.xml"], corpus_dir, progress=False)
    assert (third.ok, third.skipped, third.failed) == (0, 2, 0)


def test_in_flight_tasks_are_bounded(ray_up, tmp_path, monkeypatch):
    from figlink.engine.ray import ingest as ingest_ray

    sizes: list[int] = []
    real_wait = ray_up.wait

    def wait(refs, *args, **kwargs):
        sizes.append(len(refs))
        return real_wait(refs, *args, **kwargs)

    monkeypatch.setattr(ray_up, "wait", wait)
    report = ingest_ray([SAMPLES / "jats"], tmp_path / "c", options=NO_VISION, progress=False, max_in_flight=3)
    assert report.ok == 7
    assert len(sizes) == 7 and max(sizes) == 3


def test_cli_engine_ray_reuses_the_running_ray(ray_up, tmp_path):
    corpus = tmp_path / "corpus"
    res = CliRunner().invoke(app, ["ingest", str(SAMPLES / "jats"), "--corpus", str(corpus), "--engine", "ray",
                                   "--workers", "2", "--no-vision", "--no-index"])
    assert res.exit_code == 0, res.output
    assert "7 ingested, 0 already done, 0 failed" in res.output
    assert ray_up.is_initialized()  # not shut down: this process had started it
    with Corpus(corpus, readonly=True) as c:
        assert c.stats().papers == 7


def test_vision_in_ray_workers_gives_the_local_result(ray_up, tmp_path, elife_corpus):
    """The eLife PDF + XML with the vision stage on (panels, labels, OCR, type), against the local ingest
    of the same article (conftest's elife_corpus)."""
    from figlink.engine.ray import ingest as ingest_ray

    corpus = tmp_path / "corpus"
    report = ingest_ray([SAMPLES / "elife"], corpus, progress=False)
    assert (report.seen, report.ok, report.failed) == (1, 1, 0)
    with Corpus(corpus, readonly=True) as c:
        (paper,) = list(c.papers())
    fig1 = paper.figure("fig1")
    assert (corpus / fig1.image).is_file() and fig1.page == 3
    assert [p.label for p in fig1.panels] == ["a", "b", "c", "d"] and all(fig1.panel_subcaption(p) for p in fig1.panels)
    assert fig1.figure_type is not None and fig1.ocr

    local_dir, _ = elife_corpus
    a, b = _content(local_dir), _content(corpus)
    # model scores may differ in the last bits where torch runs with another number of threads
    _assert_same(b["papers"], a["papers"])
    assert b["figures"] == a["figures"] and b["inputs"] == a["inputs"] and b["images"] == a["images"]


def test_a_task_ray_could_not_finish_is_an_internal_error_record(ray_up):
    from figlink.engine.common import Task
    from figlink.engine.ray import _failure

    task = Task("x.xml", None, "0" * 64, "staging/x", NO_VISION)
    crashed = _failure(ray_up, task, ray_up.exceptions.WorkerCrashedError())
    assert crashed.task is task and crashed.paper is None and crashed.stage == "internal"
    assert crashed.reason.startswith("WorkerCrashedError: ") and "\n" not in crashed.reason


def test_an_address_where_nothing_listens_fails_at_once(ray_up):
    from figlink.engine.ray import _check_reachable

    with pytest.raises(ConnectionError, match="nothing answers at 127.0.0.1:1"):
        _check_reachable(ray_up, "127.0.0.1:1")
    _check_reachable(ray_up, ray_up.get_runtime_context().gcs_address)  # the running cluster answers


def test_engine_ray_without_ray_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray → ImportError
    corpus = tmp_path / "corpus"
    res = CliRunner().invoke(app, ["ingest", str(SAMPLES / "jats"), "--corpus", str(corpus), "--engine", "ray"])
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "needs Ray" in lines[0] and "figlink[ray]" in lines[0]
    assert not corpus.exists()  # nothing was done


def test_unknown_engine_is_refused(tmp_path):
    res = CliRunner().invoke(app, ["ingest", str(SAMPLES / "jats"), "--corpus", str(tmp_path / "c"),
                                   "--engine", "spark"])
    assert res.exit_code == 2 and "choose local or ray" in res.output
