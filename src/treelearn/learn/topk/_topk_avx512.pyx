# distutils: language = c++
"""The Top-k search of ``_topk.pyx`` compiled for x86-64-v4 with AVX-512 VPOPCNTDQ (setup.py
gives this module those flags): the compiler vectorises the popcounts over a column's words,
eight per instruction. :mod:`treelearn.learn.topk.estimator` imports it only on a CPU that has these
instructions (else the portable ``_topk``); both return identical results."""
include "_topk_impl.pxi"
