"""``figlink parse``: folders stand for the papers inside them, and the command starts without typer, rich or
pydantic (typer imports pydantic: most of the start-up of a command that parses an article in milliseconds)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from figlink.cli import app

REPO = Path(__file__).resolve().parents[1]
JATS = REPO / "samples" / "jats"


def _figlink(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "figlink.cli", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_a_folder_is_the_supported_files_inside_it_sorted(tmp_path):
    src = tmp_path / "papers"
    (src / "sub").mkdir(parents=True)
    shutil.copy(JATS / "elife06726.xml", src / "b.xml")
    shutil.copy(JATS / "elife05031.xml", src / "sub" / "a.nxml")
    (src / "notes.txt").write_text("not a paper")
    (src / ".hidden.xml").write_text("<article/>")
    res = _figlink("parse", str(src), "--json")
    assert res.returncode == 0, res.stderr
    papers = [json.loads(line) for line in res.stdout.splitlines()]
    # b.xml before sub/a.nxml: paths in name order, as `figlink ingest` reads a folder
    assert [p["doi"] for p in papers] == ["10.7554/eLife.06726", "10.7554/eLife.05031"]
    assert res.stderr == ""


def test_folder_output_equals_the_files_given_one_by_one(tmp_path):
    files = [JATS / "elife05031.xml", JATS / "journal.pone.0005723.xml"]
    src = tmp_path / "papers"
    src.mkdir()
    for f in files:
        shutil.copy(f, src / f.name)
    by_folder = CliRunner().invoke(app, ["parse", str(src), "--json"])
    by_files = CliRunner().invoke(app, ["parse", *map(str, files), "--json"])
    assert by_folder.exit_code == by_files.exit_code == 0
    assert by_folder.stdout == by_files.stdout and len(by_folder.stdout.splitlines()) == 2


def test_a_bad_file_in_a_folder_is_one_line_and_the_others_still_parse(tmp_path):
    src = tmp_path / "papers"
    src.mkdir()
    shutil.copy(JATS / "elife05031.xml", src / "good.xml")
    (src / "broken.xml").write_text("<article><body><p>unclosed")
    res = _figlink("parse", str(src), "--json")
    assert res.returncode == 1
    (line,) = res.stderr.splitlines()
    assert line.startswith(f"error: {src / 'broken.xml'}: parse: ")
    assert len(res.stdout.splitlines()) == 1


def test_usage_errors_are_one_line_with_exit_code_2(tmp_path):
    for args, words in ((["parse"], "Missing argument"), (["parse", "x.xml", "--no-such-option"], "unrecognized"),
                        (["--verbose", "parse"], "Missing argument")):
        res = _figlink(*args)
        assert res.returncode == 2, (args, res.stderr)
        (line,) = res.stderr.splitlines()
        assert line.startswith("error: ") and words in line, line


def test_help_lists_parse_and_parse_has_its_own_help():
    top = _figlink("--help")
    assert top.returncode == 0 and "parse" in top.stdout and "ingest" in top.stdout
    own = _figlink("parse", "--help")
    assert own.returncode == 0 and "--images" in own.stdout and "folders" in own.stdout


def test_parse_imports_neither_typer_nor_rich_nor_pydantic_nor_numpy():
    script = ("import sys\nfrom figlink.cli import main\n"
              "try:\n    main(['parse', sys.argv[1], '--json'])\nexcept SystemExit as e:\n"
              "    heavy = sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'rich', 'pydantic', 'numpy', 'PIL'})\n"
              "    print(e.code, heavy, file=sys.stderr)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    res = subprocess.run([sys.executable, "-c", script, str(JATS / "elife05031.xml")], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.stderr.strip() == "0 []", res.stderr
    assert json.loads(res.stdout)["doi"] == "10.7554/eLife.05031"


def test_workers_give_the_same_lines_in_input_order_and_keep_one_line_errors(tmp_path):
    src = tmp_path / "papers"
    src.mkdir()
    for f in sorted(JATS.iterdir()):
        if f.suffix in (".xml", ".nxml"):
            shutil.copy(f, src / f.name)
    (src / "c_broken.xml").write_text("<article><body><p>unclosed")
    one = _figlink("parse", str(src), "--json")
    three = _figlink("parse", str(src), "--json", "--workers", "3")
    assert one.returncode == three.returncode == 1
    assert three.stdout == one.stdout
    names = sorted(f.name for f in src.iterdir() if f.name != "c_broken.xml")
    # one line per good file, in the folder's name order (the broken file sits between them)
    assert len(three.stdout.splitlines()) == len(names) == 7
    assert [json.loads(line)["title"] for line in three.stdout.splitlines()] == \
           [json.loads(_figlink("parse", str(src / n), "--json").stdout)["title"] for n in names]
    (line,) = three.stderr.splitlines()
    assert line.startswith(f"error: {src / 'c_broken.xml'}: parse: ")


def test_workers_must_be_a_positive_number_and_are_not_for_images(tmp_path):
    for extra in (["--workers", "0"], ["--workers", "two"], ["--workers", "2", "--images", str(tmp_path / "im")]):
        res = _figlink("parse", str(JATS / "elife05031.xml"), "--json", *extra)
        assert res.returncode == 2, (extra, res.stderr)
        (line,) = res.stderr.splitlines()
        assert line.startswith("error: ") and "workers" in line, line
    assert not (tmp_path / "im").exists()


def test_workers_auto_forks_only_for_enough_work(monkeypatch):
    """``--workers auto`` (the default) forks workers once the inputs hold FORK_BYTES bytes in all (or are
    FORK_INPUTS of them): the sample articles (about 1 MB) parse in this process, with less bytes asked
    they parse in workers, the same lines either way."""
    import io

    from figlink.cli import parse
    from figlink.ingest.sources import iter_sources

    head: list = []
    assert not parse._enough_to_fork(iter_sources([JATS], pairs=False), head) and len(head) == 7
    head = []
    monkeypatch.setattr(parse, "FORK_INPUTS", 3)
    assert parse._enough_to_fork(iter_sources([JATS], pairs=False), head) and len(head) == 3
    one, auto = io.StringIO(), io.StringIO()
    assert parse.run([JATS], as_json=True, out=one, workers=1) == 0
    assert parse.arguments().parse_args(["x"]).workers is None  # the default is auto
    assert parse.arguments().parse_args(["x", "--workers", "auto"]).workers is None
    monkeypatch.setattr(parse, "auto_workers", lambda: 2)  # whatever this machine's cores
    calls: list[int] = []
    real = parse._in_processes
    monkeypatch.setattr(parse, "_in_processes", lambda f, s, n: calls.append(n) or real(f, s, n))
    assert parse.run([JATS], as_json=True, out=auto, workers=None) == 0
    assert calls == [2] and auto.getvalue() == one.getvalue()
    assert len(one.getvalue().splitlines()) == 7
