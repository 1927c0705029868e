"""Byte-identity check for the caption stage: dump every output figlink reads from a caption, compare later.

For every caption of the JATS development articles, the prostate gold set and the ROCO validation set
(about 9,500 captions), writes one JSON line: ``analyze_caption`` (split, compound cues, normalization,
figure index, keywords), plus ``normalize_basic``, ``normalize_advanced``, the caption sentence spans and
all spatial references (``find_positions`` with references), which the bench calls or which back
``analyze_caption``.

Usage::

    python benchmarks/caption_identity.py dump OUT.jsonl        # before a change
    python benchmarks/caption_identity.py check OUT.jsonl       # after it: lists the captions that differ
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_captions import gold_items, jats_captions, roco, shared_data  # noqa: E402

from figlink.text.caption_sentences import sentence_spans  # noqa: E402
from figlink.text.captions import analyze_caption  # noqa: E402
from figlink.text.normalize import normalize_advanced, normalize_basic  # noqa: E402
from figlink.text.spatial import find_positions  # noqa: E402


def captions() -> list[str]:
    root = shared_data()
    if root is None:
        raise SystemExit("caption_identity: shared data not found")
    return jats_captions(root) + [c for c, _ in gold_items(root)] + [c for c, _ in roco(root)]


def record(caption: str) -> str:
    out = {"analyze": analyze_caption(caption), "basic": normalize_basic(caption),
           "advanced": normalize_advanced(caption), "sentences": sentence_spans(caption),
           "positions": [asdict(t) for t in find_positions(caption)]}
    return json.dumps(out, sort_keys=True, ensure_ascii=False)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("dump", "check"):
        print(__doc__)
        return 2
    mode, path = argv[0], Path(argv[1])
    caps = captions()
    lines = [record(c) for c in caps]
    if mode == "dump":
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"caption_identity: {len(lines)} captions written to {path}")
        return 0
    old = path.read_text(encoding="utf-8").splitlines()
    if len(old) != len(lines):
        print(f"caption_identity: {len(old)} captions recorded, {len(lines)} now")
        return 1
    bad = [k for k, (a, b) in enumerate(zip(old, lines)) if a != b]
    for k in bad[:20]:
        print(f"--- caption {k}: {caps[k][:300]!r}\n  old: {old[k][:1500]}\n  new: {lines[k][:1500]}")
    print(f"caption_identity: {len(lines) - len(bad)}/{len(lines)} identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
