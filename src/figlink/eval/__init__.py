"""The papers' metrics: MedICaT alignment F1, COCO mAP, CER/WER (see :mod:`figlink.eval.metrics`)."""
