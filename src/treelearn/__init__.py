"""treelearn: decision trees learned with the algorithms learning theory says work."""
from treelearn._validation import TreeLearnValueError
from treelearn.criteria import gain_ratio, get_criterion, kappa, purity_gain
from treelearn.data import BinaryData, Binarizer, ColumnSchema
from treelearn.tree import Tree

__version__ = "0.1.0"

__all__ = [
    "Binarizer",
    "BinaryData",
    "ColumnSchema",
    "Tree",
    "TreeLearnValueError",
    "gain_ratio",
    "get_criterion",
    "kappa",
    "purity_gain",
]
