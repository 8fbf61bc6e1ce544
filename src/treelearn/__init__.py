"""treelearn: decision trees learned with the algorithms learning theory says work.

The public API, re-exported; nothing else lives here.
"""
# --- foundation: data layer, Tree model, criteria ---
from treelearn._validation import TreeLearnValueError
from treelearn.criteria import gain_ratio, get_criterion, kappa, purity_gain
from treelearn.data import BinaryData, Binarizer, ColumnSchema
from treelearn.tree import Tree
from treelearn.tree.export import (
    export_graphviz, export_text, from_sklearn, to_sklearn, to_sklearn_arrays, tree_from_json, tree_to_json,
)
from treelearn.tree.html import export_html  # noqa: E402
from treelearn.tree.plot import dtreeviz_model, plot_tree  # noqa: E402

# --- foundation: greedy learners ---
from treelearn.learn.greedy.estimator import GreedyTreeClassifier, grow_greedy

# --- top-k and optimal trees ---
from treelearn.learn.topk.estimator import OptimalTreeClassifier, TopKTreeClassifier  # noqa: E402

# --- minimum-rank trees ---
from treelearn.learn.minrank.estimator import (  # noqa: F401
    InconsistentSampleError, MinRankSearch, MinRankTreeClassifier, RankSearchLimitError, eh_sample_size,
    eh_sample_size_for_size, find, find_min, rank_class_size_bound, rank_tree_node_bounds,
    rank_upper_bound_for_size,
)

# --- bounds and pruning ---
from treelearn.prune.bounds import (  # noqa: E402
    TreeShape, all_shapes, as_shape, growth_function_upper_bound, log_growth_function_upper_bound,
    partitioning_function_upper_bound, partitioning_functions_upper_bound, shawe_taylor_bound, stirling2,
    stump_vc_dimension, tight_partitioning_sequences, vc_dimension_lower_bound, vc_dimension_upper_bound,
    wedderburn_etherington,
)
from treelearn.prune.pruners import (  # noqa: E402
    PrunedTreeClassifier, cost_complexity_pruning_path, prune_cost_complexity, prune_with_bound, tree_bound,
)

# --- membership-query learning ---
from treelearn.learn.queries import (  # noqa: E402
    Oracle,
    QueryTreeClassifier,
    SearchLimitError,
    build_dt,
    learn_from_queries,
    top_down_influence,
)

# --- Dask input for every estimator's fit (Dask itself is imported only when used) ---
import treelearn.distributed  # noqa: E402,F401

__version__ = "0.1.0"

# --- limits of the searches ---
from treelearn._limits import DEFAULT_TIME_LIMIT, LimitError, ResourceLimitError, SearchLimitWarning  # noqa: E402,F401
