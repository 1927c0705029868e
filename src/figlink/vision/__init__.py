"""Image analysis for one figure image: reading (``image_io``), XY-cuts (``segment``), panels, panel labels,
OCR with roles, image features and the figure-type head (``figtype``).

The figure-level stage that runs them and aligns panels with subcaptions is :mod:`figlink.enrich.vision`.
"""
