"""Which files a folder names: listed one folder at a time, in the order of the sorted recursive listing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from figlink.ingest.sources import Source, iter_sources

JATS = Path(__file__).resolve().parents[1] / "samples" / "jats"


def test_folders_are_walked_in_sorted_path_order_with_pdfs_paired(tmp_path):
    art = sorted(JATS.glob("*.xml"))[0]
    root = tmp_path / "in"
    for rel in ("a.xml", "a/z.xml", "a-b.xml", "B/x.nxml", "b.xml", ".hidden/h.xml", "c/.dot.xml",
                "d/paper.pdf", "d/paper.xml", "d/paper-figures.pdf", "d/e/only.pdf", "d/f/Fig-figures.PDF",
                "d/f/fig.xml", "notes.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(art, root / rel)
    os.symlink(root / "a", root / "link")  # a folder behind a link is not entered
    got = list(iter_sources([root]))
    # by path parts: "B" < "a" < "a-b.xml" < "a.xml" ("a" before "a.xml": its files first), hidden files
    # left out but a hidden folder entered, each PDF with its XML (the article PDF takes it; a figures-only
    # PDF takes it when there is no article PDF; names compared ignoring case)
    assert got == [Source(root / ".hidden/h.xml"), Source(root / "B/x.nxml"), Source(root / "a/z.xml"),
                   Source(root / "a-b.xml"), Source(root / "a.xml"), Source(root / "b.xml"),
                   Source(root / "d/e/only.pdf"), Source(root / "d/f/Fig-figures.PDF", root / "d/f/fig.xml"),
                   Source(root / "d/paper-figures.pdf"),
                   Source(root / "d/paper.pdf", root / "d/paper.xml")]
    assert got == list(iter_sources([root / ".hidden", root / "B", root / "a", root / "a-b.xml", root / "a.xml",
                                     root / "b.xml", root / "d"]))
