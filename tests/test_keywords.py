"""Medical filter, stage 1: MedICaT's imaging keywords on word boundaries, case-insensitive."""

from __future__ import annotations

import pytest

from figlink.text.keywords import MEDICAL_KEYWORDS, find_medical_keywords, is_medical


@pytest.mark.parametrize("text, found", [
    ("Axial CT scan of the pelvis", ["CT", "scan"]),
    ("contrast-enhanced ct", ["CT"]),
    ("CT-guided biopsy", ["CT"]),
    ("CTs and MRIs", ["CT", "MRI"]),
    ("X ray of the hand; x‐ray; xray", ["X-ray", "Xray"]),
    ("PET and PET/CT and PET-CT", ["PET", "CT"]),
    ("PET–MRI fusion", ["PET-MRI"]),
    ("ERCP: cholangio-pancreatography", ["cholangio-pancreatography"]),
    ("Postoperative radiographs", ["radiograph"]),
    ("Esophagogastroduodenoscopy findings", ["esophagogastroduodenoscopy"]),
])
def test_keywords_found(text: str, found: list[str]) -> None:
    assert find_medical_keywords(text) == found


@pytest.mark.parametrize("text", ["ACT-1 protein", "scanning electron microscope", "cats", "petri dish", "mrna"])
def test_no_match_inside_words(text: str) -> None:
    assert find_medical_keywords(text) == []


def test_caption_and_inline_references() -> None:
    assert not is_medical("Bar chart of gene expression.")
    assert is_medical("Bar chart of gene expression.", ["The ultrasound images (Fig. 2) show…"])


def test_keyword_list_is_medicat_appendix_b() -> None:
    assert len(MEDICAL_KEYWORDS) == 39 and "esophagogastroduodenoscopy" in MEDICAL_KEYWORDS
