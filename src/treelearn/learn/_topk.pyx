# distutils: language = c++
# distutils: depends = src/treelearn/_include/topk/run.h src/treelearn/_include/topk/search.h src/treelearn/_include/topk/depth2.h src/treelearn/_include/topk/frame.h src/treelearn/_include/topk/cache.h src/treelearn/_include/topk/bounds.h src/treelearn/_include/topk/ranking.h src/treelearn/_include/topk/objective.h src/treelearn/_include/topk/problem.h src/treelearn/_include/tl_count.h src/treelearn/_include/tl_limits.h src/treelearn/_include/tl_bitpack.h src/treelearn/learn/_topk_impl.pxi
"""Compiled Top-k / optimal tree search (the engine is ``_include/topk/``, entry ``run.h``; this is its binding).

``search(columns, y, n_classes, weights, k, max_depth, criterion_code, gain_ratio, time_limit,
memory_limit_bytes, n_jobs)`` takes the packed columns of a :class:`treelearn.data.BinaryData`
(shape ``(d, n_words)``) and returns the tree over binary features in preorder plus search
statistics. The GIL is released during the search.
"""
include "_topk_impl.pxi"
