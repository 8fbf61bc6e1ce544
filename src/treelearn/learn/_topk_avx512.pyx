# distutils: language = c++
# distutils: depends = src/treelearn/_include/topk/run.h src/treelearn/_include/topk/search.h src/treelearn/_include/topk/depth2.h src/treelearn/_include/topk/frame.h src/treelearn/_include/topk/cache.h src/treelearn/_include/topk/bounds.h src/treelearn/_include/topk/ranking.h src/treelearn/_include/topk/objective.h src/treelearn/_include/topk/problem.h src/treelearn/_include/tl_count.h src/treelearn/_include/tl_limits.h src/treelearn/_include/tl_bitpack.h src/treelearn/learn/_topk_impl.pxi
"""The Top-k search of ``_topk.pyx`` compiled for x86-64-v4 with AVX-512 VPOPCNTDQ (setup.py
gives this module those flags): the compiler vectorises the popcounts over a column's words,
eight per instruction. :mod:`treelearn.learn.topk` imports it only on a CPU that has these
instructions (else the portable ``_topk``); both return identical results."""
include "_topk_impl.pxi"
