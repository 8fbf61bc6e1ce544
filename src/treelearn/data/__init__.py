"""Data layer: validation, column schema, binarization, packed bit matrices, datasets."""
from treelearn.data.schema import ColumnSchema
from treelearn.data.bitmatrix import BinaryData
from treelearn.data.binarize import Binarizer, binarize_sample

__all__ = ["ColumnSchema", "BinaryData", "Binarizer", "binarize_sample"]
