"""A/B timing of one caption stage: two versions of figlink's source, the same captions, alternating processes.

Each round runs the stage once in a fresh process for each version (the order alternates: AB, BA, AB, …),
timing every caption on every pass; a caption keeps its fastest time over all passes and rounds of its
version. The ratio is the sum of the base's fastest times over the candidate's: above 1 the candidate is
faster. Keeping each caption's fastest time is what makes the figure hold on a busy shared machine: a burst
of load slows some passes, rarely all of them.

The captions are those of ``caption_identity.py`` (JATS dev articles, the prostate gold set, ROCO); the
``jats`` stage parses each dev JATS article instead. Work done before the stage (the figure index, sentence spans or split a stage reads) is done outside the timer.

Usage::

    python benchmarks/ab_captions.py --base HEAD~1 --stage labels          # HEAD~1 vs the working tree
    python benchmarks/ab_captions.py --base main --cand HEAD --stage stage --rounds 6

``--base`` and ``--cand`` name git revisions (their ``src/`` is exported to a temporary folder) or
``worktree`` (the checkout's own ``src/``, the default candidate). Stages: stage (the whole caption stage), split, normalize, labels, mentions, index, sentences,
spatial, compound, keywords, jats.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]


def _stage(name: str) -> tuple[Callable[[str], Any], Callable[[Any], Any]]:
    """``(prepare, run)`` of a stage: ``prepare(caption)`` is untimed, ``run(prepared)`` is timed."""
    from figlink.text.caption_sentences import sentence_spans
    from figlink.text.mentions import find_mentions, leading_figure_index

    def body(c: str) -> int:
        idx = leading_figure_index(c)
        return idx.end if idx else 0

    if name == "stage":  # what ingest runs per figure (text/captions.enrich_caption without the copy)
        from figlink.text.compound import compound_cues
        from figlink.text.keywords import find_medical_keywords
        from figlink.text.normalize import normalized_caption
        from figlink.text.subcaptions import split_caption

        def whole(c: str) -> None:
            compound_cues(c, split_caption(c))
            normalized_caption(c)
            find_medical_keywords(c)
        return (lambda c: c), whole
    if name == "split":
        from figlink.text.subcaptions import split_caption
        return (lambda c: c), split_caption
    if name == "normalize":
        from figlink.text.normalize import normalize_advanced, normalize_basic, normalized_caption

        def normalize(c: str) -> None:
            normalized_caption(c)
            normalize_basic(c)
            normalize_advanced(c)
        return (lambda c: c), normalize
    if name == "labels":
        from figlink.text.label_roles import find_label_tokens

        takes_low = "low" in inspect.signature(find_label_tokens).parameters  # (older versions)

        def prep_labels(c: str) -> tuple:
            b = body(c)
            return (c, b, sentence_spans(c, b)) + ((c.lower(),) if takes_low else ())
        return prep_labels, lambda a: find_label_tokens(*a)
    if name == "mentions":
        return (lambda c: c), find_mentions
    if name == "index":
        return (lambda c: c), leading_figure_index
    if name == "sentences":
        return (lambda c: c), sentence_spans
    if name == "spatial":
        from figlink.text.spatial import find_positions
        return (lambda c: c), find_positions
    if name == "compound":
        from figlink.text.compound import compound_cues
        from figlink.text.subcaptions import split_caption
        return (lambda c: (c, split_caption(c))), lambda a: compound_cues(*a)
    if name == "keywords":
        from figlink.text.keywords import find_medical_keywords
        return (lambda c: c), find_medical_keywords
    if name == "jats":  # the items are JATS files: parse_jats reads mentions, xrefs and captions
        from figlink.ingest.jats import parse_jats
        return Path, parse_jats
    raise SystemExit(f"unknown stage {name!r}; one of {', '.join(STAGES)}")


STAGES = ("stage", "split", "normalize", "labels", "mentions", "index", "sentences", "spatial", "compound",
          "keywords", "jats")


def clear_caches() -> None:
    """Empty every ``functools.lru_cache`` of figlink's modules."""
    for name, module in list(sys.modules.items()):
        if name.startswith("figlink"):
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def worker(captions_file: Path, stage: str, passes: int, out: Path) -> None:
    """Time ``stage`` on every caption ``passes`` times (after one warm-up pass); write the fastest times."""
    captions = json.loads(captions_file.read_text(encoding="utf-8"))
    prepare, run = _stage(stage)
    inputs = [prepare(c) for c in captions]
    for a in inputs:
        run(a)
    best = [float("inf")] * len(inputs)
    clock = time.perf_counter
    for _ in range(passes):
        clear_caches()  # each pass warms figlink's caches itself, as a worker that meets new items does
        for i, a in enumerate(inputs):
            t = clock()
            run(a)
            t = clock() - t
            if t < best[i]:
                best[i] = t
    out.write_text(json.dumps(best), encoding="utf-8")


def export(rev: str, into: Path) -> Path:
    """The ``src`` folder of ``rev`` (``worktree``: this checkout's own)."""
    if rev == "worktree":
        return REPO / "src"
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def items(stage: str) -> list[str] | None:
    """The captions of ``caption_identity.py`` (for the ``jats`` stage: the dev JATS files), or ``None``
    without the shared data."""
    sys.path[:0] = [str(REPO / "src"), str(Path(__file__).resolve().parent)]  # this checkout's figlink
    from bench_captions import shared_data

    root = shared_data()
    if root is None:
        return None
    if stage == "jats":
        return [str(p) for p in sorted((root / "jats").glob("*/*")) if p.suffix in (".xml", ".nxml")]
    from caption_identity import captions as identity_captions

    return identity_captions()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="git revision, or 'worktree'")
    parser.add_argument("--cand", default="worktree", help="git revision, or 'worktree' (default)")
    parser.add_argument("--stage", default="stage", choices=STAGES)
    parser.add_argument("--rounds", type=int, default=4, help="processes per version")
    parser.add_argument("--passes", type=int, default=3, help="timed passes per process")
    parser.add_argument("--worker", nargs=3, metavar=("CAPTIONS", "STAGE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(Path(args.worker[0]), args.worker[1], args.passes, Path(args.worker[2]))
        return 0
    caps = items(args.stage)
    if caps is None:
        print("ab_captions: shared data not found (set FIGLINK_SHARED_DATA or add ../shared/data); skipped")
        return 0
    with tempfile.TemporaryDirectory(prefix="ab_captions_") as tmp:
        tmp_path = Path(tmp)
        caps_file = tmp_path / "captions.json"
        caps_file.write_text(json.dumps(caps), encoding="utf-8")
        srcs = {"base": export(args.base, tmp_path / "base"), "cand": export(args.cand, tmp_path / "cand")}
        best = {side: [float("inf")] * len(caps) for side in srcs}
        for r in range(args.rounds):
            for side in (("base", "cand") if r % 2 == 0 else ("cand", "base")):
                out = tmp_path / f"{side}{r}.json"
                env = dict(os.environ, PYTHONPATH=str(srcs[side]))
                subprocess.run([sys.executable, __file__, "--passes", str(args.passes), "--worker", str(caps_file),
                                args.stage, str(out)], check=True, env=env)
                times = json.loads(out.read_text(encoding="utf-8"))
                best[side] = [min(a, b) for a, b in zip(best[side], times)]
    base, cand = sum(best["base"]), sum(best["cand"])
    ratios = sorted(b / c for b, c in zip(best["base"], best["cand"]) if c > 0)
    print(f"| stage | items | base us/item | cand us/item | base/cand | median item base/cand |")
    print(f"|---|---|---|---|---|---|")
    print(f"| {args.stage} | {len(caps)} | {1e6 * base / len(caps):.2f} | {1e6 * cand / len(caps):.2f} "
          f"| {base / cand:.3f}x | {ratios[len(ratios) // 2]:.3f}x |")
    print(f"(base {args.base}, candidate {args.cand}; {args.rounds} processes each, {args.passes} passes each, "
          f"each caption's fastest time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
