"""Hostile model files: every allocation bounded before it happens, the file size checked before
the file is read, absurd numbers rejected with a TreeLearnValueError naming them (issue 12)."""
from __future__ import annotations

import json
import os
import time
import tracemalloc

import numpy as np
import pytest

from treelearn import TreeLearnValueError
from treelearn.data.schema import ColumnSchema
from treelearn.tree import Tree
from treelearn.tree.export import load_tree_json, tree_from_json, tree_to_json
from treelearn.tree.formats import MAX_CLASSES_BYTES, MAX_INT_DIGITS


def _tree(classes=("n", "y"), value=((3, 3), (2, 0), (1, 3))) -> Tree:
    return Tree(children_left=[1, -1, -1], children_right=[2, -1, -1], feature=[0, -2, -2],
                threshold=[0.5, -2, -2], kind=[0, -1, -1], value=[list(v) for v in value],
                classes=np.asarray(classes), schema=ColumnSchema(categories=[None], feature_names=["x"]))


def _doc(**changes) -> dict:
    d = json.loads(tree_to_json(_tree()))
    d.update(changes)
    return d


def _rejected(text, match: str, *, max_peak_mb: float = 16.0, **kw) -> str:
    """The load fails with a TreeLearnValueError matching ``match``, quickly and without
    allocating more than ``max_peak_mb`` (numpy reports its buffers to tracemalloc)."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(TreeLearnValueError, match=match) as info:
            tree_from_json(text, **kw)
        elapsed = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < 1.0
    assert peak < max_peak_mb * 2**20, f"peak {peak / 2**20:.1f} MiB while rejecting"
    msg = str(info.value)
    assert msg and "\n" not in msg and len(msg) < 400
    return msg


# ---------------------------------------------------------------------------------- dtypes
def test_wide_string_dtype_rejected_before_allocation():
    # 557 bytes that asked numpy for a 40 MB array (0.9 GB during the load)
    text = json.dumps(_doc(classes=["n", "y"], classes_dtype="<U9999999"))
    assert len(text) < 600
    msg = _rejected(text, "classes_dtype")
    assert "wider than its labels need" in msg


def test_dtype_with_a_thousand_digit_width_gives_a_short_message():
    # long-form fuzz find: the error quoted the whole 1,000-digit dtype string (a multi-screen message)
    text = json.dumps(_doc(classes=["n", "y"], classes_dtype="<U" + "9" * 1000))
    msg = _rejected(text, "classes_dtype")
    assert "unsupported classes_dtype" in msg and len(msg) < 200


def test_many_wide_classes_rejected_before_allocation():
    # 300 classes of <U9999999: 11 GiB if numpy were asked
    classes = [f"c{i}" for i in range(300)]
    tree = _tree(classes=classes, value=[[1.0] * 300] * 3)
    d = json.loads(tree_to_json(tree))
    d["classes_dtype"] = "<U9999999"
    _rejected(json.dumps(d), "classes_dtype")


def test_total_size_of_classes_is_bounded_even_when_labels_need_the_width():
    # labels that really are 1024 characters wide, but so many that the array would pass the cap
    n = MAX_CLASSES_BYTES // (4 * 1024) + 1
    d = _doc()
    d["classes"] = ["a" * 1024] + [str(i) for i in range(n - 1)]
    d["classes_dtype"] = "<U1024"
    _rejected(json.dumps(d), "would take", max_peak_mb=64)


def test_wide_dtypes_that_a_fit_can_produce_still_load():
    # np.unique keeps y's dtype: short labels in a <U100 array are a legitimate model
    for dtype in ("<U1", "<U100", "<U1024"):
        tree = _tree(classes=np.array(["n", "y"], dtype=dtype))
        back = Tree.from_json(tree.to_json())
        assert back.classes.dtype == np.dtype(dtype) and back == tree
    long = np.array(["a" * 5000, "b"], dtype="<U5000")  # labels that need the width
    assert Tree.from_json(_tree(classes=long).to_json()).classes.dtype == np.dtype("<U5000")
    # a width no label needs is written as the labels' width: whatever the writer writes loads
    wide = _tree(classes=np.array(["n", "y"], dtype="<U100000"))
    back = Tree.from_json(wide.to_json())
    assert back == wide and back.classes.dtype == np.dtype("<U1")


# ---------------------------------------------------------------------------------- numbers
def test_integer_literal_over_the_digit_limit_is_a_named_error():
    big = "9" * (MAX_INT_DIGITS + 1)
    text = json.dumps(_doc())[:-1] + f', "metadata": {{"seed": {big}}}}}'
    msg = _rejected(text, "integer literal")
    assert str(MAX_INT_DIGITS + 1) in msg
    neg = json.dumps(_doc())[:-1] + f', "metadata": {{"seed": -{big}}}}}'
    _rejected(neg, "integer literal")
    # at the limit it is an ordinary (metadata) integer
    ok = json.dumps(_doc())[:-1] + f', "metadata": {{"seed": {"9" * MAX_INT_DIGITS}}}}}'
    assert tree_from_json(ok, return_metadata=True)[1]["seed"] == int("9" * MAX_INT_DIGITS)


@pytest.mark.parametrize("literal", ["1e999", "-1e999", "1" + "0" * 400 + ".0", "2e308", "1" + "0" * 250 + "e99",
                                     "1.5E+0400", "17976931348623159e292"])
def test_overflowing_float_literal_anywhere_is_a_named_error(literal):
    text = json.dumps(_doc())[:-1] + f', "metadata": {{"score": {literal}}}}}'
    _rejected(text, "too large for a float64")
    text = json.dumps(_doc())[:-1] + f', "metadata": [{{"a": [{{"b": [1, {literal}]}}]}}]}}'
    _rejected(text, "too large for a float64")
    text = json.dumps(_doc()).replace('"threshold": [0.5', f'"threshold": [{literal}')
    _rejected(text, "too large for a float64")


def test_overflow_lookalikes_in_strings_and_large_finite_literals_load():
    for meta in ({"note": "1e999"}, {"id": "7" * 400}, {"big": 1.7e308, "small": 1e-999}):
        text = json.dumps(_doc())[:-1] + f', "metadata": {json.dumps(meta)}}}'
        assert tree_from_json(text, return_metadata=True)[1] == json.loads(json.dumps(meta))


def test_loading_leaves_the_garbage_collector_as_it_was():
    import gc

    text = json.dumps(_doc())[:-1] + ', "metadata": [' + ",".join(['{"a": []}'] * 1000) + "]}"
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            gc.enable() if enabled else gc.disable()
            tree_from_json(text)
            assert gc.isenabled() is enabled
            _rejected(text[:-5], "not a JSON document")
            assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_counts_whose_sum_overflows_are_rejected():
    # each count is finite, but a node's counts sum to infinity: predict_proba rows of zeros
    d = _doc()
    d["nodes"]["value"][1] = [1e308, 1e308]
    _rejected(json.dumps(d), "value are too large .node 1.")
    d = _doc()
    d["nodes"]["value"] = [[1e308, 0.0], [1e308, 0.0], [0.0, 1e308]]
    _rejected(json.dumps(d), "value are too large")
    d = _doc()  # large but summable counts are fine, and give real probabilities
    d["nodes"]["value"] = [[1e307, 1e307], [1e307, 0.0], [0.0, 1e307]]
    p = tree_from_json(json.dumps(d)).predict_proba(np.array([[0.0], [1.0]]))
    np.testing.assert_allclose(p, [[1.0, 0.0], [0.0, 1.0]])


def test_loader_errors_are_value_errors():
    assert issubclass(TreeLearnValueError, ValueError)
    with pytest.raises(ValueError):
        tree_from_json("[" + "1" * 5000 + "]")


# ---------------------------------------------------------------------------------- files
def test_load_reads_a_model_file(tmp_path):
    path = tmp_path / "m.json"
    tree = _tree()
    path.write_text(tree_to_json(tree, metadata={"label": "y"}))
    assert Tree.load(path) == tree
    back, meta = load_tree_json(str(path), return_metadata=True)
    assert back == tree and meta == {"label": "y"}
    assert Tree.load(path, max_bytes=path.stat().st_size) == tree
    with pytest.raises(TreeLearnValueError, match="too large"):
        Tree.load(path, max_bytes=path.stat().st_size - 1)


def test_load_checks_the_size_before_reading(tmp_path):
    # a sparse 5 GB file: refused from its size, in no time and without reading it
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate(5 * 10**9)
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(TreeLearnValueError, match=r"too large \(5000000000 bytes"):
            Tree.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - t0 < 1.0 and peak < 2**20


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_load_bounds_what_it_reads_from_an_endless_file():
    # a device reports size 0: reading stops after max_bytes + 1 bytes
    with pytest.raises(TreeLearnValueError, match="too large"):
        load_tree_json("/dev/zero", max_bytes=4096)


def test_load_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        Tree.load(tmp_path / "missing.json")
    with pytest.raises(IsADirectoryError):
        Tree.load(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe not json")
    with pytest.raises(TreeLearnValueError, match="UTF-8"):
        Tree.load(bad)
    for max_bytes in (0, -1, 1.5, True, "10"):
        with pytest.raises(TreeLearnValueError, match="max_bytes"):
            Tree.load(bad, max_bytes=max_bytes)


# ------------------------------------------------------------------- amplifying documents
def _with_metadata(meta_text: str) -> str:
    return json.dumps(_doc())[:-1] + f', "metadata": {meta_text}}}'


def test_a_list_of_empty_objects_is_refused_before_it_is_parsed():
    # 246 MB of "{}, " once took 5 GB and ended in a bare MemoryError; the same at 1/64 scale
    # under a cap of its own size
    text = _with_metadata("[" + "{}, " * (1 << 20) + "{}]")
    msg = _rejected(text, "lists and objects", max_size=len(text))
    assert "one per 64 bytes" in msg


def test_a_list_of_small_integers_is_refused_before_it_is_parsed():
    # 248 MB of "1," once took 58 s (a Python hook per literal); the same at 1/64 scale
    text = _with_metadata("[" + "1," * (2 << 20) + "1]")
    _rejected(text, "values", max_size=len(text))


def test_a_model_as_written_always_fits_its_own_size_as_the_budget():
    # the budget counts separators: a model of tiny numbers is the densest the writer produces
    rng = np.random.default_rng(0)
    n = 2001
    left = np.full(n, -1)
    right = np.full(n, -1)
    left[: n // 2] = np.arange(1, n, 2)
    right[: n // 2] = np.arange(2, n + 1, 2)
    t = Tree(children_left=left, children_right=right, feature=np.where(left >= 0, 0, -2),
             threshold=np.where(left >= 0, 0.0, -2.0), kind=np.where(left >= 0, 0, -1),
             value=rng.integers(0, 2, size=(n, 2)).astype(float) + np.eye(2)[np.arange(n) % 2],
             classes=np.asarray([0, 1]), schema=ColumnSchema(categories=[None], feature_names=["x"]))
    for indent in (None, 0):
        text = t.to_json(indent=indent)
        assert Tree.from_json(text, max_size=len(text)) == t


def test_no_python_call_per_literal_when_pythons_own_digit_limit_holds():
    import sys

    from treelearn.tree.model_file import _int_hook

    if not hasattr(sys, "get_int_max_str_digits"):
        pytest.skip("Python < 3.11 has no digit limit of its own")
    assert _int_hook() is None
    old = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(0)  # lifted: the Python check comes back
        assert _int_hook() is not None
        test_integer_literal_over_the_digit_limit_is_a_named_error()
    finally:
        sys.set_int_max_str_digits(old)


def test_the_command_line_names_an_amplifying_model_in_one_line(tmp_path):
    from typer.testing import CliRunner

    import treelearn.cli as cli

    path = tmp_path / "amp.json"
    path.write_text(_with_metadata("[" + "{}," * (5 << 20) + "{}]"))  # 15 MB: over 256 MiB / 64 containers
    r = CliRunner().invoke(cli.app, ["show", str(path)])
    assert r.exit_code == 2 and "lists and objects" in r.output
    assert len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output
