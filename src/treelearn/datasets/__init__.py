"""Datasets: loaders for a data directory of real datasets, and the papers' synthetic generators.

Real data is never shipped: loaders read it from a data directory (the ``--data-dir`` option of
the CLI, tests and benchmarks; ``TREELEARN_DATA_DIR``; default ``../shared/datasets`` next to
the repository).
"""
# --- loaders (foundation) ---
from treelearn.datasets.loaders import default_data_dir, load_dataset, list_datasets  # noqa: F401

# --- generators: Top-k hard distributions ---
from treelearn.datasets.topk import make_parity_distractors, make_tribes_majority  # noqa: F401,E402

# --- generators: random rank-r trees ---
from treelearn.datasets.rank import (  # noqa: F401
    make_rank_tree_sample, random_rank_tree, sample_uniform, uniform_error,
)

# --- generators: Boolean functions, random trees, lower-bound function ---
from treelearn.datasets.boolean import (  # noqa: F401,E402
    flip_labels,
    lower_bound_function,
    majority,
    random_monotone,
    random_tree,
    tribes,
    tribes_tree,
    tribes_width,
)
