"""Row shards of Dask input and the tasks that run on them (on the workers).

A shard is one row block of the input: its raw rows are read (computed) only inside the three
passes of :mod:`treelearn.distributed._greedy` (statistics, threshold sample, coding); what stays
on a worker afterwards is its :class:`Shard`: the histogram codes (uint8/uint16, row-major), the
class codes and the weights of its rows (zero-weight rows dropped).
"""
from __future__ import annotations

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.data import _binning
from treelearn.data.sketch import sketch_mask
from treelearn.learn.greedy import _level


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


# ------------------------------------------------------------------ tasks run on the workers
def _weights(w, n):
    if w is None:
        return np.ones(n)
    w = np.asarray(w, dtype=np.float64).ravel()
    return w


def block_stats(x, y, w, start=None, n_total=None, sample_rows=None, facts=False):
    """Pass 1 of a block: its labels, kept rows (weight > 0) and weight range; checks the values.
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
    w = _weights(w, y.shape[0])
    if w.size and (not np.isfinite(w).all() or w.min() < 0):
        raise TreeLearnValueError("sample_weight must be finite and non-negative")
    labels = np.unique(y)
    keep = w > 0
    wk = w[keep]
    out = {"labels": labels, "n": int(y.shape[0]), "n_kept": int(keep.sum()),
           "wmin": float(wk.min()) if wk.size else np.inf, "wmax": float(wk.max()) if wk.size else -np.inf}
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
    keep = _weights(w, y.shape[0]) > 0
    xk = np.asarray(x)
    if not keep.all():
        xk = xk[keep]
    mask = sketch_mask(start, start + xk.shape[0], n_total, sample_rows)
    return np.ascontiguousarray(xk[mask], dtype=np.float64)


class Shard:
    """What a worker keeps of a block: codes (rows x features, uint8/uint16), class codes, weights
    (scaled; None: all ones), and facts the driver gathers once (``info``)."""

    def __init__(self, codes, y, w, info):
        self.codes, self.y, self.w, self.info = codes, y, w, info

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.y.nbytes + (0 if self.w is None else self.w.nbytes))

    def y64(self):
        return self.y.astype(np.int64)

    def w64(self):
        return np.ones(self.y.shape[0]) if self.w is None else self.w


def make_shard(x, y, w, classes, scale, thresholds, values, code_dtype):
    """Pass 3: code the block's kept rows; ``info``: class totals and, per column with candidate
    distinct values, whether every value of the block is one of them."""
    y = np.asarray(y).ravel()
    wraw = None if w is None else np.asarray(w, dtype=np.float64).ravel()
    codes_y = np.searchsorted(classes, y)
    wt = _weights(wraw, y.shape[0])
    keep = wt > 0
    xk = np.asarray(x, dtype=np.float64)
    if not keep.all():
        xk = xk[keep]
    codes = _binning.code_rows(xk, thresholds, np.dtype(code_dtype))
    cy = codes_y[keep].astype(np.uint8 if classes.size <= 255 else np.int32)
    wk = wt[keep] / scale
    unit = bool(np.all(wk == 1.0))
    n_classes = classes.size
    totals = np.zeros(n_classes)
    for c in range(n_classes):  # row order within the class, as the local fit sums
        totals[c] = wk[cy == c].sum() if not unit else float(np.count_nonzero(cy == c))
    exact = np.array([u is not None and bool(np.array_equal(u[codes[:, j]], xk[:, j]))
                      for j, u in enumerate(values)], dtype=bool)
    info = {"n": int(xk.shape[0]), "totals": totals, "values_exact": exact,
            "counts": bool(unit and cy.dtype == np.uint8)}
    return Shard(codes, cy, None if unit else np.ascontiguousarray(wk), info)


def shard_info(shard: Shard):
    return shard.info


def split_task(shard: Shard, nid, feature, code, is_cat, left, right):
    """One level: a copy of the shard's node ids with the rows of split nodes moved to the children."""
    nid = np.zeros(shard.y.shape[0], dtype=np.int32) if nid is None else nid.copy()
    _level.split_rows(shard.codes, nid, feature, code, is_cat, left, right)
    return nid


def hist_task(shard: Shard, nid, slot_of, n_slots, offset, n_classes):
    """One level: the shard's histograms of the requested nodes (slots)."""
    if nid is None:
        nid = np.zeros(shard.y.shape[0], dtype=np.int32)
    return _level.histograms(shard.codes, shard.y64(), shard.w64(), nid, slot_of, n_slots, offset, n_classes)


def count_task(shard: Shard, nid, slot_of, n_slots, offset, n_classes, wide):
    """One level, unweighted shard: the (cell x class) row counts of the requested nodes (slots),
    int32 (int64 when ``wide``); the cells' row counts are the sums over classes."""
    return _level.counts(shard.codes, shard.y, nid, slot_of, n_slots, offset, n_classes, wide)


def add_hists(a, b):
    """The sum of two shards' histograms, (h, hc) pairs or count arrays (counts are additive)."""
    if isinstance(a, tuple):
        return a[0] + b[0], a[1] + b[1]
    return a + b
