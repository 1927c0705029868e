"""Every failure of every command is one line on stderr, whatever the terminal: long paths, messages with
line breaks, usage errors and bugs alike (a rich console that writes to a pipe wraps at 80 columns)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from figlink.cli import app

REPO = Path(__file__).resolve().parents[1]
JATS = REPO / "samples" / "jats"
LONG = "a-folder-name-long-enough-that-any-message-naming-it-passes-eighty-columns-on-its-own"


def _figlink(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``figlink ARGS`` in a child process, stderr a pipe (not a terminal), COLUMNS unset."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "figlink.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_parse_errors_are_one_line_each_when_stderr_is_a_pipe(tmp_path):
    folder = tmp_path / LONG
    folder.mkdir()
    (folder / "broken.xml").write_text("<article><body><p>unclosed")
    res = _figlink("parse", str(folder / "missing.xml"), str(folder / "broken.xml"), "--json")
    assert res.returncode == 1
    lines = _lines(res.stderr)
    assert len(lines) == 2, res.stderr
    assert lines[0].startswith("error: ") and lines[0].endswith("missing.xml: read: no such file: "
                                                                f"{folder / 'missing.xml'}")
    assert "broken.xml: parse: " in lines[1]


def test_ingest_failure_and_summary_lines_are_one_line_each(tmp_path):
    src = tmp_path / LONG
    src.mkdir()
    (src / "empty.xml").write_bytes(b"")
    (src / "broken.nxml").write_text("<article><body><p>unclosed")
    res = _figlink("ingest", str(src), "--corpus", str(tmp_path / LONG / "corpus"), "--no-index")
    assert res.returncode == 1
    lines = _lines(res.stderr)
    assert len(lines) == 3, res.stderr
    assert [line.split(":", 1)[0] for line in lines[:2]] == ["failed", "failed"]
    assert lines[2].startswith("0 ingested, 0 already done, 2 failed")


@pytest.mark.parametrize("args,words", [
    (["export", "--corpus", "{d}/nope", "--format", "jsonl", "--out", "{d}/x.jsonl"], "no corpus at"),
    (["export", "--corpus", "{d}/nope", "--format", "nosuch", "--out", "{d}/x"], "unknown format"),
    (["search", "cells", "--corpus", "{d}/nope"], "no search index"),
    (["show", "--corpus", "{d}/nope"], "no corpus at"),
    (["panels", "{d}/missing.png"], "image not found"),
    (["panels", "{d}/missing.png", "--json"], '"error": "image not found'),
    (["captions", "split", "--jsonl", "{d}/missing.jsonl"], "cannot read"),
    (["parse"], "Missing argument"),
    (["ingest", "{d}", "--corpus", "{d}/c", "--workers", "zero"], "Invalid value"),
    (["search"], "Missing option"),  # QUERY is optional (or --image); --corpus is not
    (["nosuchcommand"], "No such command"),
])
def test_every_command_fails_in_one_line(tmp_path, args, words):
    d = tmp_path / LONG
    d.mkdir()
    res = _figlink(*[a.format(d=d) for a in args])
    assert res.returncode != 0
    lines = _lines(res.stderr)
    assert len(lines) == 1 and words in lines[0], res.stderr


def test_a_bug_is_one_line_and_verbose_shows_its_traceback(tmp_path, monkeypatch):
    import figlink.cli.corpus as corpus_cli

    def broken(*args, **kwargs):
        raise RuntimeError("something\nwent wrong\nacross lines")

    monkeypatch.setattr("figlink.index.build_index", broken)
    (tmp_path / "c").mkdir()
    res = CliRunner().invoke(app, ["index", "--corpus", str(tmp_path / "c")])
    assert res.exit_code == 1
    (line,) = _lines(res.stderr)
    assert re.fullmatch(r"error: internal: RuntimeError: something went wrong across lines "
                        r"\(at test_cli_errors\.py:\d+\)", line), line
    res = CliRunner().invoke(app, ["--verbose", "index", "--corpus", str(tmp_path / "c")])
    assert "Traceback" in res.stderr and res.stderr.rstrip().splitlines()[-1].startswith("error: internal:")
    assert corpus_cli  # the command module the bug was raised under


def test_a_bug_on_one_input_of_parse_is_one_line_and_the_others_still_parse(tmp_path, monkeypatch):
    import figlink.pipeline as pipeline

    real = pipeline.stage_source

    def flaky(path, *args, **kwargs):
        if Path(path).name == "elife05031.xml":
            raise ValueError("bad\nthing")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(pipeline, "stage_source", flaky)
    res = CliRunner().invoke(app, ["parse", str(JATS / "elife05031.xml"), str(JATS / "elife06726.xml"), "--json"])
    assert res.exit_code == 1
    assert _lines(res.stderr) == [f"error: {JATS / 'elife05031.xml'}: internal: ValueError: bad thing"]
    assert len(_lines(res.stdout)) == 1


def test_library_logs_are_quiet_unless_verbose(tmp_path):
    """The layout model printed four INFO lines per process on stderr when it loaded."""
    script = ("import numpy as np\nfrom figlink.ingest.pdf_models import layout_boxes\n"
              "layout_boxes(np.full((64, 64, 3), 255, np.uint8), 1.0)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("FIGLINK_VERBOSE", None)
    quiet = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert quiet.returncode == 0 and quiet.stderr == ""
    loud = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**env, "FIGLINK_VERBOSE": "1"})
    assert loud.returncode == 0 and "[INFO]" in loud.stderr
