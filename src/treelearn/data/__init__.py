"""Data layer: validation, column schema, binarization, packed bit matrices, datasets.

Re-exported lazily: the Binarizer (which needs scikit-learn) is imported only when used, so that
reading a model (``treelearn.data.schema``) stays light.
"""
from treelearn._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "treelearn.data.schema": ("ColumnSchema",),
    "treelearn.data.bitmatrix": ("BinaryData",),
    "treelearn.data.binarize": ("Binarizer", "binarize_sample"),
})
