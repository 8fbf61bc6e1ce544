"""Dask input as aligned row blocks, and the learner-free passes over them.

:class:`ShardedInput` is what ``BaseTreeClassifier.fit`` hands a learner's Dask plug-in: the
executor of the client in scope, the row blocks of X, y and sample_weight (made on first use),
their schema, and the gathered arrays for the fits that need every row in one place. The block
tasks here (:func:`block_stats`, :func:`block_sample`) read a block's raw rows on its worker and
know no learner: the first pass (labels, kept rows, weight range, facts about the values, the
rows of the fixed threshold sample of :mod:`treelearn.data.sketch`) and the threshold sample
itself. Rows of weight zero are dropped on the workers exactly as the local fit drops them.
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import TreeLearnValueError, check_target, weight_scale
from treelearn.data.schema import ColumnSchema
from treelearn.data.sketch import sketch_mask
from treelearn.distributed.client import current_executor, require_dask


def is_dask_collection(obj) -> bool:
    """A Dask collection (array, DataFrame, Series) without importing Dask."""
    return hasattr(obj, "__dask_graph__") and hasattr(obj, "__dask_keys__")


class Blocks:
    """Dask input as aligned row blocks: ``x[i]``, ``y[i]``, ``w[i]`` (delayed objects or arrays),
    ``lengths[i]`` rows each; ``meta``: an empty pandas frame / numpy array of X's columns."""

    def __init__(self, x, y, w, lengths, meta, n_features):
        self.x, self.y, self.w, self.lengths, self.meta, self.n_features = x, y, w, lengths, meta, n_features

    @property
    def n_rows(self) -> int:
        return int(sum(self.lengths))

    def with_weights(self, w) -> Blocks:
        """The same rows with other weights (one delayed object or array per block)."""
        return Blocks(self.x, self.y, w, self.lengths, self.meta, self.n_features)


def _dask_array(obj, what: str):
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(obj, (dd.DataFrame, dd.Series)):
        return obj.to_dask_array(lengths=True)
    if isinstance(obj, da.Array):
        return obj
    raise TreeLearnValueError(f"{what}: expected a Dask array, DataFrame or Series, got {type(obj).__name__}")


def split_blocks(X, y, sample_weight, client=None) -> Blocks:
    """Dask X (and y, sample_weight: Dask or in memory) -> aligned row blocks. Unknown block
    lengths (DataFrames) are computed on ``client`` (the fit's; None: Dask's default scheduler)."""
    if client is None:
        return _split_blocks(X, y, sample_weight)
    import dask

    with dask.config.set(scheduler=client):
        return _split_blocks(X, y, sample_weight)


def _split_blocks(X, y, sample_weight) -> Blocks:
    import dask.array as da
    import dask.dataframe as dd

    meta = X._meta if isinstance(X, dd.DataFrame) else None
    Xa = _dask_array(X, "X")
    if Xa.ndim != 2:
        raise TreeLearnValueError(f"X must be 2-D, got a Dask array of {Xa.ndim} dimension(s)")
    if any(np.isnan(c) for c in Xa.chunks[0]):
        Xa = Xa.compute_chunk_sizes()
    if meta is None:
        meta = np.empty((0, Xa.shape[1]), dtype=Xa.dtype)
    Xa = Xa.rechunk({1: -1})
    rows = Xa.chunks[0]
    n = int(sum(rows))
    if n == 0:  # the local fit's error, not the weights' (every row of none has weight zero)
        raise TreeLearnValueError(f"X is empty: the Dask input has 0 rows (shape=(0, {Xa.shape[1]}))")

    def aligned(v, what):
        if v is None:
            return None
        if is_dask_collection(v):
            a = _dask_array(v, what)
            if a.ndim == 2 and a.shape[1] == 1:
                a = a[:, 0]
            if any(np.isnan(c) for c in a.chunks[0]):
                a = a.compute_chunk_sizes()
        else:
            a = np.asarray(v)
            if a.ndim == 2 and a.shape[1] == 1:
                a = a[:, 0]
            if a.ndim != 1 or a.shape[0] != n:
                raise TreeLearnValueError(f"{what} has shape {a.shape}, expected ({n},) to match X's {n} rows")
            a = da.from_array(a, chunks=(rows,))
        if a.ndim != 1 or a.shape[0] != n:
            raise TreeLearnValueError(f"{what} has shape {a.shape}, expected ({n},) to match X's {n} rows")
        return a.rechunk((rows,))

    ya = aligned(y, "y")
    if ya is None:
        raise TreeLearnValueError("y is None: this estimator requires y to be passed")
    wa = aligned(sample_weight, "sample_weight")
    xs = Xa.to_delayed().ravel().tolist()
    ys = ya.to_delayed().ravel().tolist()
    ws = wa.to_delayed().ravel().tolist() if wa is not None else [None] * len(xs)
    return Blocks(xs, ys, ws, [int(r) for r in rows], meta, int(Xa.shape[1]))


class ShardedInput:
    """The Dask input of one fit (X, y, sample_weight: Dask collections, y and sample_weight may
    be in memory) on the executor of the client in scope; see the module doc."""

    def __init__(self, X, y, sample_weight=None, executor=None):
        require_dask()
        self.X, self.y, self.sample_weight = X, y, sample_weight
        self.executor = current_executor() if executor is None else executor
        self._blocks = None
        self._gathered = None

    @property
    def blocks(self) -> Blocks:
        """The aligned row blocks (made on first use: a DataFrame's block lengths cost a pass)."""
        if self._blocks is None:
            self._blocks = split_blocks(self.X, self.y, self.sample_weight, self.executor.client)
        return self._blocks

    @property
    def meta(self):
        """X's columns without rows (a pandas frame, or a numpy array of X's dtype)."""
        return self.blocks.meta

    def is_numeric(self) -> bool:
        """X is a Dask collection whose columns are all numeric (bool, integer, float): the input
        the sharded paths read on the workers (anything else is gathered)."""
        meta = getattr(self.X, "_meta", None) if is_dask_collection(self.X) else None
        if meta is None:
            return False
        dtypes = [meta.dtype] if isinstance(meta, np.ndarray) else list(getattr(meta, "dtypes", []))
        return bool(dtypes) and all(getattr(t, "kind", "O") in "biuf" for t in dtypes)

    def schema(self) -> ColumnSchema:
        """The schema of numeric X (its column names when it has them)."""
        meta = self.meta
        names = [str(c) for c in meta.columns] if hasattr(meta, "columns") else None
        return ColumnSchema(categories=[None] * self.blocks.n_features, feature_names=names)

    def gather(self) -> tuple:
        """(X, y, sample_weight) computed to this process (once; in memory ones as given)."""
        if self._gathered is None:
            ex = self.executor

            def get(obj):
                if obj is None or not is_dask_collection(obj):
                    return obj
                if ex.client is not None:
                    return ex.client.compute(obj).result()
                return obj.compute(scheduler="sync")

            self._gathered = (get(self.X), get(self.y), get(self.sample_weight))
        return self._gathered


# ------------------------------------------------------------------ tasks run on the workers
def weights_of(w, n):
    """A block's weights as float64 (None: n ones)."""
    if w is None:
        return np.ones(n)
    return np.asarray(w, dtype=np.float64).ravel()


def kept_rows(x, y, w):
    """A block's kept rows (weight > 0): (X rows as float64, or None without ``x``; labels; weights)."""
    y = np.asarray(y).ravel()
    w = weights_of(w, y.shape[0])
    keep = w > 0
    xk = None if x is None else np.asarray(x, dtype=np.float64)
    if not keep.all():
        xk = None if xk is None else xk[keep]
        y, w = y[keep], w[keep]
    return xk, y, w


def block_stats(x, y, w, start=None, n_total=None, sample_rows=None, facts=False, regression=False):
    """Pass 1 of a block: its labels, kept rows (weight > 0) and weight range; checks the values.
    ``regression`` (a numeric target of one output): no labels, but the kept rows' target range and
    sums ``wsum`` (of w) and ``wysum`` (of w y).
    With ``start`` (the row offsets are known: no sample weights, every row kept) also its rows of
    the threshold sample (pass 2 folded into this one). ``facts`` (the binary learners): missing
    values are allowed and reported (``has_nan``), and, when every value of the kept rows is 0 or
    1 (``binary``), each column's count of ones (``ones``)."""
    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise TreeLearnValueError(f"X has dtype {x.dtype}: the distributed fit needs numeric columns")
    if x.dtype.kind == "f":
        if np.isinf(x).any():
            raise TreeLearnValueError("X contains infinity: the distributed fit needs finite values or NaN")
        if not facts and np.isnan(x).any():
            raise TreeLearnValueError("X contains NaN or infinity: the distributed greedy fit needs finite values")
    y = np.asarray(y).ravel()
    w = weights_of(w, y.shape[0])
    if w.size and (not np.isfinite(w).all() or w.min() < 0):
        raise TreeLearnValueError("sample_weight must be finite and non-negative")
    keep = w > 0
    wk = w[keep]
    labels = None if regression else np.unique(y)
    out = {"labels": labels, "n": int(y.shape[0]), "n_kept": int(keep.sum()),
           "wmin": float(wk.min()) if wk.size else np.inf, "wmax": float(wk.max()) if wk.size else -np.inf}
    if regression:
        if y.dtype.kind not in "biuf":
            raise TreeLearnValueError(f"y has dtype {y.dtype}: a regression target must be numeric")
        yk = y[keep].astype(np.float64)
        if not np.isfinite(yk).all():
            raise TreeLearnValueError("y contains NaN or infinite values: a regression target must be finite")
        out.update(ymin=float(yk.min()) if yk.size else np.inf, ymax=float(yk.max()) if yk.size else -np.inf,
                   wsum=float(wk.sum()), wysum=float(wk @ yk))
    if facts:
        xk = x if keep.all() else x[keep]
        out["has_nan"] = bool(x.dtype.kind == "f" and np.isnan(xk).any())
        binary = not out["has_nan"] and bool(((xk == 0) | (xk == 1)).all())
        out["binary"] = binary
        out["ones"] = np.count_nonzero(xk == 1, axis=0).astype(np.int64) if binary else None
        out["kept_labels"] = labels if keep.all() else np.unique(y[keep])
    if start is not None:
        out["sample"] = block_sample(x, y, w, start, n_total, sample_rows)
    return out


def block_sample(x, y, w, start, n_total, sample_rows):
    """Pass 2: the block's rows of the threshold sample (kept rows ``start..``, in order)."""
    y = np.asarray(y).ravel()
    keep = weights_of(w, y.shape[0]) > 0
    xk = np.asarray(x)
    if not keep.all():
        xk = xk[keep]
    mask = sketch_mask(start, start + xk.shape[0], n_total, sample_rows)
    return np.ascontiguousarray(xk[mask], dtype=np.float64)


# ------------------------------------------------------------------ the passes (on the driver)
class FirstPass:
    """Pass 1 over the raw blocks (:func:`block_stats` of every block) and what the driver makes of
    it: ``classes`` (every label, sorted), ``n_kept`` per block, ``n`` kept rows in all, the kept
    weights' range and the divisor of the local fit (``scale``, or the one given), ``folded``
    (no sample weights: the stats brought the threshold sample along, ``sample``); with
    ``facts`` also ``present`` (the kept rows' labels), ``binary`` and ``has_nan``."""

    def __init__(self, ex, blocks: Blocks, sample_rows: int, facts: bool = False, scale=None, regression=False):
        import dask

        self.folded = all(w is None for w in blocks.w)
        starts = np.concatenate([[0], np.cumsum(blocks.lengths)[:-1]]).astype(np.int64)
        args = [(int(s0), blocks.n_rows, sample_rows) if self.folded else (None, None, None) for s0 in starts]
        self.stats = ex.gather(ex.compute([dask.delayed(block_stats)(x, y, w, *a, facts=facts, regression=regression)
                                           for x, y, w, a in zip(blocks.x, blocks.y, blocks.w, args)]))
        self.sample_rows = int(sample_rows)
        if regression:  # the target's range and weighted mean over the kept rows (no classes)
            self.classes = None
            self.ymin = min(s["ymin"] for s in self.stats)
            self.ymax = max(s["ymax"] for s in self.stats)
            self.wysum = float(sum(s["wysum"] for s in self.stats))
            self.wsum = float(sum(s["wsum"] for s in self.stats))
        else:
            labels = np.unique(np.concatenate([s["labels"] for s in self.stats]))
            self.classes, _ = check_target(labels, labels.shape[0])
        self.n_kept = np.array([s["n_kept"] for s in self.stats], dtype=np.int64)
        self.n = int(self.n_kept.sum())
        if self.n == 0:
            raise TreeLearnValueError("sample_weight gives every sample weight zero")
        self.wmin = min(s["wmin"] for s in self.stats)
        self.wmax = max(s["wmax"] for s in self.stats)
        self.scale = weight_scale(self.wmin, self.wmax) if scale is None else float(scale)
        if facts:
            self.present = np.unique(np.concatenate([s["kept_labels"] for s in self.stats]))
            self.binary = all(s["binary"] for s in self.stats)
            self.has_nan = any(s["has_nan"] for s in self.stats)

    @property
    def weighted(self) -> bool:
        """The kept rows' weights differ (equal weights: the unweighted fit)."""
        return self.wmax != self.wmin

    def ones(self) -> np.ndarray:
        """Each column's count of ones among the kept rows (0/1 data, ``facts``)."""
        return np.sum([s["ones"] for s in self.stats], axis=0)

    def threshold_sample(self, ex, blocks: Blocks) -> np.ndarray:
        """The kept rows of the fixed threshold sample, in row order: brought by pass 1 when it was
        folded in, else a second read of the blocks (row offsets among the kept rows)."""
        import dask

        if self.folded:
            parts = [s["sample"] for s in self.stats]
        else:
            starts = np.concatenate([[0], np.cumsum(self.n_kept)[:-1]])
            parts = ex.gather(ex.compute([dask.delayed(block_sample)(x, y, w, int(s0), self.n, self.sample_rows)
                                          for x, y, w, s0 in zip(blocks.x, blocks.y, blocks.w, starts)]))
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, blocks.n_features))
