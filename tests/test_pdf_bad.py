"""Bad PDFs: each gives one clear error (or, where the file can be repaired, a Paper) and nothing else."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from figlink.errors import FiglinkError, InputError, ParseError
from figlink.ingest.pdf import Options, parse_pdf
from figlink.ingest.pdf_doc import Limits, render_scale

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "elife" / "elife-15600.pdf"


def _save(doc: pdfium.PdfDocument) -> bytes:
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def _blank(n_pages: int, size: tuple[float, float] = (612, 792)) -> bytes:
    doc = pdfium.PdfDocument.new()
    for _ in range(n_pages):
        doc.new_page(*size)
    data = _save(doc)
    doc.close()
    return data


def test_encrypted_pdf_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    data = _blank(1)
    enc = (b"/Encrypt << /Filter /Standard /V 1 /R 2 /P -4 /O <" + b"11" * 32 +
           b"> /U <" + b"22" * 32 + b"> >>\r\n")
    path = tmp_path / "locked.pdf"
    path.write_bytes(data.replace(b"trailer\r\n<<", b"trailer\r\n<<" + enc, 1))
    with pytest.raises(InputError, match="encrypted"):
        parse_pdf(path)


def test_zero_page_pdf(tmp_path: Path) -> None:
    path = tmp_path / "empty.pdf"
    path.write_bytes(_blank(0))
    with pytest.raises(InputError, match="no pages"):
        parse_pdf(path)


def test_not_a_pdf_and_empty_file(tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_text("<html>not a pdf</html>")
    (tmp_path / "b.pdf").write_bytes(b"")
    for name in ("a.pdf", "b.pdf"):
        with pytest.raises(InputError):
            parse_pdf(tmp_path / name)


def test_broken_xref_is_repaired(tmp_path: Path) -> None:
    data = bytearray(SAMPLE.read_bytes())
    at = data.rfind(b"startxref")
    data[at + 10:at + 20] = b"1234567\n%%"  # a startxref offset that points nowhere
    path = tmp_path / "badxref.pdf"
    path.write_bytes(bytes(data))
    paper = parse_pdf(path, options=Options(layout=False))
    assert {f.number for f in paper.figures} >= {"1", "2", "3"}


def test_truncated_pdf_gives_a_paper_or_one_clear_error(tmp_path: Path) -> None:
    data = SAMPLE.read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: len(data) // 3])
    try:
        paper = parse_pdf(path, options=Options(layout=False))
    except (InputError, ParseError) as exc:
        assert str(exc).startswith("cut.pdf:")
    else:
        assert paper.source == "pdf"


def test_page_larger_than_pdf_allows_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.pdf"
    path.write_bytes(_blank(1, (20000, 20000)))
    with pytest.raises(InputError, match="points"):
        parse_pdf(path)


def test_10000_point_page_is_read_at_capped_resolution(tmp_path: Path) -> None:
    path = tmp_path / "big.pdf"
    path.write_bytes(_blank(1, (10000, 10000)))
    paper = parse_pdf(path)
    assert paper.figures == []
    assert any("below the requested resolution" in w for w in paper.warnings)
    limits = Limits()
    s = render_scale(10000, 10000, 150, limits)
    assert (10000 * s) ** 2 <= limits.max_render_pixels * 1.001


def test_1000_pages_stream_with_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "proceedings.pdf"
    path.write_bytes(_blank(1000))
    tracemalloc.start()
    paper = parse_pdf(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert paper.figures == []
    assert peak < 30 * 1024 * 1024
    with pytest.raises(InputError, match="page limit"):
        parse_pdf(path, options=Options(limits=Limits(max_pages=500)))


def test_time_limit_per_document() -> None:
    with pytest.raises(InputError, match="limit") as err:
        parse_pdf(SAMPLE, options=Options(limits=Limits(time_limit_s=0.0)))
    assert err.value.stage == "timeout"


def test_errors_are_figlink_errors_in_a_batch(tmp_path: Path) -> None:
    """A batch meets one error per bad item and goes on to the next."""
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.7\n garbage")
    (tmp_path / "zero.pdf").write_bytes(_blank(0))
    results = []
    for p in [tmp_path / "bad.pdf", tmp_path / "zero.pdf", SAMPLE]:
        try:
            results.append(parse_pdf(p, options=Options(layout=False)).paper_id)
        except FiglinkError as exc:
            results.append(type(exc).__name__)
    assert results[0] in ("ParseError", "InputError") and results[1] == "InputError"
    assert results[2] == "elife-15600"


def test_rotated_page_keeps_boxes_and_crops_in_one_frame(tmp_path: Path) -> None:
    with pdfium.PdfDocument(str(SAMPLE)) as src:
        dest = pdfium.PdfDocument.new()
        dest.import_pages(src, [2])
    dest[0].set_rotation(90)
    path = tmp_path / "rotated.pdf"
    dest.save(str(path))
    dest.close()
    paper = parse_pdf(path, image_dir=tmp_path, options=Options(layout=False))
    assert any("Rotate 90" in w for w in paper.warnings)
    assert [f.number for f in paper.figures] == ["1"] and paper.figures[0].bbox
