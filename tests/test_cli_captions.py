"""`figlink captions split` as a typer sub-app (the main CLI mounts it as "captions")."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from figlink.text.cli_captions import captions_app, process_line

runner = CliRunner()


def mounted() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """figlink"""

    app.add_typer(captions_app, name="captions")
    return app


def test_split_text_as_json() -> None:
    result = runner.invoke(mounted(), ["captions", "split", "Figure 2. CT scans. (A) Axial. (B) Coronal.", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["is_compound"] is True and data["expected_panels"] == 2
    assert data["figure_index"]["key"] == "2"
    assert data["normalized"]["basic"] == "ct scans. (a) axial. (b) coronal."
    assert [s["labels"] for s in data["caption_split"]["subcaptions"]] == [["a"], ["b"]]
    assert data["is_medical"] is True


def test_split_text_human_readable() -> None:
    result = runner.invoke(mounted(), ["captions", "split", "Cells. (a) One. (b) Two."])
    assert result.exit_code == 0 and "[a] One." in result.output


def test_split_jsonl_keeps_going_after_bad_lines(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join([
        json.dumps({"id": "ok1", "caption": "(A) Foo. (B) Bar."}),
        "not json",
        json.dumps({"id": 2}),
        json.dumps({"id": 3, "caption": 5}),
        json.dumps([1, 2]),
        "",
        json.dumps({"id": "big", "caption": "x" * 100_001}),
        json.dumps({"id": "ok2", "caption": "Plain caption."}),
    ]) + "\n", encoding="utf-8")
    result = runner.invoke(mounted(), ["captions", "split", "--jsonl", str(src)])
    assert result.exit_code == 0
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [r.get("id") for r in rows] == ["ok1", None, 2, 3, None, "big", "ok2"]
    assert [("error" in r) for r in rows] == [False, True, True, True, True, True, False]
    assert rows[1]["error"]["stage"] == "read" and rows[1]["line"] == 2
    assert "limit" in rows[5]["error"]["message"]
    assert rows[6]["caption_split"]["shared_text"] == "Plain caption."


def test_jsonl_from_stdin() -> None:
    result = runner.invoke(mounted(), ["captions", "split", "--jsonl", "-"],
                           input=json.dumps({"id": 1, "caption": "(a) x (b) y"}) + "\n")
    assert result.exit_code == 0 and json.loads(result.output)["labels"] == ["a", "b"]


def test_missing_input_and_file() -> None:
    assert runner.invoke(mounted(), ["captions", "split"]).exit_code == 2
    assert runner.invoke(mounted(), ["captions", "split", "--jsonl", "/nonexistent/x.jsonl"]).exit_code == 2


def test_process_line_reports_unexpected_errors(monkeypatch) -> None:
    import figlink.text.cli_captions as cli

    def boom(caption):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(cli, "analyze_caption", boom)
    row = process_line(json.dumps({"id": "x", "caption": "c"}), 1)
    assert row["error"] == {"stage": "captions", "message": "RuntimeError: kaboom"}
