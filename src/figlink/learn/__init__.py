"""Learned models trained on the corpus's own figures: the image–text matcher (issue 16).

Module map (each has one job; later models — captioner, re-ranker, the search image signal — build on
the same features and model directories):

- ``records``: figure pairs (image, caption, citing texts) from a pairs file, a Paper or a corpus
- ``cache``: the on-disk feature cache (SQLite, keyed by content hash)
- ``featurize``: per-image features with the cache (EfficientNet trunk maps, OCR lines); bad images fail alone
- ``image_features`` / ``ocr_text`` / ``text_features``: EfficientNet-Lite0 trunk + tail, rapidocr text, MiniLM
- ``dataset``: pairs → row-aligned feature arrays
- ``matcher``: the dual encoder and the symmetric InfoNCE loss
- ``train``: the training loop with early stopping; ``evaluate``: R@K / MRR, chance, the BM25-over-OCR baseline
- ``model_dir``: versioned model directories; ``embedder``: load a matcher (built-in or ``external``) and embed
- ``recipe``: train from pairs end to end; ``reproduce``: rebuild the shipped default model; the commands are in ``figlink.cli.learn``
- ``captioner``: candidate sentences (matcher-nearest training captions, citing sentences) and the learned
  scorer that picks one; ``captioner_eval``: SciCap-normalized BLEU-4 / ROUGE-L and both baselines;
  ``captioner_recipe``: prepare / train / measure / save / load; ``captioner_reproduce``: the shipped
  captioner and its card (the commands `figlink train captioner` and `figlink caption generate` are in ``figlink.cli.caption``)
"""
