"""Training the learned re-ranker (:mod:`figlink.index.rerank`) from (query, candidates, answer) groups.

Each group is one query's feature matrix (its top fused candidates, fused order) and the row of the
right answer. The network (standardise → ReLU layer → score) is fitted with a listwise softmax loss (the
answer's share of the group's softmax), Adam, on CPU with torch. A fixed fifth of the groups, chosen by
paper (never by query: the queries of one paper share its figures), is held out to pick the epoch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from figlink.index.rerank import TOP_K, RerankModel
from figlink.index.rerank_features import FEATURES


@dataclass
class Group:
    X: np.ndarray  # [n, len(FEATURES)], fused order
    answer: int  # row of the right candidate
    paper_id: str  # the query's paper (for the held-out split)


def fifth(paper_id: str) -> int:
    """The fifth (0-4) of the papers that a paper falls in, by the md5 of its id."""
    return int(hashlib.md5(paper_id.encode()).hexdigest(), 16) % 5


def _pad(groups: Sequence[Group], k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    f = groups[0].X.shape[1]
    X = np.zeros((len(groups), k, f), np.float32)
    mask = np.zeros((len(groups), k), bool)
    y = np.zeros(len(groups), np.int64)
    for i, g in enumerate(groups):
        n = min(k, len(g.X))
        X[i, :n], mask[i, :n], y[i] = g.X[:n], True, g.answer
    return X, mask, y


def ranks_of(scores: np.ndarray, mask: np.ndarray, y: np.ndarray) -> np.ndarray:
    """1-based rank of each group's answer under ``scores`` (ties: the answer last)."""
    s = np.where(mask, scores, -np.inf)
    ans = s[np.arange(len(y)), y][:, None]
    return (s >= ans).sum(1)


def fit(groups: Sequence[Group], level: str, hidden: int = 32, epochs: int = 40, lr: float = 3e-3,
        weight_decay: float = 1e-4, batch: int = 64, seed: int = 0, top_k: int = TOP_K,
        features: Sequence[str] = FEATURES, val_fifth: int = 0) -> tuple[RerankModel, dict]:
    """A model reading the named ``features``, fitted on the groups whose answer is among the first
    ``top_k`` (the groups of fifth ``val_fifth`` pick the epoch); and a report."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    usable = [g for g in groups if g.answer < top_k and len(g.X) > 1]
    train = [g for g in usable if fifth(g.paper_id) != val_fifth]
    val = [g for g in usable if fifth(g.paper_id) == val_fifth]
    if not train or not val:  # too few papers to hold a fifth out: validate on the training groups
        train = val = usable
    if not usable:
        raise ValueError("no query has its answer among the candidates: nothing to train on")
    cols = [FEATURES.index(f) for f in features]
    train = [Group(g.X[:, cols], g.answer, g.paper_id) for g in train]
    val = [Group(g.X[:, cols], g.answer, g.paper_id) for g in val]
    rows = np.concatenate([g.X[:top_k] for g in train])
    mean = rows.mean(0).astype(np.float32)
    std = rows.std(0).astype(np.float32)
    std = np.where(std > 1e-6, std, 1.0).astype(np.float32)
    Xt, mt, yt = _pad(train, top_k)
    Xv, mv, yv = _pad(val, top_k)
    Xt, Xv = (Xt - mean) / std, (Xv - mean) / std
    tX, tm, ty = torch.from_numpy(Xt), torch.from_numpy(mt), torch.from_numpy(yt)
    vX, vm = torch.from_numpy(Xv), torch.from_numpy(mv)
    net = torch.nn.Sequential(torch.nn.Linear(Xt.shape[2], hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    best: tuple[float, int, dict] = (-1.0, 0, {})
    history = []
    for epoch in range(1, epochs + 1):
        net.train()
        for idx in np.array_split(rng.permutation(len(Xt)), max(1, len(Xt) // batch)):
            i = torch.from_numpy(idx)
            s = net(tX[i]).squeeze(-1).masked_fill(~tm[i], -1e9)
            loss = torch.nn.functional.cross_entropy(s, ty[i])
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            sv = net(vX).squeeze(-1).numpy()
        r = ranks_of(sv, mv, yv)
        mrr, r1 = float((1 / r).mean()), float((r == 1).mean())
        history.append((epoch, r1, mrr))
        if mrr > best[0]:
            best = (mrr, epoch, {k: v.detach().clone() for k, v in net.state_dict().items()})
    net.load_state_dict(best[2])
    w1 = net[0].weight.detach().numpy().T.astype(np.float32)
    b1 = net[0].bias.detach().numpy().astype(np.float32)
    w2 = net[2].weight.detach().numpy()[0].astype(np.float32)
    b2 = float(net[2].bias.detach().numpy()[0])
    base = ranks_of(-np.tile(np.arange(top_k, dtype=np.float32), (len(yv), 1)), mv, yv)
    report = {"groups": len(groups), "usable": len(usable), "train_groups": len(train), "val_groups": len(val),
              "best_epoch": best[1], "val_mrr": round(best[0], 4),
              "val_r1": round(next(h[1] for h in history if h[0] == best[1]), 4),
              "val_fused_r1": round(float((base == 1).mean()), 4), "val_fused_mrr": round(float((1 / base).mean()), 4),
              "hidden": hidden, "epochs": epochs, "lr": lr, "weight_decay": weight_decay, "seed": seed}
    return RerankModel(level, mean, std, w1, b1, w2, b2, top_k, features=tuple(features)), report


def average(models: Sequence[RerankModel]) -> RerankModel:
    """One model scoring the mean of the models' scores: their hidden layers side by side (the models
    must share the standardisation, as fits of one set of groups with different seeds do)."""
    first = models[0]
    if any(not (np.array_equal(m.mean, first.mean) and np.array_equal(m.std, first.std)) or m.features != first.features
           for m in models):
        raise ValueError("the models were fitted on different standardisations or features")
    k = len(models)
    return RerankModel(first.level, first.mean, first.std, np.concatenate([m.w1 for m in models], 1),
                       np.concatenate([m.b1 for m in models]), np.concatenate([m.w2 for m in models]) / k,
                       float(np.mean([m.b2 for m in models])), first.top_k, features=first.features)
