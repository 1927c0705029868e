"""Dataset exports: speed, memory and fidelity of every format on a corpus of the repository's samples.

The corpus is samples/ (7 JATS articles and the eLife PDF+XML pair) ingested with the vision stage, so
figures have images and panel boxes; it needs no ../shared data. Each export runs 3 times (best time);
the table gives figures/s on one core, peak Python memory (tracemalloc) and a fidelity check read back
from the output: COCO with pycocotools (COCOeval of the annotations against themselves, and every panel
box equal to the corpus's), WebDataset with the webdataset package (every sample's JSON equal to its
corpus figure), the file formats by their record counts.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, print_table  # noqa: E402

from figlink.corpus import Corpus  # noqa: E402
from figlink.engine.local import ingest  # noqa: E402
from figlink.exports import FOLDER_FORMATS, WRITERS, ExportReport, export  # noqa: E402
from figlink.exports.webdataset import SHARD_PATTERN  # noqa: E402
from figlink.model import Figure  # noqa: E402
from figlink.pipeline import PipelineOptions  # noqa: E402


def _coco_check(out: Path, figures: dict[tuple[str, str], Figure]) -> str:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(str(out / "annotations.json"))
        dt = gt.loadRes([{**a, "score": 1.0} for a in gt.dataset["annotations"]])
        ev = COCOeval(gt, dt, "bbox")
        ev.evaluate(), ev.accumulate(), ev.summarize()
    same = 0
    for img in gt.loadImgs(gt.getImgIds()):
        fig = figures[(img["paper_id"], img["figure_id"])]
        anns = gt.loadAnns(gt.getAnnIds(imgIds=[img["id"]]))
        same += all(fig.panels[a["panel_index"]].label == a["label"] for a in anns) and len(anns) == len(fig.panels)
    return f"AP {ev.stats[0]:.3f} vs itself; {same}/{len(gt.getImgIds())} images with every panel"


def _wds_check(out: Path, report: ExportReport, figures: dict[tuple[str, str], Figure]) -> str:
    import webdataset as wds

    urls = [str(out / (SHARD_PATTERN % i)) for i in range(report.shards)]
    samples = list(wds.WebDataset(urls, shardshuffle=False))
    same = 0
    for s in samples:
        meta = json.loads(s["json"])
        same += Figure.from_dict(meta) == figures[(meta["paper_id"], meta["figure_id"])]
    return f"{same}/{len(samples)} samples read back equal to their figure"


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="figlink-exports-"))
    try:
        corpus_dir = tmp / "corpus"
        t = time.perf_counter()
        ingest([REPO / "samples" / "jats", REPO / "samples" / "elife"], corpus_dir, workers=2,
               options=PipelineOptions(vision=True), progress=False)
        print(f"corpus of the samples with vision: {time.perf_counter() - t:.1f} s")
        rows = []
        with Corpus(corpus_dir, readonly=True) as corpus:
            figures = {(p.paper_id, f.figure_id): f for p in corpus.papers() for f in p.figures}
            n_fig = len(figures)
            for fmt in WRITERS:
                best, peak, result = float("inf"), 0, None
                for k in range(3):
                    out = tmp / f"{fmt}-{k}" if fmt in FOLDER_FORMATS else tmp / f"{fmt}-{k}.out"
                    tracemalloc.start()
                    t = time.perf_counter()
                    result = export(corpus, fmt, out)
                    best = min(best, time.perf_counter() - t)
                    peak = max(peak, tracemalloc.get_traced_memory()[1])
                    tracemalloc.stop()
                if fmt == "coco":
                    check = _coco_check(out, figures)
                elif fmt == "webdataset":
                    check = _wds_check(out, result, figures)
                else:
                    check = f"{result.written} records"
                done = f"{result.written} of {result.figures} figures, {result.failed} failed" \
                    if fmt in FOLDER_FORMATS else f"{n_fig} figures"
                rows.append([fmt, f"{n_fig / best:,.0f}", f"{best * 1e3:.1f} ms", f"{peak / 2**20:.1f} MiB", done,
                             check])
        print_table(f"Exports of {n_fig} figures (best of 3, one core)",
                    ["format", "figures/s", "time", "peak Python memory", "written", "fidelity check"], rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
