"""Histogram coding of numeric columns, compiled (``_binning.pyx`` over ``core/coding.h``):
code = number of thresholds <= x, the numeric thresholds of a column (and of every column of a
row sample), and the coding of a column with missing values. The public face of the binding for the learners (the greedy room
codes its features with it)."""
from treelearn.data._binning import (code_column_missing, code_columns_into, code_columns_missing, code_rows, column_thresholds,
                                     sample_thresholds)

__all__ = ["code_column_missing", "code_columns_into", "code_columns_missing", "code_rows", "column_thresholds", "sample_thresholds"]
