"""The Tree model and its exports."""
from treelearn.tree.tree import Tree

__all__ = ["Tree"]
