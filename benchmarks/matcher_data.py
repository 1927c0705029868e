"""Evaluation pools for the matcher benchmark, as figure-pairs files.

- OpenStax (``figures/openstax/pairs.jsonl``): the four books trained on and the held-back check book.
- eLife PDFs (``pdf/elife``), out of domain: each article PDF and figures PDF is parsed with its JATS
  (``figlink.ingest.parse(pdf, xml=…, image_dir=…)``, what ``figlink parse X.pdf --xml X.xml --images DIR``
  runs), and every figure cut from a PDF with a JATS caption becomes a pair whose mentions are the JATS
  citing sentences. A figure found in both PDFs keeps the first crop. Written once to a scratch folder.
"""

from __future__ import annotations

import json
from pathlib import Path

from figlink.errors import FiglinkError
from figlink.eval.splits import doc_key, split_of
from figlink.ingest import parse


def elife_pdf_pairs(data: Path, scratch: Path) -> Path:
    """``scratch/elife_pairs.jsonl`` (made when absent); the figure images lie beside it."""
    out = scratch / "elife_pairs.jsonl"
    if out.is_file():
        return out
    scratch.mkdir(parents=True, exist_ok=True)
    lines, seen = [], set()
    for folder in sorted((data / "pdf" / "elife").iterdir()):
        xmls = sorted(folder.glob("*.xml"))
        if not xmls:
            continue
        for pdf in sorted(folder.glob("*.pdf"), key=lambda p: ("figures" in p.name, p.name)):
            rel = f"images/{folder.name}/{pdf.stem}"  # one folder per PDF: crops are named by figure id
            try:
                paper = parse(pdf, xml=xmls[0], image_dir=scratch / rel)
            except FiglinkError as e:
                print(f"  skipped {pdf.name}: {e}")
                continue
            for fig in paper.figures:
                key = f"{folder.name}/{fig.figure_id}"
                if not fig.image or not fig.caption.strip() or key in seen:
                    continue
                seen.add(key)
                lines.append(json.dumps({"id": key, "image": f"{rel}/{fig.image}", "caption": fig.caption,
                                         "mentions": [r.text for r in fig.inline_refs], "license": "CC-BY-4.0",
                                         "source": f"eLife {paper.doi}"}, ensure_ascii=False))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def elife_part(pair_id: str) -> str:
    """tune / check by article (md5 of the article's document key)."""
    return split_of(doc_key(pair_id.split("/", 1)[0]))
