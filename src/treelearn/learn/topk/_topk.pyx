# distutils: language = c++
"""Compiled Top-k / optimal tree search (the engine is ``learn/topk/``, entry ``run.h``; this is its binding).

``search(columns, y, n_classes, weights, k, max_depth, criterion_code, gain_ratio, time_limit,
memory_limit_bytes, n_jobs)`` takes the packed columns of a :class:`treelearn.data.BinaryData`
(shape ``(d, n_words)``) and returns the tree over binary features in preorder plus search
statistics. The GIL is released during the search.
"""
include "_topk_impl.pxi"
