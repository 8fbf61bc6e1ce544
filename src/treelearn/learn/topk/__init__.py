"""The Top-k room: Top-k and optimal trees over binary features (paper 003) and its compiled
search (``run.h`` and the headers beside it)."""
from treelearn.learn.topk.estimator import OptimalTreeClassifier, TopKTreeClassifier, topk_search

__all__ = ["TopKTreeClassifier", "OptimalTreeClassifier", "topk_search"]
