"""Spatial fast paths give what the regex forms they replace give."""

from __future__ import annotations

import random

from figlink.text import spatial


def test_lead_start_matches_the_lead_search() -> None:
    rng = random.Random(3)
    pieces = ["in", "IN", "On", "at", "the", "THE", "tHe", "\u0130n", "\u0131n", "\u0131N", "win", "bath", "x", "_",
              " ", "  ", "\n", "\t", "\u00a0", ",", ".", "(", "\u00e9", "-"]
    for _ in range(6000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) + "left"
        k = len(text) - 4
        for lo in range(max(0, k - 14), k):
            if text[k - 1].isspace():
                lead = spatial._LEAD.search(text, lo, k)
                assert lead is not None
                assert spatial._lead_start(text, lo, k) == lead.start(), (text, lo)
