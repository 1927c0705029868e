"""Re-score the shipped matcher under the current score function without touching its weights:
``python -m figlink.learn.rescore`` (``make model-matcher-rescore``).

The captioner's pool vectors are tied to the matcher's weights (by their SHA-256), so a change of the score
alone (the lexical term's weights, :mod:`figlink.learn.lexical`; the hubness correction,
:mod:`figlink.learn.hubness`) is shipped by rewriting the manifest's
settings and metrics and ``MODEL_CARD.md``, with ``weights.safetensors`` byte for byte as it was. The tune
metrics come from the fold models retrained at the recorded epoch count and seed (each train book held out
in turn, as :mod:`figlink.learn.recipe` chose the epochs); the check book is scored with the shipped weights.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from figlink.eval.splits import OPENSTAX_CHECK_BOOK
from figlink.learn.cache import FeatureCache
from figlink.learn.dataset import Features
from figlink.learn.embedder import DEFAULT_MODEL, save_matcher
from figlink.learn.evaluate import bm25_ocr_baseline
from figlink.learn.matcher import DualEncoder, MatcherConfig
from figlink.learn.model_dir import WEIGHTS
from figlink.learn.recipe import fold_of_ids, group_of
from figlink.learn.reproduce import model_card, reproduce_args
from figlink.learn.train import TrainSettings, evaluate, train_matcher


def fold_metrics(trainable: Features, config: MatcherConfig, settings: TrainSettings) -> dict[str, dict]:
    """Each group held out in turn: a model trained on the rest for ``settings.epochs`` epochs, scored on it."""
    folds = fold_of_ids(trainable.ids) or []
    out = {}
    for k in sorted(set(folds)):
        held = [i for i, f in enumerate(folds) if f == k]
        rest = [i for i, f in enumerate(folds) if f != k]
        r = train_matcher(trainable.subset(rest), None, config, settings)
        name = "+".join(sorted({group_of(trainable.ids[i]) for i in held}))
        out[name] = evaluate(r.model, trainable.subset(held), settings.text_mode)
    return out


def rescore(folder: Path, feats: Features, config: MatcherConfig) -> dict:
    """Rewrite the model directory's settings, metrics and card for ``config`` (same weights); its manifest."""
    from safetensors.torch import load_file

    training = json.loads((folder / "figlink-model.json").read_text(encoding="utf-8"))["training"]
    settings = replace(TrainSettings(**training["settings"]), epochs=training["epochs"])
    weights = (folder / WEIGHTS).read_bytes()
    model = DualEncoder(config)
    model.load_state_dict(load_file(str(folder / WEIGHTS)), strict=True)
    check_book = OPENSTAX_CHECK_BOOK + "/"
    trainable = feats.subset([i for i, x in enumerate(feats.ids) if not x.startswith(check_book)])
    check = feats.subset([i for i, x in enumerate(feats.ids) if x.startswith(check_book)])
    metrics = {"validation": fold_metrics(trainable, config, settings),
               "check": evaluate(model, check, settings.text_mode),
               "check_bm25_ocr": bm25_ocr_baseline(check.texts(settings.text_mode), check.ocr_text)}
    training = {**training, "rescored": f"score changed to lexical_weight={config.lexical_weight}, "
                f"char_weight={config.char_weight}, hubness "
                f"correction at temperature {config.hub_temperature} ({config.hub_iterations} iterations), "
                "weights kept"}
    save_matcher(model, folder, {"metrics": metrics, "training": training})
    if (folder / WEIGHTS).read_bytes() != weights:
        raise RuntimeError("the rewritten weights differ from the shipped ones")
    (folder / "MODEL_CARD.md").write_text(model_card(metrics, training, config), encoding="utf-8")
    return json.loads((folder / "figlink-model.json").read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    from figlink.learn.dataset import featurize_pairs
    from figlink.learn.records import read_pair_file

    parsed = reproduce_args("Re-score figlink's default matcher under the current score (weights kept).",
                            DEFAULT_MODEL, argv)
    if parsed is None:
        return 2
    args, data = parsed
    pairs, bad = read_pair_file(data / "figures" / "openstax" / "pairs.jsonl")
    old = json.loads((args.out / "figlink-model.json").read_text(encoding="utf-8"))["config"]
    now = MatcherConfig()
    config = MatcherConfig.from_dict({**old, "lexical_weight": now.lexical_weight, "char_weight": now.char_weight,
                                      "hub_temperature": now.hub_temperature, "hub_iterations": now.hub_iterations})
    feats, bad2 = featurize_pairs(pairs, FeatureCache(args.cache), ocr=True, image_size=config.image_size)
    rescore(args.out, feats, config)
    print(f"rescored {args.out} (lexical_weight {config.lexical_weight}, char_weight {config.char_weight}, "
          f"hub_temperature {config.hub_temperature}; "
          f"{len(bad) + len(bad2)} bad pairs)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
