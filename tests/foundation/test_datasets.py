"""Dataset loaders: every MANIFEST file loads with the MANIFEST's rows, columns, classes, class
counts and missing-value counts; clear errors for unknown names and missing files."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from treelearn import TreeLearnValueError
from treelearn.datasets import default_data_dir, list_datasets, load_dataset
from treelearn.datasets.loaders import (
    DatasetNotFoundError,
    _SPECS,
    dataset_info,
    default_anchors_dir,
    list_binarized_anchors,
    load_binarized_anchor,
)


# ---------------------------------------------------------------------- MANIFEST parsing
def _manifest(data_dir: Path):
    path = data_dir / "MANIFEST.md"
    if not path.is_file():
        pytest.skip(f"no MANIFEST.md in {data_dir}")
    text = path.read_text()
    rows, rows_dist = {}, {}
    for line in text.splitlines():
        if not line.startswith("| ") or "`" not in line:
            continue
        parts = [p.strip() for p in line.split("|")]
        file = parts[3].strip("`")
        if parts[6] in ("class", "regress"):  # the round-3 table: features, task, classes or target range
            n_targets = len(re.findall(r"\[", parts[7])) if parts[6] == "regress" else 1
            classes = re.match(r"(\d+) classes", parts[7])
            rows[file] = dict(rows=int(parts[4]), cols=int(parts[5]) + n_targets, missing=int(parts[8]),
                              classes=int(classes.group(1)) if classes else None, targets=n_targets,
                              ranges=[tuple(map(float, r)) for r in re.findall(r"\[([-\d.e]+), ([-\d.e]+)\]", parts[7])])
            if classes:
                rows_dist[file] = dict(re.findall(r"(\S+):(\d+)", parts[7].split("(", 1)[1]))
            continue
        missing = re.search(r"(\d+) missing", parts[7])
        rows[file] = dict(rows=int(parts[4]), cols=int(parts[5]), classes=int(parts[8]),
                          missing=int(missing.group(1)) if missing else 0)
    dists = {}
    for line in text.splitlines():
        m = re.match(r"- `([^`]+)` — (.*)", line)
        if not m:
            continue
        body = m.group(2)
        body = body.split("largest", 1)[1] if "largest" in body else body
        counts = {}
        for item in body.split(","):
            k, _, v = item.strip().rpartition(":")
            counts[k.strip()] = int(v)
        dists[m.group(1)] = counts
    for file, counts in rows_dist.items():
        dists[file] = {k: int(v) for k, v in counts.items()}
    return rows, dists


def _same_label(a, b: str) -> bool:
    if str(a) == b:
        return True
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def test_registry_covers_every_manifest_file(data_dir):
    rows, _ = _manifest(data_dir)
    files = {spec.file for spec in _SPECS.values()}
    assert files == set(rows), (set(rows) - files, files - set(rows))


@pytest.mark.parametrize("name", sorted(_SPECS))
def test_every_dataset_matches_manifest(data_dir, name):
    rows, dists = _manifest(data_dir)
    spec = _SPECS[name]
    expect = rows[spec.file]
    X, y = load_dataset(name, data_dir)
    assert isinstance(X, pd.DataFrame)
    assert X.shape[0] == expect["rows"] == y.shape[0]
    # features + label(s) + dropped id columns = the file's columns
    assert X.shape[1] + spec.n_targets + len(spec.drop) == expect["cols"]
    if spec.task == "regression":
        assert spec.n_targets == expect["targets"]
        Y = y.to_frame() if isinstance(y, pd.Series) else y
        assert Y.shape[1] == spec.n_targets and all(Y.dtypes == np.float64)
        for j, (lo, hi) in enumerate(expect["ranges"]):  # the MANIFEST's target range (6 digits)
            assert Y.iloc[:, j].min() == pytest.approx(lo, rel=1e-5) and Y.iloc[:, j].max() == pytest.approx(hi, rel=1e-5)
        assert int(X.isna().sum().sum()) == expect["missing"]
        return
    assert isinstance(y, pd.Series)
    assert y.nunique() == expect["classes"]
    assert int(X.isna().sum().sum()) == expect["missing"]
    assert not y.isna().any()
    counts = y.value_counts()
    for label, n in dists.get(spec.file, {}).items():
        match = [k for k in counts.index if _same_label(k, label)]
        assert len(match) == 1, (label, list(counts.index)[:10])
        assert counts[match[0]] == n
    for c in X.columns:
        dt = X[c].dtype
        assert isinstance(dt, pd.CategoricalDtype) or dt == np.float64, (c, dt)
    assert X.columns.is_unique
    if spec.all_categorical:
        assert all(isinstance(dt, pd.CategoricalDtype) for dt in X.dtypes)


def test_formats_details(data_dir):
    # quoted values are unquoted, soybean's blanks stripped, categories of integer codes sorted numerically
    X, y = load_dataset("topk/kr-vs-kp", data_dir)
    assert set(y.unique()) == {"won", "nowin"}
    assert set(X["bkblk"].cat.categories) == {"f", "t"}
    X, _ = load_dataset("topk/soybean", data_dir)
    assert X.iloc[0, 0] == "october"
    X, y = load_dataset("topk/letter-recognition", data_dir)
    assert list(X.columns[:3]) == ["xbox", "ybox", "width"]
    assert list(X["xbox"].cat.categories) == sorted(X["xbox"].cat.categories)
    assert y.iloc[0] == "T"
    # id columns dropped, label taken from the right column
    X, y = load_dataset("uci/parkinsons", data_dir)
    assert "name" not in X.columns and "status" not in X.columns and y.name == "status"
    X, y = load_dataset("uci/cardiotocography-10", data_dir)
    assert "NSP" not in X.columns and y.name == "CLASS"
    X, y = load_dataset("uci/wine", data_dir)
    assert sorted(y.unique()) == [1, 2, 3] and X.iloc[0, 0] == pytest.approx(14.23)
    X, y = load_dataset("uci/image-segmentation-train", data_dir)
    assert X.columns[0] == "REGION-CENTROID-COL" and y.iloc[0] == "BRICKFACE"
    X, y = load_dataset("uci/breast-cancer-wisconsin-diagnostic", data_dir)
    assert X.iloc[0, 0] == pytest.approx(17.99) and y.iloc[0] == "M"
    X, y = load_dataset("dl85/anneal", data_dir)
    assert set(np.unique(X.to_numpy())) <= {0.0, 1.0}
    # duplicate header names give x0.. names
    X, _ = load_dataset("topk/avila-train", data_dir)
    assert list(X.columns) == [f"x{i}" for i in range(10)]


def test_aliases_categorical_override_and_dropna(data_dir):
    a, ya = load_dataset("uci/sonar", data_dir)
    b, yb = load_dataset("uci/connectionist-bench-sonar", data_dir)
    pd.testing.assert_frame_equal(a, b)
    c, _ = load_dataset("uci/sonar.all-data", data_dir)
    pd.testing.assert_frame_equal(a, c)
    X, _ = load_dataset("topk/balance-scale", data_dir, categorical=False)
    assert all(dt == np.float64 for dt in X.dtypes)
    X, _ = load_dataset("uci/iris", data_dir, categorical=True)
    assert all(isinstance(dt, pd.CategoricalDtype) for dt in X.dtypes)
    X, y = load_dataset("topk/vote", data_dir, dropna=True)
    assert not X.isna().any().any() and len(X) == len(y) < 435
    # a missing categorical value as its own category "?": every row kept, the rest unchanged
    raw, _ = load_dataset("topk/vote", data_dir)
    Xm, ym = load_dataset("topk/vote", data_dir, dropna=True, missing_category=True)
    assert len(Xm) == len(ym) == 435 and not Xm.isna().any().any()
    for c in Xm.columns:
        was = raw[c].isna().to_numpy()
        assert np.array_equal(Xm[c].astype(object).to_numpy()[was], np.full(was.sum(), "?", dtype=object))
        assert np.array_equal(Xm[c].astype(object).to_numpy()[~was], raw[c].astype(object).to_numpy()[~was])


def test_loaded_data_fits_through_the_data_layer(data_dir):
    from treelearn import Binarizer

    X, y = load_dataset("topk/car", data_dir)
    B = Binarizer().fit(X)
    assert B.n_binary_features_ == sum(len(X[c].cat.categories) for c in X.columns)  # no two-valued column
    Xb = B.transform(X)
    assert np.all(Xb.sum(axis=1) == X.shape[1])  # one-hot: one condition per column holds
    X, y = load_dataset("topk/vote", data_dir)
    B = Binarizer().fit(X)  # '?' is missing: "is missing" features (see test_missing_values_binary_learners.py)
    assert sum(n.endswith(" is missing") and " or " not in n for n in B.get_feature_names_out()) == int(
        X.isna().any().sum())


def test_sklearn_bundled():
    X, y = load_dataset("sklearn/iris")
    assert X.shape == (150, 4) and y.value_counts().to_dict() == {"setosa": 50, "versicolor": 50, "virginica": 50}
    X, y = load_dataset("sklearn/breast_cancer")
    assert X.shape == (569, 30) and set(y) == {"malignant", "benign"}
    X, y = load_dataset("sklearn/wine")
    assert X.shape == (178, 13) and y.nunique() == 3


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(TreeLearnValueError, match="did you mean 'topk/car'"):
        load_dataset("topk/carr", tmp_path)
    with pytest.raises(TreeLearnValueError, match="unknown dataset"):
        load_dataset("nothing/here", tmp_path)
    with pytest.raises(TreeLearnValueError, match="string"):
        load_dataset(3, tmp_path)
    with pytest.raises(DatasetNotFoundError, match=re.escape(str(tmp_path))) as e:
        load_dataset("uci/wine", tmp_path)
    assert "does not contain it" in str(e.value)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_dataset("uci/wine", tmp_path / "absent")


def test_small_files_of_each_format(tmp_path):
    # hand-written files in the MANIFEST's formats, read back exactly
    (tmp_path / "uci").mkdir()
    (tmp_path / "uci" / "plrx.txt").write_bytes(b" 1.5e+000\t-2.0\t 1.0000000e+000\t\r\n 3.0\t 4.0\t 2.0\t\r\n")
    X, y = load_dataset("uci/planning-relax", tmp_path)
    assert X.to_numpy().tolist() == [[1.5, -2.0], [3.0, 4.0]] and y.tolist() == [1, 2]
    (tmp_path / "uci" / "haberman.data").write_bytes(b"30,64,1,1\r31,65,4,2\r")  # old-Mac CR line ends
    X, y = load_dataset("uci/haberman", tmp_path)
    assert list(X.columns) == ["x0", "x1", "x2"] and X.shape == (2, 3) and y.tolist() == [1, 2]
    (tmp_path / "uci" / "messidor_features.arff").write_text(
        "@relation r\n\n@attribute 'a' numeric\n@attribute b numeric\n@attribute c {0,1}\n\n@data\n1,2,0\n3,4,1")
    X, y = load_dataset("uci/diabetic-retinopathy-debrecen", tmp_path)
    assert list(X.columns) == ["a", "b"] and y.tolist() == [0, 1]
    (tmp_path / "topk").mkdir()
    (tmp_path / "topk" / "vote.csv").write_text('"v1","v2","Class"\n\'y\',\'?\',\'dem\'\n\n\'n\',\'y\',\'rep\'\n')
    X, y = load_dataset("topk/vote", tmp_path)
    assert X.shape == (2, 2) and X["v2"].isna().tolist() == [True, False] and y.tolist() == ["dem", "rep"]
    assert list(X["v1"].cat.categories) == ["n", "y"]


def test_default_data_dir_and_listing(monkeypatch, tmp_path):
    monkeypatch.setenv("TREELEARN_DATA_DIR", str(tmp_path))
    assert default_data_dir() == tmp_path
    assert list_datasets() == ["sklearn/breast_cancer", "sklearn/iris", "sklearn/wine"]
    (tmp_path / "uci").mkdir()
    (tmp_path / "uci" / "wine.data").write_text("1,2.0,3.0\n2,4.0,5.0\n")
    assert "uci/wine" in list_datasets()
    assert list_datasets(group="uci") == ["uci/wine"]
    assert len(list_datasets(available_only=False)) == len(_SPECS) + 3
    X, y = load_dataset("uci/wine")  # from the environment variable
    assert X.shape == (2, 2)
    monkeypatch.delenv("TREELEARN_DATA_DIR")
    repo = Path(__file__).resolve().parents[2]
    assert default_data_dir() == repo.parent / "shared" / "datasets"
    assert dataset_info("uci/sonar").file == "uci/sonar.all-data"


def test_binarized_anchor_reader(tmp_path):
    (tmp_path / "toy.csv").write_text("f0,f1,class\n1,0,1\n0,1,0\n")
    B, y = load_binarized_anchor("toy", tmp_path)
    assert B.dtype == np.uint8 and B.tolist() == [[1, 0], [0, 1]] and y.tolist() == [1, 0]
    assert list_binarized_anchors(tmp_path) == ["toy"]
    with pytest.raises(DatasetNotFoundError, match="available: toy"):
        load_binarized_anchor("nope", tmp_path)
    (tmp_path / "bad.csv").write_text("f0,class\n2,1\n")
    with pytest.raises(TreeLearnValueError, match="0/1"):
        load_binarized_anchor("bad", tmp_path)


def test_real_binarized_anchors(data_dir):
    d = default_anchors_dir(data_dir)
    if not d.is_dir():
        pytest.skip(f"no anchors at {d}")
    B, y = load_binarized_anchor("car", d)
    assert B.shape == (1728, 21) and np.bincount(y).tolist() == [384, 69, 1210, 65]
    assert np.all(B.sum(axis=1) == 6)  # full one-hot of 6 columns


def test_anchor_source_unknown_name():
    from treelearn.datasets.loaders import ANCHOR_SOURCES, load_anchor_source

    with pytest.raises(TreeLearnValueError, match="no anchor named 'zzz'; known: car"):
        load_anchor_source("zzz")
    assert set(ANCHOR_SOURCES) >= {"car", "spambase", "fico-binary"}
