import os

os.environ.setdefault("FIGLINK_OCR_THREADS", "1")
