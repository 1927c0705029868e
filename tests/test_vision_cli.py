"""The `panels` sub-command as the lead mounts it: app.command("panels")(panels_command)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from figlink.cli.panels import panels_command

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "figures" / "s41467-018-06211-3_fig4.jpg"


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("panels")(panels_command)

    @app.command("noop")
    def _noop() -> None:  # a second command so typer keeps sub-command names
        pass

    return app


def test_panels_json_on_real_figure():
    caption = json.loads((SAMPLE.parent / "expected.json").read_text())[SAMPLE.name]["caption"]
    res = CliRunner().invoke(_app(), ["panels", str(SAMPLE), "--caption", caption, "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["is_compound"] and [p["label"] for p in out["panels"]] == ["a", "b", "c", "d"]
    assert all(p["subcaption"] for p in out["panels"])
    assert {"label", "bbox", "subcaption", "score"} <= set(out["panels"][0])
    assert out["ocr"] and {"text", "bbox", "role"} <= set(out["ocr"][0])
    assert out["width"] == 685 and out["caption_split"] is not None


def test_panels_bad_image_exits_with_clear_error(tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    res = CliRunner().invoke(_app(), ["panels", str(bad), "--json"])
    assert res.exit_code == 2
    err = json.loads(res.stderr)
    assert err["stage"] == "read" and "bad.png" in err["error"]
