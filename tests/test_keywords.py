"""Medical filter, stage 1: MedICaT's imaging keywords on word boundaries, case-insensitive."""

from __future__ import annotations

import pytest

from figlink.text.keywords import MEDICAL_KEYWORDS, find_medical_keywords, is_medical, is_strong_signal


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


@pytest.mark.parametrize("text, found", [
    # ROCO radiology captions the plain list missed: other forms of a keyword's word family.
    ("Upright plain abdominal radiography showing air-fluid levels in the small bowel", ["radiograph"]),
    ("Radiographic control after one year", ["radiograph"]),
    ("Radiogram – lateral view.", ["radiograph"]),
    ("Three-dimensional tomographic reconstruction", ["tomography"]),
    ("Ultrasonographic soft tissue thickness over N cephalometric point", ["ultrasonography"]),
    ("Concentric left ventricular hypertrophy by echocardiography.", ["echocardiogram"]),
    ("Endoscopic view of an intragastric trichobezoar.", ["endoscope"]),
    # The acronyms' other written forms.
    ("Sagittal T2-weighted MR image of the cervical spine", ["MRI"]),
    ("Conventional magnetic resonance images of the cyst", ["MRI"]),
    ("Resting ECG of the patient", ["EKG"]),
])
def test_keyword_families_and_aliases(text: str, found: list[str]) -> None:
    assert find_medical_keywords(text) == found


@pytest.mark.parametrize("text", ["Mr Smith's cells", "Photograph of the setup", "histogram of counts",
                                  "a telescope", "programme"])
def test_families_and_aliases_stay_within_their_words(text: str) -> None:
    assert find_medical_keywords(text) == []


def test_strong_signal_is_a_named_modality() -> None:
    assert is_strong_signal(["CT"]) and is_strong_signal(["radiograph"])
    assert not is_strong_signal(["imaging"]) and not is_strong_signal([])
    assert is_strong_signal(["imaging", "tracer"])
