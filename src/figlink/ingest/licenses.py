"""License statements → SPDX ids and the SciOL "open" flag."""

from __future__ import annotations

import re

from figlink.model import License

# Open in the SciOL sense: reuse and redistribution without NC/ND restrictions.
OPEN_SPDX = frozenset({
    "CC0-1.0", "CC-BY-1.0", "CC-BY-2.0", "CC-BY-2.5", "CC-BY-3.0", "CC-BY-4.0", "MIT", "Apache-2.0",
    "LicenseRef-CC-BY", "LicenseRef-public-domain",
})

_CC_URL = re.compile(
    r"creativecommons\.org/(?:licenses/(?P<kind>[a-z-]+)/(?P<ver>\d\.\d)|publicdomain/(?P<pd>zero|mark)/(?P<pdver>\d\.\d))",
    re.I)
_CC_TEXT = re.compile(
    r"\bCC[- ]?(?P<kind>BY(?:[- ](?:NC|SA|ND))*)(?:[- ](?P<ver>\d\.\d))?\b"
    r"|creative\s+commons\s+(?P<long>attribution(?:[- ](?:non-?commercial|no\s*-?derivatives?|no-?derivs|share-?alike))*)"
    r"(?:\s+(?:license|licence))?(?:[,\s]+(?:version\s+)?(?P<lver>\d\.\d))?",
    re.I)


def _cc_spdx(kind: str, version: str | None) -> str:
    parts = [p for p in re.split(r"[- ]+", kind.upper()) if p]
    name = "CC-" + "-".join(parts)
    return f"{name}-{version}" if version else f"LicenseRef-{name}"


def _long_to_kind(long: str) -> str:
    s = long.lower()
    kind = "BY"
    if "non" in s and "commercial" in s:
        kind += "-NC"
    if "share" in s:
        kind += "-SA"
    if "no" in s and "deriv" in s:
        kind += "-ND"
    return kind


def normalize_license(url: str | None, text: str | None, license_type: str | None = None) -> License:
    """The SPDX id of a license given by URL and/or statement text (URL wins when both are present)."""
    spdx: str | None = None
    for candidate in (url, text):
        if not candidate:
            continue
        m = _CC_URL.search(candidate)
        if m:
            spdx = "CC0-1.0" if m.group("pd") == "zero" else (
                "LicenseRef-public-domain" if m.group("pd") else _cc_spdx(m.group("kind"), m.group("ver")))
            break
    if spdx is None and text:
        m = _CC_TEXT.search(text)
        if m:
            if m.group("kind"):
                spdx = _cc_spdx(m.group("kind"), m.group("ver"))
            else:
                spdx = _cc_spdx(_long_to_kind(m.group("long")), m.group("lver"))
        elif re.search(r"\bpublic domain\b", text, re.I):
            spdx = "CC0-1.0" if re.search(r"\bCC0\b", text) else "LicenseRef-public-domain"
        elif re.search(r"\bCC0\b", text):
            spdx = "CC0-1.0"
        elif re.search(r"\bMIT License\b", text):
            spdx = "MIT"
        elif re.search(r"\bApache License,?\s+(?:Version\s+)?2\.0\b", text, re.I):
            spdx = "Apache-2.0"
    if spdx is None and license_type and license_type.lower() in {"cc-by", "ccby"}:
        spdx = "LicenseRef-CC-BY"
    return License(spdx=spdx, url=url, open=spdx in OPEN_SPDX, text=text)
