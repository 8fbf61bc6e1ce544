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
# `make werror` / `make sanitize` build into these directories, never over the in-place build
WERROR_DIR ?= build/werror
SANITIZE_DIR ?= build/sanitize
# the compiled-code tests run under AddressSanitizer + UndefinedBehaviorSanitizer, chosen by name
# (so they are found wherever a test file moves) to run every compiled module: bitsets and
# counting, binning and coding, tree apply, the criteria callback, greedy growth (exact and
# histogram finders, missing values, threads, memory budget, ccp), Top-k (threads, memory cap,
# user criterion), the continuous search (threads, lookahead, root shares, missing values),
# min-rank, bound pruning and the Dask shard counter; a few minutes in all
SANITIZE_TESTS ?= tests
SANITIZE_SELECT ?= count_property or count_class_counts or pack_binary_equals or codes_are_searchsorted \
	or sampled_coding or max_thresholds_quantiles or exact_every_midpoint or vs_naive_walk or prune_vs_naive \
	or custom_G_accepted or depth_first_equals_naive_recursion or best_first_equals_naive_global \
	or callable_criterion_error or histogram_memory_budget or weakest_link_pruning or any_numeric_dtype \
	or sklearn_split_for_split or finders_give_one_tree_with_missing \
	or identical_trees_for_any_n_jobs or user_criterion_with_threads or optimal_equals_brute_force \
	or search_equals_plain_recursion or n_jobs_identical or memory_cap_evicts or binary_fast_path_matches \
	or user_criterion_equals_plain or (continuous and equals_brute_force) or threads_give or threads_time_limit \
	or root_shares_give or topk_incumbent_equals or topk_incumbent_keeps or (missing and brute) \
	or find_min_rank_equals or papers_procedure_tree_for_tree or memory_cap_raises or multiword_samples \
	or fast_matches_exact_integers or never_raises_the_bound or unweighted_shard_counts or root_search_shares \
	or group_sums_are_correctly_rounded or any_doubles or sum_of_its_subtree or fronts_equal_the_plain_recursion or max_leaves_is_the_exhaustive \
	or knows_each_rows_leaf or neighbour_trees_keep_the_tree or hist_threads_give_one_tree or ccp_alpha_equals_brute
RUFF_PATHS ?= src tests benchmarks
SANITIZED = PYTHONPATH=$(SANITIZE_DIR)/pkg LD_PRELOAD="$$($${CXX:-g++} -print-file-name=libasan.so)" \
	ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

.PHONY: setup test-setup build demo test fuzz bench docs browser lint werror sanitize clean

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

# ruff over the sources, tests and benchmarks (rules in pyproject.toml)
lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check $(RUFF_PATHS)

# every extension (the AVX-512 build too) with -Wall -Wextra -Werror, into $(WERROR_DIR)
werror: $(STAMP)
	TREELEARN_WERROR=1 TREELEARN_SIMD_BUILD=1 flock .build.lock \
		$(PY) setup.py -q build_ext -b $(WERROR_DIR)/lib -t $(WERROR_DIR)/tmp

# the extensions with ASan + UBSan (-O1 -g) into $(SANITIZE_DIR)/lib; the package with them in
# $(SANITIZE_DIR)/pkg; SANITIZE_TESTS run against it. CPython is not built with ASan, so the
# runtime is preloaded; CPython's own allocations at exit are not leaks of ours (detect_leaks=0);
# a test that asks for too much memory gets bad_alloc as without ASan (allocator_may_return_null);
# pytest captures Python-level output only (--capture=sys), so a sanitizer report reaches the log
sanitize: $(TEST_STAMP)
	TREELEARN_SANITIZE=1 flock .build.lock \
		$(PY) setup.py -q build_ext -b $(SANITIZE_DIR)/lib -t $(SANITIZE_DIR)/tmp
	rm -rf $(SANITIZE_DIR)/pkg && mkdir -p $(SANITIZE_DIR)/pkg
	cp -R src/treelearn $(SANITIZE_DIR)/pkg/
	find $(SANITIZE_DIR)/pkg \( -name '*.so' -o -name '*.cpp' -o -name __pycache__ \) -prune -exec rm -rf {} +
	cp -R $(SANITIZE_DIR)/lib/treelearn/. $(SANITIZE_DIR)/pkg/treelearn/
	$(SANITIZED) $(PY) -c "import treelearn.tree._tree as m; assert '$(SANITIZE_DIR)/pkg' in m.__file__, m.__file__"
	$(SANITIZED) $(PY) -m pytest -q -p no:cacheprovider --capture=sys $(SANITIZE_TESTS) -k "$(SANITIZE_SELECT)"

clean:
	rm -rf build $(VENV) src/*.egg-info docs/_build
	find src -name '*.so' -delete
	find src -name '*.cpp' -delete
