"""Engines run the pipeline over many sources; the stage code is the same whatever the engine."""
