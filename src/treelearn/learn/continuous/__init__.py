"""The continuous room: optimal trees over every threshold of numeric columns, searched in sorted
order (``search.h`` and the headers beside it)."""
from treelearn.learn.continuous.solver import continuous_fit, count_binary_features, expand_columns, search_backend

__all__ = ["expand_columns", "count_binary_features", "continuous_fit", "search_backend"]
