"""A tree as an ONNX model (the ``onnx`` package's helpers; ``pip install treelearn[export]``)
that predicts exactly as ``Tree.predict`` / ``predict_proba`` in any ONNX runtime.

Inputs: ``X`` (double, ``[N, n_numeric]``): the numeric columns in their order, NaN for a
missing value; and, when the tree has categorical columns, ``X_cat`` (string, ``[N,
n_categorical]``): the categorical columns in their order, each value as its text (``str(v)``),
the empty string for a missing value. The model's metadata ``numeric_columns`` and
``categorical_columns`` name them.

Graph: each categorical column's text becomes its category code by a ``LabelEncoder``
(``ai.onnx.ml``; a text not seen in training gives -1, the empty string NaN), the columns are
concatenated to doubles, and one ``TreeEnsembleRegressor`` (``ai.onnx.ml`` opset 3, double
thresholds ``nodes_values_as_tensor``: the tree's float64 comparisons exactly) routes each row:
``BRANCH_GTE`` (``x >= t`` is the true, right branch) or ``BRANCH_EQ`` on a category code, a
missing value the way ``nodes_missing_value_tracks_true`` says. Its output is the leaf's node id,
which ``Gather`` turns into the outputs ``label`` (``[N]``) and ``probabilities``
(``[N, n_classes]``), the tree's own values: no tie rule of a runtime can differ.
"""
from __future__ import annotations

import json

import numpy as np

from treelearn._validation import TreeLearnValueError
from treelearn.tree._nodes import CATEGORICAL

__all__ = ["to_onnx", "ML_OPSET", "OPSET"]

ML_OPSET = 3
OPSET = 17


def _text(v) -> str:
    if hasattr(v, "item") and not isinstance(v, str):
        v = v.item()
    return str(v)


def _label_tensor(labels, name: str):
    """Class labels as an ONNX tensor: int64, double or bool when they all are, else text."""
    from onnx import numpy_helper

    vals = [c.item() if hasattr(c, "item") else c for c in labels.tolist()]
    if all(isinstance(v, bool) for v in vals):
        arr = np.array(vals, dtype=bool)
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        arr = np.array(vals, dtype=np.int64)
    elif all(isinstance(v, float) for v in vals):
        arr = np.array(vals, dtype=np.float64)
    else:
        arr = np.array([_text(v) for v in vals], dtype=object)
    return numpy_helper.from_array(arr, name=name)


def _encoders(tree, cat_cols):
    """One LabelEncoder per categorical column (text -> category code), their nodes and outputs."""
    from onnx import helper

    nodes, outputs = [], []
    for pos, j in enumerate(cat_cols):
        cats = [_text(v) for v in tree.schema.categories[j].tolist()]
        if len(set(cats)) != len(cats):
            raise TreeLearnValueError(f"column {tree.schema.column_name(j)!r} has categories with the same text; "
                                      "ONNX receives categories as text")
        if "" in cats:
            raise TreeLearnValueError(f"column {tree.schema.column_name(j)!r} has the empty string as a category; "
                                      "ONNX input uses it for a missing value")
        for c in cats:
            try:
                c.encode("utf-8")
            except UnicodeEncodeError:
                raise TreeLearnValueError(f"a category is not valid Unicode text: {c!r}") from None
        col = f"cat_{pos}"
        nodes.append(helper.make_node("Slice", ["X_cat", f"start_{pos}", f"end_{pos}", "axis_1"], [col]))
        nodes.append(helper.make_node("LabelEncoder", [col], [f"code_{pos}"], domain="ai.onnx.ml",
                                      keys_strings=cats + [""],
                                      values_floats=[float(i) for i in range(len(cats))] + [float("nan")],
                                      default_float=-1.0))
        nodes.append(helper.make_node("Cast", [f"code_{pos}"], [f"coded_{pos}"], to=11))  # DOUBLE
        outputs.append(f"coded_{pos}")
    return nodes, outputs


def _ensemble(tree, position):
    """The TreeEnsembleRegressor whose output is the node id of the leaf a row reaches."""
    from onnx import helper, numpy_helper

    n = tree.node_count
    leaf = tree.children_left < 0
    modes, feats, values, true_ids, false_ids, tracks = [], [], [], [], [], []
    for i in range(n):
        if leaf[i]:
            modes.append("LEAF"), feats.append(0), values.append(0.0), true_ids.append(0), false_ids.append(0)
            tracks.append(0)
            continue
        cat = tree.kind[i] == CATEGORICAL
        modes.append("BRANCH_EQ" if cat else "BRANCH_GTE")
        feats.append(position[int(tree.feature[i])])
        values.append(float(tree.threshold[i]))  # the threshold, or the category's code
        true_ids.append(int(tree.children_right[i]))
        false_ids.append(int(tree.children_left[i]))
        tracks.append(0 if tree.missing_go_to_left[i] else 1)
    leaves = np.flatnonzero(leaf)
    return helper.make_node(
        "TreeEnsembleRegressor", ["features"], ["leaf_id"], domain="ai.onnx.ml", n_targets=1,
        aggregate_function="SUM", post_transform="NONE",
        nodes_treeids=[0] * n, nodes_nodeids=list(range(n)), nodes_featureids=feats, nodes_modes=modes,
        nodes_values_as_tensor=numpy_helper.from_array(np.array(values, dtype=np.float64)),
        nodes_truenodeids=true_ids, nodes_falsenodeids=false_ids, nodes_missing_value_tracks_true=tracks,
        target_treeids=[0] * leaves.size, target_nodeids=leaves.tolist(), target_ids=[0] * leaves.size,
        target_weights_as_tensor=numpy_helper.from_array(leaves.astype(np.float64)))


def to_onnx(tree, *, name: str = "predict"):
    """The ``onnx.ModelProto`` of a :class:`~treelearn.tree.Tree` (module docstring)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    cats = tree.schema.categories
    num_cols = [j for j in range(tree.n_features) if cats[j] is None]
    cat_cols = [j for j in range(tree.n_features) if cats[j] is not None]
    # the columns of the tree's input: the numeric ones, then the categorical codes
    position = {j: p for p, j in enumerate(num_cols + cat_cols)}
    inits = []
    inputs = [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [None, len(num_cols)])]
    enc_nodes, coded = _encoders(tree, cat_cols)
    if cat_cols:
        inits.append(numpy_helper.from_array(np.array([1], dtype=np.int64), "axis_1"))
        inputs.append(helper.make_tensor_value_info("X_cat", TensorProto.STRING, [None, len(cat_cols)]))
        for pos in range(len(cat_cols)):
            inits += [numpy_helper.from_array(np.array([pos], dtype=np.int64), f"start_{pos}"),
                      numpy_helper.from_array(np.array([pos + 1], dtype=np.int64), f"end_{pos}")]
    v = tree.value
    tot = v.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        proba = np.where(tot > 0, v / np.where(tot > 0, tot, 1), 1.0 / v.shape[1])
    labels = _label_tensor(tree.classes[tree.leaf_class_index()], "label_table")  # per node: its class
    inits += [labels, numpy_helper.from_array(proba.astype(np.float64), "proba_table"),
              numpy_helper.from_array(np.array([-1], dtype=np.int64), "flat")]
    nodes = enc_nodes + [
        helper.make_node("Concat", ["X", *coded], ["features"], axis=1) if coded else
        helper.make_node("Identity", ["X"], ["features"]),
        _ensemble(tree, position),
        helper.make_node("Cast", ["leaf_id"], ["leaf_int"], to=7),  # INT64
        helper.make_node("Reshape", ["leaf_int", "flat"], ["leaf"]),
        helper.make_node("Gather", ["label_table", "leaf"], ["label"], axis=0),
        helper.make_node("Gather", ["proba_table", "leaf"], ["probabilities"], axis=0),
    ]
    outputs = [helper.make_tensor_value_info("label", labels.data_type, [None]),
               helper.make_tensor_value_info("probabilities", TensorProto.DOUBLE, [None, tree.n_classes])]
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, producer_name="treelearn",
                              opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("ai.onnx.ml", ML_OPSET)])
    model.ir_version = 8
    names = tree.schema
    helper.set_model_props(model, {  # JSON lists (ASCII: any name is safe there)
        "numeric_columns": json.dumps([names.column_name(j) for j in num_cols]),
        "categorical_columns": json.dumps([names.column_name(j) for j in cat_cols]),
        "classes": json.dumps([_text(c) for c in tree.classes.tolist()]),
    })
    onnx.checker.check_model(model)
    return model
