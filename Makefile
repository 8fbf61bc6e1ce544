# Two entry points (see README): `make demo` and `make test`. Both create the virtual
# environment on first use, install treelearn (editable, with its compiled kernels) and its
# dependencies, rebuild changed kernels, then run. `make demo` installs the runtime dependencies
# only; `make test` adds the test and docs extras (a second stamp), so a first demo is quick.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.treelearn-installed
TEST_STAMP := $(VENV)/.treelearn-test-installed
PYTEST_ARGS ?=
# the long fuzz form: total seconds shared by the fuzz tests, and where its outcome table goes
FUZZ_SECONDS ?= 600
FUZZ_REPORT ?= fuzz-report.json
# `make werror` builds into this directory, never over the in-place build
WERROR_DIR ?= build/werror

.PHONY: setup test-setup build demo test fuzz bench docs browser werror clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install "setuptools>=77" wheel "Cython>=3.0" "numpy>=1.26"
	flock .build.lock $(PY) -m pip install --no-build-isolation -e .
	touch $(STAMP)

# the test and docs extras on top (the kernels built above are up to date: nothing compiles)
$(TEST_STAMP): $(STAMP)
	flock .build.lock $(PY) -m pip install --no-build-isolation -e ".[test,docs]"
	touch $(TEST_STAMP)

setup: $(STAMP)

test-setup: $(TEST_STAMP)

build: $(STAMP)
	flock .build.lock $(PY) setup.py -q build_ext --inplace

demo: build
	$(VENV)/bin/treelearn demo

test: build $(TEST_STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

# fresh random inputs for FUZZ_SECONDS in all (tests/fuzz; `make test` runs its short form)
fuzz: build $(TEST_STAMP)
	$(PY) -m pytest tests/fuzz -q --fuzz-long --fuzz-seconds=$(FUZZ_SECONDS) --fuzz-report=$(FUZZ_REPORT)

# API reference + user guide under docs/_build/html; warnings are errors
docs: build $(TEST_STAMP)
	$(PY) -m sphinx -E -W --keep-going -b html -q docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

# Chromium + chromedriver from the system's packages for the HTML-view browser test (CI runs
# this; elsewhere, without root or apt-get, the test skips with a message)
browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then \
		echo "browser: chromium and chromedriver present"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	else \
		echo "browser: cannot install chromium here (needs root and apt-get); the browser test will skip"; \
	fi

bench: build
	$(PY) benchmarks/bench_greedy.py

# every extension (the AVX-512 build too) with -Wall -Wextra -Werror, into $(WERROR_DIR)
werror: $(STAMP)
	TREELEARN_WERROR=1 TREELEARN_SIMD_BUILD=1 flock .build.lock \
		$(PY) setup.py -q build_ext -b $(WERROR_DIR)/lib -t $(WERROR_DIR)/tmp

clean:
	rm -rf build $(VENV) src/*.egg-info docs/_build
	find src -name '*.so' -delete
	find src -name '*.cpp' -delete
