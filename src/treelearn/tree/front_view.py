"""Drawing the error-size front: :func:`plot_front` (matplotlib) and :func:`front_svg` (the HTML
view's inline picture, :func:`treelearn.export_html`).

The front (:func:`treelearn.error_size_front`, or ``front_`` of an estimator fitted with
``select`` or ``error_size_front``) gives, for every leaf budget, the fewest training errors of a
tree of at most that many leaves. Both views draw the training error rate against the leaves,
the lower convex hull (the cost-complexity path: the trees some ``ccp_alpha`` selects) with the
``ccp_alpha`` breakpoints marked, and the selected tree when there is one.
"""
from __future__ import annotations

import html
import numbers

import numpy as np

from treelearn._validation import TreeLearnValueError

__all__ = ["plot_front", "front_svg", "front_of"]

_KEYS = ("n_leaves", "error_rates", "hull", "ccp_alphas")


def front_of(obj, selected=None):
    """``(front, selected leaves or None, how it was selected or None)`` of a front Bunch or of an
    estimator carrying one (``front_``; ``selected_leaves_`` and ``select`` when it selected)."""
    how = None
    if hasattr(obj, "front_"):
        if selected is None:
            selected, how = getattr(obj, "selected_leaves_", None), getattr(obj, "select", None)
        obj = obj.front_
    if not all(hasattr(obj, k) for k in _KEYS):
        raise TreeLearnValueError("expected a front (treelearn.error_size_front's Bunch) or an estimator fitted with "
                                  f"select or error_size_front, got {type(obj).__name__}")
    if selected is not None:
        if isinstance(selected, bool) or not isinstance(selected, numbers.Integral):
            raise TreeLearnValueError(f"selected must be a number of leaves, got {selected!r:.60}")
        if int(selected) not in set(int(v) for v in obj.n_leaves):
            raise TreeLearnValueError(f"selected={int(selected)} is not a leaf count of the front "
                                      f"({sorted(set(int(v) for v in obj.n_leaves))})")
        selected = int(selected)
    return obj, selected, how


def _points(front):
    """The front's distinct (leaves, error rate) points, leaves increasing; the hull's points and
    their breakpoints (the smallest ccp_alpha selecting each)."""
    leaves = np.asarray(front.n_leaves, dtype=np.int64)
    rates = np.asarray(front.error_rates, dtype=float)
    keep = np.r_[True, leaves[1:] != leaves[:-1]]
    hull = np.asarray(front.hull, dtype=np.int64)
    return leaves[keep], rates[keep], leaves[hull], rates[hull], np.asarray(front.ccp_alphas, dtype=float)


def plot_front(front, *, selected=None, ax=None, annotate: bool = True):
    """Plot the error-size front: training error rate against leaves (every budget's best tree),
    its lower convex hull (the ``ccp_alpha`` path) with each hull point's breakpoint ``alpha``
    marked, and the selected tree circled (``selected``: a leaf count; default the estimator's
    ``selected_leaves_``). ``front``: :func:`treelearn.error_size_front`'s Bunch or an estimator
    with ``front_``. Returns the matplotlib Axes (default: the current axes).

    >>> import matplotlib; matplotlib.use("Agg")
    >>> from sklearn.datasets import load_breast_cancer
    >>> from treelearn import OptimalTreeClassifier, plot_front
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> est = OptimalTreeClassifier(max_depth=2, max_binary_features=20, select="bound").fit(X, y)
    >>> ax = plot_front(est)
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('leaves', 'training error rate')
    """
    import matplotlib.pyplot as plt

    front, selected, how = front_of(front, selected)
    leaves, rates, hl, hr, alphas = _points(front)
    if ax is None:
        ax = plt.gca()
    ax.plot(leaves, rates, "o", color="0.55", label="fewest errors, at most b leaves")
    ax.plot(hl, hr, "-", color="tab:blue", lw=1.5, label="lower convex hull (ccp_alpha path)")
    ax.plot(hl, hr, "o", color="tab:blue")
    if annotate:
        for x, yv, a in zip(hl, hr, alphas):
            ax.annotate(f"\u03b1 \u2265 {a:.3g}", xy=(x, yv), xytext=(4, 6), textcoords="offset points", fontsize=7,
                        color="tab:blue")
    if selected is not None:
        ys = rates[leaves == selected][0]
        ax.plot([selected], [ys], "o", ms=13, mfc="none", mec="tab:red", mew=2,
                label=f"selected ({how})" if how else "selected")
    ax.set_xlabel("leaves")
    ax.set_ylabel("training error rate")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8)
    return ax


def front_svg(front, *, selected=None, width: int = 460, height: int = 240) -> str:
    """The front as an inline SVG (numbers and fixed words only, escaped) for the HTML view."""
    front, selected, how = front_of(front, selected)
    leaves, rates, hl, hr, alphas = _points(front)
    left, right, top, bottom = 52, 14, 12, 34
    x_max, y_max = max(int(leaves.max()), 2), max(float(rates.max()), 1e-12)

    def X(v):
        return left + (float(v) - 1.0) / (x_max - 1.0) * (width - left - right)

    def Y(v):
        return top + (1.0 - float(v) / y_max) * (height - top - bottom)

    out = [f'<svg class="tl-front" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="error-size front">',
           f'<line x1="{left}" y1="{Y(0):.1f}" x2="{width - right}" y2="{Y(0):.1f}" stroke="#444"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{Y(0):.1f}" stroke="#444"/>']
    for v in sorted(set(int(n) for n in leaves)):
        out.append(f'<text x="{X(v):.1f}" y="{Y(0) + 14:.1f}" font-size="10" text-anchor="middle">{v}</text>')
    for v in (0.0, y_max / 2, y_max):
        out.append(f'<text x="{left - 4}" y="{Y(v) + 3:.1f}" font-size="10" text-anchor="end">{v:.3g}</text>')
    out.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 4}" font-size="11" '
               'text-anchor="middle">leaves</text>')
    out.append(f'<text x="12" y="{(top + Y(0)) / 2:.1f}" font-size="11" text-anchor="middle" '
               f'transform="rotate(-90 12 {(top + Y(0)) / 2:.1f})">training error rate</text>')
    pts = " ".join(f"{X(a):.1f},{Y(b):.1f}" for a, b in zip(hl, hr))
    out.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>')
    for a, b in zip(leaves, rates):
        out.append(f'<circle cx="{X(a):.1f}" cy="{Y(b):.1f}" r="3.5" fill="#8c8c8c"/>')
    for a, b, al in zip(hl, hr, alphas):
        out.append(f'<circle cx="{X(a):.1f}" cy="{Y(b):.1f}" r="3.5" fill="#1f77b4"><title>{a} leaves, error '
                   f'rate {b:.4g}, ccp_alpha &#8805; {al:.3g}</title></circle>')
        out.append(f'<text x="{X(a) + 4:.1f}" y="{Y(b) - 6:.1f}" font-size="9" fill="#1f77b4">'
                   f'&#945;&#8805;{al:.3g}</text>')
    if selected is not None:
        b = rates[leaves == selected][0]
        label = html.escape(f"selected ({how})" if how else "selected")
        out.append(f'<circle cx="{X(selected):.1f}" cy="{Y(b):.1f}" r="8" fill="none" stroke="#d62728" '
                   f'stroke-width="2"><title>{label}: {selected} leaves</title></circle>')
    out.append("</svg>")
    return "\n".join(out)
