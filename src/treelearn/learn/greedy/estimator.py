"""Greedy top-down decision trees: ID3 / C4.5 / CART and BuildTopDownDT (000, Fig. 1).

Two growth orders over the same split finder:

* **depth-first** (``max_leaves=None``): every node is split by the condition of largest purity
  gain until it is pure, reaches ``max_depth``, is too small for ``min_samples_leaf`` or has no
  valid split (Top-1 of 003 §3.1: ID3/C4.5 with entropy, CART with Gini);
* **best-first** (``max_leaves=t``), BuildTopDownDT: repeatedly split the leaf ℓ and condition
  maximising the *global* purity gain ``Pr[x reaches ℓ] · (local gain)`` (000 Def. 3; ``Pr`` the
  weighted fraction of the training sample) until the tree has t leaves or nothing can be split;
  leaves are labelled by their majority class (the f-completion, 000 Def. 1).

The local gain of a split of a node with class counts ``c`` (total W) into ``L`` and ``R`` is
``G(c) − (W_L/W)·G(L) − (W_R/W)·G(R)`` for the multiclass form of the impurity G (see
:mod:`treelearn.criteria`).

Conditions. A numeric column j gives ``x_j >= t``: the candidates are the cuts between consecutive
distinct training values (exact; ``max_thresholds=None``) or at most ``max_thresholds`` quantile
thresholds (the same thresholds as :func:`treelearn.data.binarize.numeric_thresholds` and the
:class:`~treelearn.Binarizer`, histogram-style split finding). A categorical column gives the
one-hot conditions ``x_j == v`` (a column with exactly two values only ``x_j == larger value``, as
the Binarizer). A row goes right when the condition holds.

Rules (deterministic on every machine): an impure node with a valid split (both sides non-empty,
at least ``min_samples_leaf`` rows each) is split even if its best gain is 0, unless
``min_impurity_decrease > 0``, when the split's global gain must be at least that. Gains that
differ by less than 1e-12 are ties. A tie goes to the *widest* split: the one with the most of
its column's candidate thresholds cutting the node's rows the same way, i.e. (exact mode) the
most distinct training values of the column in the gap ``(a, b]`` between the node's largest
value going left, a, and its smallest going right, b (values of rows elsewhere in the tree fall
in it); with ``max_thresholds``, the most quantile thresholds in that gap. A categorical
condition and the missing-only split have width 1. A wide gap leaves room on both sides of the
threshold for values training never showed this node (a margin, counted in the column's own
training values: unchanged by any increasing transformation of a column, and free of its
units). Equally wide ties go to the first feature in the feature order (index order, or a random
order drawn from ``random_state``), then the lowest threshold (category code); in best-first
growth, ties between leaves go to the leaf created first. A numeric
split's threshold is then CART's node-local midpoint: halfway between the node's largest value
going left and its smallest value going right (in histogram mode, of the quantile thresholds
that cut the node's rows the same way, the middle one). Leaf labels: majority, ties to the first
class. Node impurities (``tree_.impurity``) and ``min_impurity_decrease`` are in scikit-learn's
units (entropy in bits, Gini 1 − Σp²); the search itself uses the papers' normalised G, which
orders splits identically. ``min_samples_split`` and ``ccp_alpha`` (minimal cost-complexity
pruning after growth) follow scikit-learn.

Missing values (NaN, None, ``pd.NA`` in X) are handled as scikit-learn (>= 1.3) does: at a node
where a feature has missing values, every threshold is tried with the missing rows sent left and
sent right, and the "missing-only" split (present values left, missing right; threshold ``+inf``)
is tried too, in scikit-learn's order (missing right, then left, then alone), so that ties resolve
alike; a feature whose values are all missing at the node is skipped. A split whose node had no
missing value in its feature sends missing values to the child with more training weight (the
right one on a tie). The directions are the Tree's ``missing_go_to_left``. Categorical columns
follow the same rule with their one-hot conditions.

The growth runs in compiled code (``greedy/grow.h``) with one of two split finders, chosen by
a cost model (both give the same tree): per-feature row lists sorted once and stably partitioned
per node, or per-node (feature × bin × class) histograms, the larger child by subtraction
(always used with ``max_thresholds``). The impurity is one of the compiled policies of
``core/criteria.h``; a user callable G is evaluated by the same engine through a callback,
one batch of candidate splits per node.
"""
from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, replace

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch, check_random_state

from treelearn._validation import (
    CLASS_WEIGHT,
    COLUMNS,
    INT32_MAX,
    INT64_MAX,
    RANDOM_STATE,
    Interval,
    Options,
    RealNotInt,
    TreeLearnValueError,
    check_float_param,
    check_int_param,
    check_sample_weight,
    validate_parameters,
)
from treelearn.base import CRITERION, BaseTreeClassifier
from treelearn.criteria import Criterion, get_criterion
from treelearn.data.schema import ColumnSchema
from treelearn.data import coding, sketch
from treelearn.learn.anytime import n_threads
from treelearn.learn.greedy import _greedy
from treelearn.learn.greedy.options import (MAX_FEATURES, MONOTONIC_CST, ByteBudget, check_monotonic_cst,
                                            n_drawn_features)
from treelearn._limits import SPENT, FitClock, FitTimeout
from treelearn.tree.build import split_thresholds
from treelearn.tree.weakest_link import ccp_path, prune_ccp
from treelearn.tree.tree import Tree, kernel_nodes

__all__ = ["GreedyTreeClassifier", "grow_greedy", "grow_checked", "code_features", "tree_from_growth"]

#: numeric columns coded per block from the threshold sample (the time limit is checked between blocks)
SKETCH_BLOCK = 8
_HIST_CODE_FRACTION = 0.1  # "auto" finder in exact mode: histograms when sum(codes)*classes <= this * n * d


class CodedFeatures:
    """Features as small integer codes, ascending in the raw value (see :func:`code_features`)."""

    def __init__(self, codes, n_codes, is_cat, cat_only, thresholds, values=None, miss_code=None):
        self.codes = codes            # (d, n) int32
        self.n_codes = n_codes        # (d,) int32
        self.is_cat = is_cat          # (d,) uint8
        self.cat_only = cat_only      # (d,) int32: the only candidate code of a two-valued categorical column
        self.thresholds = thresholds  # per feature: ascending thresholds (numeric) or None
        self.values = values          # per numeric feature whose codes are the ranks of its distinct values
                                      # (exact mode, or no more values than max_thresholds): those values, else None
        # (d,) int32: the code of each feature's missing values (NaN), above its present values'; -1: none
        self.miss_code = np.full(n_codes.size, -1, dtype=np.int32) if miss_code is None else miss_code

    @property
    def has_missing(self) -> bool:
        return bool(np.any(self.miss_code >= 0))


def code_features(Xe: np.ndarray, schema: ColumnSchema | None = None,
                  max_thresholds: int | None = None, n_jobs: int = 1, check=None) -> CodedFeatures:
    """Encoded matrix -> per-feature integer codes and the thresholds they stand for.

    Numeric column j: thresholds ``t`` (every midpoint, or ``numeric_thresholds(col,
    max_thresholds)`` of the present values) and code ``#{t <= x}``, so ``x >= t[k-1]`` iff
    ``code >= k``. Categorical column j: the category code itself. A missing value (NaN) gets the
    code ``miss_code[j]``, one above every other code of its column. ``n_jobs`` threads code
    the numeric columns (one column each at a time). ``check``: called between blocks of
    columns (a :class:`~treelearn._limits.FitClock`'s ``check``: it raises on the deadline or
    Ctrl-C), so that coding many rows stops within about one column's time.
    """
    Xe = np.asarray(Xe)  # any order, strides and numeric dtype: one float64 column buffer at a time
    if Xe.dtype.kind not in "biuf":
        Xe = Xe.astype(np.float64)
    n, d = Xe.shape
    if schema is None:
        schema = ColumnSchema(categories=[None] * d)
    codes = np.empty((d, n), dtype=np.int32)
    n_codes = np.empty(d, dtype=np.int32)
    is_cat = np.zeros(d, dtype=np.uint8)
    cat_only = np.full(d, -1, dtype=np.int32)
    miss_code = np.full(d, -1, dtype=np.int32)
    thresholds, values = [None] * d, [None] * d
    numeric = []
    for j in range(d):
        if not schema.is_categorical(j):
            numeric.append(j)
            continue
        nan = np.isnan(Xe[:, j])
        c = np.where(nan, 0.0, Xe[:, j]).astype(np.int64)
        if c.size and c.min() < 0:
            raise TreeLearnValueError(f"column {schema.column_name(j)}: unseen category codes in training data")
        is_cat[j] = 1
        n_codes[j] = max(len(schema.categories[j]), int(c.max()) + 1 if c.size else 1)
        present = np.unique(c[~nan])
        if nan.any():
            miss_code[j] = n_codes[j]
            n_codes[j] += 1
            c[nan] = miss_code[j]
        codes[j] = c
        if present.size == 2:
            cat_only[j] = present[1]
    if numeric:
        # compiled: one radix sort per column; the same thresholds as numeric_thresholds (tested)
        cols = np.asarray(numeric, dtype=np.int64)
        m = 0 if max_thresholds is None else int(max_thresholds)
        # one column buffer at a time (no transposed copy of Xe); exact mode keeps neither
        # thresholds nor values: a column's r-th distinct value is read from a row of rank r
        # (_RankValues), its midpoints derived on demand (_Midpoints)
        if max_thresholds is None:
            n_distinct, n_missing = _by_blocks(lambda c: _greedy.code_numeric_ranks(Xe, c, codes, int(n_jobs)),
                                               cols, check, n_jobs)
            thr = [None] * len(numeric)
            vals = [_RankValues(Xe, j, codes[j], int(u)) for j, u in zip(numeric, np.asarray(n_distinct).tolist())]
        elif n > sketch.SKETCH_ROWS:  # thresholds of a fixed sample (the Dask fit's too)
            # (blocks of SKETCH_BLOCK columns: the coding reads a block's columns in one pass over the rows)
            thr, vals, n_missing = _by_blocks(lambda c: sketch_code_numeric(Xe, c, m, codes), cols, check,
                                              max(SKETCH_BLOCK, int(n_jobs)))
        else:
            thr, vals, n_missing = _by_blocks(lambda c: _greedy.code_numeric(Xe, c, m, codes, True, int(n_jobs)),
                                              cols, check, n_jobs)
        for j, t, u, nm in zip(numeric, thr, vals, np.asarray(n_missing).tolist()):
            n_thr = t.size if t is not None else max(u.size - 1, 0)
            thresholds[j] = t
            n_codes[j] = n_thr + 1
            if nm:  # the missing values' code: n_thr + 1
                miss_code[j] = n_thr + 1
                n_codes[j] += 1
            values[j] = u if (u is not None and (max_thresholds is None or n_thr == u.size - 1)) else None
        if max_thresholds is None:
            thresholds = _Midpoints(values, thresholds)
    return CodedFeatures(codes, n_codes, is_cat, cat_only, thresholds, values, miss_code)


def _by_blocks(code, cols: np.ndarray, check, n_jobs) -> tuple:
    """``code(cols)`` (a tuple of per-column lists or arrays), or with the clock's ``check`` one
    block of columns (one per thread) at a time, ``check()`` before each, the parts joined."""
    if check is None:
        return code(cols)
    step = max(1, int(n_jobs))
    parts = []
    for i in range(0, cols.size, step):
        check()
        parts.append(code(cols[i:i + step]))
    return tuple(sum((list(p) for p in part), []) if isinstance(part[0], list)
                 else np.concatenate([np.asarray(p) for p in part]) for part in zip(*parts))


def root_leaf(y: np.ndarray, w, n_classes: int, schema: ColumnSchema, classes=None) -> Tree:
    """The tree of one leaf (the root) over ``schema``'s columns: what a growth stopped before its
    first split returns."""
    value = np.bincount(y, weights=w, minlength=n_classes)[None, :].astype(np.float64)
    return Tree(children_left=[-1], children_right=[-1], feature=[-2], threshold=[-2.0], kind=[-1], value=value,
                n_node_samples=[y.shape[0]], impurity=[0.0],
                classes=np.arange(n_classes) if classes is None else classes, schema=schema)


class _RankValues:
    """Exact mode's distinct values of one numeric column without storing them: ``u[r]`` (r an
    int or an int array) is the value of a row whose code (rank) is r, read from the column; the
    rank -> row map is built on first use (only for the columns the tree splits on). Slices and
    iteration give every distinct value (sorted, as numpy.unique)."""

    def __init__(self, X, j, codes, size):
        self._X, self._j, self._codes, self.size = X, j, codes, int(size)

    def __len__(self):
        return self.size

    def __getitem__(self, r):
        if isinstance(r, slice):
            return self.all()[r]
        r = np.asarray(r, dtype=np.int64)
        rows = _greedy.rows_of_codes(self._codes, r.ravel(), self.size).reshape(r.shape)
        if rows.size and rows.min() < 0:
            raise IndexError(f"rank {int(r.ravel()[np.argmin(rows.ravel())])} has no row in column {self._j}")
        return np.asarray(self._X[rows, self._j], dtype=np.float64)

    def __array__(self, dtype=None, copy=None):
        u = self.all()
        return u if dtype is None else u.astype(dtype)

    def all(self) -> np.ndarray:
        return self[np.arange(self.size)] if self.size else np.zeros(0)


class _Midpoints:
    """Exact mode's thresholds per feature (a sequence like a list): a numeric feature's are every
    midpoint between consecutive distinct values, derived on demand from ``values`` exactly as the
    compiled coding computes them, so a fit holds no second n-sized array per column."""

    def __init__(self, values, stored):
        self._values = values
        self._stored = stored  # None for numeric features (derived), else what code_features stored

    def __len__(self):
        return len(self._values)

    def __iter__(self):
        return (self[j] for j in range(len(self)))

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        j = range(len(self))[j]
        u = self._values[j]
        if self._stored[j] is not None or u is None:
            return self._stored[j]
        if u.size < 2:
            return np.zeros(0)
        a, b = u[:-1], u[1:]
        with np.errstate(over="ignore", invalid="ignore"):
            m = (a + b) / 2.0
        return np.where(m <= a, b, m)


# --- histogram thresholds from the fixed row sample of treelearn.data.sketch --------
def sample_thresholds(sample: np.ndarray, max_thresholds: int):
    """Quantile thresholds and distinct values of each column of ``sample`` (rows x columns), as the
    compiled coding of :func:`code_features` computes them (the same thresholds as
    ``numeric_thresholds``; no codes: ``coding.sample_thresholds``). Returns (thresholds, values,
    None)."""
    thr, vals = coding.sample_thresholds(np.asarray(sample, dtype=np.float64), int(max_thresholds))
    return thr, vals, None


def sketch_code_numeric(Xe: np.ndarray, cols: np.ndarray, max_thresholds: int, codes: np.ndarray):
    """:func:`code_features`' numeric coding from the threshold sample of
    :func:`~treelearn.data.sketch.sketch_mask`: the sample's quantile thresholds, every row coded
    as the number of thresholds <= its value. A column's distinct values are kept (for CART's
    node-local midpoints) only when the sample has every value of the column. Returns
    (thresholds, values, missing counts) as ``_greedy.code_numeric``."""
    rows = sketch.sample_rows(Xe.shape[0])
    thr, vals, _ = sample_thresholds(Xe[rows[:, None], cols], max_thresholds)
    # one compiled pass over the rows for every column: codes, missing values (code thr.size + 1),
    # and whether the sample's distinct values are every value of the column
    checked = [u if u is not None and t.size == u.size - 1 else None for t, u in zip(thr, vals)]
    n_missing, every = coding.code_columns_missing(Xe, cols, list(thr), checked, codes)
    vals = [u if e else None for u, e in zip(vals, every)]
    return thr, vals, n_missing


def grow_greedy(Xe, y_codes, n_classes: int, sample_weight=None, schema: ColumnSchema | None = None, *,
                criterion="entropy", max_depth: int | None = None, max_leaves: int | None = None,
                min_samples_leaf: int = 1, min_impurity_decrease: float = 0.0,
                max_thresholds: int | None = None, classes=None, coded: CodedFeatures | None = None,
                finder: str = "auto", min_samples_split: int = 2, ccp_alpha: float = 0.0,
                random_state=None, n_jobs=None, min_weight_fraction_leaf: float = 0.0, max_features=None,
                splitter: str = "best", monotonic_cst=None,
                time_limit: float | None = None, max_bytes: float | None = None) -> Tree:
    """Grow a greedy tree on the encoded matrix ``Xe`` (see the module docstring).

    Parameters
    ----------
    Xe : (n, d) float64 encoded matrix (``schema.encode(X)``; categorical columns as codes).
    y_codes, n_classes : (n,) int class codes in 0..n_classes-1; the number of classes.
    sample_weight, schema : (n,) weights >= 0 or None (all ones; zero-weight rows are dropped); the
        ColumnSchema of the raw columns (None: all numeric).
    criterion : "entropy", "gini", "kearns_mansour", a Criterion or a callable G.
    max_depth, max_leaves : None or the maximum depth (0: a single leaf); None for depth-first
        growth, t for best-first BuildTopDownDT to t leaves.
    min_samples_leaf : minimum number of rows on each side of a split.
    min_impurity_decrease : if > 0, a split needs global gain Pr[reach]·(local gain) >= this, in
        scikit-learn's units (entropy in bits, Gini 1 − Σp²; Kearns–Mansour and a user G normalised).
    max_thresholds : None (exact midpoints) or at most this many quantile thresholds per column.
    classes, coded : the Tree's class labels (default 0..n_classes-1); precomputed :func:`code_features`.
    finder, min_samples_split : "auto", "sorted" or "hist" (compiled split finder; the tree is the
        same); a node with fewer rows than min_samples_split (>= 2) is a leaf.
    ccp_alpha, random_state : minimal cost-complexity pruning after growth, scikit-learn's (0: none);
        None or a seed / RandomState: the feature order of ties between equally wide splits (see the
        module docstring): None, index order; else a random order drawn from it.
    n_jobs, min_weight_fraction_leaf : threads of either finder (None: 1, -1: every core; the
        tree is the same); each side of a split holds at least this fraction of the weight (0-0.5).
    max_features, splitter, monotonic_cst : scikit-learn's (see :class:`GreedyTreeClassifier`).
    time_limit : None, or seconds (coding included) after which no node is split any more: the
        nodes not split yet are leaves (an incumbent grown under a search's clock).
    max_bytes : None, or the bytes of the tree's class counts and the finder's class histograms
        (a search's memory cap), half each (:class:`~treelearn.learn.greedy.options.ByteBudget`).
    Returns the Tree over the raw columns of ``schema``, nodes numbered in creation order.
    """
    Xe = np.asarray(Xe, dtype=np.float64)
    if Xe.ndim != 2 or Xe.shape[0] == 0:
        raise TreeLearnValueError(f"Xe must be a non-empty 2-D array, got shape {Xe.shape}")
    n, d = Xe.shape
    y = np.ascontiguousarray(y_codes, dtype=np.int64).ravel()
    if y.shape[0] != n:
        raise TreeLearnValueError(f"Xe has {n} rows but y_codes has {y.shape[0]}")
    n_classes = int(n_classes)
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise TreeLearnValueError(f"y_codes must lie in 0..{n_classes - 1}")
    w = check_sample_weight(sample_weight, n)
    if not np.all(w > 0):  # zero-weight rows carry no mass: drop them (as the estimator does)
        keep = w > 0
        Xe, y, w = Xe[keep], y[keep], w[keep]
        coded = None
    if schema is None:
        schema = ColumnSchema(categories=[None] * d)
    params = GrowParams.checked(criterion=criterion, max_depth=max_depth, max_leaves=max_leaves,
                                min_samples_leaf=min_samples_leaf, min_impurity_decrease=min_impurity_decrease,
                                max_thresholds=max_thresholds, min_samples_split=min_samples_split,
                                ccp_alpha=ccp_alpha, finder=finder, random_state=random_state, n_jobs=n_jobs,
                                min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
                                splitter=splitter)
    if monotonic_cst is not None:
        params = replace(params, monotonic_cst=check_monotonic_cst(monotonic_cst, d, n_classes, schema.is_categorical,
                                                                   lambda: bool(np.isnan(Xe).any())))
    if time_limit is not None:
        params = replace(params, time_limit=check_float_param("time_limit", time_limit, low=0.0))
    if max_bytes is not None:
        params = replace(params, max_bytes=check_float_param("max_bytes", max_bytes, low=0.0))
    return grow_checked(Xe, y, n_classes, w, schema, params, classes, coded)


@dataclass(frozen=True)
class GrowParams:
    """The checked parameters of a greedy growth (see :func:`grow_greedy`): ``criterion`` a
    :class:`~treelearn.criteria.Criterion`, ``n_jobs`` a number of threads. The estimator builds
    them from its parameters, which ``fit`` has checked; :meth:`checked` checks them first."""

    criterion: Criterion
    max_depth: int | None = None
    max_leaves: int | None = None
    min_samples_leaf: int = 1
    min_impurity_decrease: float = 0.0
    max_thresholds: int | None = None
    min_samples_split: int = 2
    ccp_alpha: float = 0.0
    min_weight_fraction_leaf: float = 0.0
    max_features: object = None
    splitter: str = "best"
    monotonic_cst: np.ndarray | None = None  # checked (options.check_monotonic_cst): int8 per feature
    finder: str = "auto"
    random_state: object = None
    n_jobs: int = 1
    time_limit: float | None = None  # seconds for the whole growth (coding included); None: none
    max_bytes: float | None = None  # bytes of the finder's class histograms (see grow_greedy); None: no cap

    @classmethod
    def checked(cls, *, criterion, max_depth, max_leaves, min_samples_leaf, min_impurity_decrease, max_thresholds,
                min_samples_split, ccp_alpha, finder, random_state, n_jobs,
                min_weight_fraction_leaf=0.0, max_features=None, splitter="best") -> "GrowParams":
        """The parameters of :func:`grow_greedy`, each checked (a named TreeLearnValueError)."""
        if finder not in ("auto", "sorted", "hist"):
            raise TreeLearnValueError(f"finder must be 'auto', 'sorted' or 'hist', got {finder!r}")
        max_features = validate_parameters("grow_greedy", {"max_features": MAX_FEATURES,
                                                           "splitter": [Options("best", "random")]},
                                           {"max_features": max_features, "splitter": splitter})["max_features"]
        return cls(criterion=get_criterion(criterion),
                   max_depth=check_int_param("max_depth", max_depth, low=0, allow_none=True),
                   max_leaves=check_int_param("max_leaves", max_leaves, low=1, allow_none=True),
                   min_samples_leaf=check_int_param("min_samples_leaf", min_samples_leaf, low=1),
                   min_impurity_decrease=check_float_param("min_impurity_decrease", min_impurity_decrease, low=0.0),
                   max_thresholds=check_int_param("max_thresholds", max_thresholds, low=1, allow_none=True),
                   min_samples_split=check_int_param("min_samples_split", min_samples_split, low=2),
                   ccp_alpha=check_float_param("ccp_alpha", ccp_alpha, low=0.0), finder=finder,
                   random_state=random_state, n_jobs=n_threads(n_jobs),
                   min_weight_fraction_leaf=check_float_param("min_weight_fraction_leaf", min_weight_fraction_leaf,
                                                              low=0.0, high=0.5),
                   max_features=max_features, splitter=splitter)


def _finder(p: GrowParams, coded: CodedFeatures, n_classes: int, n: int, d: int) -> str:
    """The compiled split finder: ``p.finder``, or for "auto" the cheaper one (the same tree)."""
    finder = p.finder
    if finder == "auto":
        # histograms cost O(sum of codes x classes) per node on top of the rows; sorted lists
        # O(rows x features): histograms win when the codes are few (measured on the benchmarks)
        # (~1 ns per histogram cell per node vs ~5 ns per row and feature per level), with the
        # number of nodes bounded by the depth and leaf budgets
        cells = float(coded.n_codes.sum()) * n_classes
        rows_x_features = float(n) * d
        few = cells <= _HIST_CODE_FRACTION * rows_x_features
        if not few and (p.max_depth is not None or p.max_leaves is not None):
            depth_est = min(p.max_depth if p.max_depth is not None else 64, 64)
            nodes_est = min(2.0 ** (depth_est + 1) - 1, 2.0 * (p.max_leaves or n) - 1)
            few = nodes_est * cells < 4.0 * rows_x_features * max(1, min(depth_est, np.log2(nodes_est + 1)))
        finder = "hist" if (p.max_thresholds is not None or few) else "sorted"
    if finder == "hist" and int(coded.n_codes.max()) > 65536:
        finder = "sorted"
    return finder


def grow_checked(Xe, y, n_classes, w, schema, p: GrowParams, classes=None, coded=None, stats=None, nodes=None,
                 row_leaves: list | None = None):
    """The growth on checked arguments (positive weights, int64 class codes, a schema); regression: ``stats`` (n, C)
    for the class codes, ``nodes`` its step to the Tree's; ``row_leaves`` (a list) gets each row's leaf if known."""
    if stats is not None:
        y, n_classes, classes = np.zeros(1, dtype=np.int64), stats.shape[1], np.zeros(0)
    if classes is None:
        classes = np.arange(n_classes)
    t0 = time.perf_counter()
    if p.time_limit is not None and p.time_limit <= SPENT:  # the caller's clock is spent: the root alone
        return root_leaf(y, w, n_classes, schema, classes)
    if coded is None:
        try:  # column blocks under the clock: the deadline (when given) and Ctrl-C
            coded = code_features(Xe, schema, p.max_thresholds, n_jobs=p.n_jobs, check=FitClock(p.time_limit, t0).check)
        except FitTimeout:  # no time for the coding: the root alone
            return root_leaf(y, w, n_classes, schema, classes)
    # what the coding left of the time limit (> 0: a spent limit still stops before the root)
    limit = 0.0 if p.time_limit is None else max(p.time_limit - (time.perf_counter() - t0), 1e-9)
    budget = ByteBudget(p.max_bytes, n_classes)
    leaves = budget.leaf_budget(Xe.shape[0], p.max_depth, p.max_leaves)
    if leaves != p.max_leaves:
        p = replace(p, max_leaves=leaves)
    finder = _finder(p, coded, n_classes, Xe.shape[0], Xe.shape[1])
    hist_budget = budget.histograms(float(coded.n_codes.sum())) if finder == "hist" else -1.0
    if hist_budget is None:  # not even one split's histograms fit
        finder, hist_budget = "sorted", -1.0
    crit = p.criterion
    # a user G: the engine asks for the weighted impurities of a node's candidates in batches
    cost = crit.weighted_impurity if crit.code < 0 else None
    mtry = n_drawn_features(p.max_features, coded.n_codes.size)
    drawn = mtry > 0 or p.splitter == "random"
    seed, perm, grow_on = 0, None, coded
    if drawn:  # per-node draws (compiled) from one seed of random_state (None: numpy's global one)
        rs = p.random_state
        rng = rs if isinstance(rs, np.random.Generator) else check_random_state(rs)
        seed = int(rng.integers(2**63)) if isinstance(rng, np.random.Generator) else int(rng.randint(2**63 - 1))
    elif p.random_state is not None:  # the same coded features in a random order: equally wide ties broken at random
        rs = p.random_state
        rng = rs if isinstance(rs, np.random.Generator) else check_random_state(rs)
        perm = rng.permutation(coded.n_codes.size)
        grow_on = CodedFeatures(np.ascontiguousarray(coded.codes[perm]), np.ascontiguousarray(coded.n_codes[perm]),
                                np.ascontiguousarray(coded.is_cat[perm]), np.ascontiguousarray(coded.cat_only[perm]),
                                None, None, np.ascontiguousarray(coded.miss_code[perm]))
    leaf_of = np.empty(Xe.shape[0], dtype=np.int64) if row_leaves is not None and p.ccp_alpha <= 0.0 else None
    out = _greedy.grow_coded(grow_on.codes, grow_on.n_codes, grow_on.is_cat, grow_on.cat_only, grow_on.miss_code,
                             y, w, n_classes, crit.code, -1 if p.max_depth is None else p.max_depth,
                             -1 if p.max_leaves is None else p.max_leaves, p.min_samples_leaf,
                             p.min_impurity_decrease, finder == "hist", hist_budget=hist_budget, cost=cost,
                             min_samples_split=p.min_samples_split, n_jobs=int(p.n_jobs),
                             min_weight_leaf=p.min_weight_fraction_leaf * float(w.sum()),
                             max_features=mtry, random_split=p.splitter == "random", seed=seed,
                             monotonic_cst=p.monotonic_cst if perm is None or p.monotonic_cst is None
                             else p.monotonic_cst[perm], time_limit=limit, stats=stats, leaf_of=leaf_of)
    if out.pop("leaves_known"):
        row_leaves.append(leaf_of)
    if perm is not None:
        internal = out["children_left"] >= 0
        out["feature"][internal] = perm[out["feature"][internal]]
    out = out if nodes is None else nodes(out)
    return tree_from_growth(out, coded, classes, schema, p.ccp_alpha)


def tree_from_growth(out: dict, coded: CodedFeatures, classes, schema: ColumnSchema, ccp_alpha: float = 0.0) -> Tree:
    """The one step from a growth's node arrays (the compiled grower's, or a growth on row shards:
    ``sharded.py``) over coded features to the returned Tree: thresholds, missing directions, and
    minimal cost-complexity pruning when ``ccp_alpha`` > 0."""
    tree = _to_tree(out, coded, classes, schema)
    if ccp_alpha > 0.0:
        tree = prune_ccp(tree, ccp_alpha)
    return tree


def _numeric_thresholds(coded: CodedFeatures, f, low, k) -> np.ndarray:
    """Thresholds of numeric splits ``code >= k`` of nodes whose largest code on the left is low.

    Codes that are ranks of the distinct values u: the Tree threshold of the node-local midpoint
    between the node's largest value going left, u[low], and its smallest going right, u[k]
    (:func:`treelearn.tree.build.split_thresholds`: a value equal to the midpoint goes left, as
    in CART). Quantile codes (histogram mode): thresholds t[low]..t[k-1] cut the node's rows the
    same way; the middle one (the lower of two middles).
    """
    out = np.empty(f.size)
    a = np.empty(f.size)
    b = np.empty(f.size)
    exact = np.ones(f.size, dtype=bool)
    if f.size <= _SCALAR_SPLITS:  # small trees: a read per split beats a dozen NumPy calls per feature
        for i, (g, lo, kk) in enumerate(zip(f.tolist(), low.tolist(), k.tolist())):
            u = coded.values[g]
            if u is None:
                out[i] = coded.thresholds[g][lo + (kk - lo - 1) // 2]
                exact[i] = False
            else:
                a[i], b[i] = u[[lo, kk]]  # (one read of the column when u is _RankValues)
    else:
        order = np.argsort(f, kind="stable")
        fs = f[order]
        starts = np.flatnonzero(np.concatenate(([True], fs[1:] != fs[:-1])))
        ends = starts[1:].tolist() + [f.size]
        for s, e, g in zip(starts.tolist(), ends, fs[starts].tolist()):  # per feature used (at most d)
            idx = order[s:e]
            lo, kk = low[idx], k[idx]
            u = coded.values[g]
            if u is None:
                out[idx] = coded.thresholds[g][lo + (kk - lo - 1) // 2]
                exact[idx] = False
            else:
                a[idx] = u[lo]
                b[idx] = u[kk]
    if exact.all():
        return split_thresholds(a, b)
    out[exact] = split_thresholds(a[exact], b[exact])
    return out


#: up to this many numeric splits, :func:`_numeric_thresholds` reads them one by one
_SCALAR_SPLITS = 24


def _to_tree(out: dict, coded: CodedFeatures, classes, schema: ColumnSchema) -> Tree:
    out = kernel_nodes(out)
    left = out["children_left"]
    internal = np.nonzero(left >= 0)[0]
    m = left.size
    feature = out["feature"].copy()
    threshold = np.full(m, -2.0)
    kind = np.full(m, -1, dtype=np.int8)
    f = feature[internal]
    k = out["split_code"][internal]
    # the missing-only split (present values left, missing right): x >= +inf on any column
    alone = k == coded.miss_code[f]
    cat = coded.is_cat[f].astype(bool) & ~alone
    kind[internal] = np.where(cat, 1, 0)
    threshold[internal[cat]] = k[cat].astype(np.float64)
    threshold[internal[alone]] = np.inf
    num = internal[~cat & ~alone]
    if num.size:
        threshold[num] = _numeric_thresholds(coded, feature[num], out["split_low"][num], out["split_code"][num])
    # directions recorded when the training data had missing values (else the Tree's default,
    # the heavier child, is what the kernel chose everywhere)
    missing = out["missing_go_to_left"] if coded.has_missing else None
    return Tree(children_left=left, children_right=out["children_right"], feature=feature, threshold=threshold,
                kind=kind, value=out["value"], n_node_samples=out["n_node_samples"], impurity=out["impurity"],
                classes=classes, schema=schema, missing_go_to_left=missing,
                task="regression" if "weighted_n_node_samples" in out else "classification",
                weighted_n_node_samples=out.get("weighted_n_node_samples"),
                validate=False)  # trusted: the kernel's arrays are a tree by construction (tests check them)


# ---------------------------------------------------------------------------------------------
class GreedyTreeClassifier(BaseTreeClassifier):
    """Greedy top-down decision tree: ID3/C4.5/CART (depth-first) or BuildTopDownDT (best-first).

    Parameters
    ----------
    criterion : {"entropy", "gini", "kearns_mansour"} or callable, default="entropy"
        The impurity function G (000 Def. 2): entropy (ID3/C4.5), Gini 4p(1-p) (CART),
        Kearns–Mansour 2√(p(1-p)), or a user G: [0, 1] -> [0, 1] (concave, symmetric,
        G(0)=G(1)=0, G(1/2)=1), used in the multiclass form ½ Σ_c G(p_c).
    max_depth : int or None, default=None
        Maximum depth (0: a single leaf).
    max_leaves : int or None, default=None
        None: depth-first growth. t: best-first BuildTopDownDT (000 Fig. 1) to at most t leaves,
        splitting the leaf and condition of largest global purity gain Pr[reach leaf]·(local gain).
    max_leaf_nodes : int >= 2 or None, default=None
        scikit-learn's name of ``max_leaves`` (the same best-first growth, which is also what
        scikit-learn's ``max_leaf_nodes`` does); set one of the two (different values: an error).
    min_samples_leaf : int or float, default=1
        Minimum number of training rows on each side of a split (a float in (0, 1): a fraction
        of the rows, rounded up).
    min_impurity_decrease : float, default=0.0
        If > 0, split only when the global gain Pr[reach node]·(local gain) is at least this, in
        scikit-learn's units (entropy in bits, Gini 1 − Σp², as ``tree_.impurity``; Kearns–Mansour
        and a user G in their normalised units). At 0, an impure node with a valid split is split
        even when its best gain is 0.
    max_thresholds : int or None, default=None
        None: exact (every cut between consecutive distinct values). m: at most m quantile
        thresholds per numeric column (the Binarizer's), histogram-style split finding. Above
        200,000 rows the quantiles are those of a fixed, index-hashed sample of ~200,000 rows (as
        LightGBM bins; the same on any row sharding of the data: docs/scaling.md).
    categorical : None, list of int/str, or bool mask, default=None
        Categorical columns (conditions x_j == v); None infers them from pandas dtypes.
    random_state : None, int or RandomState, default=None
        Breaks the ties the width rule leaves. Equally good splits (gains within 1e-12) go first
        to the widest: the one whose gap between the node's largest value going left and its
        smallest going right holds the most distinct training values of its column (with
        ``max_thresholds``: quantile thresholds; a categorical condition counts 1). Equally wide
        ties go to the first feature of the feature order, then the lowest threshold: None,
        index order (deterministic); otherwise a random order of the features drawn from it.
        scikit-learn breaks every tie by a random feature order per node; unlike scikit-learn,
        None is not random. The same random_state gives the same tree.
    min_samples_split : int or float, default=2
        A node with fewer training rows is a leaf (a float in (0, 1]: a fraction of the rows,
        rounded up), as scikit-learn's.
    min_weight_fraction_leaf : float in [0, 0.5], default=0.0
        As scikit-learn's: each side of a split must hold at least this fraction of the total
        training weight (``sample_weight`` × ``class_weight``; the rows when unweighted), and a
        node with less than twice it is a leaf.
    max_features : int, float, "sqrt", "log2" or None, default=None
        As scikit-learn's: at each node the features are drawn at random (without replacement,
        from ``random_state``) and searched until this many (an int; a float: that fraction of
        the features, at least 1; "sqrt", "log2": of the number of features) had two distinct
        present values at the node and a valid split was found, or none is left. None (or as
        many as there are features): every feature, in order. What random forests and
        ``BaggingClassifier(max_features=...)`` of treelearn trees need.
    splitter : {"best", "random"}, default="best"
        "best": the best condition of each searched feature. "random" (scikit-learn's
        ExtraTree style): one random condition per searched feature, a threshold drawn uniformly
        among the column's candidate thresholds between the node's smallest and largest value
        (uniform in rank, where scikit-learn draws uniformly in value), a category uniformly
        among the node's; the best of those. The draws of a node depend only on ``random_state``
        and the node (the same tree for any ``n_jobs``); they run on the sorted finder, one
        thread (the row partitions still use ``n_jobs``). ``random_state=None`` draws from
        numpy's global generator, as scikit-learn.
    monotonic_cst : array-like of int (-1, 0, 1) per feature, or None, default=None
        scikit-learn's monotonic constraints (two classes; numeric columns; no missing values):
        1 makes the predicted probability of ``classes_[1]`` non-decreasing in the feature, -1
        non-increasing, 0 leaves it free. As scikit-learn: a split is skipped when one side's
        fraction of ``classes_[1]`` leaves the node's bounds or (on a constrained feature) the
        right side's is below (1) / above (-1) the left side's; a split on a constrained feature
        bounds its children at the middle of their two fractions, and node values
        (``tree_.value``, hence ``predict_proba``) are clipped to their bounds.
    ccp_alpha : float, default=0.0
        Minimal cost-complexity pruning after growth, as scikit-learn's: the weakest link (the
        internal node of smallest (R(t) − R(T_t)) / (|leaves(T_t)| − 1), R = weighted fraction ×
        impurity in scikit-learn's units) is collapsed while that is <= ccp_alpha. 0: no pruning.
    class_weight : None, "balanced" or dict {class: weight}, default=None
        Multiplies ``sample_weight`` exactly as scikit-learn does (``"balanced"``: each class's
        weight is n_samples / (n_classes · its count)).
    n_jobs : int or None, default=None
        Threads of a large node, the same tree for any number (None: 1; -1: all cores...): exact
        mode shares the node's features (search, partition), histogram mode (``max_thresholds``)
        its histogram by feature blocks and its rows' partition by chunks. A user G: one thread.

    Attributes
    ----------
    tree_ : Tree
    classes_, n_classes_, n_features_in_, feature_names_in_ (pandas input)

    Notes
    -----
    The fit runs in compiled code: features are coded once (one radix sort per column), then
    either per-feature sorted row lists (stably partitioned per node) or per-node histograms
    (the larger child by subtraction) find the splits; the cheaper one is picked from the number
    of distinct values, and both give the same tree. A numeric threshold is the node-local
    midpoint (CART's) between the largest value going left and the smallest going right; with
    ``max_thresholds`` the middle of the quantile thresholds (the Binarizer's) that cut the node
    the same way. ``sample_weight`` multiplies counts; all-ones
    weights give exactly the unweighted tree, integer weights the tree of repeated rows (exact
    mode; quantile thresholds are quantiles of the rows).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from treelearn import GreedyTreeClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> est = GreedyTreeClassifier(criterion="gini", max_leaves=8).fit(X, y)   # BuildTopDownDT, t = 8
    >>> est.get_n_leaves()
    8
    >>> GreedyTreeClassifier(max_depth=3, max_thresholds=32).fit(X, y).get_depth()
    3
    """

    _parameter_constraints = {
        "criterion": [CRITERION],
        "max_depth": [Interval(numbers.Integral, 0, INT32_MAX), None],
        "max_leaves": [Interval(numbers.Integral, 1, INT64_MAX), None],
        "min_samples_leaf": [Interval(numbers.Integral, 1, INT64_MAX), Interval(RealNotInt, 0, 1, closed="neither")],
        "min_impurity_decrease": [Interval(numbers.Real, 0, None)],
        "max_thresholds": [Interval(numbers.Integral, 1, INT32_MAX), None],
        "categorical": [COLUMNS, None],
        "random_state": RANDOM_STATE,
        "class_weight": CLASS_WEIGHT,
        "min_samples_split": [Interval(numbers.Integral, 2, INT64_MAX), Interval(RealNotInt, 0, 1, closed="right")],
        "ccp_alpha": [Interval(numbers.Real, 0, None)],
        "n_jobs": [Interval(numbers.Integral, 1, INT32_MAX), Interval(numbers.Integral, -INT32_MAX, -1), None],
        "max_leaf_nodes": [Interval(numbers.Integral, 2, INT64_MAX), None],
        "min_weight_fraction_leaf": [Interval(numbers.Real, 0.0, 0.5, closed="both")],
        "max_features": MAX_FEATURES,
        "splitter": [Options("best", "random")],
        "monotonic_cst": MONOTONIC_CST,
    }

    def __init__(self, criterion="entropy", max_depth=None, max_leaves=None, min_samples_leaf=1,
                 min_impurity_decrease=0.0, max_thresholds=None, categorical=None, random_state=None,
                 class_weight=None, min_samples_split=2, ccp_alpha=0.0, n_jobs=None, max_leaf_nodes=None,
                 min_weight_fraction_leaf=0.0, max_features=None, splitter="best", monotonic_cst=None):
        self.criterion = criterion
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_thresholds = max_thresholds
        self.categorical = categorical
        self.random_state = random_state
        self.class_weight = class_weight
        self.min_samples_split = min_samples_split
        self.ccp_alpha = ccp_alpha
        self.n_jobs = n_jobs
        self.max_leaf_nodes = max_leaf_nodes
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.splitter = splitter
        self.monotonic_cst = monotonic_cst

    def _fit(self, sample, params) -> Tree:
        msl = self.min_samples_leaf
        if not isinstance(msl, numbers.Integral):
            msl = max(1, int(np.ceil(msl * sample.n_samples)))
        mss = self.min_samples_split
        if not isinstance(mss, numbers.Integral):
            mss = max(2, int(np.ceil(mss * sample.n_samples)))
        grow = GrowParams(criterion=params["criterion"], max_depth=self.max_depth, max_leaves=self._leaf_budget(),
                          min_samples_leaf=int(msl), min_impurity_decrease=float(self.min_impurity_decrease),
                          max_thresholds=self.max_thresholds, min_samples_split=int(mss),
                          ccp_alpha=float(self.ccp_alpha), random_state=self.random_state,
                          min_weight_fraction_leaf=float(self.min_weight_fraction_leaf), max_features=self.max_features,
                          splitter=self.splitter, n_jobs=n_threads(self.n_jobs),
                          monotonic_cst=check_monotonic_cst(self.monotonic_cst, sample.raw.shape[1], sample.n_classes,
                                                            sample.schema.is_categorical,
                                                            lambda: bool(np.isnan(sample.encoded).any())))
        return grow_checked(sample.numeric, sample.y, sample.n_classes, sample.weights, sample.schema, grow)

    def cost_complexity_pruning_path(self, X, y, sample_weight=None) -> Bunch:
        """The minimal cost-complexity pruning path, as scikit-learn's: the tree these parameters
        grow with ``ccp_alpha=0`` is pruned one weakest link at a time. Returns a Bunch with
        ``ccp_alphas`` (increasing: 0.0, then the α of each step) and ``impurities`` (the total
        leaf impurity of the tree for each α, in scikit-learn's units); every α of it is a valid
        ``ccp_alpha`` (the estimator itself is not fitted)."""
        est = clone(self).set_params(ccp_alpha=0.0).fit(X, y, sample_weight=sample_weight)
        alphas, impurities = ccp_path(est.tree_)
        return Bunch(ccp_alphas=alphas, impurities=impurities)

    _dask_plugin = "treelearn.learn.greedy.sharded"

    def _fit_sharded(self, plugin, data, params):
        """Dask input: with ``max_thresholds`` (numeric columns, a built-in criterion, no
        ``class_weight``) the histograms are counted on the row shards and the splits chosen here
        (``sharded.py``); the Tree by the same step as the local fit (:func:`tree_from_growth`)."""
        crit = params["criterion"]
        if (self.min_weight_fraction_leaf > 0 or self.max_features is not None or self.splitter != "best"
                or self.monotonic_cst is not None):
            # (not in the sharded growth: the gathered blocks)
            return None
        if not plugin.supports(data, crit, max_thresholds=self.max_thresholds, class_weight=self.class_weight,
                               categorical=self.categorical):
            return None
        g = plugin.DistributedGreedy(data.executor, data.blocks, criterion_code=crit.code, max_depth=self.max_depth,
                                     min_samples_leaf=self.min_samples_leaf, min_samples_split=self.min_samples_split,
                                     min_impurity_decrease=self.min_impurity_decrease,
                                     max_thresholds=self.max_thresholds, random_state=self.random_state)
        g.prepare()
        return g.classes, g.grown_tree(self._leaf_budget(), g.classes, data.schema(), float(self.ccp_alpha)), g.scale
