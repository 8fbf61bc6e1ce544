"""The min-rank room: the minimum-rank decision tree consistent with a sample (paper 001,
FIND / FINDMIN) and its compiled search (``search.h``)."""
from treelearn.learn.minrank.estimator import (
    InconsistentSampleError,
    MinRankSearch,
    MinRankTreeClassifier,
    RankSearchLimitError,
    eh_sample_size,
    eh_sample_size_for_size,
    find,
    find_min,
    rank_class_size_bound,
    rank_tree_node_bounds,
    rank_upper_bound_for_size,
)

__all__ = [
    "InconsistentSampleError",
    "RankSearchLimitError",
    "MinRankSearch",
    "MinRankTreeClassifier",
    "find",
    "find_min",
    "rank_class_size_bound",
    "rank_tree_node_bounds",
    "eh_sample_size",
    "eh_sample_size_for_size",
    "rank_upper_bound_for_size",
]
