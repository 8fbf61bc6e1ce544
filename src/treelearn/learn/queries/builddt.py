"""BuildDT of 004 Fig. 2 (a DP over restrictions) and the learner of 004 Thm 1-2 around it.

Statistics of f restricted to π (its mean and its set of influential variables) come from one of
three providers: exact (truth table), sampled from membership queries (adaptive sequential tests)
or from uniform random labelled examples only (the monotone mode of 004 §6).
"""
from __future__ import annotations

import math
import numbers
import time

import numpy as np

from treelearn._validation import TreeLearnValueError, check_float_param, check_int_param
from treelearn.learn.queries.influence import smoothed_batch
from treelearn.learn.queries.oracle import (
    Oracle,
    SearchLimitError,
    TreeBuilder,
    as_oracle,
    exact_influences_nd,
    exact_table,
    hoeffding_sample_size,
    keyed_rng,
    random_pm1,
    rng_seed,
    smooth,
    sub_table,
    table_to_nd,
)

# ----------------------------------------------------------------------------- statistics providers
class _Stat:
    __slots__ = ("mean", "S", "survivors", "m", "n_rel", "lbs")

    def __init__(self, mean, S, survivors, m, n_rel=0, lbs=()):
        self.mean, self.S, self.survivors, self.m = mean, S, survivors, m
        self.n_rel = n_rel  # variables seen to change f_π (a tree computing f_π queries them all)
        # influences in decreasing order, in error units: a tree with t leaves ignores one of the
        # t most influential variables j, and a tree ignoring x_j errs on >= Inf_j(f_π) (it
        # agrees on x and x^⊕j, f_π differs there), so its error is >= lbs[t-1]
        self.lbs = lbs


def _kl_bern(p, q):
    p = np.clip(p, 0.0, 1.0)
    q = min(max(q, 1e-15), 1 - 1e-15)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * np.log(np.where(p > 0, p, 1) / q), 0.0)
        b = np.where(p < 1, (1 - p) * np.log(np.where(p < 1, 1 - p, 1) / (1 - q)), 0.0)
    return a + b


class _ExactProvider:
    """Exact E[f_π] and influences from the truth table (n <= 20)."""

    def __init__(self, table, n, metric, tau):
        self.nd = table_to_nd(np.asarray(table, dtype=np.float64), n)
        self.metric, self.tau = metric, tau
        self.n_queries = 0

    def stats(self, pi, key, want_S, cand):
        sub, free = sub_table(self.nd, pi)
        mean = float(np.mean(sub))
        if not want_S:
            return _Stat(mean, (), None, 0)
        infl = exact_influences_nd(sub, self.metric)
        sel = np.nonzero(infl >= self.tau - 1e-12)[0]
        sel = sel[np.argsort(-infl[sel], kind="stable")]
        S = tuple(int(free[a]) for a in sel)
        pos = np.sort(infl[infl > 0])[::-1] * (1.0 if self.metric == "hamming" else 0.5)
        return _Stat(mean, S, None, 0, int(pos.size), tuple(pos.tolist()))


class _SampledProvider:
    """Estimated E[f_π] and influential set S from membership queries.

    One shared batch per restriction (seeded by the restriction, never stored), every
    candidate bit flipped. First look: m0 = ⌈ln(1/δ')/lo⌉ points; candidates that never change
    f are dropped here and, by default, for the restriction's descendants (an irrelevant variable
    stays irrelevant under every further restriction). Adaptive: the batch doubles until a
    Chernoff (KL) bound certifies each remaining candidate clearly above ``lo`` (include:
    Inf >= τ/2) or clearly below ``hi`` (exclude: Inf < τ), up to the Hoeffding size for
    accuracy ±τ/4, where it is included iff its estimate is >= 3τ/4. Without adaptivity every
    candidate gets the full Hoeffding size. Real-valued functions (the smoothed f_δ) use the
    statistic ½|f(x) − f(x^⊕i)| in [0, 1] (Inf in the |·| metric); Boolean ones 1[f(x) ≠ f(x^⊕i)]
    (Inf = half of it).
    """

    def __init__(self, oracle, n, tau, delta_test, seed, *, adaptive=True, inherit=True, mean_tol=0.1,
                 smoothing=None, n_noise=32, max_queries=None, shared_batch=True):
        self.o, self.n, self.tau = oracle, n, tau
        self.seed = seed
        self.adaptive, self.inherit = adaptive, inherit
        self.smoothing, self.n_noise = smoothing, n_noise
        self.shared = shared_batch
        boolean = smoothing is None and not oracle.real_valued
        self.boolean = boolean
        # thresholds on q = E[statistic]; Inf = scale·q
        scale = 0.5 if boolean else 1.0
        self.lo = (tau / 2.0) / scale
        self.hi = tau / scale
        self.log1d = math.log(1.0 / delta_test)
        self.m0 = int(math.ceil(self.log1d / self.lo))
        self.m_max = max(self.m0, int(math.ceil(math.log(2.0 / delta_test) / (2.0 * (self.lo / 2.0) ** 2))))
        self.m_mean = max(self.m0, hoeffding_sample_size(mean_tol, delta_test, 2.0))
        self.q_ref = 0
        self.max_queries = max_queries
        self.n_queries = 0

    def _batch(self, rng, m, pi, cand, want_flips=True):
        X = random_pm1(rng, m, pi)
        before = self.o.n_queries
        if self.smoothing is None and want_flips and not self.shared:
            # ablation: a fresh batch per candidate, so f(x) is queried again for each of them
            f0 = self.o.evaluate(X)
            F = np.empty((m, cand.shape[0]))
            base = np.empty((m, cand.shape[0]))
            for c in range(cand.shape[0]):
                Xc = random_pm1(rng, m, pi)
                base[:, c] = self.o.evaluate(Xc)
                F[:, c] = self.o.evaluate_flips(Xc, cand[c:c + 1])[:, 0]
            self.n_queries += self.o.n_queries - before
            return f0, (F != base) if self.boolean else 0.5 * np.abs(F - base)
        if self.smoothing is None:
            f0 = self.o.evaluate(X)
            F = self.o.evaluate_flips(X, cand) if want_flips else None
        else:
            if want_flips:
                f0, F = smoothed_batch(self.o, X, cand, self.smoothing, self.n_noise, rng, pi)
            else:
                f0, F = smoothed_batch(self.o, X, cand[:0], self.smoothing, self.n_noise, rng, pi)
                F = None
        self.n_queries += self.o.n_queries - before
        if self.max_queries is not None and self.n_queries > self.max_queries:
            raise SearchLimitError(f"BuildDT hit its query budget of {self.max_queries} queries")
        if F is None:
            return f0, None
        if self.boolean:
            Z = (F != f0[:, None])
        else:
            Z = 0.5 * np.abs(F - f0[:, None])
        return f0, Z

    def stats(self, pi, key, want_S, cand):
        rng = keyed_rng(self.seed, key)
        if not want_S:
            f0, _ = self._batch(rng, self.m0, pi, np.empty(0, np.int64), want_flips=False)
            m = self.m0
            s, cnt = float(f0.sum()), m
            if np.any(f0 != f0[0]) and self.m_mean > m:
                f1, _ = self._batch(rng, self.m_mean - m, pi, np.empty(0, np.int64), want_flips=False)
                s += float(f1.sum())
                cnt = self.m_mean
            return _Stat(s / cnt, (), None, cnt)
        if cand is None:
            cand = np.nonzero(pi == 0)[0]
        else:
            cand = cand[pi[cand] == 0]
        cand = np.asarray(cand, dtype=np.int64)
        if not self.adaptive:
            f0, Z = self._batch(rng, self.m_max, pi, cand)
            q = Z.mean(axis=0) if cand.size else np.zeros(0)
            sel = np.nonzero(q >= 1.5 * self.lo)[0]
            sel = sel[np.argsort(-q[sel], kind="stable")]
            S = tuple(int(j) for j in cand[sel])
            alive = Z.any(axis=0)
            surv = cand[alive] if self.inherit else None
            return _Stat(float(f0.mean()), S, surv, self.m_max, int(alive.sum()))
        m = self.m0
        f0, Z = self._batch(rng, m, pi, cand)
        fsum, fcnt = float(f0.sum()), m
        sums = Z.sum(axis=0).astype(np.float64)
        alive = sums > 0  # zero-flip candidates are dropped at the first look
        surv = cand[alive] if self.inherit else None
        included = []
        und = np.nonzero(alive)[0]
        qfin = np.zeros(cand.shape[0])
        while und.size:
            qhat = sums[und] / m
            qfin[und] = qhat
            inc = (qhat > self.lo) & (m * _kl_bern(qhat, self.lo) >= self.log1d)
            exc = (qhat < self.hi) & (m * _kl_bern(qhat, self.hi) >= self.log1d)
            if m >= self.m_max:
                inc = qhat >= 1.5 * self.lo
                exc = ~inc
            included.extend((-float(qhat[a]), int(cand[j])) for a, j in zip(np.nonzero(inc)[0], und[inc]))
            und = und[~(inc | exc)]
            if not und.size:
                break
            m_new = min(2 * m, self.m_max)
            f1, Z1 = self._batch(rng, m_new - m, pi, cand[und])
            fsum += float(f1.sum())
            fcnt += m_new - m
            sums[und] += Z1.sum(axis=0)
            m = m_new
        if fcnt < self.m_mean and not (np.all(f0 == f0[0]) and not included):
            extra = self.m_mean - fcnt
            f1, _ = self._batch(rng, extra, pi, np.empty(0, np.int64), want_flips=False)
            fsum += float(f1.sum())
            fcnt += extra
        included.sort()
        lbs = tuple(np.sort(qfin[alive])[::-1] * 0.5)  # Inf in error units = q/2 (both statistics)
        return _Stat(fsum / fcnt, tuple(j for _, j in included), surv, fcnt, int(alive.sum()), lbs)


class _MonotoneProvider:
    """Random labelled examples only (004 §6): Inf_i(f_π) = ½·|E[f(x)·x_i | x consistent with π]|
    (Fact 6.2; the absolute value lets each coordinate be monotone in either direction)."""

    #: bytes of float64 work space per influence block (the int8 rows are converted a block at a time)
    BLOCK_BYTES = 8 * 2**20

    def __init__(self, X, y, tau, threshold):
        self.XT = np.ascontiguousarray(X.T)  # (n, N) int8 (no copy when X is the transpose of one)
        self.y = y.astype(np.float64)
        self.tau = tau
        self.thr = threshold
        self.n_queries = 0
        self.check = None  # the DP's limit check, called between blocks

    def stats(self, pi, key, want_S, cand):
        fixed = np.nonzero(pi)[0]
        if fixed.size:
            mask = np.all(self.XT[fixed] == pi[fixed][:, None], axis=0)
            yy = self.y[mask]
        else:
            mask = None
            yy = self.y
        cnt = yy.shape[0]
        if cnt == 0:
            return _Stat(0.0, (), None, 0)
        mean = float(yy.mean())
        if not want_S:
            return _Stat(mean, (), None, cnt)
        # E[f·x_i | π] over the consistent rows, a block of rows at a time: float64 work space of
        # BLOCK_BYTES, never a float copy of the sample (memory within the cap)
        rows = np.arange(self.XT.shape[1]) if mask is None else np.flatnonzero(mask)
        step = max(1, self.BLOCK_BYTES // (8 * max(self.XT.shape[0], 1)))
        acc = np.zeros(self.XT.shape[0], dtype=np.float64)
        for a in range(0, rows.size, step):
            if self.check is not None:
                self.check()
            r = rows[a:a + step]
            acc += self.XT[:, r].astype(np.float64) @ self.y[r]
        infl = 0.5 * np.abs(acc) / cnt
        infl[fixed] = 0.0
        sel = np.nonzero(infl >= self.thr)[0]
        sel = sel[np.argsort(-infl[sel], kind="stable")]
        return _Stat(mean, tuple(int(j) for j in sel), None, cnt)


# ----------------------------------------------------------------------------- BuildDT
_PERFECT = 2.0**-50  # bounds below this ask for a tree of estimated cost 0


class _BuildDT:
    """BuildDT_M (004 Fig. 2) as a DP over restrictions: for each restriction π the vector of
    best distances for every size budget 1..need (a tree of size <= k), so M[π, s] for all s
    comes from one pass over (i ∈ S, split k)."""

    def __init__(self, provider, n, size, depth, *, memo=True, time_limit=None, max_memory_mb=None,
                 rounds=(0.0, 1 / 256, 1 / 32, math.inf)):
        self.p, self.n, self.size, self.depth = provider, n, size, depth
        self.use_memo = memo
        self.memo = {}
        self.stats = {}
        self.t0 = time.perf_counter()
        self.time_limit = time_limit
        self.max_memory = None if max_memory_mb is None else max_memory_mb * 2**20
        self.mem = 0
        self.n_restrictions = 0
        self.n_stat_calls = 0
        self.rounds = rounds
        self.n_rounds = 1

    def _check_limits(self):
        if self.time_limit is not None and time.perf_counter() - self.t0 > self.time_limit:
            raise SearchLimitError(
                f"BuildDT hit its time limit of {self.time_limit:g} s after {self.n_restrictions} restrictions "
                f"(raise time_limit, or lower size / epsilon)"
            )
        if self.max_memory is not None and self.mem > self.max_memory:
            raise SearchLimitError(
                f"BuildDT hit its memory cap of {self.max_memory / 2**20:g} MB of memo after "
                f"{self.n_restrictions} restrictions"
            )

    def _stat(self, pi, key, depth, want_S, cand):
        st = self.stats.get(key)
        if st is not None and (not want_S or key in self._full):
            return st
        self._check_limits()
        old = st
        st = self.p.stats(pi, key, want_S, cand)
        if old is not None:  # keep E[f_π] fixed once used, so memo entries stay consistent
            st.mean = old.mean
        self.n_stat_calls += 1
        if key not in self.stats:
            self.n_restrictions += 1
        self.stats[key] = st
        if want_S:
            self._full.add(key)
        self.mem += 200 + len(key) + 8 * (len(st.S) + (0 if st.survivors is None else st.survivors.size))
        return st

    def run(self):
        self._full = set()
        root = np.zeros(self.n, dtype=np.int8)
        # the root's useful budget: a tree of depth <= d on n variables has at most 2^min(d, n)
        # leaves (what _solve caps to anyway; a hostile size of 10^8 must not build its bound list)
        room = min(self.depth, self.n)
        top = min(self.size, 2 ** room) if room < 62 else self.size
        # Iterative bounding: first ask for a tree of (estimated) cost below a tiny bound (a tree
        # consistent with every estimate, the realizable case), then relax the bound; the memo
        # (exact values and lower bounds) carries over, and the last round is exact.
        for u in self.rounds:
            u = u if u > 0 else 2.0 ** -(2 * self.depth + 60)
            ub = [0.0] * (top - 1) + [u]  # only M[∅, s] is wanted
            ent = self._solve(root, root.tobytes(), 0, top, None, ub)
            if ent[1][min(top, len(ent[0])) - 1]:
                break
            self.n_rounds += 1
        b = TreeBuilder()
        self._emit(b, root, root.tobytes(), 0, top, 1.0)
        return b, float(ent[0][min(top, len(ent[0])) - 1])

    def _solve(self, pi, key, depth, need, cand, ub):
        """Costs v[t-1] of the best tree of size <= t, t = 1..need' (need' = need capped by the
        depth budget; larger budgets equal the last entry). Branch and bound: v[t-1] is exact
        whenever the optimum is < ub[t-1]; otherwise it is a lower bound >= ub[t-1]."""
        # at most 2^(free variables) leaves below π, and 2^(depth budget): larger budgets equal that
        room = min(self.depth, self.n) - depth
        cap = min(need, 2 ** max(room, 0)) if room < 62 else need
        if cap < need:  # fold the wanted bounds of budgets beyond the depth cap into its last entry
            ub = ub[:cap - 1] + [max(ub[cap - 1:])]
        need = cap
        ent = self.memo.get(key)
        if ent is not None and len(ent[0]) >= need:
            v, ex = ent[0], ent[1]
            if all(ex[t] or v[t] >= ub[t] for t in range(need)):
                return ent
            old = ent[5]
            ub = list(ub) + [0.0] * (len(old) - len(ub))
            ub = [max(ub[t], old[t]) for t in range(len(old))]
            need = len(ub)
        elif ent is not None:
            old = ent[5]
            ub = [max(ub[t], old[t]) if t < len(old) else ub[t] for t in range(need)]
        if max(ub) <= 0.0:  # nothing wanted: the trivial lower bound 0 is enough
            return ([0.0] * need, [False] * need, [-1] * need, [0] * need, 0.0, list(ub))
        want_S = need > 1 and depth < self.depth
        st = self._stat(pi, key, depth, want_S, cand)
        leaf = 0.5 * (1.0 - abs(st.mean))
        best = [leaf] * need
        ci = [-1] * need
        ck = [0] * need
        if leaf > 0 and max(ub) < _PERFECT and st.n_rel:
            # only a tree of cost 0 is wanted: it must query every variable seen to change f_π,
            # so budgets below n_rel + 1 leaves have a positive cost (>= ub, a valid bound)
            for t in range(min(need, st.n_rel)):
                best[t] = max(best[t], ub[t])
        perfect = max(ub) < _PERFECT
        lbv = [0.0] * need
        if leaf > 0.0 and st.lbs:
            nl = len(st.lbs)
            lbv = [st.lbs[t] if t < nl else 0.0 for t in range(need)]
        if want_S and leaf > 0.0 and st.S:
            ccand = st.survivors
            for i in st.S:
                bnd = [min(ub[t], best[t]) for t in range(need)]
                # sizes t >= 2 that can still improve
                live = [t for t in range(1, need) if bnd[t] > lbv[t] and bnd[t] > 0.0]
                if not live:
                    break
                tmax = live[-1] + 1  # largest useful size
                cn = tmax - 1
                pl = pi.copy()
                pl[i] = -1
                kl = self._child_key(key, pl, i, -1)
                pr = pi.copy()
                pr[i] = 1
                kr = self._child_key(key, pr, i, 1)
                cw = cn > 1 and depth + 1 < self.depth
                sl = self._stat(pl, kl, depth + 1, cw, ccand)
                sr = self._stat(pr, kr, depth + 1, cw, ccand)
                if perfect:
                    # both children must be computed exactly: each needs >= n_rel + 1 leaves
                    lbl = 1 if sl.mean in (-1.0, 1.0) else sl.n_rel + 1
                    lbr = 1 if sr.mean in (-1.0, 1.0) else sr.n_rel + 1
                    if lbl + lbr > tmax:
                        continue
                LBl = sl.lbs if sl.mean not in (-1.0, 1.0) else ()
                LBr = sr.lbs if sr.mean not in (-1.0, 1.0) else ()
                nbl, nbr = len(LBl), len(LBr)
                # left child of size k is useful only if L[k] < 2·bnd[t] − LB_right(t+1−k) for some t
                ubl = [0.0] * cn
                for t in live:
                    self._check_limits()  # (each t costs up to t steps: the deadline holds in here too)
                    b2 = 2 * bnd[t]
                    for k in range(1, t + 1):
                        j = t + 1 - k
                        r = b2 - (LBr[j - 1] if j - 1 < nbr else 0.0)
                        if k - 1 < cn and r > ubl[k - 1] and r > (LBl[k - 1] if k - 1 < nbl else 0.0):
                            ubl[k - 1] = r
                if max(ubl) <= 0.0:
                    continue
                Le = self._solve(pl, kl, depth + 1, cn, ccand, ubl)
                L, exL = Le[0], Le[1]
                ubr = [0.0] * cn
                nL = len(L)
                for t in live:
                    self._check_limits()
                    for k in range(1, t + 1):
                        j = t + 1 - k  # right size
                        if j - 1 < cn:
                            r = 2 * bnd[t] - L[min(k, nL) - 1]
                            if r > ubr[j - 1]:
                                ubr[j - 1] = r
                if max(ubr) <= 0.0:
                    continue
                Re = self._solve(pr, kr, depth + 1, cn, ccand, ubr)
                R, exR = Re[0], Re[1]
                nR = len(R)
                for t in live:
                    self._check_limits()
                    bt, bk = bnd[t], -1
                    for k in range(1, t + 1):
                        a, b = min(k, nL) - 1, min(t + 1 - k, nR) - 1
                        c = 0.5 * (L[a] + R[b])
                        # (with exact values c < bt implies both parts exact; estimated lower bounds
                        # need not be consistent with estimated costs, so check)
                        if c < bt and bt - c > 1e-12 * bt and exL[a] and exR[b]:
                            bt, bk = c, k
                    if bk > 0:
                        best[t], ci[t], ck[t] = bt, i, bk
                        # a budget t' > t can use this tree too (size <= t)
                        for t2 in range(t + 1, need):
                            if bt < best[t2] and best[t2] - bt > 1e-12 * best[t2]:
                                best[t2], ci[t2], ck[t2] = bt, i, bk
        ex = [best[t] < ub[t] for t in range(need)]
        v = [best[t] if ex[t] else max(ub[t], lbv[t]) for t in range(need)]
        ent = (v, ex, ci, ck, st.mean, list(ub))
        self.memo[key] = ent
        self.mem += 64 + 40 * need
        return ent

    def _child_key(self, key, pchild, i, b):
        if self.use_memo:
            return pchild.tobytes()
        # without the memo on restrictions, the key is the path (order of the fixes matters)
        return key + int(i).to_bytes(4, "little") + (b"+" if b > 0 else b"-")

    def _emit(self, bld, pi, key, depth, t, mass):
        cost, ex, ci, ck, mean, _ = self.memo[key]
        t = min(t, len(cost))
        assert ex[t - 1], "BuildDT internal error: emitting an inexact entry"
        i = ci[t - 1]
        if i < 0:
            return bld.leaf(1 if mean >= 0 else -1, mass, 0)
        k = ck[t - 1]
        node = bld.internal(i)
        pl = pi.copy()
        pl[i] = -1
        pr = pi.copy()
        pr[i] = 1
        a = self._emit(bld, pl, self._child_key(key, pl, i, -1), depth + 1, k, mass / 2)
        c = self._emit(bld, pr, self._child_key(key, pr, i, 1), depth + 1, t - k, mass / 2)
        bld.set_children(node, a, c)
        return node


def check_search_limits(time_limit, max_memory_mb, max_queries=None) -> None:
    """The limits of BuildDT: seconds and MiB (> 0 or None), a query budget (an int >= 1 or None)."""
    check_float_param("time_limit", time_limit, low=0.0, low_open=True, allow_none=True)
    check_float_param("max_memory_mb", max_memory_mb, low=0.0, low_open=True, allow_none=True)
    check_int_param("max_queries", max_queries, low=1, allow_none=True)


def default_parameters(size: int, epsilon: float) -> dict:
    """The parameters of 004 Thm 1 / Lemma 7.3: d = ⌈log2(s/ε)⌉, τ = ε/log2(s) (ε for s <= 2),
    and the agnostic smoothing δ = τ/(4d)."""
    check_size_epsilon(size, epsilon)
    d = int(math.ceil(math.log2(size) - math.log2(epsilon)))  # (size / epsilon overflows for tiny ε)
    tau = epsilon / math.log2(size) if size > 2 else epsilon
    return {"depth": d, "tau": tau, "delta": tau / (4 * d)}


def check_size_epsilon(size, epsilon):
    if not isinstance(size, numbers.Integral) or isinstance(size, bool) or size < 1:
        raise TreeLearnValueError(f"size must be a positive int, got {size!r}")
    if not isinstance(epsilon, numbers.Real) or not 0 < epsilon < 1:
        raise TreeLearnValueError(f"epsilon must lie in (0, 1), got {epsilon!r}")


def build_dt(f, size: int, *, depth: int, tau: float, influence: str = "auto", smoothing: float | None = None,
             random_state=None, conf_delta: float = 1e-8, adaptive: bool = True, memo: bool = True,
             inherit_candidates: bool = True, mean_tol: float = 0.1, n_noise: int = 32,
             time_limit: float | None = 600.0, max_memory_mb: float | None = 2048.0,
             max_queries: int | None = None, shared_batch: bool = True, return_info: bool = False):
    """BuildDT_M(f, ∅, s, d, τ) of 004 Fig. 2: the size <= s, depth <= d, everywhere τ-influential
    tree closest to f (to f_δ when ``smoothing=δ``), by dynamic programming over restrictions.

    ``influence``: ``"exact"`` (truth table, n <= 20), ``"sampled"`` (membership queries,
    adaptive, see :class:`_SampledProvider`), or ``"auto"`` (exact for table oracles). The tree's
    distance is computed from leaf means: dist(f_π, T) = ½(dist of left + dist of right), a leaf b
    costs Pr[f_π ≠ b] = (1 − |E f_π|)/2 for its best b. ``conf_delta``: failure probability of
    each sequential test. Returns the Tree (and an info dict with ``return_info``: queries,
    distinct restrictions, estimated error, seconds, memo size estimate).

    How the search is organised (none of it changes the answer of the exact DP):

    * one memo entry per restriction π (keyed by π as a set, so a restriction reached through its
      fixes in any order is solved once; ``memo=False`` keys by the path instead, the ablation),
      holding E[f_π], the influential set S, and for every size budget the best distance, its
      root split and whether it is exact: the seed of π's sample is derived from π, sample points
      are never stored;
    * branch and bound: a child is asked only for budgets that can still beat the best tree found,
      and a tree with t leaves ignores one of the t most influential variables of f_π, so its
      error is at least the t-th largest Inf_j(f_π) (lower bounds prune budgets and splits);
    * iterative bounding rounds: first a tree of estimated error 0 (the realizable case; every
      variable that changes f_π must then be queried, so a budget below their number + 1 leaves is
      infeasible), then error < 1/256, < 1/32, and finally unrestricted (exact);
    * sampled statistics (``influence="sampled"``): see :class:`_SampledProvider`
      (``adaptive=False`` and ``shared_batch=False`` are the ablations of the benchmark;
      ``inherit_candidates=False`` re-examines every free variable at each restriction).

    Limits: ``time_limit`` seconds, ``max_memory_mb`` of memo (estimated) and ``max_queries``
    raise :class:`SearchLimitError` with a message saying which limit was hit.
    """
    o = as_oracle(f)
    n = o.n_features
    if not isinstance(depth, numbers.Integral) or depth < 0:
        raise TreeLearnValueError(f"depth must be a non-negative int, got {depth!r}")
    if not isinstance(size, numbers.Integral) or size < 1:
        raise TreeLearnValueError(f"size must be a positive int, got {size!r}")
    check_search_limits(time_limit, max_memory_mb, max_queries)
    if not tau > 0:
        raise TreeLearnValueError(f"tau must be > 0, got {tau!r}")
    if influence == "auto":
        influence = "exact" if o.has_table else "sampled"
    seed = rng_seed(random_state)
    q0 = o.n_queries
    if influence == "exact":
        fo = o if smoothing is None else smooth(o, smoothing, exact=True)
        metric = "hamming" if (smoothing is None and not o.real_valued) else "abs"
        table = exact_table(fo)
        # the DP works in error units ((1 − |mean|)/2); the |·| metric doubles distances and
        # influences, so compare the exact |·|-influence with τ as is
        provider = _ExactProvider(table, n, metric, tau)
    elif influence == "sampled":
        provider = _SampledProvider(o, n, tau, conf_delta, seed, adaptive=adaptive, inherit=inherit_candidates,
                                    mean_tol=mean_tol, smoothing=smoothing, n_noise=n_noise, max_queries=max_queries,
                                    shared_batch=shared_batch)
    else:
        raise TreeLearnValueError("influence must be 'auto', 'exact' or 'sampled'")
    dp = _BuildDT(provider, n, int(size), int(depth), memo=memo, time_limit=time_limit, max_memory_mb=max_memory_mb)
    t0 = time.perf_counter()
    bld, cost = dp.run()
    tree = bld.tree(n)
    if not return_info:
        return tree
    info = {
        "queries": o.n_queries - q0,
        "restrictions": dp.n_restrictions,
        "stat_calls": dp.n_stat_calls,
        "estimated_error": cost,
        "time": time.perf_counter() - t0,
        "depth": depth,
        "tau": tau,
        "smoothing": smoothing,
        "memo_bytes_estimate": dp.mem,
    }
    return tree, info


def _monotone_sample(o: Oracle, n_samples: int, seed: int):
    rng = np.random.default_rng(seed)
    X = random_pm1(rng, n_samples, np.zeros(o.n_features, np.int8))
    return X, o.evaluate(X)


def monotone_sample_size(size: int, epsilon: float, n_features: int, conf_delta: float = 0.01, cap: int = 400_000) -> int:
    """Random examples for the monotone mode: every Inf_i(f_π) for |π| <= d' to ±τ/2 (Hoeffding on
    x_i·f ∈ [−1, 1] among the ≈ N·2^{−d'} consistent examples, union bound over n·2^{d'} pairs),
    with d' = ⌈log2 s⌉ (the depth the restrictions of a size-s tree typically reach; the theory
    of §6 uses d' = d, i.e. poly(s/ε)·log n examples), capped at ``cap``."""
    p = default_parameters(size, epsilon)
    dd = max(1, int(math.ceil(math.log2(max(size, 2)))))
    m = hoeffding_sample_size(p["tau"], conf_delta / (n_features * 2**dd), 2.0) * 2**dd
    return int(min(m, cap))


def learn_from_queries(oracle, size: int, epsilon: float, mode: str = "realizable", random_state=None, *,
                       depth: int | None = None, tau: float | None = None, delta: float | None = None,
                       influence: str = "auto", n_samples: int | None = None, return_info: bool = False, **kw):
    """Learn a size <= ``size`` tree within error ε (realizable) / opt_s + O(ε) (agnostic,
    monotone) of the oracle's function, under the uniform distribution on {±1}^n (004 Thm 1, 2).

    Modes: ``"realizable"`` queries f; ``"agnostic"`` runs BuildDT on the smoothed f_δ (Lemma 7.3);
    ``"monotone"`` uses only uniform random labelled examples (x, f(x)) and Inf_i(f_π) =
    ½·E[f(x)·x_i | π] (§6). Defaults from the theorems: d = ⌈log2(s/ε)⌉, τ = ε/log2 s,
    δ = τ/(4d). The returned Tree predicts ±1 arrays to ±1 labels. Further keyword arguments go
    to :func:`build_dt` (time_limit, max_memory_mb, conf_delta, adaptive, memo, ...).
    """
    check_size_epsilon(size, epsilon)
    o = as_oracle(oracle)
    p = default_parameters(size, epsilon)
    depth = p["depth"] if depth is None else depth
    tau = p["tau"] if tau is None else tau
    if mode == "realizable":
        return build_dt(o, size, depth=depth, tau=tau, influence=influence, random_state=random_state,
                        return_info=return_info, **kw)
    if mode == "agnostic":
        delta = tau / (4 * depth) if delta is None else delta
        return build_dt(o, size, depth=depth, tau=tau, influence=influence, smoothing=delta,
                        random_state=random_state, return_info=return_info, **kw)
    if mode == "monotone":
        if n_samples is None:
            n_samples = monotone_sample_size(size, epsilon, o.n_features)
        q0 = o.n_queries
        X, y = _monotone_sample(o, int(n_samples), rng_seed(random_state))
        y = np.where(y >= 0, 1.0, -1.0)
        tree, info = build_monotone(X, y, size, depth, tau, **kw)
        info["queries"] = o.n_queries - q0
        return (tree, info) if return_info else tree
    raise TreeLearnValueError(f"mode must be 'realizable', 'agnostic' or 'monotone', got {mode!r}")


def build_monotone(X, y, size, depth, tau, *, threshold=None, time_limit=600.0, max_memory_mb=2048.0, memo=True,
                    schema=None, x_threshold=0.0, t0=None, progress=None):
    """BuildDT on random examples ``X`` (±1 int8, (N, n); the transpose of a C-contiguous (n, N)
    array is used without a copy) with ±1 labels ``y``; ``t0``: the start of the time limit
    (default: now); ``progress``: a :class:`treelearn._limits.ProgressReporter` shown the DP's
    live counters (restrictions solved as ``nodes``, memo entries as ``cache``, bounding round)."""
    check_search_limits(time_limit, max_memory_mb)
    thr = tau / 2.0 if threshold is None else threshold
    provider = _MonotoneProvider(X, y, tau, thr)
    dp = _BuildDT(provider, X.shape[1], int(size), int(depth), memo=memo, time_limit=time_limit,
                  max_memory_mb=max_memory_mb)
    if t0 is not None:
        dp.t0 = t0
    provider.check = dp._check_limits
    if progress is not None:  # read by the reporter's thread while the DP runs (plain attribute reads)
        progress.stats = lambda: {"nodes": dp.n_restrictions, "cache": len(dp.memo), "round": dp.n_rounds,
                                  "memo_mb": round(dp.mem / 2**20, 1)}
    t0 = time.perf_counter()
    bld, cost = dp.run()
    tree = bld.tree(X.shape[1], threshold=x_threshold, schema=schema)
    return tree, {"restrictions": dp.n_restrictions, "estimated_error": cost, "time": time.perf_counter() - t0,
                  "n_samples": X.shape[0], "depth": depth, "tau": tau}
