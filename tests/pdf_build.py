"""Small PDFs built for tests: real text objects in the standard PDF fonts at chosen sizes and places,
and filled rectangles that stand for figures, written with pdfium itself (no other dependency).

Positions are in points from the top-left corner of the page; ``y`` of a text is its baseline.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c


@dataclass
class Page:
    width: float = 612.0
    height: float = 792.0
    items: list[tuple] = field(default_factory=list)

    def text(self, x: float, y: float, text: str, size: float = 9.0, font: str = "Helvetica") -> "Page":
        self.items.append(("text", x, y, text, size, font))
        return self

    def lines(self, x: float, y: float, texts: list[str], size: float = 9.0, pitch: float | None = None,
              font: str = "Helvetica") -> float:
        """A paragraph of ``texts``, one per line, ``pitch`` apart (1.2 × size by default); returns the
        baseline of the line after the last."""
        pitch = pitch or 1.2 * size
        for t in texts:
            self.text(x, y, t, size, font)
            y += pitch
        return y

    def figure(self, x0: float, y0: float, x1: float, y1: float) -> "Page":
        self.items.append(("rect", x0, y0, x1, y1))
        return self


def write_pdf(path: Path, pages: list[Page]) -> Path:
    doc = pdfium.PdfDocument.new()
    for spec in pages:
        page = doc.new_page(spec.width, spec.height)
        for item in spec.items:
            if item[0] == "text":
                _, x, y, text, size, font = item
                obj = pdfium_c.FPDFPageObj_NewTextObj(doc.raw, font.encode("ascii"), ctypes.c_float(size))
                if font == "Symbol":  # set by character code: the font's own encoding ("D" draws a Delta)
                    codes = (ctypes.c_uint * len(text))(*[ord(c) for c in text])
                    pdfium_c.FPDFText_SetCharcodes(obj, codes, len(text))
                else:
                    data = (text + "\0").encode("utf-16-le")
                    buf = ctypes.create_string_buffer(data, len(data))
                    pdfium_c.FPDFText_SetText(obj, ctypes.cast(buf, ctypes.POINTER(pdfium_c.FPDF_WCHAR)))
                pdfium_c.FPDFPageObj_Transform(obj, 1, 0, 0, 1, x, spec.height - y)
            else:
                _, x0, y0, x1, y1 = item
                obj = pdfium_c.FPDFPageObj_CreateNewRect(x0, spec.height - y1, x1 - x0, y1 - y0)
                pdfium_c.FPDFPageObj_SetFillColor(obj, 90, 120, 160, 255)
                pdfium_c.FPDFPath_SetDrawMode(obj, pdfium_c.FPDF_FILLMODE_ALTERNATE, False)
            pdfium_c.FPDFPage_InsertObject(page.raw, obj)
        pdfium_c.FPDFPage_GenerateContent(page.raw)
        page.close()
    doc.save(str(path))
    doc.close()
    return path
