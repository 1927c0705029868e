# The two set-up commands of the README: `make demo` (the main job) and `make test`.
# Each creates the virtual environment with the pinned dependencies when it is missing or stale.
# The interpreter: the distribution's python3.11 where it can make a venv (Debian builds it with PGO and LTO:
# figlink's Python-level stages run 15-20% faster on it than on a source build without
# --enable-optimizations, such as pyenv's default), else the first python3.11 or python3 on PATH.
PYTHON ?= $(shell for p in /usr/bin/python3.11 "$$(command -v python3.11)" "$$(command -v python3)"; do \
  [ -x "$$p" ] && "$$p" -c "import ensurepip, venv" 2>/dev/null && { echo "$$p"; break; }; done)
VENV := .venv
REQS := requirements.txt requirements-dev.txt pyproject.toml
STAMP := $(VENV)/.stamp-$(shell { cat $(REQS); echo "$(PYTHON)"; } | sha1sum | cut -c1-12)

.PHONY: demo test bench setup browser typecheck native model-matcher model-matcher-rescore model-captioner
setup: $(STAMP) browser

# Debian's chromium for the web-page tests (Playwright drives it; no browser is ever downloaded).
# A no-op when present; installs it with apt-get when run as root on Debian; otherwise says how.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: chromium is missing; the web tests will skip (install it: apt-get install chromium)"; fi; }

# A venv made by another interpreter is made afresh.
$(STAMP): $(REQS)
	@test -n "$(PYTHON)" || { echo "error: no python3.11 or python3 with the venv module found"; exit 1; }
	@test -x $(VENV)/bin/python && [ "$$(cat $(VENV)/.interpreter 2>/dev/null)" = "$(PYTHON)" ] || \
	  { $(PYTHON) -m venv --clear $(VENV) && echo "$(PYTHON)" > $(VENV)/.interpreter; }
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -r requirements.txt -r requirements-dev.txt
	$(VENV)/bin/python -m pip install -q --no-deps -e .
	@$(MAKE) --no-print-directory native
	@rm -f $(VENV)/.stamp-*; touch $@

# Optional: the hot text modules compiled with mypyc into src/figlink/_native/ (1.3x on inline references and
# on the caption stage). figlink uses the build only while it matches the sources (an edit since the build, or
# another interpreter: the .py files run); `make native` again after editing them. Without a C compiler the
# build says so and the .py files run, with the same output. A build that already matches the sources and the
# compiler settings is kept (no compile); `python -m figlink.native_build --force` rebuilds it anyway.
native:
	@$(VENV)/bin/python -m figlink.native_build || true

demo: $(STAMP)
	$(VENV)/bin/figlink demo

test: $(STAMP) browser
	$(VENV)/bin/python -m pytest

# mypy on src/figlink with pyproject.toml's settings (the test suite runs the same check: tests/test_typecheck.py)
typecheck: $(STAMP)
	$(VENV)/bin/python -m mypy

# The issue-15 quality benchmarks (tune and check side by side, naive baseline of the same run; see
# benchmarks/README.md), then the speed and engine benchmarks; each skips cleanly when ../shared/data is
# absent. About 40 minutes on a 2-core machine. The quality benchmarks take --part and --failures when run
# by hand (the tune part's failures go to benchmarks/out/).
BENCH_RUNS := "subcaptions" "medical" "inline_refs" "printed_letters" "alignment" "pdf --no-memory" "search --set europepmc" \
  "parse_cli --profile" "captions" "jats --no-memory" "sentences" "vision" "exports" "engines" "matcher" "embed_vectors" "hub_update"
bench: $(STAMP)
	@for b in $(BENCH_RUNS); do set -- $$b; name=$$1; shift; echo "== bench_$$name $$*"; \
	  $(VENV)/bin/python benchmarks/bench_$$name.py $$* || exit 1; done

# The default image–text matcher shipped in src/figlink/learn/data/matcher (needs ../shared/data; the
# features are cached in $FIGLINK_CACHE_DIR or ~/.cache/figlink, the first run OCRs ~3,700 figures).
model-matcher: $(STAMP)
	FIGLINK_SHARED_DATA=$${FIGLINK_SHARED_DATA:-$(abspath ../shared/data)} \
	$(VENV)/bin/python -m figlink.learn.reproduce

# the shipped matcher's manifest and card under the current score (lexical weight, hubness correction), its weights kept
model-matcher-rescore: $(STAMP)
	FIGLINK_SHARED_DATA=$${FIGLINK_SHARED_DATA:-$(abspath ../shared/data)} \
	$(VENV)/bin/python -m figlink.learn.rescore

model-captioner: $(STAMP)
	FIGLINK_SHARED_DATA=$${FIGLINK_SHARED_DATA:-$(abspath ../shared/data)} \
	$(VENV)/bin/python -m figlink.learn.captioner_reproduce
