"""Trees that ship: the Python, C, SQL and ONNX exports predict exactly as ``predict`` (and
``predict_proba`` where the language gives probabilities) on 10^4 rows of three datasets with
numeric, categorical and missing values, for every learner that fits them; the C of a dataset's
trees is compiled once (gcc), the SQL runs in sqlite3, the ONNX in onnxruntime. Hostile names
and categories cannot inject code; deep trees export too."""
from __future__ import annotations

import ctypes
import shutil
import sqlite3
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import treelearn as tl
from treelearn.tree.codegen import export_code

N_ROWS = 10_000
N_TRAIN = 2000
UNSEEN = "zz-never-seen"

LEARNERS = {
    "greedy": lambda: tl.GreedyTreeClassifier(max_depth=6),
    "topk": lambda: tl.TopKTreeClassifier(k=2, max_depth=3, max_binary_features=40),
    "optimal-binary": lambda: tl.OptimalTreeClassifier(max_depth=3, solver="binary", max_binary_features=30),
    "optimal-continuous": lambda: tl.OptimalTreeClassifier(max_depth=2, solver="continuous"),
    "pruned": lambda: tl.PrunedTreeClassifier(pruning="bound"),
    "minrank": lambda: tl.MinRankTreeClassifier(time_limit=30),  # where the sample is consistent
}
#: rows a learner is fitted on (the min-rank tree of a larger sample is large: slow to run as SQL)
TRAIN_ROWS = {"minrank": 600}


def _resampled(X, y, rng, nan_share=0.0):
    """10^4 rows drawn from (X, y), NaN injected in numeric cells, 1% of the categorical cells of
    the rows after the first N_TRAIN (the training rows) replaced by a category never seen."""
    idx = rng.integers(0, len(y), N_ROWS)
    X = X.iloc[idx].reset_index(drop=True).copy()
    y = np.asarray(y)[idx]
    test_rows = np.arange(N_ROWS) >= N_TRAIN  # the rows the trees are not fitted on
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype) or X[c].dtype == object:
            X[c] = X[c].astype(object)
            X.loc[(rng.random(N_ROWS) < 0.01) & test_rows, c] = UNSEEN
        elif nan_share:
            X.loc[rng.random(N_ROWS) < nan_share, c] = np.nan
    return X, y


def _load(name, data_dir):
    from treelearn.datasets import load_dataset

    rng = np.random.default_rng(7)
    if name == "mushroom":  # categorical, '?' missing
        X, y = load_dataset("topk/mushroom", data_dir)
        return _resampled(X, y, rng)
    if name == "wireless-nan":  # numeric, 5% NaN injected
        X, y = load_dataset("topk/wireless-indoor", data_dir, categorical=False)
        return _resampled(X.astype(np.float64), y, rng, nan_share=0.05)
    X, y = load_dataset("topk/breast-cancer", data_dir)  # mixed, '?' missing
    return _resampled(X, y, rng, nan_share=0.02)


def _fit_all(X, y):
    trees = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, make in LEARNERS.items():
            m = TRAIN_ROWS.get(name, N_TRAIN)
            try:
                trees[name] = make().fit(X.iloc[:m], y[:m])
            except (tl.InconsistentSampleError, tl.RankSearchLimitError):
                assert name == "minrank"  # a consistent tree only exists on a consistent sample
    return trees


# ---------------------------------------------------------------------------------------- runners
def _rows(X):
    return X.to_numpy(dtype=object).tolist()


def run_python(code: str, X):
    ns: dict = {}
    exec(compile(code, "<export>", "exec"), ns)  # noqa: S102 - the code under test
    rows = _rows(X)
    return np.asarray(ns["predict"](rows), dtype=object), np.asarray(ns["predict_proba"](rows), dtype=np.float64)


def compile_c(codes: dict, tmp_path, n_classes: dict):
    """One shared library of several exported trees (each under its own name), with a batch
    driver per tree; gcc with warnings as errors."""
    drivers = []
    for name in codes:
        drivers.append(f"void {name}_batch(const double *X, int n, int F, int *out, double *proba)\n"
                       f"{{ int i; for (i = 0; i < n; ++i) out[i] = {name}(X + (long)i * F, "
                       f"proba + (long)i * {n_classes[name]}); }}\n")
    stem = "_".join(codes)  # one file per library: the loader caches libraries by path
    src = tmp_path / f"{stem}.c"
    src.write_text("\n".join(codes.values()) + "\n" + "\n".join(drivers), encoding="utf-8")
    lib = tmp_path / f"{stem}.so"
    r = subprocess.run(["gcc", "-std=c99", "-O1", "-Wall", "-Wextra", "-pedantic", "-Werror", "-shared", "-fPIC",
                        "-o", str(lib), str(src), "-lm"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return ctypes.CDLL(str(lib))


def c_input(lib, name, tree, X) -> np.ndarray:
    """The row matrix the C function reads: numbers, and category codes looked up by the
    generated ``<name>_category_code`` (NaN: missing)."""
    lookup = getattr(lib, f"{name}_category_code")
    lookup.argtypes = [ctypes.c_int, ctypes.c_char_p]
    out = np.empty(X.shape, dtype=np.float64)
    for j, cats in enumerate(tree.schema.categories):
        col = X.iloc[:, j]
        if cats is None:
            out[:, j] = col.to_numpy(dtype=np.float64)
            continue
        codes = {v: float(lookup(j, str(v).encode("utf-8"))) for v in col.dropna().unique().tolist()}
        out[:, j] = col.map(codes).to_numpy(dtype=np.float64)  # missing: NaN
    return np.ascontiguousarray(out)


def run_c(lib, name, tree, X):
    Xc = c_input(lib, name, tree, X)
    n, F = Xc.shape
    out = np.empty(n, dtype=np.int32)
    proba = np.empty((n, tree.n_classes), dtype=np.float64)
    fn = getattr(lib, f"{name}_batch")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    fn(Xc.ctypes.data, n, F, out.ctypes.data, proba.ctypes.data)
    return tree.classes[out], proba


def sqlite_table(tree, X, con, table="t"):
    cats = tree.schema.categories
    names = [tree.schema.column_name(j) for j in range(tree.n_features)]
    cols = ", ".join('"' + n.replace('"', '""') + '" ' + ("TEXT" if cats[j] is not None else "REAL")
                     for j, n in enumerate(names))
    con.execute(f'CREATE TABLE "{table}" (rowid_ INTEGER PRIMARY KEY, {cols})')
    rows = []
    for i, r in enumerate(_rows(X)):
        rows.append([i] + [None if pd.isna(v) else (str(v) if cats[j] is not None else float(v))
                           for j, v in enumerate(r)])
    con.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * (len(names) + 1))})', rows)


def run_sql(code: str, con, table="t"):
    got = [r[0] for r in con.execute(f'SELECT {code} FROM "{table}" ORDER BY rowid_')]
    return np.asarray(got, dtype=object)


def run_onnx(model: bytes, tree, X):
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    cats = tree.schema.categories
    num = [j for j in range(tree.n_features) if cats[j] is None]
    cat = [j for j in range(tree.n_features) if cats[j] is not None]
    feeds = {"X": X.iloc[:, num].to_numpy(dtype=np.float64).reshape(len(X), len(num))}
    if cat:
        feeds["X_cat"] = np.array([["" if pd.isna(v) else str(v) for v in r] for r in
                                   X.iloc[:, cat].to_numpy(dtype=object).tolist()], dtype=object)
    label, proba = sess.run(["label", "probabilities"], feeds)
    return label, proba


def same_labels(got, want) -> bool:
    got, want = np.asarray(got, dtype=object), np.asarray(want, dtype=object)
    return got.shape == want.shape and all(a == b for a, b in zip(got.tolist(), want.tolist()))


# ---------------------------------------------------------------------------------------- equality on 10^4 rows
DATASETS = ["mushroom", "wireless-nan", "breast-cancer"]


@pytest.fixture(scope="module")
def fitted(request):
    data_dir = request.getfixturevalue("data_dir")
    return {name: (X, y, _fit_all(X, y)) for name, (X, y) in ((n, _load(n, data_dir)) for n in DATASETS)}


def equality_table(fitted, tmp_path) -> dict:
    """{(dataset, learner, language): predictions equal (and probabilities, where given)}."""
    table = {}
    for ds, (X, _, trees) in fitted.items():
        want = {k: (est.predict(X), est.predict_proba(X)) for k, est in trees.items()}
        names = {k: "t_" + k.replace("-", "_") for k in trees}
        (tmp_path / ds).mkdir()
        lib = compile_c({names[k]: export_code(est, "c", name=names[k]) for k, est in trees.items()}, tmp_path / ds,
                        {names[k]: est.tree_.n_classes for k, est in trees.items()})
        con = sqlite3.connect(":memory:")
        sqlite_table(next(iter(trees.values())).tree_, X, con)
        for k, est in trees.items():
            label, proba = want[k]
            py_label, py_proba = run_python(export_code(est, "python"), X)
            table[ds, k, "python"] = same_labels(py_label, label) and np.array_equal(py_proba, proba)
            c_label, c_proba = run_c(lib, names[k], est.tree_, X)
            table[ds, k, "c"] = same_labels(c_label, label) and np.array_equal(c_proba, proba)
            table[ds, k, "sql"] = same_labels(run_sql(export_code(est, "sql"), con), label)
            o_label, o_proba = run_onnx(export_code(est, "onnx"), est.tree_, X)
            table[ds, k, "onnx"] = same_labels(o_label, label) and np.array_equal(o_proba, proba)
    return table


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_every_export_predicts_as_predict_on_ten_thousand_rows(fitted, tmp_path):
    pytest.importorskip("onnxruntime")
    table = equality_table(fitted, tmp_path)
    learners = {k for _, k, _ in table}
    assert {"greedy", "topk", "optimal-binary", "optimal-continuous", "pruned", "minrank"} <= learners
    assert len({ds for ds, _, _ in table}) == 3
    bad = sorted(key for key, ok in table.items() if not ok)
    assert bad == [], bad
    # the data exercise what the exports must get right: missing values, unseen categories, both kinds
    for X, _, trees in fitted.values():
        assert X.isna().any().any()
    kinds = {int(k) for _, _, trees in fitted.values() for est in trees.values()
             for k in est.tree_.kind[est.tree_.children_left >= 0]}
    assert kinds == {0, 1}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_query_learner_trees_export(tmp_path):
    """The query learner's trees over 0/1 inputs (the data it accepts) export like any tree."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(3000, 10))
    y = (X[:, 0] & X[:, 1]) | X[:, 2]
    est = tl.QueryTreeClassifier(size=4, epsilon=0.2, random_state=0).fit(X, y)
    Xt = pd.DataFrame(rng.integers(0, 2, size=(N_ROWS, 10)).astype(float), columns=[f"x{j}" for j in range(10)])
    want, want_p = est.predict(Xt.to_numpy()), est.predict_proba(Xt.to_numpy())
    assert est.tree_.n_leaves > 1
    got, got_p = run_python(export_code(est, "python"), Xt)
    assert same_labels(got, want) and np.array_equal(got_p, want_p)
    lib = compile_c({"q": export_code(est, "c", name="q")}, tmp_path, {"q": est.tree_.n_classes})
    got, got_p = run_c(lib, "q", est.tree_, Xt)
    assert same_labels(got, want) and np.array_equal(got_p, want_p)
    con = sqlite3.connect(":memory:")
    sqlite_table(est.tree_, Xt, con)
    assert same_labels(run_sql(export_code(est, "sql"), con), want)
    if pytest.importorskip("onnxruntime"):
        got, got_p = run_onnx(export_code(est, "onnx"), est.tree_, Xt)
        assert same_labels(got, want) and np.array_equal(got_p, want_p)


# ---------------------------------------------------------------------------------------- exact thresholds
def _chain(thresholds, missing_left):
    """A chain of numeric splits on x0: internal node 2i tests x0 >= t_i (right: node 2i + 2, the
    next test; left: the leaf 2i + 1), the last right child a leaf."""
    left, right, feature, thr, kind, value, miss = [], [], [], [], [], [], []
    for i, t in enumerate(thresholds):
        node = 2 * i
        left += [node + 1, -1]
        right += [node + 2, -1]
        feature += [0, -2]
        thr += [float(t), -2.0]
        kind += [0, -1]
        value += [[1.0 + i, 2.0], [float(i % 3), 1.0 + (i % 2)]]
        miss += [int(missing_left[i]), 0]
    left.append(-1), right.append(-1), feature.append(-2), thr.append(-2.0), kind.append(-1)
    value.append([0.0, 5.0]), miss.append(0)
    return tl.Tree(children_left=left, children_right=right, feature=feature, threshold=thr, kind=kind,
                   value=value, classes=np.array(["lo", "hi"]), n_features=1, missing_go_to_left=miss)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_thresholds_are_compared_exactly_and_deep_trees_export(tmp_path):
    rng = np.random.default_rng(0)
    for depth in (8, 130):  # nested ifs / a node table (Python) and goto (C) past MAX_NESTED_DEPTH
        ts = rng.normal(size=depth) * 10.0 ** rng.integers(-8, 8, depth)
        ts[0] = 0.1 + 0.2  # not a short decimal
        ts = np.sort(ts)
        tree = _chain(ts.tolist(), rng.random(depth) < 0.5)
        near = np.concatenate([ts, np.nextafter(ts, -np.inf), np.nextafter(ts, np.inf), [np.nan] * 5,
                               rng.normal(size=200)])
        X = pd.DataFrame({"x0": near})
        want, want_p = tree.predict(X), tree.predict_proba(X)
        got, got_p = run_python(export_code(tree, "python"), X)
        assert same_labels(got, want) and np.array_equal(got_p, want_p)
        if depth > 60:
            assert "_NODES = (" in export_code(tree, "python") and "goto" in export_code(tree, "c")
        lib = compile_c({f"d{depth}": export_code(tree, "c", name=f"d{depth}")}, tmp_path, {f"d{depth}": 2})
        got, got_p = run_c(lib, f"d{depth}", tree, X)
        assert same_labels(got, want) and np.array_equal(got_p, want_p)
        con = sqlite3.connect(":memory:")
        sqlite_table(tree, X, con)
        assert same_labels(run_sql(export_code(tree, "sql"), con), want)
        if pytest.importorskip("onnxruntime"):
            got, got_p = run_onnx(export_code(tree, "onnx"), tree, X)
            assert same_labels(got, want) and np.array_equal(got_p, want_p)
    with pytest.raises(tl.TreeLearnValueError, match="depth"):
        export_code(_chain(list(range(450)), [0] * 450), "sql")


# ---------------------------------------------------------------------------------------- hostile names
HOSTILE = ['quote"d', "apos'trophe", "new\nline", "*/ close /* open", "-- dash comment", "back\\slash",
           "tab\there", "non-ascii é ü 中文 🙂", "??/ trigraph", "'; DROP TABLE t; --", '"); system("rm"); //',
           "crlf\r\nend", "%s%n printf", "{} format", "\u2028 line separator", "# hash", "\\x41 escape",
           "$(shell)", "`tick`", "trailing backslash\\"]


def _hostile_frame(rng, n=4000):
    cols = {}
    for i, name in enumerate(HOSTILE):
        if i % 2:
            cols[name] = rng.choice(HOSTILE[:6] + [None], size=n).astype(object)
        else:
            cols[name] = np.where(rng.random(n) < 0.05, np.nan, rng.normal(size=n))
    X = pd.DataFrame(cols)
    score = sum((X[c] == HOSTILE[(i * 3) % 6]).astype(int) if i % 2 else X[c].fillna(0).gt(0).astype(int)
                for i, c in enumerate(HOSTILE))
    y = np.asarray(HOSTILE[10:14], dtype=object)[score.to_numpy() % 4]
    return X, y


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_hostile_names_categories_and_labels_cannot_inject_code(tmp_path):
    rng = np.random.default_rng(1)
    X, y = _hostile_frame(rng)
    est = tl.GreedyTreeClassifier(max_depth=10).fit(X, y)
    used = {int(f) for f in est.tree_.feature[est.tree_.children_left >= 0]}
    assert len(used) >= 10 and {0, 1} <= set(est.tree_.kind.tolist())
    want, want_p = est.predict(X), est.predict_proba(X)
    code = export_code(est, "python")
    assert code.isascii()
    ns: dict = {}
    exec(compile(code, "<export>", "exec"), ns)  # noqa: S102
    assert ns["FEATURES"] == HOSTILE and ns["CLASSES"] == sorted(set(y.tolist()))
    got, got_p = run_python(code, X)
    assert same_labels(got, want) and np.array_equal(got_p, want_p)
    c_code = export_code(est, "c", name="h")
    assert c_code.isascii()
    lib = compile_c({"h": c_code}, tmp_path, {"h": est.tree_.n_classes})
    table = (ctypes.c_char_p * len(HOSTILE)).in_dll(lib, "h_features")
    assert [s.decode("utf-8") for s in table] == HOSTILE
    got, got_p = run_c(lib, "h", est.tree_, X)
    assert same_labels(got, want) and np.array_equal(got_p, want_p)
    con = sqlite3.connect(":memory:")
    sqlite_table(est.tree_, X, con, table="x")
    sql = export_code(est, "sql", name='pred"iction', table="x")
    got = [r[0] for r in con.execute(sql.replace('FROM "x"', 'FROM "x" ORDER BY rowid_'))]
    assert same_labels(got, want)
    assert con.execute('SELECT count(*) FROM "x"').fetchone()[0] == len(X)  # nothing dropped
    if pytest.importorskip("onnxruntime"):
        got, got_p = run_onnx(export_code(est, "onnx"), est.tree_, X)
        assert same_labels(got, want) and np.array_equal(got_p, want_p)


def test_what_a_language_cannot_hold_is_refused():
    X = pd.DataFrame({"a\x00b": [0.0, 1.0, 2.0, 3.0], "c": ["x", "y", "x", "y"]})
    est = tl.GreedyTreeClassifier().fit(X, [0, 1, 1, 1])
    assert "\\x00" in export_code(est, "python")  # Python escapes it
    for lang in ("c", "sql"):
        with pytest.raises(tl.TreeLearnValueError, match="NUL"):
            export_code(est, lang)
    with pytest.raises(tl.TreeLearnValueError, match="language"):
        export_code(est, "cobol")
    for bad in ("1x", "a b", "class", "x;y"):
        with pytest.raises(tl.TreeLearnValueError, match="identifier"):
            export_code(est, "python", name=bad)
    with pytest.raises(tl.TreeLearnValueError, match="not fitted"):
        export_code(tl.GreedyTreeClassifier(), "python")
    empty_cat = tl.GreedyTreeClassifier().fit(pd.DataFrame({"c": ["", "y", "", "y"]}), [0, 1, 0, 1])
    pytest.importorskip("onnx")
    with pytest.raises(tl.TreeLearnValueError, match="empty string"):
        export_code(empty_cat, "onnx")
