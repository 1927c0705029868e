"""Training scripts for figlink's small models (each runnable with ``python -m``)."""
