# cython: language_level=3
"""Compiled bound pruning with the loose partitioning bound (002 §6.1-6.2), in log space.

The loose recursion evaluates every node T at m_T = L_T + e with the same excess e = 2m − L_root,
so one vector log π_T^c (c = 1..C) per node describes the tree. For a candidate prune of node v
the new root has e' = e + L_v − 1 > e; the values of the unchanged subtrees at e' are at least
their values at e (the recursion is nondecreasing in e), so recomputing only the path from v to
the root with the siblings' current vectors gives a *lower bound* of the candidate's ε. The exact
ε is computed (a full pass at e') only for the candidates, in increasing order of that lower
bound, that can still beat the best exact value found — usually one or two per step.
"""
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.pair cimport pair
from libcpp.algorithm cimport sort
from libc.math cimport log, exp, INFINITY
from cython.operator cimport dereference as deref

import numpy as np

cdef double NEG_INF = -INFINITY
cdef double LN2 = 0.69314718055994530942
cdef double LN4 = 1.38629436111989061883


cdef class _LoosePruner:
    cdef long N, C, m, M
    cdef const long[:] left
    cdef const long[:] right
    cdef const double[:] leaf_err
    cdef const double[:] log_s
    cdef const double[:] log_fall
    cdef const double[:] log_p
    cdef double log2l, const_term, lr, l1r
    cdef vector[int] co_start
    cdef vector[int] co_a
    cdef vector[int] co_b
    cdef vector[double] co_lc
    cdef unordered_map[long long, int] intern
    cdef int next_sid
    cdef vector[long] parent
    cdef vector[char] cut
    cdef vector[char] alive
    cdef vector[long] Lc
    cdef vector[double] err
    cdef vector[int] sid
    cdef vector[double] lp
    cdef vector[long] sLc
    cdef vector[double] sErr
    cdef vector[int] sSid
    cdef vector[double] sLp
    cdef vector[double] buf1
    cdef vector[double] buf2
    cdef vector[int] sh_a
    cdef vector[int] sh_b
    cdef vector[long] sh_L
    cdef unordered_map[long long, long] memo
    cdef vector[double] pool
    cdef vector[double] leafbuf
    cdef public long n_exact_evals
    cdef public long n_node_evals

    def __init__(self, const long[:] left, const long[:] right, const double[:] leaf_err, long m, long l, long C,
                 double delta, double lr, double l1r, const double[:] log_s, const double[:] log_fall,
                 const double[:] log_p, coefs):
        cdef long v
        self.N = left.shape[0]
        self.left = left
        self.right = right
        self.leaf_err = leaf_err
        self.m = m
        self.M = 2 * m
        self.C = C
        self.log2l = log(2.0 * l)
        self.const_term = LN4 - log(delta)
        self.lr = lr
        self.l1r = l1r
        self.log_s = log_s
        self.log_fall = log_fall
        self.log_p = log_p
        self.n_exact_evals = 0
        self.n_node_evals = 0
        # coefficient tables: for c = 1..C, terms (a, b, log coef)
        self.co_start.resize(C + 2)
        for c in range(1, C + 1):
            self.co_start[c] = self.co_a.size()
            for a, b, coef in coefs[c]:
                self.co_a.push_back(a)
                self.co_b.push_back(b)
                self.co_lc.push_back(log(<double>coef))
        self.co_start[C + 1] = self.co_a.size()
        self.next_sid = 1
        self.parent.assign(self.N, -1)
        for v in range(self.N):
            if left[v] >= 0:
                self.parent[left[v]] = v
                self.parent[right[v]] = v
        self.cut.assign(self.N, 0)
        self.alive.assign(self.N, 1)
        self.Lc.assign(self.N, 0)
        self.err.assign(self.N, 0.0)
        self.sid.assign(self.N, 0)
        self.lp.assign(self.N * (C + 1), NEG_INF)
        self.sLc.assign(self.N, 0)
        self.sErr.assign(self.N, 0.0)
        self.sSid.assign(self.N, 0)
        self.sLp.assign(self.N * (C + 1), NEG_INF)
        self.buf1.assign(C + 1, NEG_INF)
        self.buf2.assign(C + 1, NEG_INF)
        self.leafbuf.assign(C + 1, NEG_INF)
        self.leafbuf[1] = 0.0
        self.sh_a.push_back(-1)
        self.sh_b.push_back(-1)
        self.sh_L.push_back(1)

    cdef inline int lookup(self, int a, int b, bint insert) noexcept:
        """Canonical id of the node shape with children shapes a, b (-1: a new shape, not interned)."""
        cdef int x, y
        cdef long long key
        cdef unordered_map[long long, int].iterator it
        if a < 0 or b < 0:
            return -1
        if a <= b:
            x, y = a, b
        else:
            x, y = b, a
        key = ((<long long>x) << 32) | (<long long>y)
        it = self.intern.find(key)
        if it != self.intern.end():
            return deref(it).second
        if not insert:
            return -1
        self.intern[key] = self.next_sid
        self.sh_a.push_back(x)
        self.sh_b.push_back(y)
        self.sh_L.push_back(self.sh_L[x] + self.sh_L[y])
        self.next_sid += 1
        return self.next_sid - 1

    cdef long memo_get(self, int sid, long e) noexcept:
        """Offset in ``pool`` of the vector of interned shape ``sid`` at excess e (memoised)."""
        cdef long long key = (<long long>sid) * (self.M + 2) + e
        cdef unordered_map[long long, long].iterator it = self.memo.find(key)
        cdef long oa, ob, off, C1 = self.C + 1
        cdef int a, b
        cdef const double* va
        cdef const double* vb
        if it != self.memo.end():
            return deref(it).second
        a = self.sh_a[sid]
        b = self.sh_b[sid]
        oa = self.memo_get(a, e) if a > 0 else -1
        ob = self.memo_get(b, e) if b > 0 else -1
        off = self.pool.size()
        self.pool.resize(off + C1)
        va = self.leafbuf.data() if oa < 0 else self.pool.data() + oa
        vb = self.leafbuf.data() if ob < 0 else self.pool.data() + ob
        self.eval_node(self.pool.data() + off, va, vb, self.sh_L[sid], e, a == b,
                       log(<double>(e + 1)) + self.log2l)
        self.memo[key] = off
        return off

    cdef inline void leaf_vec(self, double* out) noexcept:
        cdef long c
        out[0] = NEG_INF
        out[1] = 0.0
        for c in range(2, self.C + 1):
            out[c] = NEG_INF

    cdef void eval_node(self, double* out, const double* va, const double* vb, long Lu, long e,
                        bint half, double lfac0) noexcept:
        """log of the loose bound (m_u = Lu + e > Lu) for c = 1..C; lfac0 = log((e + 1) 2l)."""
        cdef long c, t, mu = Lu + e
        cdef double mx, s, x, lfac, total, cap
        lfac = lfac0 - (LN2 if half else 0.0)
        self.n_node_evals += 1
        out[0] = NEG_INF
        if self.C == 2:
            # two parts: inner = 1 + 2B + 2A + 2AB with A = π_left^2, B = π_right^2 (>= 1 or 0)
            out[1] = 0.0
            x = va[2]
            s = vb[2]
            if x == NEG_INF and s == NEG_INF:
                total = lfac
            elif x == NEG_INF:
                total = lfac + s + log(2.0 + exp(-s))
            elif s == NEG_INF:
                total = lfac + x + log(2.0 + exp(-x))
            else:
                total = lfac + x + s + log(2.0 + 2.0 * exp(-x) + 2.0 * exp(-s) + exp(-x - s))
            cap = self.log_s[mu * 3 + 2]
            out[2] = total if total < cap else cap
            return
        for c in range(1, self.C + 1):
            if c > Lu:
                out[c] = NEG_INF
                continue
            if c == 1:
                out[c] = 0.0
                continue
            mx = NEG_INF
            for t in range(self.co_start[c], self.co_start[c + 1]):
                x = va[self.co_a[t]] + vb[self.co_b[t]]
                if x > NEG_INF:
                    x += self.co_lc[t]
                    if x > mx:
                        mx = x
            if mx == NEG_INF:
                out[c] = NEG_INF
                continue
            s = 0.0
            for t in range(self.co_start[c], self.co_start[c + 1]):
                x = va[self.co_a[t]] + vb[self.co_b[t]]
                if x > NEG_INF:
                    s += exp(x + self.co_lc[t] - mx)
            total = lfac + mx + log(s)
            cap = self.log_s[mu * (self.C + 1) + c]
            out[c] = total if total < cap else cap

    cdef double eps_of(self, long Lroot, double k, const double* vec) noexcept:
        cdef long a, amax = self.C if self.C < Lroot else Lroot
        cdef double mx = NEG_INF, s = 0.0, x, lt
        for a in range(1, amax + 1):
            x = self.log_fall[a] + vec[a]
            if x > mx:
                mx = x
        for a in range(1, amax + 1):
            x = self.log_fall[a] + vec[a]
            if x > NEG_INF:
                s += exp(x - mx)
        lt = mx + log(s)
        return (2.0 * k + 4.0 * (self.const_term + lt - (self.l1r + k * self.lr) - self.log_p[Lroot])) / self.m

    cdef double full_eval(self, long extra, bint to_state) noexcept:
        """Evaluate the current tree with ``extra`` also cut (-1: none); returns ε.

        to_state: write the node arrays of the state (and intern new shapes) instead of scratch.
        """
        cdef long v, a, b, C1 = self.C + 1
        cdef long Lroot, e
        cdef double lfac0
        cdef long* Lc
        cdef double* err
        cdef int* sid
        cdef double* lp
        if to_state:
            Lc = self.Lc.data(); err = self.err.data(); sid = self.sid.data(); lp = self.lp.data()
        else:
            Lc = self.sLc.data(); err = self.sErr.data(); sid = self.sSid.data(); lp = self.sLp.data()
        # structure first (leaf counts decide the excess)
        for v in range(self.N - 1, -1, -1):
            if not self.alive[v]:
                continue
            if self.left[v] < 0 or self.cut[v] or v == extra:
                Lc[v] = 1
                err[v] = self.leaf_err[v]
                sid[v] = 0
            else:
                a = self.left[v]; b = self.right[v]
                Lc[v] = Lc[a] + Lc[b]
                err[v] = err[a] + err[b]
                sid[v] = self.lookup(sid[a], sid[b], to_state)
        Lroot = Lc[0]
        e = self.M - Lroot
        lfac0 = log(<double>(e + 1)) + self.log2l
        for v in range(self.N - 1, -1, -1):
            if not self.alive[v]:
                continue
            if self.left[v] < 0 or self.cut[v] or v == extra:
                self.leaf_vec(lp + v * C1)
            else:
                a = self.left[v]; b = self.right[v]
                self.eval_node(lp + v * C1, lp + a * C1, lp + b * C1, Lc[v], e,
                               sid[a] >= 0 and sid[a] == sid[b], lfac0)
        return self.eps_of(Lroot, err[0], lp)

    cdef double path_eval(self, long v, bint exact) noexcept:
        """ε of the current tree with v made a leaf: the path from v to the root is recomputed at
        the new excess e'; the siblings' vectors are their values at the current e (a lower bound:
        the recursion is nondecreasing in e) or, with ``exact``, their memoised values at e'."""
        cdef long C1 = self.C + 1
        cdef long Lroot2 = self.Lc[0] - self.Lc[v] + 1
        cdef long e2 = self.M - Lroot2
        cdef double k2 = self.err[0] - self.err[v] + self.leaf_err[v]
        cdef double* cur = self.buf1.data()
        cdef double* nxt = self.buf2.data()
        cdef double* tmp
        cdef const double* xv
        cdef int cur_sid = 0, x_sid
        cdef long cur_L = 1, w = v, u, x, off
        cdef double lfac0 = log(<double>(e2 + 1)) + self.log2l
        if exact and self.pool.size() > (1 << 24):  # memory cap of the memo (128 MB)
            self.memo.clear()
            self.pool.clear()
        self.leaf_vec(cur)
        while w != 0:
            u = self.parent[w]
            x = self.left[u] if self.right[u] == w else self.right[u]
            x_sid = self.sid[x]
            if not exact:
                xv = self.lp.data() + x * C1
            elif x_sid == 0:
                xv = self.leafbuf.data()
            else:
                off = self.memo_get(x_sid, e2)
                xv = self.pool.data() + off
            if exact:
                self.eval_node(nxt, cur, xv, cur_L + self.Lc[x], e2, cur_sid >= 0 and cur_sid == x_sid, lfac0)
                cur_sid = self.lookup(cur_sid, x_sid, False)
            else:
                # lower bound: halve whenever the two subtrees *could* be equal (same leaf count);
                # halving only lowers the value, and it skips the shape look-ups
                self.eval_node(nxt, cur, xv, cur_L + self.Lc[x], e2, cur_L == self.Lc[x], lfac0)
            cur_L = cur_L + self.Lc[x]
            tmp = cur; cur = nxt; nxt = tmp
            w = u
        return self.eps_of(Lroot2, k2, cur)

    cdef void apply_cut(self, long v):
        cdef vector[long] stack
        cdef long u
        self.cut[v] = 1
        stack.push_back(self.left[v])
        stack.push_back(self.right[v])
        while stack.size():
            u = stack.back()
            stack.pop_back()
            self.alive[u] = 0
            if self.left[u] >= 0:
                stack.push_back(self.left[u])
                stack.push_back(self.right[u])

    def run(self):
        cdef double current, best, b, tol
        cdef long v, best_v, i
        cdef vector[pair[double, long]] cands
        history = []
        cuts = []
        current = self.full_eval(-1, True)
        history.append(current)
        while True:
            cands.clear()
            for v in range(self.N):
                if self.alive[v] and self.left[v] >= 0 and not self.cut[v]:
                    cands.push_back(pair[double, long](self.path_eval(v, False), v))
            if cands.size() == 0:
                break
            sort(cands.begin(), cands.end())
            best = INFINITY
            best_v = -1
            for i in range(<long>cands.size()):
                tol = 1e-9 * (1.0 + (best if best < INFINITY and best > 0 else 0.0))
                if cands[i].first > best + tol:
                    break
                v = cands[i].second
                b = self.path_eval(v, True)
                self.n_exact_evals += 1
                # values equal up to rounding (the same tree reached through different paths) tie
                if best_v < 0 or b < best - 1e-12 * abs(best) or (b <= best + 1e-12 * abs(best) and v < best_v):
                    best = b
                    best_v = v
            if best_v >= 0 and best <= current:
                self.apply_cut(best_v)
                cuts.append(best_v)
                current = self.full_eval(-1, True)
                history.append(current)
            else:
                break
        return cuts, history


def prune_loose(const long[:] left, const long[:] right, const double[:] leaf_err, long m, long l, long C,
                double delta, double lr, double l1r, const double[:] log_s, const double[:] log_fall,
                const double[:] log_p):
    """Bound pruning with the loose bound: returns (the nodes made leaves, the bound after each step)."""
    from treelearn.prune.bounds import _pair_coefficients

    coefs = [()] + [_pair_coefficients(c) for c in range(1, C + 1)]
    p = _LoosePruner(left, right, leaf_err, m, l, C, delta, lr, l1r, log_s, log_fall, log_p, coefs)
    cuts, history = p.run()
    # collapsed nodes inside a later collapsed subtree are dropped by Tree.prune anyway
    return cuts, history
