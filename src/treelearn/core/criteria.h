// Impurity functions G, defined once: policy types that every engine takes as a template
// parameter, and that treelearn.criteria reads through the _criteria module.
//
// The papers' normalisation (000 Def. 2): G: [0, 1] -> [0, 1], concave, symmetric, G(0) = G(1) = 0,
// G(1/2) = 1, with strong-concavity constant kappa (000 Remark 1). Multiclass forms for class
// proportions p_1..p_C (each equals the binary G when C = 2):
//   Entropy        -sum p_c log2 p_c                       kappa = 1/ln 2
//   Gini           2 (1 - sum p_c^2)   (binary 4p(1-p))    kappa = 2
//   KearnsMansour  sum sqrt(p_c (1 - p_c))  (2 sqrt(p(1-p)))  kappa = 1
//   Callback       a user G, evaluated by the caller in batches (1/2 sum G(p_c) in treelearn)
// scikit-learn's units (entropy in bits, Gini 1 - sum p^2) are the normalised value times
// `sklearn_scale`.
//
// What an engine may use (every policy has all of it):
//   static constexpr int code            0, 1, 2 built in, -1 the callback
//   static constexpr bool batched        true: score candidates through a CandidateBatch
//   static constexpr double sklearn_scale
//   static constexpr double rank_unit     the factor to the unit of Top-k's quantised ranking keys
//   void setup(const double* w, int64_t n, int C)   once per fit (residue threshold, tables);
//                                                    w = nullptr: n rows of weight 1
//   double wimp(const double* c, double W)           W * G_C(c / W): "weighted impurity" of a
//                                                    node with class counts c summing to W
//   double score(l, tot, WL, WR, buf)                wimp(l, WL) + wimp(tot - l, WR)
//   double score2(l0, l1, r0, r1, WL, WR)            the same for two classes, counts given
// Lower scores are better splits; the local purity gain of a split is (wimp(node) - score) / W.
// The built-in policies also give `static double G(double p)` (binary, normalised) and `kappa`.
//
// Top-k ranks a node's candidates by keys quantised to 1e-9 of the node's weight, so that splits
// whose scores differ only by rounding tie (and fall to the feature order). The quantum is a
// fixed fraction of the impurity in the unit the reference Top-k uses (entropy in nats, Gini as
// 1 - sum p^2), and it decides which near-equal splits tie: `rank_unit` converts, so the keys,
// the ranking and the trees are those of that unit.
//
// A batched criterion (Callback) calls back into the host language, so an engine collects a
// node's candidates in a CandidateBatch (two count rows per candidate), evaluates the batch with
// one call and then replays its usual selection over the scores in the order it pushed them:
// the same tie rules as the compiled criteria, one mechanism for every engine.
#pragma once

#include <cmath>
#include <cstdint>
#include <atomic>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace tl {

#if defined(__GNUC__)
#define TLC_INLINE inline __attribute__((always_inline))
#else
#define TLC_INLINE inline
#endif

static inline double xlog2x(double x) { return x > 0.0 ? x * std::log2(x) : 0.0; }

// x log2 x for x = 0..n: a process-wide table grown on demand (a log per row costs a small fit a
// fifth of its time), copied out under a lock so that concurrent fits never share it
inline void xlog2x_table(int64_t n, std::vector<double>& out) {
    static std::mutex mu;
    static std::vector<double> table(1, 0.0);
    std::lock_guard<std::mutex> lock(mu);
    if ((int64_t)table.size() <= n) {
        int64_t i = (int64_t)table.size();
        table.resize((size_t)n + 1);
        for (; i <= n; ++i) table[(size_t)i] = xlog2x((double)i);
    }
    out.assign(table.begin(), table.begin() + n + 1);
}

// Shared state: counts below zeps (half the smallest row weight) are exact zeros that came out of
// a subtraction (tot - prefix, parent - sibling) as rounding residues; Kearns-Mansour's sqrt
// would turn a 1e-17 residue into a 1e-9 gain difference, so they are snapped to 0. zeps = 0
// clips negative inputs only.
struct CritBase {
    // false: a node's channels are class counts (a row adds its weight to its class's channel);
    // true (the regression policies below): every row adds its own statistics to every channel
    static constexpr bool moments = false;
    // true: the impurity is not a function of additive channels (AbsoluteError): an engine computes
    // a node's and a split's sides' impurities from order statistics (MedianTree)
    static constexpr bool ranked = false;
    int C = 2;
    double zeps = 0.0;
    TLC_INLINE double z(double x) const { return x < zeps ? 0.0 : x; }
    void setup_base(const double* w, int64_t n, int n_classes) {
        C = n_classes;
        double wmin = w == nullptr ? 1.0 : std::numeric_limits<double>::infinity();
        if (w != nullptr)
            for (int64_t i = 0; i < n; ++i) wmin = wmin < w[i] ? wmin : w[i];
        zeps = n > 0 ? 0.5 * wmin : 0.0;
    }
    // both sides at once: left counts l (sum WL), right = tot - l (sum WR)
    template <class Self>
    TLC_INLINE double score_of(const Self& s, const double* l, const double* tot, double WL, double WR,
                               double* buf) const {
        for (int i = 0; i < C; ++i) buf[i] = tot[i] - l[i];
        return s.wimp(l, WL) + s.wimp(buf, WR);
    }
    // the weight of a node of channels c (class counts: their sum)
    TLC_INLINE double weight(const double* c, int n) const {
        double W = 0.0;
        for (int i = 0; i < n; ++i) W += c[i];
        return W;
    }
    // a node that no split can improve: at most one class present
    TLC_INLINE bool pure(const double* c, int n, double) const {
        int pos = 0;
        for (int i = 0; i < n; ++i) pos += c[i] > 0.0;
        return pos <= 1;
    }
    // the unit of a node's tie tolerance between scores (weighted impurities: the node's weight)
    TLC_INLINE double tie_unit(const double*, int, double W) const { return W; }
    // the global gain of a split: (W * impurity(node) - score) / W_total
    TLC_INLINE double gain(double wimp, double score, double, double Wtot) const { return (wimp - score) / Wtot; }
};

// ---------------------------------------------------------------------------------------------
struct Entropy : CritBase {
    static constexpr int code = 0;
    static constexpr bool batched = false;
    static constexpr double kappa = 1.4426950408889634;  // 1 / ln 2
    static constexpr double sklearn_scale = 1.0;          // bits, as scikit-learn
    static constexpr double rank_unit = 0.6931471805599453;  // ln 2: nats
    static double G(double p) {
        p = p < 0.0 ? 0.0 : (p > 1.0 ? 1.0 : p);
        return -xlog2x(p) - xlog2x(1.0 - p);
    }

    // integer weights: every count (a sum of weights, or its difference from a total) is an exact
    // integer in [0, W], and x log2 x is a table read (the same values as the direct formula)
    std::vector<double> tab;
    bool int_counts = false;

    void setup(const double* w, int64_t n, int n_classes) {
        setup_base(w, n, n_classes);
        bool integral = true;
        double W = w == nullptr ? (double)n : 0.0;
        for (int64_t i = 0; w != nullptr && i < n && integral; ++i) {
            integral = w[i] == std::floor(w[i]);
            W += w[i];
        }
        tab.clear();
        int_counts = false;
        if (n > 0 && integral && W <= 4.0 * (double)n + 16.0) {
            xlog2x_table((int64_t)W, tab);
            int_counts = true;
        }
    }
    TLC_INLINE double xl(double x) const { return int_counts ? tab[(int64_t)x] : xlog2x(x); }
    // unit weights (setup with w = nullptr): the score of a split from integer counts, one side
    // a (n1 rows) of a node with totals t (m rows), by table reads alone; score_unit2 for C = 2
    template <class I>
    TLC_INLINE double score_unit(const I* a, const I* t, int64_t n1, int64_t m) const {
        double s = tab[n1] + tab[m - n1];
        for (int c = 0; c < C; ++c) s -= tab[(int64_t)a[c]] + tab[(int64_t)(t[c] - a[c])];
        return s;
    }
    template <class I>
    TLC_INLINE double score_unit2(const I* a, const I* t, int64_t n1, int64_t m) const {
        const int64_t a0 = (int64_t)a[0], a1 = (int64_t)a[1];
        return tab[n1] + tab[m - n1] - tab[a0] - tab[a1] - tab[(int64_t)t[0] - a0] - tab[(int64_t)t[1] - a1];
    }
    TLC_INLINE double wimp(const double* c, double W) const {
        if (W <= 0.0) return 0.0;
        double s = xl(W);
        for (int i = 0; i < C; ++i) s -= xl(z(c[i]));
        return s;
    }
    TLC_INLINE double score(const double* l, const double* tot, double WL, double WR, double* buf) const {
        return score_of(*this, l, tot, WL, WR, buf);
    }
    TLC_INLINE double score2(double l0, double l1, double r0, double r1, double WL, double WR) const {
        l0 = z(l0); l1 = z(l1); r0 = z(r0); r1 = z(r1);
        double s = 0.0;
        if (WL > 0.0) s += xl(WL) - xl(l0) - xl(l1);
        if (WR > 0.0) s += xl(WR) - xl(r0) - xl(r1);
        return s;
    }
};

// ---------------------------------------------------------------------------------------------
struct Gini : CritBase {
    static constexpr int code = 1;
    static constexpr bool batched = false;
    static constexpr double kappa = 2.0;
    static constexpr double sklearn_scale = 0.5;  // scikit-learn's 1 - sum p^2
    static constexpr double rank_unit = 0.5;      // 1 - sum p^2 (exact: a power of two)
    static double G(double p) { return 4.0 * p * (1.0 - p); }

    void setup(const double* w, int64_t n, int n_classes) { setup_base(w, n, n_classes); }
    TLC_INLINE double wimp(const double* c, double W) const {
        if (W <= 0.0) return 0.0;
        double q = 0.0;
        for (int i = 0; i < C; ++i) { const double ci = z(c[i]); q += ci * ci; }
        return 2.0 * (W - q / W);
    }
    TLC_INLINE double score(const double* l, const double* tot, double WL, double WR, double* buf) const {
        return score_of(*this, l, tot, WL, WR, buf);
    }
    TLC_INLINE double score2(double l0, double l1, double r0, double r1, double WL, double WR) const {
        l0 = z(l0); l1 = z(l1); r0 = z(r0); r1 = z(r1);
        double s = 0.0;
        if (WL > 0.0) s += 2.0 * (WL - (l0 * l0 + l1 * l1) / WL);
        if (WR > 0.0) s += 2.0 * (WR - (r0 * r0 + r1 * r1) / WR);
        return s;
    }
};

// ---------------------------------------------------------------------------------------------
struct KearnsMansour : CritBase {
    static constexpr int code = 2;
    static constexpr bool batched = false;
    static constexpr double kappa = 1.0;
    static constexpr double sklearn_scale = 1.0;  // no scikit-learn counterpart: normalised
    static constexpr double rank_unit = 1.0;
    static double G(double p) {
        const double t = p * (1.0 - p);
        return t > 0.0 ? 2.0 * std::sqrt(t) : 0.0;
    }

    void setup(const double* w, int64_t n, int n_classes) { setup_base(w, n, n_classes); }
    TLC_INLINE double wimp(const double* c, double W) const {
        if (W <= 0.0) return 0.0;
        double s = 0.0;
        for (int i = 0; i < C; ++i) {
            const double t = z(c[i]) * z(W - c[i]);
            s += t > 0.0 ? std::sqrt(t) : 0.0;
        }
        return s;
    }
    TLC_INLINE double score(const double* l, const double* tot, double WL, double WR, double* buf) const {
        return score_of(*this, l, tot, WL, WR, buf);
    }
    TLC_INLINE double score2(double l0, double l1, double r0, double r1, double /*WL*/, double /*WR*/) const {
        l0 = z(l0); l1 = z(l1); r0 = z(r0); r1 = z(r1);
        const double a = l0 * l1, b = r0 * r1;  // sqrt(c(W-c)) is the same for both classes
        return 2.0 * ((a > 0.0 ? std::sqrt(a) : 0.0) + (b > 0.0 ? std::sqrt(b) : 0.0));
    }
};

// ---------------------------------------------------------------------------------------------
// A user G evaluated by the host: fn(ctx, counts, rows, C, out) sets out[r] = W_r * G_C(counts_r / W_r)
// (W_r the row's sum) for `rows` rows of C counts; nonzero = failure (the host keeps its error).
// After a failure every later evaluation fails at once without calling back, so an engine stops
// splitting and its caller reports the error. Every engine (greedy, Top-k) calls a user G this way.
typedef int (*batch_fn)(void* ctx, const double* counts, int rows, int C, double* out);

struct Callback : CritBase {
    static constexpr int code = -1;
    static constexpr bool batched = true;
    static constexpr double sklearn_scale = 1.0;
    static constexpr double rank_unit = 1.0;
    batch_fn fn = nullptr;
    void* ctx = nullptr;
    // sticky; atomic because the threads of one search share the policy (eval is thread-safe;
    // wimp and score use a scratch vector, for one thread only)
    mutable std::atomic<bool> failed{false};
    mutable std::vector<double> tmp;

    void setup(const double* w, int64_t n, int n_classes) { setup_base(w, n, n_classes); }
    // out[r] for rows of counts (already snapped); false after a failure
    bool eval(const double* counts, int rows, double* out) const {
        if (failed || fn == nullptr) { failed = true; return false; }
        if (rows == 0) return true;
        if (fn(ctx, counts, rows, C, out) != 0) { failed = true; return false; }
        return true;
    }
    double wimp(const double* c, double W) const {
        if (W <= 0.0) return 0.0;
        tmp.resize((size_t)C);
        for (int i = 0; i < C; ++i) tmp[i] = z(c[i]);
        double out = 0.0;
        return eval(tmp.data(), 1, &out) ? out : 0.0;
    }
    double score(const double* l, const double* tot, double WL, double WR, double* buf) const {
        return score_of(*this, l, tot, WL, WR, buf);
    }
    double score2(double l0, double l1, double r0, double r1, double WL, double WR) const {
        const double a[2] = {l0, l1}, b[2] = {r0, r1};
        return wimp(a, WL) + wimp(b, WR);
    }
};

// Candidates of a batched criterion: two rows of counts (the sides) per candidate, snapped as
// the compiled criteria snap them; evaluate() scores them all with one call.
struct CandidateBatch {
    int C = 2;
    std::vector<double> counts, out;
    size_t size() const { return counts.size() / (2 * (size_t)C); }
    void clear() { counts.clear(); }
    template <class Crit>
    TLC_INLINE void push(const Crit& crit, const double* l, const double* r) {
        for (int c = 0; c < C; ++c) counts.push_back(crit.z(l[c]));
        for (int c = 0; c < C; ++c) counts.push_back(crit.z(r[c]));
    }
    // left counts l, right = tot - l
    template <class Crit>
    TLC_INLINE void push_rest(const Crit& crit, const double* l, const double* tot) {
        for (int c = 0; c < C; ++c) counts.push_back(crit.z(l[c]));
        for (int c = 0; c < C; ++c) counts.push_back(crit.z(tot[c] - l[c]));
    }
    // scores (left + right weighted impurity) of every candidate, in push order; false on failure
    bool evaluate(const Callback& crit) {
        const size_t m = size();
        out.assign(2 * m, 0.0);
        if (!crit.eval(counts.data(), (int)(2 * m), out.data())) return false;
        for (size_t i = 0; i < m; ++i) out[i] = out[2 * i] + out[2 * i + 1];
        out.resize(m);
        return true;
    }
    double score(size_t i) const { return out[i]; }
};

// ---------------------------------------------------------------------------------------------
// Regression criteria (scikit-learn's, in its units). A node's channels are sums over its rows
// (sufficient statistics, additive as class counts are): [W, S_1..S_K, Q_1..Q_K] for K outputs,
// W the weight, S_k = sum w y_k and Q_k = sum w y_k^2 (squared error) or
// Q_k = sum w y_k log y_k (Poisson). The impurity of a node is the mean over the outputs of
// its weighted mean squared error, or of its weighted half Poisson deviance; wimp = W x that.
// A score is lower for better splits: the children's summed weighted impurity (the node's own
// terms cancel, so the order is scikit-learn's proxy improvement's). +inf marks an inadmissible
// split (Poisson: a side whose sum of y is not positive). scikit-learn's "friedman_mse" is the
// squared error (it ranks splits alike: scikit-learn 1.9 maps one to the other).
struct MomentBase : CritBase {
    static constexpr bool moments = true;
    static constexpr bool batched = false;
    static constexpr double sklearn_scale = 1.0;
    static constexpr double rank_unit = 1.0;
    static constexpr double kappa = 1.0;
    static constexpr double EPS = std::numeric_limits<double>::epsilon();  // scikit-learn's EPSILON
    static constexpr double INF = std::numeric_limits<double>::infinity();
    int K = 1;
    void setup(const double*, int64_t, int channels) { C = channels; K = (channels - 1) / 2; }
    TLC_INLINE double weight(const double* c, int) const { return c[0]; }
    TLC_INLINE double score2(double, double, double, double, double, double) const { return INF; }  // (classes only)
    // the scale of the second moments: ties and rounding residues are relative to it
    TLC_INLINE double moment_scale(const double* c) const {
        double q = 0.0;
        for (int k = 0; k < K; ++k) q += std::fabs(c[1 + K + k]) + std::fabs(c[1 + k]);
        return q / K;
    }
    TLC_INLINE double tie_unit(const double* tot, int, double) const { return moment_scale(tot) + 1e-300; }
    // scikit-learn's leaf rule (impurity <= EPSILON), and a residue of rounding relative to the
    // moments (a constant target whose mean is not a double)
    template <class Self>
    TLC_INLINE bool pure_of(const Self& s, const double* c, double W) const {
        const double wi = s.wimp(c, W);
        return wi <= EPS * W || wi <= 64.0 * EPS * moment_scale(c);
    }
};

struct SquaredError : MomentBase {
    static constexpr int code = 10;
    TLC_INLINE double wimp(const double* c, double W) const {
        if (!(W > 0.0)) return 0.0;
        double s = 0.0;
        for (int k = 0; k < K; ++k) s += c[1 + K + k] - c[1 + k] * c[1 + k] / W;
        return s > 0.0 ? s / K : 0.0;
    }
    TLC_INLINE double score(const double* l, const double* tot, double WL, double WR, double*) const {
        double s = 0.0;
        for (int k = 0; k < K; ++k) {
            const double a = l[1 + k], b = tot[1 + k] - a;
            s += tot[1 + K + k] - a * a / WL - b * b / WR;
        }
        return s / K;
    }
    TLC_INLINE bool pure(const double* c, int, double W) const { return pure_of(*this, c, W); }
};

// Poisson's half deviance: sum w (y log(y / mean) - y + mean) = Q - S log(S / W) per output
struct Poisson : MomentBase {
    static constexpr int code = 12;
    TLC_INLINE double wimp(const double* c, double W) const {
        if (!(W > 0.0)) return 0.0;
        double s = 0.0;
        for (int k = 0; k < K; ++k) {
            const double S = c[1 + k];
            if (S <= EPS) return INF;
            s += c[1 + K + k] - S * std::log(S / W);
        }
        return s > 0.0 ? s / K : 0.0;
    }
    TLC_INLINE double score(const double* l, const double* tot, double WL, double WR, double*) const {
        double s = 0.0;
        for (int k = 0; k < K; ++k) {
            const double a = l[1 + k], b = tot[1 + k] - a;
            if (a <= EPS || b <= EPS) return INF;
            s += tot[1 + K + k] - a * std::log(a / WL) - b * std::log(b / WR);
        }
        return s / K;
    }
    TLC_INLINE bool pure(const double* c, int, double W) const {
        for (int k = 0; k < K; ++k)
            if (c[1 + k] <= EPS) return true;  // (no split of it is admissible)
        return pure_of(*this, c, W);
    }
};

// Weighted values inserted by rank (a Fenwick tree over the ranks 0..m-1 of a node's values,
// each rank holding one row's weight w and w y): after each insertion or removal, in O(log m),
// scikit-learn's weighted median and the sum of absolute deviations from it.
// The weighted median of values of total weight W: the smallest value whose cumulative weight
// (values in ascending order, itself included) exceeds W / 2; when the values up to some value v
// weigh exactly W / 2, the mean of v and the next larger value.
struct MedianTree {
    int64_t m = 0, top = 0;
    std::vector<double> tw, ty;  // 1-based Fenwick arrays of w and w y
    double W = 0.0, WY = 0.0;
    void reset(int64_t size) {
        m = size;
        tw.assign((size_t)m + 1, 0.0);
        ty.assign((size_t)m + 1, 0.0);
        W = WY = 0.0;
        top = 1;
        while (top * 2 <= m) top *= 2;
    }
    // weight w (negative: a removal) at rank r of value y
    TLC_INLINE void add(int64_t r, double y, double w) {
        const double wy = w * y;
        W += w;
        WY += wy;
        for (int64_t i = r + 1; i <= m; i += i & -i) { tw[(size_t)i] += w; ty[(size_t)i] += wy; }
    }
    // the first rank whose cumulative weight exceeds t (reach: reaches t); wb, yb: the sums of w
    // and w y over the ranks before it
    TLC_INLINE int64_t first(double t, bool reach, double& wb, double& yb) const {
        int64_t pos = 0;
        wb = yb = 0.0;
        for (int64_t step = top; step > 0; step >>= 1) {
            const int64_t q = pos + step;
            if (q > m) continue;
            const double c = wb + tw[(size_t)q];
            if (reach ? c < t : c <= t) { pos = q; wb = c; yb += ty[(size_t)q]; }
        }
        return pos;
    }
    // the sum of w |y - median| of the inserted values (y_of[r]: the value of rank r); median: out
    double deviation(const double* y_of, double* median = nullptr) const {
        if (!(W > 0.0)) { if (median) *median = 0.0; return 0.0; }
        const double half = 0.5 * W;
        double wb, yb;
        const int64_t b = first(half, false, wb, yb);
        double med = y_of[b];
        if (wb == half) {  // the values below rank b weigh exactly half: the mean of the two middle values
            double wa, ya;
            med = 0.5 * (y_of[first(half, true, wa, ya)] + med);
        }
        if (median) *median = med;
        const double d = (WY - yb - med * (W - wb)) + (med * wb - yb);
        return d > 0.0 ? d : 0.0;
    }
};

// scikit-learn's absolute error: the impurity of a node is the mean over the outputs of
// sum w |y_k - median_k| / W, median_k the weighted median of output k (MedianTree's rule), and a
// node predicts its medians. Not a function of additive channels (ranked): the engines that take
// it compute the absolute deviations of a node and of a split's sides by MedianTree over the
// node's rows ranked by target (learn/greedy/ranked.h); wimp and score here are never used. The
// channels [W, y_1..y_K, w|y_1|..w|y_K|] carry the weight, each row's own targets (for the ranks)
// and the scale of score ties; a node's value channels are [W, median_1..median_K, ...].
struct AbsoluteError : MomentBase {
    static constexpr int code = 11;
    static constexpr bool ranked = true;
    TLC_INLINE double wimp(const double*, double) const { return 0.0; }
    TLC_INLINE double score(const double*, const double*, double, double, double*) const { return INF; }
    TLC_INLINE bool pure(const double*, int, double) const { return false; }  // (decided on the deviation)
    // scikit-learn's leaf rule on the node's weighted deviation wimp (K outputs' mean)
    static TLC_INLINE bool pure_deviation(double wimp, double W) { return wimp <= EPS * W; }
};

// Run f(policy) with the regression policy of a criterion code (10, 11, 12).
template <class F>
inline auto with_regression(int code, F&& f) {
    switch (code) {
        case 10: return f(SquaredError{});
        case 11: return f(AbsoluteError{});
        case 12: return f(Poisson{});
        default: throw std::invalid_argument("unknown regression criterion code");
    }
}

// Run f(policy) with the built-in policy of a criterion code (0, 1, 2).
template <class F>
inline auto with_builtin(int code, F&& f) {
    switch (code) {
        case 0: return f(Entropy{});
        case 1: return f(Gini{});
        case 2: return f(KearnsMansour{});
        default: throw std::invalid_argument("unknown criterion code");
    }
}

// ---------------------------------------------------------------------------------------------
// For the Python bindings (treelearn._criteria): the built-in policies applied to arrays.
// Normalised multiclass impurity of `rows` rows of C counts (0 for an empty row).
inline void impurity_rows(int code, const double* counts, int64_t rows, int C, double* out) {
    with_builtin(code, [&](auto crit) {
        crit.setup(nullptr, 0, C);
        for (int64_t r = 0; r < rows; ++r) {
            const double* c = counts + r * C;
            double W = 0.0;
            for (int i = 0; i < C; ++i) W += c[i];
            out[r] = W > 0.0 ? crit.wimp(c, W) / W : 0.0;
        }
    });
}
// The binary G at n points
inline void binary_values(int code, const double* p, int64_t n, double* out) {
    with_builtin(code, [&](auto crit) {
        for (int64_t i = 0; i < n; ++i) out[i] = decltype(crit)::G(p[i]);
    });
}
inline double kappa_of(int code) {
    return with_builtin(code, [](auto crit) { return decltype(crit)::kappa; });
}
inline double sklearn_scale_of(int code) {
    if (code < 0) return Callback::sklearn_scale;
    return with_builtin(code, [](auto crit) { return decltype(crit)::sklearn_scale; });
}

}  // namespace tl
