"""Citing sentences without their figure reference and its frame (``figlink.text.citing_frame``), on the
OpenStax sample pairs (whose citing texts lost the references' link text: "()", "( and )", "shown in .")
and on the eLife sample's JATS inline references (written references: "(Figure 1B)", "Figure 1C shows").
Every expected string was checked by hand against the sentence."""

from __future__ import annotations

import json

import pytest

from figlink.learn.captioner import FEATURES, FigureInput, build_candidates, mention_candidates
from figlink.text.caption_sentences import split_sentences
from figlink.text.citing_frame import strip_references

from conftest import PAIRS_SAMPLE, REPO  # noqa: E402


def _sentences(pair_id: str, mention: int = 0) -> list[str]:
    for line in PAIRS_SAMPLE.read_text(encoding="utf-8").splitlines():
        pair = json.loads(line)
        if pair["id"] == pair_id:
            return split_sentences(pair["mentions"][mention])
    raise KeyError(pair_id)


def _stripped(pair_id: str, mention: int = 0) -> dict[str, list[str]]:
    return {s: c for s in _sentences(pair_id, mention) if (c := strip_references(s))}


def test_dropped_references_in_the_openstax_sample():
    # an empty parenthesis, "( and )", "(see )"
    got = _stripped("astronomy/OSC_Astro_20_02_Antenna")
    assert list(got.values()) == [["As a result, two Harvard physicists, Harold Ewen and Edward Purcell, made the first "
                                   "detection, soon followed by confirmations from the Dutch and a group in Australia."]]
    got = _stripped("astronomy/OSC_Astro_02_01_Ecliptic", 1)
    assert list(got.values())[0] == [
        "As the months go by and we look at the Sun from different places in our orbit, we see it projected against "
        "different places in our orbit, and thus against different stars in the background—or we would, at least, if "
        "we could see the stars in the daytime."]
    got = _stripped("astronomy/OSC_Astro_07_01_Orbits")
    assert ["Besides these planets, we have also been discovering smaller worlds beyond Neptune that are called "
            "trans-Neptunian objects or TNOs."] in got.values()
    # "shown in ." at the end: the participle and its preposition go with the reference
    got = _stripped("psychology/CNX_Psych_03_03_NervSystem")
    assert ["The nervous system can be divided into two major subdivisions: the central nervous system (CNS) and "
            "the peripheral nervous system (PNS)."] in got.values()
    got = _stripped("university-physics-bundle/CNX_UPhysics_43_04_Useries")
    assert set(map(tuple, got.values())) >= {("As another example, consider the U-238 decay series.",),
                                             ("An example of a decay whose parent nucleus no longer exists naturally.",)}
    # a sentence that opened with the (lost) reference: its reporting verb goes too
    got = _stripped("university-physics-bundle/CNX_UPhysics_15_03_CircularPt")
    assert got["shows the basic relationship between uniform circular motion and SHM."] == [
        "the basic relationship between uniform circular motion and SHM."]


def test_sentences_without_a_reference_give_nothing():
    sentences = _sentences("astronomy/OSC_Astro_20_02_Antenna")
    assert sentences[0] == "Equipment sensitive enough to detect the 21-cm line of neutral hydrogen became available in 1951."
    assert strip_references(sentences[0]) == []
    assert strip_references("It may just warm you as you walk by.") == []  # a final preposition is not a reference
    assert strip_references("Are there other worlds like ours?") == []  # a verb opens it, not a lost reference
    assert strip_references("Stars such as present-day suns are stable.") == []


def test_written_references_in_the_elife_sample():
    from figlink.ingest.jats import parse_jats

    paper = parse_jats(REPO / "samples" / "elife" / "elife-15600.xml")
    got = {r.text: strip_references(r.text) for f in paper.figures for r in f.inline_refs}
    assert got["Figure 1C shows examples of spike time raster plots at different ISI’s in both developmental "
               "groups."] == ["examples of spike time raster plots at different ISI’s in both developmental groups."]
    text = next(t for t in got if t.startswith("We isolated inputs carrying"))
    assert text.endswith("mechanosensory pathways (HB; Figure 1A).")
    assert got[text][0].endswith("mechanosensory pathways (HB).")
    text = next(t for t in got if t.startswith("Tuning curves of individual cells"))
    assert text.endswith("tuning curve shapes as shown in Figure 2E.")
    assert got[text][0].endswith("tuning curve shapes.")
    text = next(t for t in got if t.startswith("We found that at both developmental stages paired unimodal"))
    assert got[text] == ["We found that at both developmental stages paired unimodal responses showed significant "
                         "response enhancement over a wide range of ISIs, in contrast to what we had observed for "
                         "crossmodal responses."]


@pytest.mark.parametrize("sentence, expected", [
    ("As shown in Fig. 2, momentum is a vector.", ["momentum is a vector."]),
    ("Figure 3 is a map of the galaxy.", ["a map of the galaxy."]),
    ("The ring is bright (see Figs. 2A and 3).", ["The ring is bright."]),
    ("A mutant (Fig 1A–C) is shown.", ["A mutant is shown."]),
    ("The orbit of the binary is drawn in Figure 6", ["The orbit of the binary"]),  # the passive frame goes
    ("See Figure 4.", []),  # nothing but the frame
])
def test_frames_of_written_references(sentence, expected):
    assert strip_references(sentence) == expected


def test_candidates_carry_the_stripped_clause():
    fig = FigureInput("", ("Cells grow. Figure 4 shows that the cell divides.",))
    rows = mention_candidates(fig.mentions)
    assert [(si, text, stripped, cites) for _, si, text, stripped, cites in rows] == [
        (0, "cells grow.", False, False),
        (1, "shows that the cell divides.", False, True),  # SciCap normalization drops a leading "Figure 4"
        (1, "the cell divides.", True, True)]
    c = build_candidates(fig, [("a cell.", 0.5)], "mentions")
    assert c.texts[1:] == [r[2] for r in rows]
    assert c.features[:, FEATURES.index("stripped")].tolist() == [0.0, 0.0, 0.0, 1.0]
    assert c.features[:, FEATURES.index("cites")].tolist() == [0.0, 0.0, 1.0, 1.0]
