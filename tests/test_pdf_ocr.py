"""A scanned PDF (a page image, no text layer) is read by OCR and its figure still found."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium

from figlink.ingest.pdf import parse_pdf

PDF = Path(__file__).resolve().parents[1] / "samples" / "elife" / "elife-15600.pdf"


def _scan(src: Path, index: int, out: Path, dpi: float = 150) -> None:
    """A one-page PDF that holds only a picture of page ``index`` of ``src``."""
    with pdfium.PdfDocument(str(src)) as doc:
        page = doc[index]
        w, h = page.get_size()
        pil = page.render(scale=dpi / 72).to_pil().convert("RGB")
    dest = pdfium.PdfDocument.new()
    new = dest.new_page(w, h)
    img = pdfium.PdfImage.new(dest)
    img.set_bitmap(pdfium.PdfBitmap.from_pil(pil))
    img.set_matrix(pdfium.PdfMatrix().scale(w, h))
    new.insert_obj(img)
    new.gen_content()
    dest.save(str(out))
    dest.close()


def test_scanned_page_is_read_by_ocr(tmp_path: Path) -> None:
    scan = tmp_path / "scanned.pdf"
    _scan(PDF, 2, scan)
    paper = parse_pdf(scan, image_dir=tmp_path)
    assert any("OCR" in w for w in paper.warnings)
    assert [f.number for f in paper.figures] == ["1"]
    fig = paper.figures[0]
    assert "tectal neurons" in fig.caption
    assert fig.bbox is not None and (tmp_path / str(fig.image)).exists()
