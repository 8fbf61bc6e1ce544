"""treelearn: decision trees learned with the algorithms learning theory says work.

The public API, re-exported lazily (:mod:`treelearn._lazy`): a name's module is imported the
first time the name is used, so that ``import treelearn`` (and the command line) start at once.
"""
from treelearn._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    # --- foundation: data layer, Tree model, criteria ---
    "treelearn._validation": ("TreeLearnValueError",),
    "treelearn.criteria": ("gain_ratio", "get_criterion", "kappa", "purity_gain"),
    "treelearn.data": ("BinaryData", "Binarizer", "ColumnSchema"),
    "treelearn.tree": ("Tree",),
    "treelearn.tree.export": ("export_graphviz", "export_text", "from_sklearn", "to_sklearn", "to_sklearn_arrays",
                              "tree_from_json", "tree_to_json"),
    "treelearn.tree.codegen": ("export_code",),
    "treelearn.tree.html": ("export_html",),
    "treelearn.tree.plot": ("dtreeviz_model", "plot_tree"),
    "treelearn.tree.front_view": ("plot_front",),
    # --- greedy learners ---
    "treelearn.learn.greedy.estimator": ("GreedyTreeClassifier", "grow_greedy"),
    "treelearn.learn.greedy.regressor": ("GreedyTreeRegressor",),
    # --- top-k and optimal trees ---
    "treelearn.learn.topk.estimator": ("OptimalTreeClassifier", "TopKTreeClassifier", "error_size_front"),
    "treelearn.learn.continuous.regressor": ("OptimalTreeRegressor", "TopKTreeRegressor"),
    # --- minimum-rank trees ---
    "treelearn.learn.minrank.estimator": (
        "InconsistentSampleError", "MinRankSearch", "MinRankTreeClassifier", "RankSearchLimitError", "eh_sample_size",
        "eh_sample_size_for_size", "find", "find_min", "rank_class_size_bound", "rank_tree_node_bounds",
        "rank_upper_bound_for_size"),
    # --- bounds and pruning ---
    "treelearn.prune.bounds": (
        "TreeShape", "all_shapes", "as_shape", "growth_function_upper_bound", "log_growth_function_upper_bound",
        "partitioning_function_upper_bound", "partitioning_functions_upper_bound", "shawe_taylor_bound",
        "stirling2", "stump_vc_dimension", "tight_partitioning_sequences", "vc_dimension_lower_bound",
        "vc_dimension_upper_bound", "wedderburn_etherington"),
    "treelearn.prune.pruners": ("cost_complexity_pruning_path", "prune_cost_complexity", "prune_with_bound",
                                "tree_bound"),
    "treelearn.learn.pruned.estimator": ("PrunedTreeClassifier",),
    "treelearn.learn.pruned.regressor": ("PrunedTreeRegressor",),
    # --- membership-query learning ---
    "treelearn.learn.queries": ("Oracle", "QueryTreeClassifier", "SearchLimitError", "build_dt", "learn_from_queries",
                                "top_down_influence"),
    # --- limits of the searches ---
    "treelearn._limits": ("DEFAULT_TIME_LIMIT", "LimitError", "ResourceLimitError", "SearchLimitWarning"),
}

__getattr__, __dir__, __all__ = lazy_exports(
    __name__, _EXPORTS, submodules=("criteria", "data", "datasets", "distributed", "learn", "prune", "tree"))
