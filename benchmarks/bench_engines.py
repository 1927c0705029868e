"""Ingest engines: the local process pool against Ray on the same inputs, same CPUs.

Each engine ingests the dev JATS articles (parse and corpus writes; no vision, no index) in a child
process with 2 workers (local) or a local Ray with 2 CPUs; the table gives articles/s (wall, start-up
included, and per core), the peak memory of the whole process tree (Ray's own processes included), and
the quality check: both corpora hold the same papers, byte for byte.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ingest_peak, print_table, require_shared_data  # noqa: E402

from figlink.corpus import Corpus  # noqa: E402

WORKERS = 2


def _papers(corpus: Path) -> dict[str, str]:
    """paper id → its JSON, as the corpus stores it."""
    with Corpus(corpus, readonly=True) as c:
        return {p.paper_id: p.to_json() for p in c.papers()}


def main() -> None:
    data = require_shared_data("the engine benchmark")
    try:
        import ray  # noqa: F401
    except ImportError:
        print("skipped: the Ray engine needs ray (pip install 'figlink[ray]')")
        return
    src = str(data / "jats")
    n = len(list((data / "jats").glob("*/*.*xml")))
    tmp = Path(tempfile.mkdtemp(prefix="figlink-engines-"))
    try:
        rows, corpora = [], {}
        for engine in ("local", "ray"):
            corpus = tmp / engine
            peak, wall = ingest_peak([src], corpus, ["--engine", engine, "--workers", str(WORKERS),
                                                     "--no-vision", "--no-index"])
            corpora[engine] = _papers(corpus)
            rows.append([engine, f"{n / wall:.1f}", f"{n / wall / WORKERS:.1f}", f"{wall:.1f} s",
                         f"{peak:,.0f} MB"])
        same = sum(corpora["ray"].get(k) == v for k, v in corpora["local"].items())
        print_table(f"Ingest engines on {n} dev JATS articles, {WORKERS} workers / CPUs, no vision, no index",
                    ["engine", "articles/s (wall)", "articles/s per core", "wall", "peak memory (process tree)"],
                    rows)
        print(f"papers identical between the engines: {same}/{len(corpora['local'])} "
              f"(ray corpus holds {len(corpora['ray'])})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
