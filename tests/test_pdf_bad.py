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


def _flate(chunk: bytes, repeat: int, head: bytes = b"") -> bytes:
    import zlib

    z = zlib.compressobj(9)
    return z.compress(head) + b"".join(z.compress(chunk) for _ in range(repeat)) + z.flush()


def _one_page_pdf(path: Path, content: bytes, repeat: int, image_side: int = 0) -> Path:
    """A one-page PDF whose content stream is a caption line followed by ``content`` ``repeat`` times,
    Flate-compressed on the fly (a small file that inflates to as much as asked), and, with ``image_side``,
    a grey image XObject of that many pixels a side drawn above the caption."""
    data = _flate(content, repeat, b"BT /F1 12 Tf 72 420 Td (Figure 1. A bomb.) Tj ET\n"
                  + (b"q 300 0 0 300 72 450 cm /Im1 Do Q\n" if image_side else b""))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> /XObject << /Im1 6 0 R >> >> >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    pixels = _flate(b"\x80" * max(1, image_side), image_side)
    objs.append(b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                b"/BitsPerComponent 8 /Length %d /Filter /FlateDecode >>\nstream\n" % (image_side, image_side, len(pixels))
                + pixels + b"\nendstream")
    pdf, offsets = bytearray(b"%PDF-1.7\n"), []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(pdf)
    pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(bytes(pdf))
    return path


_PARSE_PEAK = """
import json, resource, sys
from figlink.errors import FiglinkError
from figlink.ingest.pdf import Options, parse_pdf
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    out = {"figures": len(parse_pdf(sys.argv[1], options=Options(layout=False)).figures)}
except FiglinkError as e:
    out = {"error": str(e), "stage": e.stage}
out["grown_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps(out))
"""


def test_a_content_stream_that_inflates_past_the_cap_is_refused_before_pdfium_reads_it(tmp_path: Path) -> None:
    """A 300 KB file whose content stream inflates to 256 MiB: pdfium held it all when it loaded the page
    (a 1 GiB one peaked at 2.1 GB). Now every Flate stream is inflated once, counted and dropped first."""
    import json
    import os
    import subprocess
    import sys

    path = _one_page_pdf(tmp_path / "bomb.pdf", b" " * 65536, 4096)
    assert path.stat().st_size < 1_000_000
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    res = subprocess.run([sys.executable, "-c", _PARSE_PEAK, str(path)], capture_output=True, text=True, env=env,
                         timeout=300)
    got = json.loads(res.stdout)
    assert got.get("error") == "bomb.pdf: object 4 inflates past 32 MiB, the limit for a content stream " \
                               "(a decompression bomb?)", got
    assert got["grown_mb"] < 100, got


def test_a_page_that_draws_too_many_objects_is_read_without_its_graphics(tmp_path: Path) -> None:
    """120,000 tiny paths (2 MB inflated, under the stream cap): each was read in Python (a 30 MiB page took
    25 s); past MAX_PAGE_OBJECTS the page keeps its text and skips its graphics, with a warning."""
    path = _one_page_pdf(tmp_path / "dense.pdf", b"10 10 m 20 20 l S\n" * 1000, 120)
    paper = parse_pdf(path, options=Options(layout=False))
    assert [f.label for f in paper.figures] == ["Figure 1"]
    assert "page 1: draws over 100,000 objects; its graphics were not read" in paper.warnings


def test_images_have_their_own_cap_and_the_sample_passes(tmp_path: Path) -> None:
    from figlink.ingest.pdf_doc import check_streams

    check_streams(SAMPLE, Limits())  # the real article: every stream under its cap
    with pytest.raises(InputError, match=r"object \d+ inflates past 0.25 MiB, the limit for a content stream"):
        check_streams(SAMPLE, Limits(max_stream_bytes=256 << 10))
    path = _one_page_pdf(tmp_path / "image.pdf", b"", 0, image_side=2000)  # a 4 MB image
    check_streams(path, Limits(max_stream_bytes=1 << 20))  # an image is not held to the content cap
    with pytest.raises(InputError, match="object 6 inflates past 2 MiB, the limit for an image"):
        check_streams(path, Limits(max_image_stream_bytes=2 << 20))
    paper = parse_pdf(path, image_dir=tmp_path, options=Options(layout=False))
    assert [f.label for f in paper.figures] == ["Figure 1"] and paper.figures[0].image
