"""Identity check for refactors: the Paper JSON of every sample and dev paper, before and after a change.

Parses (and runs the caption stage on) every JATS sample in ``samples/``, the dev JATS articles
(PLOS, eLife, PMC), the eLife PDFs (alone and merged with their XML) and, with ``--europepmc DIR``, the
unpacked Europe PMC articles; writes one line per input: ``{"input", "paper"}`` or ``{"input", "error"}``.

Usage::

    python benchmarks/paper_identity.py dump OUT.jsonl [--europepmc DIR] [--no-pdf]
    python benchmarks/paper_identity.py check OUT.jsonl [--europepmc DIR] [--no-pdf] [--ignore KEY ...]

``check`` lists the inputs whose JSON differs. ``--ignore KEY`` drops that key from every object, at any
depth, on both sides first: a change that only adds fields is checked with the added keys ignored
(``--v2`` ignores the keys model v2 added: schema_version, bbox_space, caption_bbox, mention_spans,
subcaption_indices).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, shared_data  # noqa: E402

from figlink.errors import FiglinkError  # noqa: E402
from figlink.pipeline import PipelineOptions, process_source  # noqa: E402


def inputs(europepmc: Path | None, pdf: bool) -> list[tuple[str, Path, Path | None]]:
    """(name, path, xml) for every input, in a fixed order."""
    out: list[tuple[str, Path, Path | None]] = []
    for p in sorted((REPO / "samples" / "jats").glob("*")):
        if p.suffix in (".xml", ".nxml"):
            out.append((f"samples/{p.name}", p, None))
    data = shared_data()
    if data is not None:
        for sub in ("plos", "elife", "pmc"):
            for p in sorted((data / "jats" / sub).glob("*")):
                if p.suffix in (".xml", ".nxml"):
                    out.append((f"jats/{sub}/{p.name}", p, None))
        if pdf:
            for folder in sorted((data / "pdf" / "elife").iterdir()):
                xmls = sorted(folder.glob("*.xml"))
                for p in sorted(folder.glob("*.pdf")):
                    out.append((f"pdf/{folder.name}/{p.name}", p, None))
                    if xmls:
                        out.append((f"pdf/{folder.name}/{p.name}+xml", p, xmls[0]))
    if europepmc is not None:
        for p in sorted(europepmc.rglob("*.xml")):
            out.append((f"europepmc/{p.name}", p, None))
    return out


def dump_lines(europepmc: Path | None, pdf: bool):
    opts = PipelineOptions(vision=False)
    for name, path, xml in inputs(europepmc, pdf):
        try:
            paper = process_source(path, xml=xml, options=opts)
            yield name, json.dumps({"input": name, "paper": json.loads(paper.to_json())}, sort_keys=True)
        except FiglinkError as e:
            yield name, json.dumps({"input": name, "error": f"{e.stage}: {e}"}, sort_keys=True)


V2_KEYS = ("schema_version", "bbox_space", "caption_bbox", "mention_spans", "subcaption_indices")


def without(value, keys: frozenset[str]):
    """``value`` with the keys ``keys`` dropped from every object in it."""
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["dump", "check"])
    ap.add_argument("file", type=Path)
    ap.add_argument("--europepmc", type=Path)
    ap.add_argument("--no-pdf", action="store_true")
    ap.add_argument("--ignore", action="append", default=[], metavar="KEY", help="key to leave out of the comparison")
    ap.add_argument("--v2", action="store_true", help="ignore the keys that model v2 added")
    a = ap.parse_args()
    ignore = frozenset(a.ignore) | (frozenset(V2_KEYS) if a.v2 else frozenset())
    if a.mode == "dump":
        with a.file.open("w") as f:
            n = 0
            for _, line in dump_lines(a.europepmc, not a.no_pdf):
                f.write(line + "\n")
                n += 1
        print(f"wrote {n} papers to {a.file}")
        return 0
    before = {json.loads(l)["input"]: l.rstrip("\n") for l in a.file.open()}
    differ, n = [], 0
    for name, line in dump_lines(a.europepmc, not a.no_pdf):
        n += 1
        old = before.get(name)
        if old != line and (not ignore or old is None
                            or without(json.loads(old), ignore) != without(json.loads(line), ignore)):
            differ.append(name)
    for name in differ:
        print(f"differs: {name}")
    print(f"{n - len(differ)} of {n} identical" + (f" (ignoring {', '.join(sorted(ignore))})" if ignore else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
