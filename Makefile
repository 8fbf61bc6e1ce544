# Two entry points (see README): `make demo` and `make test`. Both create the virtual
# environment on first use, install treelearn (editable, with its compiled kernels) and its
# dependencies, rebuild changed kernels, then run.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.treelearn-installed
PYTEST_ARGS ?=

.PHONY: setup build demo test bench clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install "setuptools>=68" wheel "Cython>=3.0" "numpy>=1.26"
	$(PY) -m pip install --no-build-isolation -e ".[test]"
	touch $(STAMP)

setup: $(STAMP)

build: $(STAMP)
	flock .build.lock $(PY) setup.py -q build_ext --inplace

demo: build
	$(VENV)/bin/treelearn demo

test: build
	$(PY) -m pytest $(PYTEST_ARGS)

bench: build
	$(PY) benchmarks/bench_greedy.py

clean:
	rm -rf build $(VENV) src/*.egg-info
	find src -name '*.so' -delete
	find src -name '*.cpp' -delete
