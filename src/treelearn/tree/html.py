"""A self-contained interactive HTML view of a tree: :func:`export_html`.

One HTML file, no network access needed (inline CSS and JavaScript, no fonts or libraries
fetched): every node is an element with its condition, sample count, impurity and a bar of its
class distribution; clicking a node folds or unfolds its subtree; a sample pasted into the box
(``name=value`` pairs, a JSON object, or one CSV row of all the features in order) has its path
from the root to its leaf highlighted and its prediction shown. Several trees can share one page
(:func:`export_html_page`).
"""
from __future__ import annotations

import html
import json
import math

import numbers

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.tree.formats import as_tree, class_colors, class_names_of, feature_names_of, printable
from treelearn.tree.plot import missing_directions, tree_criterion
from treelearn.tree.tree import CATEGORICAL

__all__ = ["export_html", "export_html_page", "tree_view_data"]


def _json_value(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return f if math.isfinite(f) else None
    return str(v)


def tree_view_data(obj, *, feature_names=None, class_names=None, precision: int = 4) -> dict:
    """The JSON-able description of a tree the HTML view draws (nodes, names, colours)."""
    tree = as_tree(obj)
    names = feature_names_of(tree, feature_names)  # as given: a pasted sample is matched by them
    shown = [printable(n) for n in names]  # what the page draws: controls as visible escapes
    reg = tree.is_regression
    # a regression tree: its outputs stand where the classes would, each node shows its mean(s)
    classes = ([f"output {k}" for k in range(tree.n_outputs)] if reg
               else [printable(c) for c in class_names_of(tree, class_names)])
    missing = missing_directions(tree)
    crit = printable(tree_criterion(obj) or "impurity")
    nodes = []
    for i in range(tree.node_count):
        left, right = int(tree.children_left[i]), int(tree.children_right[i])
        node = {"id": i, "left": left, "right": right, "samples": int(tree.n_node_samples[i]),
                "value": [_json_value(v) for v in tree.value[i]], "impurity": _json_value(tree.impurity[i]),
                "predict": int(np.argmax(tree.value[i]))}
        if reg:
            node["shown"] = ", ".join(f"{v:.{precision}g}" for v in tree.value[i])
        if left >= 0:
            f = int(tree.feature[i])
            node["feature"] = f
            if tree.kind[i] == CATEGORICAL:
                cat = tree.schema.categories[f][int(tree.threshold[i])]
                node["category"] = _json_value(cat)
                node["cond"] = f"{shown[f]} == {printable(cat)}"
            elif tree.threshold[i] == np.inf:  # the missing-only split (JSON has no infinity)
                node["threshold"] = float(np.finfo(np.float64).max)
                node["cond"] = f"{shown[f]} is missing"
            else:
                node["threshold"] = float(tree.threshold[i])
                node["cond"] = f"{shown[f]} >= {tree.threshold[i]:.{precision}g}"
            # where the tree sends a missing value (recorded, or the heavier-child default)
            node["missing_left"] = bool(tree.missing_go_to_left[i])
            node["missing_recorded"] = missing is not None
        nodes.append(node)
    used = sorted({int(f) for f in tree.feature[tree.children_left >= 0]})
    return {"nodes": nodes, "feature_names": names, "used_features": used, "classes": classes,
            "label": "value" if reg else "class",
            "colors": ["#{:02x}{:02x}{:02x}".format(*c) for c in class_colors(len(classes))],
            "criterion": crit, "n_features": tree.n_features}


_CSS = """
body { font-family: sans-serif; margin: 1em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
.tl-tree ul { list-style: none; margin: 0; padding-left: 1.6em; border-left: 1px dotted #aaa; }
.tl-tree > ul { padding-left: 0; border-left: none; }
.tl-node > .tl-box { display: inline-block; border: 1px solid #888; border-radius: 5px; padding: 2px 6px;
  margin: 2px 0; cursor: pointer; background: #fff; font-size: 0.85em; }
.tl-node.tl-leaf > .tl-box { cursor: default; border-style: dashed; }
.tl-node.tl-collapsed > ul { display: none; }
.tl-toggle { display: inline-block; width: 1em; font-family: monospace; }
.tl-branch { color: #666; font-size: 0.8em; margin-right: 0.3em; }
.tl-cond { font-weight: bold; }
.tl-bar { display: inline-flex; width: 90px; height: 0.8em; border: 1px solid #999; vertical-align: middle;
  margin: 0 0.4em; }
.tl-bar span { display: block; height: 100%; }
.tl-onpath > .tl-box { background: #fff3b0; border: 2px solid #d08000; }
.tl-leafhit > .tl-box { background: #ffd966; }
.tl-sample textarea { width: 40em; height: 4em; font-family: monospace; }
.tl-legend span.tl-swatch { display: inline-block; width: 0.9em; height: 0.9em; margin: 0 0.2em 0 0.8em;
  vertical-align: middle; border: 1px solid #999; }
.tl-result { margin-left: 1em; font-weight: bold; }
.tl-error { color: #b00; }
"""

_JS = r"""
(function () {
  "use strict";
  function fmt(v) {
    if (v === null) return "nan";
    if (Math.abs(v - Math.round(v)) < 1e-9) return String(Math.round(v));
    return v.toPrecision(4);
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function buildTree(root, data, openDepth) {
    var nodes = data.nodes;
    function box(n, branch) {
      var li = el("li", "tl-node" + (n.left < 0 ? " tl-leaf" : ""));
      li.setAttribute("data-node", n.id);
      var b = el("div", "tl-box");
      b.appendChild(el("span", "tl-toggle", n.left < 0 ? "\u2022" : "\u25be"));
      if (branch) b.appendChild(el("span", "tl-branch", branch));
      if (n.left >= 0) {
        var c = n.cond;
        if (n.missing_recorded) c += " (NaN \u2192 " + (n.missing_left ? "left" : "right") + ")";
        b.appendChild(el("span", "tl-cond", c));
      } else {
        b.appendChild(el("span", "tl-cond", data.label + " = " + shownOf(data, n)));
      }
      var tot = n.value.reduce(function (a, x) { return a + (x || 0); }, 0);
      var bar = el("span", "tl-bar");
      n.value.forEach(function (x, k) {
        var s = el("span");
        s.style.width = (tot > 0 ? 100 * x / tot : 0) + "%";
        s.style.background = data.colors[k];
        s.title = data.classes[k] + ": " + fmt(x);
        bar.appendChild(s);
      });
      b.appendChild(bar);
      b.appendChild(el("span", "tl-info", "samples = " + n.samples + ", value = [" +
        n.value.map(fmt).join(", ") + "], " + data.criterion + " = " + fmt(n.impurity) +
        (n.left >= 0 ? ", " + data.label + " = " + shownOf(data, n) : "")));
      li.appendChild(b);
      return li;
    }
    // iterative construction (trees can be deep)
    var ul = el("ul");
    root.appendChild(ul);
    var stack = [[0, ul, "", 0]];
    while (stack.length) {
      var item = stack.pop();
      var n = nodes[item[0]];
      var li = box(n, item[2]);
      item[1].appendChild(li);
      if (n.left >= 0) {
        var sub = el("ul");
        li.appendChild(sub);
        if (item[3] >= openDepth) li.classList.add("tl-collapsed");
        stack.push([n.right, sub, "true:", item[3] + 1]);
        stack.push([n.left, sub, "false:", item[3] + 1]);
      }
    }
    // pushed right then left, so left is appended first: keep the order left, right
    root.addEventListener("click", function (ev) {
      var b = ev.target.closest(".tl-box");
      if (!b || !root.contains(b)) return;
      var li = b.parentNode;
      if (li.classList.contains("tl-leaf")) return;
      li.classList.toggle("tl-collapsed");
      b.querySelector(".tl-toggle").textContent = li.classList.contains("tl-collapsed") ? "\u25b8" : "\u25be";
    });
    root.querySelectorAll(".tl-node.tl-collapsed > .tl-box .tl-toggle").forEach(function (t) {
      t.textContent = "\u25b8";
    });
  }
  function parseSample(text, data) {
    // a record without a prototype: a feature named "__proto__" or "constructor" is a key like any other
    var names = data.feature_names, values = Object.create(null), t = text.trim();
    if (!t) throw new Error("paste a sample first");
    if (t.charAt(0) === "{") {
      var obj = JSON.parse(t);
      Object.keys(obj).forEach(function (k) { values[k] = obj[k] === null ? "" : String(obj[k]); });
    } else if (t.indexOf("=") >= 0) {
      t.split(/[\n,;]+/).forEach(function (part) {
        var i = part.indexOf("=");
        if (i < 0) { if (part.trim()) throw new Error("expected name=value, got " + part.trim()); return; }
        values[part.slice(0, i).trim()] = part.slice(i + 1).trim();
      });
    } else {
      var lines = t.split(/\n/), row = lines[lines.length - 1].split(/[,;\t]/);
      var head = lines.length > 1 ? lines[0].split(/[,;\t]/).map(function (s) { return s.trim(); }) : names;
      if (row.length !== head.length && !(lines.length === 1 && row.length === names.length + 1))
        throw new Error("a row of " + head.length + " values expected, got " + row.length);
      head.forEach(function (h, i) { values[h] = row[i].trim(); });
    }
    data.used_features.forEach(function (f) {
      if (!own(values, names[f])) throw new Error("the sample has no value for " + names[f]);
    });
    return values;
  }
  function own(obj, key) { return Object.prototype.hasOwnProperty.call(obj, key); }
  function isMissing(s) { return s === "" || s === "?" || s === "NA" || s.toLowerCase() === "nan"; }
  function path(data, values) {
    var nodes = data.nodes, out = [0], n = nodes[0];
    while (n.left >= 0) {
      var raw = values[data.feature_names[n.feature]], right;
      if (isMissing(raw)) right = !n.missing_left;
      else if (own(n, "category")) right = raw === String(n.category);
      else {
        var x = Number(raw);
        if (isNaN(x)) throw new Error(data.feature_names[n.feature] + ": not a number: " + raw);
        right = x >= n.threshold;
      }
      n = nodes[right ? n.right : n.left];
      out.push(n.id);
    }
    return out;
  }
  function shownOf(data, n) { return n.shown !== undefined ? n.shown : data.classes[n.predict]; }
  function setup(section) {
    var data = JSON.parse(section.querySelector("script.tl-data").textContent);
    var root = section.querySelector(".tl-tree");
    buildTree(root, data, Number(section.getAttribute("data-open-depth")));
    var legend = section.querySelector(".tl-legend");
    data.classes.forEach(function (c, k) {
      var s = el("span", "tl-swatch"); s.style.background = data.colors[k];
      legend.appendChild(s); legend.appendChild(document.createTextNode(c));
    });
    var input = section.querySelector("textarea"), result = section.querySelector(".tl-result");
    section.querySelector(".tl-go").addEventListener("click", function () {
      root.querySelectorAll(".tl-onpath, .tl-leafhit").forEach(function (e) {
        e.classList.remove("tl-onpath"); e.classList.remove("tl-leafhit");
      });
      result.classList.remove("tl-error");
      try {
        var p = path(data, parseSample(input.value, data));
        p.forEach(function (id, i) {
          var li = root.querySelector('.tl-node[data-node="' + id + '"]');
          li.classList.add("tl-onpath");
          if (i === p.length - 1) li.classList.add("tl-leafhit");
          else {
            li.classList.remove("tl-collapsed");
            li.querySelector(".tl-toggle").textContent = "\u25be";
          }
        });
        var leaf = data.nodes[p[p.length - 1]];
        result.textContent = "prediction: " + shownOf(data, leaf) + " (leaf " + leaf.id + ", path " +
          p.join(" \u2192 ") + ")";
      } catch (e) {
        result.classList.add("tl-error");
        result.textContent = String(e.message || e);
      }
    });
    section.querySelector(".tl-expand").addEventListener("click", function () {
      root.querySelectorAll(".tl-node.tl-collapsed").forEach(function (li) {
        li.classList.remove("tl-collapsed");
        li.querySelector(".tl-toggle").textContent = "\u25be";
      });
    });
  }
  document.querySelectorAll(".tl-view").forEach(setup);
})();
"""


def _front_html(obj, front) -> str:
    """The front's picture (:func:`~treelearn.tree.front_view.front_svg`) and a caption: ``front``
    None takes the estimator's ``front_`` when it carries one, False none, else the front given."""
    from treelearn.tree.front_view import front_of, front_svg

    if front is False or (front is None and getattr(obj, "front_", None) is None):
        return ""
    front, selected, how = front_of(obj if front is None else front,
                                    getattr(obj, "selected_leaves_", None) if front is not None else None)
    said = "" if selected is None else f"; circled: the selected tree ({selected} leaves{', by ' + how if how else ''})"
    return (f'<div class="tl-front-view"><p>Error-size front: the fewest training errors of a tree of at most b '
            f'leaves, for every b; the line is its lower convex hull, each point marked with the smallest '
            f'ccp_alpha that selects it{html.escape(said)}.</p>\n{front_svg(front, selected=selected)}</div>\n')


def _section(obj, title: str | None, *, feature_names, class_names, precision, open_depth, index: int,
             description: str | None = None, front=None) -> str:
    data = tree_view_data(obj, feature_names=feature_names, class_names=class_names, precision=precision)
    tree = as_tree(obj)
    # no "<" at all inside the script element: "</script" would end it and "<!--" (with a
    # "<script" after it) would keep it open past its end tag; "&" and ">" for good measure
    payload = (json.dumps(data, ensure_ascii=True, allow_nan=False)
               .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
    used = [data["feature_names"][f] for f in data["used_features"]]
    example = ", ".join(f"{name}=" for name in used[:6]) + (", ..." if len(used) > 6 else "")
    head = f"<h2>{html.escape(printable(title))}</h2>\n" if title else ""
    desc = f"<p>{html.escape(printable(description))}</p>\n" if description else ""
    return (
        f'<section class="tl-view" id="tree-{index}" data-open-depth="{int(open_depth)}">\n{head}{desc}'
        f"<p>{tree.n_leaves} leaves, depth {tree.depth}, {tree.node_count} nodes; "
        f"right branch (true:) when the condition holds. Click a node to fold or unfold it.</p>\n"
        f"{_front_html(obj, front)}"
        f'<p class="tl-legend">classes:</p>\n'
        f'<div class="tl-sample"><textarea aria-label="sample" placeholder="{html.escape(printable(example))}"></textarea><br>'
        f'<button type="button" class="tl-go">highlight path</button> '
        f'<button type="button" class="tl-expand">unfold all</button><span class="tl-result"></span></div>\n'
        f'<div class="tl-tree"></div>\n'
        f'<script type="application/json" class="tl-data">{payload}</script>\n</section>\n'
    )


#: the most significant digits a number of the page is shown with (float64 needs at most 17)
MAX_PRECISION = 17


def _check_int(name: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= value <= high:
        raise TreeLearnValueError(f"{name} must be an integer in [{low}, {high}], got {value!r:.60}")
    return int(value)


def _check_text(name: str, value, *, optional: bool) -> None:
    if not (isinstance(value, str) or (optional and value is None)):
        raise TreeLearnValueError(f"{name} must be a string{' or None' if optional else ''}, "
                                  f"got {type(value).__name__}")


def _check_page(trees, *, title, precision, open_depth, intro) -> None:
    """The parameters of an HTML page, checked before anything is drawn (named errors)."""
    _check_int("precision", precision, 0, MAX_PRECISION)
    _check_int("open_depth", open_depth, 0, 2**31 - 1)
    _check_text("title", title, optional=True)
    _check_text("intro", intro, optional=True)
    if isinstance(trees, (str, bytes)) or not hasattr(trees, "__iter__"):
        raise TreeLearnValueError(f"trees must be a list of (title, tree) or (title, tree, description), "
                                  f"got {type(trees).__name__}")
    for item in trees:
        if not isinstance(item, tuple) or len(item) not in (2, 3):
            raise TreeLearnValueError("trees must be a list of (title, tree) or (title, tree, description) tuples")
        _check_text("a tree's title", item[0], optional=True)
        if len(item) == 3:
            _check_text("a tree's description", item[2], optional=True)


def export_html_page(trees, *, title: str = "treelearn trees", feature_names=None, class_names=None,
                     precision: int = 4, open_depth: int = 3, intro: str | None = None) -> str:
    """One HTML page with several trees: ``trees`` is a list of ``(title, est_or_tree)`` or
    ``(title, est_or_tree, description)`` tuples. See :func:`export_html`."""
    return _page(trees, title=title, feature_names=feature_names, class_names=class_names, precision=precision,
                 open_depth=open_depth, intro=intro, fronts=None)


def _page(trees, *, title, feature_names, class_names, precision, open_depth, intro, fronts) -> str:
    """The page of :func:`export_html_page`; ``fronts``: each tree's ``front`` (None: the estimator's)."""
    _check_page(trees, title=title, precision=precision, open_depth=open_depth, intro=intro)
    sections = []
    for i, item in enumerate(trees):
        name, obj = item[0], item[1]
        description = item[2] if len(item) > 2 else None
        sections.append(_section(obj, name, feature_names=feature_names, class_names=class_names,
                                 precision=precision, open_depth=open_depth, index=i, description=description,
                                 front=None if fronts is None else fronts[i]))
    intro_html = f"<p>{html.escape(printable(intro))}</p>\n" if intro else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(printable(title))}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(printable(title))}</h1>\n{intro_html}" + "".join(sections)
            + f"<script>{_JS}</script>\n</body>\n</html>\n")


def export_html(est_or_tree, *, title: str | None = None, feature_names=None, class_names=None,
                precision: int = 4, open_depth: int = 3, front=None) -> str:
    """The tree as one self-contained interactive HTML page (a string; write it to a ``.html``).

    Every node is a box (``li.tl-node`` with ``data-node`` = its id) with its condition, sample
    count, class counts, impurity in the tree's criterion and a bar of its class distribution;
    a click on an internal node folds or unfolds its subtree (nodes deeper than ``open_depth``
    start folded). Paste a sample (``name=value`` pairs, a JSON object, or a CSV row of all
    features) and press "highlight path": the nodes it passes are highlighted and its prediction
    shown. Missing values (empty, ``?``, ``NA``, ``nan``) follow the tree's stored direction, or
    the child with more training weight. Nothing is fetched from the network.

    ``front``: the error-size front drawn above the tree (an inline SVG: error rate against
    leaves, its convex hull with the ``ccp_alpha`` breakpoints, the selected tree circled):
    None (default) draws the estimator's ``front_`` when it carries one (fitted with ``select``
    or ``error_size_front``), False none, or a front Bunch (:func:`treelearn.error_size_front`).

    >>> from sklearn.datasets import load_iris
    >>> from treelearn import GreedyTreeClassifier, export_html
    >>> page = export_html(GreedyTreeClassifier(max_depth=2).fit(*load_iris(return_X_y=True)))
    >>> page.startswith("<!DOCTYPE html>") and "http" not in page
    True
    """
    tree = as_tree(est_or_tree)
    _check_text("title", title, optional=True)
    if title is None:
        title = f"{type(est_or_tree).__name__ if tree is not est_or_tree else 'Tree'}: {tree.n_leaves} leaves"
    if front is not None and front is not False:
        from treelearn.tree.front_view import front_of

        front_of(front)  # (checked before anything is drawn: a named error)
    return _page([(None, est_or_tree)], title=title, feature_names=feature_names, class_names=class_names,
                 precision=precision, open_depth=open_depth, intro=None, fronts=[front])
