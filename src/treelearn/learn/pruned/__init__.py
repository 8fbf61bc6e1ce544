"""The pruned room: a greedy tree pruned by the Shawe-Taylor bound or by cross-validated
cost-complexity (paper 002 §6); the pruning routines themselves are :mod:`treelearn.prune`."""
from treelearn.learn.pruned.estimator import PrunedTreeClassifier
from treelearn.learn.pruned.regressor import PrunedTreeRegressor

__all__ = ["PrunedTreeClassifier", "PrunedTreeRegressor"]
