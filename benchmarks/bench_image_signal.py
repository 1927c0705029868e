"""Text search with the matcher's image signal (issue 16: text → figure through the matcher), tune and check.

Task: cite-sentence → figure. Each figure's citing text is deleted from the indexed copy of its corpus; a
query is one citing sentence with the figure reference taken out. The corpus is indexed as a user's would
be (caption, title and the figure's OCR text in the lexical and dense signals; ingest runs without the
vision stage here, so the OCR lines come from the matcher's own feature cache, the same rapidocr reading);
``figlink index --image`` adds the image signal: the query's MiniLM vector through the matcher's text tower
against each figure's image-tower vector (pixels + OCR).

Sets (split by document, before any result was looked at):
- OpenStax figure pairs: tune = the psychology book, check = the chemistry book. The shipped matcher was
  trained on the four non-chemistry books, so on tune it has seen these figures (with their captions and
  mentions): the tune column flatters the image signal; check is held out from the matcher and from any
  choice made here. Queries: each citing paragraph's sentence that held the reference (OpenStax left
  ``()`` where it was), without it.
- eLife: figures cut from the ``pdf/elife`` PDFs, captions and citing sentences from their JATS
  (``matcher_data.elife_pdf_pairs``), split by article; out of the matcher's domain on both parts.

Rows: BM25 (lexical signal alone), fusion (``rerank=False``), fusion + image, and the default search
(re-ranker on) without and with the image signal. The image weight is the untuned default (1.0, as the
MiniLM cosine). R@1/5/10 and MRR over the queries; the pool is every figure of the part.

    python benchmarks/bench_image_signal.py [--set openstax|elife|both] [--part tune|check|both] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import parts_of, print_table, require_shared_data  # noqa: E402
from matcher_data import elife_pdf_pairs  # noqa: E402
from search_task import strip_citations  # noqa: E402

import figlink  # noqa: E402
from figlink.corpus import Corpus  # noqa: E402
from figlink.eval.splits import doc_key, split_of  # noqa: E402
from figlink.index import build_index  # noqa: E402
from figlink.index.searcher import Searcher  # noqa: E402
from figlink.learn.cache import FeatureCache  # noqa: E402
from figlink.learn.featurize import file_sha  # noqa: E402
from figlink.learn.image_search import image_signal  # noqa: E402
from figlink.learn.ocr_text import OCR_KIND  # noqa: E402
from figlink.model import Box, OcrText, Paper  # noqa: E402
from figlink.text.mentions import find_mentions  # noqa: E402
from figlink.text.sentences import split_sentences  # noqa: E402

OPENSTAX_PARTS = {"tune": "psychology", "check": "chemistry-bundle"}
_HOLE = re.compile(r"\(\s*\)")
MIN_WORDS = 4


def openstax_lines(data: Path, part: str) -> list[dict]:
    book = OPENSTAX_PARTS[part]
    folder = data / "figures" / "openstax"
    out = []
    for line in (folder / "pairs.jsonl").read_text(encoding="utf-8").split("\n"):
        if line.strip():
            r = json.loads(line)
            if r["id"].startswith(book + "/"):
                out.append({**r, "image": str(folder / r["image"])})
    return out


def elife_lines(data: Path, scratch: Path, part: str) -> list[dict]:
    pairs = elife_pdf_pairs(data, scratch)
    out = []
    for line in pairs.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            r = json.loads(line)
            if split_of(doc_key(r["id"].split("/")[0])) == part:
                out.append({**r, "image": str(pairs.parent / r["image"])})
    return out


def queries_of(line: dict) -> list[str]:
    """The citing sentences of one figure without the reference: OpenStax's ``()`` holes, or the figure
    mentions the grammar finds in JATS sentences."""
    out = []
    for text in line.get("mentions") or []:
        for s in split_sentences(text):
            if _HOLE.search(s):
                q = _HOLE.sub("", s)
            else:
                cuts = [(m.start, m.end) for m in find_mentions(s)]
                if not cuts:
                    continue
                q = strip_citations(s, cuts)
            q = re.sub(r"\s{2,}", " ", q).strip()
            if len(q.split()) >= MIN_WORDS:
                out.append(q)
    return out


def with_cached_ocr(corpus_dir: Path, cache: FeatureCache):
    """A paper mapper that gives each figure the OCR lines the matcher's cache holds for its image."""
    corpus = Corpus(corpus_dir, readonly=True)

    def add_ocr(paper: Paper) -> Paper:
        figs = []
        for fig in paper.figures:
            lines: list = []
            if fig.image:
                sha = file_sha(corpus.image_file(fig.image))
                lines = cache.get_json(OCR_KIND, [sha]).get(sha) or []
            figs.append(replace(fig, ocr=[OcrText(str(x["text"]), Box(*x["bbox"], space="image_pixels"))
                                          for x in lines if str(x.get("text", "")).strip()]))
        return replace(paper, figures=figs)
    return add_ocr


def build_part(lines: list[dict], work: Path, cache: FeatureCache) -> Path:
    """A corpus of the part's figures without their citing text, indexed with the image signal."""
    corpus = work / "corpus"
    if not (corpus / "index" / "CURRENT").exists():
        work.mkdir(parents=True, exist_ok=True)
        pairs = work / "pairs.jsonl"
        pairs.write_text("".join(json.dumps({**r, "mentions": []}) + "\n" for r in lines), encoding="utf-8")
        figlink.build([pairs], corpus, vision=False, index=False, progress=False)
        signal = image_signal(corpus, cache=cache)
        build_index(corpus, papers=with_cached_ocr(corpus, cache), image=signal)
    return corpus


def ranks(corpus: Path, queries: list[tuple[str, str]], **opts) -> list[int]:
    """The 1-based rank of each query's figure (a large number when it is not in the top 100)."""
    s = Searcher(corpus, image_signal=opts.pop("image", True), rerankers=opts.pop("rerankers", None))
    out = []
    for text, fig in queries:
        hits = s.search(text, k=100, level="figure", rerank=opts.get("rerank", True))
        out.append(next((h.rank for h in hits if h.figure_id == fig), 10**6))
    return out


def metrics(r: list[int]) -> str:
    n = max(len(r), 1)
    at = [sum(1 for x in r if x <= k) / n for k in (1, 5, 10)]
    mrr = sum(1 / x for x in r) / n
    return " / ".join(f"{x:.3f}".lstrip("0") for x in (*at, mrr))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=("openstax", "elife", "both"), default="both")
    ap.add_argument("--part", choices=("tune", "check", "both"), default="both")
    ap.add_argument("--work", default="/work/scratch/image_signal")
    args = ap.parse_args()
    data = require_shared_data("bench_image_signal")
    cache = FeatureCache()
    work = Path(args.work)
    rows: dict[str, dict[str, str]] = {}
    sizes: dict[str, str] = {}
    t0 = time.perf_counter()
    for name in (("openstax", "elife") if args.set == "both" else (args.set,)):
        for part in parts_of(args.part):
            lines = openstax_lines(data, part) if name == "openstax" else elife_lines(data, work / "elife_src", part)
            queries = [(q, r["id"]) for r in lines for q in queries_of(r)]
            corpus = build_part(lines, work / name / part, cache)
            col = f"{name} {part}"
            sizes[col] = f"{len(lines)} figures / {len(queries)} queries"
            lexical_only = ranks_lexical(corpus, queries)
            rows.setdefault("BM25 (lexical signal)", {})[col] = metrics(lexical_only)
            rows.setdefault("fusion", {})[col] = metrics(ranks(corpus, queries, image=False, rerank=False))
            rows.setdefault("fusion + image", {})[col] = metrics(ranks(corpus, queries, image=True, rerank=False))
            rows.setdefault("fusion + re-ranker", {})[col] = metrics(ranks(corpus, queries, image=False))
            rows.setdefault("fusion + image + re-ranker", {})[col] = metrics(ranks(corpus, queries, image=True))
    cols = list(sizes)
    print_table("cite-sentence → figure, R@1 / R@5 / R@10 / MRR (image weight 1.0, untuned)",
                ["system", *cols], [["pool", *[sizes[c] for c in cols]]] +
                [[r, *[v.get(c, "-") for c in cols]] for r, v in rows.items()])
    print(f"bench_image_signal: {time.perf_counter() - t0:.0f} s")


def ranks_lexical(corpus: Path, queries: list[tuple[str, str]]) -> list[int]:
    """Ranks under the lexical (BM25) signal alone."""
    from figlink.index import lexical
    from figlink.index.filters import Filters

    s = Searcher(corpus)
    v = s.version()
    out = []
    for text, fig in queries:
        with v.lock:
            scored = lexical.search(v.db, "figure", text, 100, Filters(), len(v.cols["figure"]))
            rows = lexical.doc_rows(v.db, [d for d, _ in scored])
        order = [rows[d]["figure_id"] for d, _ in scored if d in rows]
        out.append(order.index(fig) + 1 if fig in order else 10**6)
    return out


if __name__ == "__main__":
    main()
