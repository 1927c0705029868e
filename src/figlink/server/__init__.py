"""``figlink serve``: the REST API and the web page over one corpus."""

from figlink.server.app import create_app, serve

__all__ = ["create_app", "serve"]
