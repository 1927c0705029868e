# The two set-up commands of the README: `make demo` (the main job) and `make test`.
# Each creates the virtual environment with the pinned dependencies when it is missing or stale.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
REQS := requirements.txt requirements-dev.txt pyproject.toml
STAMP := $(VENV)/.stamp-$(shell cat $(REQS) | sha1sum | cut -c1-12)

.PHONY: demo test bench setup browser
setup: $(STAMP) browser

# Debian's chromium for the web-page tests (Playwright drives it; no browser is ever downloaded).
# A no-op when present; installs it with apt-get when run as root on Debian; otherwise says how.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: chromium is missing; the web tests will skip (install it: apt-get install chromium)"; fi; }

$(STAMP): $(REQS)
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -r requirements.txt -r requirements-dev.txt
	$(VENV)/bin/python -m pip install -q --no-deps -e .
	@rm -f $(VENV)/.stamp-*; touch $@

demo: $(STAMP)
	$(VENV)/bin/figlink demo

test: $(STAMP) browser
	$(VENV)/bin/python -m pytest

# Every benchmark in turn (each skips cleanly when ../shared/data is absent).
BENCHES := jats sentences captions pdf vision search engines exports
bench: $(STAMP)
	@for b in $(BENCHES); do echo "== bench_$$b"; $(VENV)/bin/python benchmarks/bench_$$b.py || exit 1; done
