"""``python -m figlink.cli``."""

from figlink.cli import main

main()
