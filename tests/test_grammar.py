"""One grammar, every reader: the keywords, label forms, ranges and place words of figlink.text.grammar are
read alike by JATS xrefs, plain-text mentions, caption labels, PDF caption detection, vision and OCR; and a
form added in grammar.py alone reaches every reader."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from figlink.enrich.align import _spatial_words
from figlink.ingest.jats import parse_jats_bytes
from figlink.ingest.pdf_captions import caption_label
from figlink.model import Subcaption
from figlink.text import grammar as g
from figlink.text.caption_sentences import sentence_spans
from figlink.text.label_roles import find_label_tokens
from figlink.text.labels import raw_label_tokens
from figlink.text.mentions import figure_key, find_mentions, leading_figure_index, parse_mention
from figlink.text.spatial import normalize_position
from figlink.vision.ocr import panel_letter

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.mark.parametrize("label, key", [
    ("Figure 3", "3"), ("Fig. 12", "12"), ("FIGURE 4", "4"), ("Figs. 5", "5"),
    ("Supplementary Figure S1", "S1"), ("Supp. Fig. 3", "S3"), ("Suppl. Fig. 2", "S2"),
    ("Extended Data Fig. 4", "ED4"), ("Source Data Fig. 5", "SD5"), ("Figure 1—figure supplement 2", "1-s2"),
    ("Appendix 1—figure 2", "A1-2"), ("Author response image 1", "R1"),
])
def test_figure_labels_read_alike_by_every_reader(label: str, key: str) -> None:
    caption = f"{label}. Growth of the cells"
    assert figure_key(label) == key  # a JATS <label>
    assert [c.key for c in parse_mention(label)] == [key]  # a JATS xref's text
    assert leading_figure_index(caption).key == key  # the figure index opening a caption
    assert caption_label(caption)[0] == key  # a PDF caption line
    assert g.CAPTION_OPENER.match(caption)  # a caption line read by OCR in a figure image (vision)
    found = find_mentions(f"as shown in {label}.")  # plain text
    assert [c.key for m in found for c in m.citations] == [key]


def _jats_panels(text: str) -> list[list[str]]:
    """The panels of the inline references of Figure 2 in one JATS paragraph."""
    doc = ("<article><front><article-meta><title-group><article-title>T</article-title></title-group>"
           f"</article-meta></front><body><p>{text}</p><fig id=\"f2\"><label>Figure 2</label><caption><p>"
           "Growth.</p></caption></fig></body></article>")
    return [r.panels for r in parse_jats_bytes(doc.encode()).figures[0].inline_refs]


def _caption_labels(text: str) -> list[list[str]]:
    """The merged label tokens the caption splitter reads."""
    return [t.labels for t in find_label_tokens(text, 0, sentence_spans(text))]


@pytest.mark.parametrize("sep", list(g.DASHES) + [" to "])
def test_ranges_expand_alike_in_mentions_xrefs_and_captions(sep: str) -> None:
    abc = ["a", "b", "c"]
    assert parse_mention(f"Figure 2A{sep}C") == parse_mention("Figure 2A, B, C")
    assert [c.panels for c in parse_mention(f"Figure 2A{sep}C")] == [tuple(abc)]
    assert [m.citations[0].panels for m in find_mentions(f"Cells grew (Fig. 2A{sep}C).")] == [tuple(abc)]
    assert _jats_panels(f'Cells grew (<xref ref-type="fig" rid="f2">Fig 2</xref>A{sep}C).') == [abc]
    assert _caption_labels(f"(A{sep}C) Cells grew.") == [abc]
    assert _caption_labels(f"(A){sep}(C) Cells grew.") == [abc]
    assert _caption_labels(f"(ii{sep}iv) Cells grew.") == [["ii", "iii", "iv"]]


@pytest.mark.parametrize("written, letter", [("a", "a"), ("(B)", "b"), ("c.", "c"), ("D:", "d")])
def test_lone_labels_read_alike_by_ocr_and_captions(written: str, letter: str) -> None:
    assert panel_letter(written) == letter  # a label read in an image
    tokens = raw_label_tokens(f"{written} Cells grew.", 0, None, [0])  # a label opening a caption
    assert [t.labels for t in tokens] == [(letter,)]


@pytest.mark.parametrize("word", list(g.PLACE_WORDS) + list(g.INSET_WORDS))
def test_place_words_read_alike_by_spatial_labels_and_align(word: str) -> None:
    place = g.place_of(word)
    assert normalize_position(f"{word} panel") == place  # spatial references
    token = raw_label_tokens(f"(A {word}) Cells.")[0]  # a place after a caption label
    assert token.labels == ("a",) and token.positions == (place,)
    if word in g.PLACE_WORDS:  # panels placed by the words of their subcaption (align reads directions)
        assert _spatial_words(Subcaption([], f"the {word} panel")) == {place}


def _run_edited(tmp_path: Path, old: str, new: str, script: str) -> object:
    """Run ``script`` on a copy of figlink whose grammar.py has the one line ``old`` replaced by ``new``."""
    copy = tmp_path / "src"
    shutil.copytree(SRC / "figlink", copy / "figlink", ignore=shutil.ignore_patterns("__pycache__"))
    grammar = copy / "figlink" / "text" / "grammar.py"
    text = grammar.read_text(encoding="utf-8")
    assert text.count(old) == 1
    grammar.write_text(text.replace(old, new), encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(copy), "PATH": ""})
    return json.loads(out.stdout)


_ROMAN_READERS = """
import json
from figlink.text.captions import analyze_caption
from figlink.text.labels import label_order
listed = "Figure 1. " + " ".join(f"({r}) Part {n}." for n, r in enumerate(
    "i ii iii iv v vi vii viii ix x xi xii xiii xiv xv xvi".split(), 1))
ranged = "Figure 2. (i)–(xvi) Sixteen views of one cell."
print(json.dumps([analyze_caption(c)["labels"][-3:] for c in (listed, ranged)]
                 + [analyze_caption(listed)["expected_panels"], label_order("xvi")]))
"""


def test_a_roman_numeral_added_to_the_grammar_reaches_every_caption_reader(tmp_path: Path) -> None:
    """One line, ROMANS, in grammar.py: the label atom, ranges, merged tokens, the panel sequence, label
    order and the compound count all take the new numeral."""
    old = 'ROMANS = ("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "xiii", "xiv", "xv")'
    as_is = _run_edited(tmp_path / "as_is", old, old, _ROMAN_READERS)
    edited = _run_edited(tmp_path / "edited", old, old.replace('"xv")', '"xv", "xvi")'), _ROMAN_READERS)
    assert as_is == [["xiii", "xiv", "xv"], [], 15, [2, 0]]  # "xvi" read by no reader
    # (label_order ranks a roman by its value x 4, leaving room for its primed forms: ii < ii′ < iii)
    assert edited == [["xiv", "xv", "xvi"], ["xiv", "xv", "xvi"], 16, [1, 16 * 4]]


_PRIME_READERS = """
import json
from figlink.text.labels import accepted_labels, label_order, raw_label_tokens
from figlink.text.label_roles import find_label_tokens
out = []
for prime in ("\\u2032", "\\u2033"):  # B′ and B″
    text = f"(A) Cells. (B{prime}) Mice. B{prime}) Rats. Panel B{prime} shows dogs."
    out.append([[t.form, t.labels] for t in raw_label_tokens(text)]
               + [label_order(f"b{prime}"), sorted(accepted_labels(["a", "b", f"b{prime}"])),
                  [t.labels for t in find_label_tokens(text, 0, [(0, len(text))])]])
print(json.dumps(out))
"""


def test_a_prime_added_to_the_grammar_is_read_as_the_others_are(tmp_path: Path) -> None:
    """One line, PRIMES, in grammar.py: "B″" is then read by every label form and ordered, checked and
    merged exactly as "B′" is."""
    old = "PRIMES = \"'\\u2032\\u2019\""
    as_is = _run_edited(tmp_path / "as_is", old, old, _PRIME_READERS)
    edited = _run_edited(tmp_path / "edited", old, old[:-1] + '\\u2033"', _PRIME_READERS)
    single, double = edited
    assert json.dumps(single).replace("\\u2032", "\\u2033") == json.dumps(double)
    assert as_is[0] == single and as_is[1] != single  # before the edit "B″" is not read as "B′" is
