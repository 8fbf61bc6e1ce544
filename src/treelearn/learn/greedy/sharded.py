"""The greedy learner's Dask plug-in: histogram growth on row shards held by the workers.

``GreedyTreeClassifier._fit_sharded`` (and the pruned room, and the Top-k room's incumbent)
grow with :class:`DistributedGreedy`; the Tree is made by the room's one step from a growth's
node arrays, :func:`treelearn.learn.greedy.estimator.tree_from_growth`. Driver and workers
(see docs/scaling.md):

1. **statistics** (one read of each block, :class:`treelearn.distributed.blocks.FirstPass`):
   labels, kept rows (weight > 0), weight range;
2. **threshold sample** (a second read, unless pass 1 brought it): each block sends its rows of the
   fixed sample of :mod:`treelearn.data.sketch` (chosen from its row offset: ~200,000 rows in
   all); the driver codes the sample with the local learner's compiled coding -> the same
   thresholds as the local fit;
3. **coding** (a third read): each block becomes a :class:`Shard` on its worker (uint8/uint16
   codes, class codes, weights); the raw rows are dropped;
4. **levels**: the driver sends the splits of the last level; each shard moves its rows to the
   children and returns the (feature x code x class) histograms of the nodes asked for (the
   smaller child of each split; the larger is the parent's minus it, on the driver); the shards'
   histograms are summed pairwise on the workers and the sum gathered; the driver picks each
   node's split with the local grower's own finder (``_level.best_splits``).

The result is the local fit's tree (nodes renumbered to the local creation order): the same
thresholds, the same counts (exact integers without weights), the same split finder.

Regression (``GreedyTreeRegressor``, ``regression=`` its criterion: squared error, Friedman's, Poisson;
one output): pass 1 brings the target's range and weighted sum instead of labels; a shard keeps
its rows' channels (``regressor.regression_stats``: ``[w, w (y - m), w (y - m)^2]``, m the weighted
mean from pass 1; Poisson ``[w, w y, w y log y]``) and the levels sum their (cell x channel)
histograms, chosen from by the local regression policies. The sums are in another order than
the local fit's (shards, then pairs): the same tree (features, thresholds, row counts), values
equal to rounding. The absolute error needs the rows of a node (its medians): gathered.
"""
from __future__ import annotations

import time

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.data import coding, sketch
from treelearn.distributed import report
from treelearn.distributed.blocks import FirstPass, weights_of
from treelearn.learn.greedy import _level
from treelearn.learn.greedy.estimator import CodedFeatures, sample_thresholds, tree_from_growth
from treelearn._exact import merge as exact_merge
from treelearn.learn.greedy.regressor import check_poisson_target, leaf_sums, regression_stats
from treelearn.tree.tree import Tree

#: gains closer than this are ties (the compiled grower's GAIN_TOL, greedy/types.h)
GAIN_TOL = 1e-12


def supports(data, criterion, *, max_thresholds, class_weight, categorical) -> bool:
    """The settings and the input have a sharded growth: histogram mode (``max_thresholds``), a
    built-in criterion, no ``class_weight``, numeric columns (else the blocks are gathered)."""
    return (max_thresholds is not None and class_weight is None and categorical is None and criterion.code >= 0
            and data.is_numeric())


#: regression criteria whose node statistics are sums over rows (histograms on the shards)
SHARDED_REGRESSION = ("squared_error", "friedman_mse", "poisson")


def supports_regression(data, criterion: str, *, max_thresholds, categorical) -> bool:
    """A regression fit has a sharded growth: histogram mode, a criterion of sums
    (:data:`SHARDED_REGRESSION`), numeric columns, one output (else the blocks are gathered)."""
    return (max_thresholds is not None and categorical is None and criterion in SHARDED_REGRESSION
            and getattr(data.y, "ndim", 1) == 1 and data.is_numeric())


def sklearn_scale(code: int) -> float:
    """The factor from the criterion's normalised impurity to scikit-learn's units (Gini: 1/2;
    the regression criteria are in scikit-learn's units)."""
    return {0: 1.0, 1: 0.5, 2: 1.0, 10: 1.0, 12: 1.0}[int(code)]


# ------------------------------------------------------------------ tasks run on the workers
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
    wt = weights_of(wraw, y.shape[0])
    keep = wt > 0
    xk = np.asarray(x, dtype=np.float64)
    if not keep.all():
        xk = xk[keep]
    codes = coding.code_rows(xk, thresholds, np.dtype(code_dtype))  # as code_features codes a numeric column
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


class StatShard(Shard):
    """A regression shard: codes and the rows' channels ``stats`` (n, C) in place of labels and weights."""

    def __init__(self, codes, stats, info):
        super().__init__(codes, np.zeros(0, dtype=np.uint8), None, info)
        self.stats = stats

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.stats.nbytes)


def make_stat_shard(x, y, w, scale, thresholds, values, code_dtype, criterion, shift):
    """Pass 3 of a regression fit: the block's kept rows coded, and their channels."""
    y = np.asarray(y, dtype=np.float64).ravel()
    wt = weights_of(None if w is None else np.asarray(w, dtype=np.float64).ravel(), y.shape[0])
    keep = wt > 0
    xk = np.asarray(x, dtype=np.float64)
    if not keep.all():
        xk = xk[keep]
    codes = coding.code_rows(xk, thresholds, np.dtype(code_dtype))
    stats, _ = regression_stats(y[keep], wt[keep] / scale, criterion, shift=shift)
    exact = np.array([u is not None and bool(np.array_equal(u[codes[:, j]], xk[:, j]))
                      for j, u in enumerate(values)], dtype=bool)
    info = {"n": int(xk.shape[0]), "totals": stats.sum(axis=0), "values_exact": exact, "counts": False}
    return StatShard(codes, np.ascontiguousarray(stats), info)


def stat_hist_task(shard: StatShard, nid, slot_of, n_slots, offset):
    """One level of a regression fit: the shard's (cell x channel) histograms of the requested nodes."""
    return _level.stat_histograms(shard.codes, shard.stats, nid, slot_of, n_slots, offset)


def block_leaf_sums(x, y, w, tree, scale, criterion, shift):
    """The exact sums of a block's channels (its kept rows') per leaf of the grown ``tree``
    (``regressor.leaf_sums``: the local fit's, on these rows)."""
    y = np.asarray(y, dtype=np.float64).ravel()
    wt = weights_of(None if w is None else np.asarray(w, dtype=np.float64).ravel(), y.shape[0])
    keep = wt > 0
    xk = np.asarray(x)
    if not keep.all():
        xk = xk[keep]
    stats, _ = regression_stats(y[keep], wt[keep] / scale, criterion, shift=shift)
    return leaf_sums(tree, xk, stats)


def shard_info(shard: Shard):
    return shard.info


def split_task(shard: Shard, nid, feature, code, is_cat, left, right):
    """One level: a copy of the shard's node ids with the rows of split nodes moved to the children."""
    nid = np.zeros(shard.codes.shape[0], dtype=np.int32) if nid is None else nid.copy()
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


# ------------------------------------------------------------------ the driver
def _tree_sum(ex, parts):
    """Pairwise sum of the shards' histograms on the workers (a fixed pairing: a fixed order)."""
    while len(parts) > 1:
        nxt = [ex.submit(add_hists, parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


class DistributedGreedy:
    """One distributed greedy fit (histogram mode, depth-first semantics); see the module doc.
    ``scale``: the weights' divisor (None: the local fit's rule on these weights); every pass
    publishes its seconds and every level its log (:mod:`treelearn.distributed.report`)."""

    def __init__(self, ex, blocks, *, criterion_code, max_depth, min_samples_leaf, min_samples_split,
                 min_impurity_decrease, max_thresholds, random_state, sample_rows=None, scale=None,
                 regression=None):
        self.ex, self.blocks = ex, blocks
        self.regression = regression  # None, or the regression criterion's name
        self.crit = int(criterion_code)
        self.max_depth = -1 if max_depth is None else int(max_depth)
        self.msl_param, self.mss_param = min_samples_leaf, min_samples_split
        self.mid = float(min_impurity_decrease)
        self.max_thresholds = int(max_thresholds)
        self.random_state = random_state
        self.sklearn_scale = sklearn_scale(self.crit)
        self.sample_rows = sketch.SKETCH_ROWS if sample_rows is None else int(sample_rows)
        self.forced_scale = scale
        self.log = []  # per level: seconds, nodes, histogram bytes moved

    # ---------------------------------------------------------------- passes over the raw blocks
    def prepare(self, first: FirstPass | None = None):
        """The data passes. ``first``: pass 1 when the caller ran it already."""
        import dask

        ex, b = self.ex, self.blocks
        tp = time.perf_counter()
        self.pass_seconds = {}
        if first is None:
            first = FirstPass(ex, b, self.sample_rows, scale=self.forced_scale, regression=self.regression is not None)
        classes = self.classes = first.classes
        self.n = first.n
        self.scale = first.scale if self.forced_scale is None else float(self.forced_scale)
        self.wmin = first.wmin / self.scale
        self.pass_seconds["statistics"] = time.perf_counter() - tp
        tp = time.perf_counter()
        sample = first.threshold_sample(ex, b)
        self.sample = sample  # the threshold sample (kept rows of the sketch, in row order)
        d = b.n_features
        self.pass_seconds["sample"] = time.perf_counter() - tp
        tp = time.perf_counter()
        thr, vals, _ = sample_thresholds(sample, self.max_thresholds)
        self.pass_seconds["thresholds"] = time.perf_counter() - tp
        tp = time.perf_counter()
        self.thresholds = thr
        self.n_codes = np.array([t.size + 1 for t in thr], dtype=np.int32)
        if int(self.n_codes.max()) > 65536:
            raise TreeLearnValueError("max_thresholds above 65535 has no histogram mode")
        code_dtype = np.uint8 if int(self.n_codes.max()) <= 256 else np.uint16
        cand = [u if (u is not None and t.size == u.size - 1) else None for t, u in zip(thr, vals)]
        if self.regression is None:
            self.shards = ex.compute([dask.delayed(make_shard)(x, y, w, classes, self.scale, thr, cand, code_dtype)
                                      for x, y, w in zip(b.x, b.y, b.w)])
        else:
            self.constant = first.ymin == first.ymax  # (a constant target is one leaf: the caller's)
            self.shift = None
            if self.regression == "poisson":
                check_poisson_target(first.ymin, [first.ymax])
            else:  # the local fit's centre of the target (regressor.centre): its midrange
                self.shift = np.array([0.5 * first.ymin + 0.5 * first.ymax])
            self.shards = ex.compute([dask.delayed(make_stat_shard)(x, y, w, self.scale, thr, cand, code_dtype,
                                                                    self.regression, self.shift)
                                      for x, y, w in zip(b.x, b.y, b.w)])
        infos = ex.gather([ex.submit(shard_info, s) for s in self.shards])
        self.pass_seconds["coding"] = time.perf_counter() - tp
        report.publish("passes", dict(self.pass_seconds))
        exact = np.logical_and.reduce([i["values_exact"] for i in infos]) if infos else np.zeros(d, bool)
        self.values = [u if (u is not None and exact[j]) else None for j, u in enumerate(cand)]
        self.C = classes.size if classes is not None else 3  # classes, or one output's channels
        totals = np.zeros(self.C)
        for i in infos:
            totals += i["totals"]
        self.totals = totals
        self.is_cat = np.zeros(d, dtype=np.uint8)
        self.cat_only = np.full(d, -1, dtype=np.int32)
        self.offset = np.concatenate([[0], np.cumsum(self.n_codes)]).astype(np.int64)
        self.unit = all(i["totals"].sum() == i["n"] for i in infos) and self.wmin == 1.0
        # unweighted: the shards send integer (cell x class) counts only (see _hists)
        self.counts_only = bool(infos) and all(i["counts"] for i in infos)

    @property
    def one_class(self) -> bool:
        """After :meth:`prepare`: at most one class has weight (the tree is one leaf)."""
        if self.regression is not None:
            return bool(self.constant)
        return self.classes.size == 1 or np.count_nonzero(self.totals > 0) <= 1

    # ---------------------------------------------------------------- growth
    def _hists(self, nid_futs, slot_of, n_slots):
        """The summed histograms (h, hc) of the requested slots and the bytes one shard sends.
        Unweighted shards send integer class counts per cell; h (float64) and the cells' row
        counts hc (their sums over classes) are derived here: the same integers as the weighted
        path's sums of 1.0, so the same splits bit for bit."""
        ex, C = self.ex, self.C
        if self.regression is not None:
            parts = [ex.submit(stat_hist_task, s, nid, slot_of, n_slots, self.offset)
                     for s, nid in zip(self.shards, nid_futs)]
            h, hc = ex.gather(_tree_sum(ex, parts))
            return h, hc, h.nbytes + hc.nbytes
        if self.counts_only:
            wide = self.n >= 2**31 - 1
            parts = [ex.submit(count_task, s, nid, slot_of, n_slots, self.offset, C, wide)
                     for s, nid in zip(self.shards, nid_futs)]
            cnt = ex.gather(_tree_sum(ex, parts))
            hc = cnt.reshape(n_slots, -1, C).sum(axis=2, dtype=np.int64)
            return cnt.astype(np.float64), hc, cnt.nbytes
        parts = [ex.submit(hist_task, s, nid, slot_of, n_slots, self.offset, C)
                 for s, nid in zip(self.shards, nid_futs)]
        h, hc = ex.gather(_tree_sum(ex, parts))
        return h, hc, h.nbytes + hc.nbytes

    def grow(self):
        """The level-wise growth: per level, each open node's split from its summed histogram, the
        children in the node table, then the splits sent to the shards and the next histograms."""
        self._resolve_limits()
        self._order_features()
        t = _Nodes(self.totals, self.n, float(_level.wimp(self.crit, self.wmin, self.totals[None, :].copy())[0]))
        self.Wtot = self._weight(self.totals)
        if self._terminal(self.totals, self.n, 0):
            return self._out(t)
        t0 = time.perf_counter()
        nid = [None] * len(self.shards)
        H, HC, nbytes = self._hists(nid, np.zeros(1, dtype=np.int32), 1)
        self.log.append({"level": 0, "nodes": 1, "hist_bytes": nbytes * len(self.shards),
                         "seconds": time.perf_counter() - t0})
        frontier = [0]
        hist = {0: (H[0], HC[0])}
        level = 0
        while frontier:
            t0 = time.perf_counter()
            best = self._best_splits(t, frontier, hist)
            new_frontier, requests, subtract = self._split_level(t, frontier, hist, best)
            if not new_frontier:
                break
            level += 1
            nid, hist = self._next_level(t, frontier, new_frontier, nid, hist, requests, subtract, level, t0)
            frontier = new_frontier
        self.ex.release([x for x in nid if x is not None])
        return self._out(t)

    def grown_tree(self, max_leaves, classes, schema, ccp_alpha: float = 0.0, nodes=None) -> Tree:
        """After :meth:`prepare`: the grown Tree (depth-first, or best-first to ``max_leaves``) with
        ``classes`` in its nodes, by the room's one step from a growth to a Tree (``ccp_alpha``:
        minimal cost-complexity pruning after growth); one leaf when at most one class has weight.
        Regression: ``nodes``, the regressor's step from the summed channels to the nodes' values."""
        if self.regression is None and np.count_nonzero(self.totals > 0) <= 1:
            report.publish("levels", [])
            tree = Tree.leaf(self.totals, classes, schema=schema)
            tree.n_node_samples[0] = self.n
            return tree
        out = self.grow() if max_leaves is None else self.grow_best_first(int(max_leaves))
        report.publish("levels", list(self.log))
        coded = CodedFeatures(None, self.n_codes, self.is_cat, self.cat_only, self.thresholds, self.values)
        return tree_from_growth(out if nodes is None else nodes(out), coded, classes, schema, ccp_alpha)

    def exact_leaf_sums(self, tree: Tree, criterion: str, shift):
        """After a regression growth: the exact sums of the rows' channels per leaf of ``tree``,
        one task per raw block, merged (``regressor.set_exact_nodes`` makes the nodes' values)."""
        import dask

        b = self.blocks
        parts = self.ex.compute([dask.delayed(block_leaf_sums)(x, y, w, tree, self.scale, criterion, shift)
                                 for x, y, w in zip(b.x, b.y, b.w)])
        return exact_merge(self.ex.gather(parts))

    def grow_best_first(self, max_leaves: int):
        """Best-first growth (BuildTopDownDT, ``max_leaves``) as the local grower: repeatedly split
        the open leaf of largest global gain (ties within GAIN_TOL to the leaf created first),
        one split per round trip: the shards move its rows and count its smaller child."""
        self._resolve_limits()
        self._order_features()
        t = _Nodes(self.totals, self.n, float(_level.wimp(self.crit, self.wmin, self.totals[None, :].copy())[0]))
        self.Wtot = self._weight(self.totals)
        if self._terminal(self.totals, self.n, 0):
            return self._out(t, renumber=False)
        t0 = time.perf_counter()
        nid = [None] * len(self.shards)
        H, HC, nbytes = self._hists(nid, np.zeros(1, dtype=np.int32), 1)
        self.log.append({"level": 0, "nodes": 1, "hist_bytes": nbytes * len(self.shards),
                         "seconds": time.perf_counter() - t0})
        hist, best, frontier = {0: (H[0], HC[0])}, {}, {}
        self._consider(t, [0], hist, best, frontier)
        leaves, step = 1, 0
        while leaves < max_leaves and frontier:
            t0 = time.perf_counter()
            top = max(frontier.values())
            v = min(u for u, g in frontier.items() if g >= top - GAIN_TOL)
            del frontier[v]
            bf, bc, bl = best.pop(v)
            L, R, openL, openR = self._split_node(t, v, int(self.perm[bf]), bc, bl, hist[v])
            leaves += 1
            opened = [c for c, o in ((L, openL), (R, openR)) if o]
            if opened:
                small, large = (L, R) if t.nsamp[L] <= t.nsamp[R] else (R, L)
                subtract = [(v, small, large)] if large in opened else []
                step += 1
                nid, newhist = self._next_level(t, [v], opened, nid, hist, [small], subtract, step, t0, keep_rows=True)
                hist.update(newhist)
                self._consider(t, opened, hist, best, frontier)
            hist.pop(v)
        self.ex.release([x for x in nid if x is not None])
        return self._out(t, renumber=False)

    def _consider(self, t, nodes, hist, best, frontier):
        """The best splits of newly open nodes; the splittable ones join the frontier with their
        global gain (the local grower's ``(wimp - score) / Wtot``)."""
        bf, bc, bl, bs = self._best_splits(t, nodes, hist)
        for i, v in enumerate(nodes):
            if bf[i] >= 0 and self._splittable(t.wimps[v], bs[i]):
                best[v] = (int(bf[i]), int(bc[i]), int(bl[i]))
                frontier[v] = (t.wimps[v] - float(bs[i])) / self.Wtot
            else:
                hist.pop(v, None)

    def _resolve_limits(self):
        """min_samples_leaf / min_samples_split as row counts (a fraction of the rows rounds up)."""
        n = self.n
        msl = self.msl_param if isinstance(self.msl_param, (int, np.integer)) else max(
            1, int(np.ceil(self.msl_param * n)))
        mss = self.mss_param if isinstance(self.mss_param, (int, np.integer)) else max(
            2, int(np.ceil(self.mss_param * n)))
        self.msl, self.mss = int(msl), int(mss)

    def _order_features(self):
        """Features in a random order (ties to the first in that order), as the local fit: the
        permutation, the histogram cells in its order and the permuted feature descriptions."""
        d = self.n_codes.size
        if self.random_state is None:
            perm = np.arange(d)
        else:
            from sklearn.utils import check_random_state

            rs = self.random_state
            rng = rs if isinstance(rs, np.random.Generator) else check_random_state(rs)
            perm = rng.permutation(d)
        cells = np.concatenate([np.arange(self.offset[f], self.offset[f + 1]) for f in perm]) if d else np.zeros(0, int)
        self.perm, self.cells = perm, cells
        self.pn_codes = np.ascontiguousarray(self.n_codes[perm])
        self.pis_cat = np.ascontiguousarray(self.is_cat[perm])
        self.pcat_only = np.ascontiguousarray(self.cat_only[perm])

    def _best_splits(self, t, frontier, hist):
        """Each frontier node's best split (feature in the permuted order, code, low, score) from its
        summed histogram, by the local grower's finder."""
        C, cells = self.C, self.cells
        Hs = np.ascontiguousarray(np.stack([hist[v][0].reshape(-1, C)[cells].ravel() for v in frontier]))
        HCs = np.ascontiguousarray(np.stack([hist[v][1][cells] for v in frontier]))
        tots = np.ascontiguousarray(np.stack([t.counts[v] for v in frontier]))
        Ws = np.array([self._weight(t.counts[v]) for v in frontier])
        ms = np.array([t.nsamp[v] for v in frontier], dtype=np.int64)
        return _level.best_splits(self.crit, self.wmin, self.pn_codes, self.pis_cat, self.pcat_only, self.msl,
                                  Hs, HCs, tots, Ws, ms)

    def _split_level(self, t, frontier, hist, best):
        """Split the splittable frontier nodes (children in the node table). Returns the next
        frontier, the nodes whose histograms the shards must count (the smaller child of a split)
        and the (parent, small, large) triples whose large child is the parent's minus the small."""
        bf, bc, bl, bs = best
        new_frontier, requests, subtract = [], [], []
        for i, v in enumerate(frontier):
            if bf[i] < 0 or not self._splittable(t.wimps[v], bs[i]):
                continue
            L, R, openL, openR = self._split_node(t, v, int(self.perm[bf[i]]), int(bc[i]), int(bl[i]), hist[v])
            if openL or openR:
                nl, nr = t.nsamp[L], t.nsamp[R]
                small, large = (L, R) if nl <= nr else (R, L)
                need_large = openR if large == R else openL
                need_small = openL if small == L else openR
                if need_large:
                    requests.append(small)
                    subtract.append((v, small, large))
                elif need_small:
                    requests.append(small)
            if openL:
                new_frontier.append(L)
            if openR:
                new_frontier.append(R)
        return new_frontier, requests, subtract

    def _split_node(self, t, v, f, k_code, low, node_hist):
        """Split node v on feature f at code k_code; the children's counts come from the parent's
        histogram of the feature. Returns the children's ids and whether each may be split."""
        C = self.C
        h, hc = node_hist
        o0, o1 = self.offset[f], self.offset[f + 1]
        blk = h.reshape(-1, C)[o0:o1]
        cblk = hc[o0:o1]
        right_mask = np.arange(o1 - o0) >= k_code
        cr = blk[right_mask].sum(axis=0)
        cl = t.counts[v] - cr
        if self.regression is None:
            cl[cl < 0.5 * self.wmin] = 0.0  # rounding residues of an absent class (weights)
            cr[cr < 0.5 * self.wmin] = 0.0
        nr = int(cblk[right_mask].sum())
        nl = t.nsamp[v] - nr
        wl = _level.wimp(self.crit, self.wmin, np.ascontiguousarray(np.stack([cl, cr])))
        L = t.add(cl, nl, t.depth[v] + 1, float(wl[0]))
        R = t.add(cr, nr, t.depth[v] + 1, float(wl[1]))
        t.left[v], t.right[v], t.feature[v], t.code[v], t.low[v] = L, R, f, k_code, low
        openL = not self._terminal(cl, nl, t.depth[L])
        openR = not self._terminal(cr, nr, t.depth[R])
        return L, R, openL, openR

    def _next_level(self, t, frontier, new_frontier, nid, hist, requests, subtract, level, t0, keep_rows=False):
        """Broadcast the splits (rows of the split nodes move to their children, every other row of
        this level, in a leaf, leaves the growth; ``keep_rows``: the other rows stay in their nodes,
        best-first), gather the requested histograms, derive the others by subtraction. Returns
        the shards' new node ids and the next frontier's histograms."""
        m = len(t.counts)
        fa = np.full(m, -2 if keep_rows else -1, dtype=np.int32)
        ca = np.zeros(m, dtype=np.int32)
        la = np.full(m, -1, dtype=np.int32)
        ra = np.full(m, -1, dtype=np.int32)
        for v in frontier:
            if t.left[v] >= 0:
                fa[v], ca[v], la[v], ra[v] = t.feature[v], t.code[v], t.left[v], t.right[v]
        slot_of = np.full(m, -1, dtype=np.int32)
        for s_, v in enumerate(requests):
            slot_of[v] = s_
        is_cat = self.is_cat
        new_nid = [self.ex.submit(split_task, s, old, fa, ca, is_cat, la, ra)
                   for s, old in zip(self.shards, nid)]
        self.ex.release([x for x in nid if x is not None])
        Hn, HCn, nbytes = self._hists(new_nid, slot_of, len(requests))
        newhist = {}
        for s_, v in enumerate(requests):
            newhist[v] = (Hn[s_], HCn[s_])
        for parent, small, large in subtract:
            ph, phc = hist[parent]
            newhist[large] = (ph - newhist[small][0], phc - newhist[small][1])
        self.log.append({"level": level, "nodes": len(requests), "split_nodes": int((fa >= 0).sum()),
                         "hist_bytes": nbytes * len(self.shards),
                         "split_bytes": int(fa.nbytes * 4 + slot_of.nbytes) * len(self.shards),
                         "seconds": time.perf_counter() - t0})
        return new_nid, {v: newhist[v] for v in new_frontier}

    def _terminal(self, c, nsamples, dep):
        if self.max_depth >= 0 and dep >= self.max_depth:
            return True
        if nsamples < 2 or nsamples < 2 * self.msl or nsamples < self.mss:
            return True
        if self.regression is not None:  # the local grower's purity rule of the criterion
            return bool(_level.pure(self.crit, self.wmin, np.ascontiguousarray(np.asarray(c)[None, :]))[0])
        return int(np.count_nonzero(np.asarray(c) > 0.0)) <= 1

    def _weight(self, c) -> float:
        """A node's weight: the sum of its class counts (in index order, as the compiled grower),
        or a regression node's weight channel."""
        return float(c[0]) if self.regression is not None else _seq_sum(c)

    def _splittable(self, wimp, score):
        if not np.isfinite(score):
            return False
        if self.mid > 0.0 and self.sklearn_scale * ((wimp - score) / self.Wtot + 1e-12) < self.mid:
            return False
        return True

    def _out(self, t, renumber=True):
        """Node arrays renumbered to the local grower's creation order (depth-first: a split node's
        children get the next two ids; the left subtree is grown first; ``renumber=False``: the
        nodes are in that order already, best-first)."""
        counts, nsamp, wimps, left, right = t.counts, t.nsamp, t.wimps, t.left, t.right
        feature, code, low = t.feature, t.code, t.low
        m = len(counts)
        new = np.full(m, -1, dtype=np.int64)
        new[0] = 0
        nxt = 1
        stack = [0] if renumber else []
        if not renumber:
            new[:] = np.arange(m)
        while stack:
            v = stack.pop()
            if left[v] >= 0:
                new[left[v]], new[right[v]] = nxt, nxt + 1
                nxt += 2
                if left[right[v]] >= 0:
                    stack.append(right[v])
                if left[left[v]] >= 0:
                    stack.append(left[v])
        order = np.argsort(new)
        C = self.C
        L = np.asarray(left, dtype=np.int64)[order]
        R = np.asarray(right, dtype=np.int64)[order]
        out = {
            "children_left": np.where(L >= 0, new[np.maximum(L, 0)], -1),
            "children_right": np.where(R >= 0, new[np.maximum(R, 0)], -1),
            "feature": np.asarray(feature, dtype=np.int64)[order],
            "split_code": np.asarray(code, dtype=np.int64)[order],
            "split_low": np.asarray(low, dtype=np.int64)[order],
            "n_node_samples": np.asarray(nsamp, dtype=np.int64)[order],
            "value": np.stack(counts)[order].reshape(m, C),
        }
        W = np.array([self._weight(c) for c in counts])[order]
        wi = np.asarray(wimps)[order]
        out["impurity"] = np.where(W > 0, self.sklearn_scale * np.maximum(0.0, wi / np.where(W > 0, W, 1.0)), 0.0)
        return out


class _Nodes:
    """The driver's node table: ids in the creation order of the level-wise growth (a node is a
    leaf while left[v] < 0; feature -2 marks a leaf as in the compiled grower's Result)."""

    def __init__(self, totals, n, wimp):
        self.counts, self.nsamp, self.depth, self.wimps = [totals.copy()], [n], [0], [wimp]
        self.left, self.right, self.feature, self.code, self.low = [-1], [-1], [-2], [0], [0]

    def add(self, counts, n_samples, depth, wimp) -> int:
        """A new leaf; returns its id."""
        self.counts.append(counts)
        self.nsamp.append(n_samples)
        self.depth.append(depth)
        self.wimps.append(wimp)
        self.left.append(-1)
        self.right.append(-1)
        self.feature.append(-2)
        self.code.append(0)
        self.low.append(0)
        return len(self.counts) - 1


def _seq_sum(c) -> float:
    """Sum in index order (as the compiled grower sums a node's class counts)."""
    s = 0.0
    for v in np.asarray(c).tolist():
        s += v
    return s
