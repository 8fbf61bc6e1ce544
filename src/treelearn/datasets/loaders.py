"""Loaders for the real datasets of a data directory (see its ``MANIFEST.md``).

Real data is never shipped with treelearn: every loader reads it from a *data directory* holding
the groups ``topk/``, ``uci/``, ``benchmark/``, ``dl85/``, ``quantbnb/``, ``contree/`` and
``regression/`` (the regression sets load ``y`` as float64; ``quantbnb/carbon-*`` has three
targets, ``y`` a DataFrame). Which one:

1. the ``data_dir`` argument;
2. else the environment variable ``TREELEARN_DATA_DIR``;
3. else ``../shared/datasets`` next to the repository (found from the package location, then
   from the current directory and its parents).

:func:`load_dataset` returns ``(X, y)``: ``X`` a pandas DataFrame with column names (from the
file's header, else ``x0, x1, ...``), categorical columns as pandas ``category`` dtype and numeric
columns as ``float64``; ``y`` a pandas Series of labels (integers when every label is an integral
number, else strings). Id columns are dropped. Missing values (``'?'`` in some Top-k files) are
kept as NaN: treelearn's estimators reject them with a clear error, so impute or drop them
(``dropna=True``) before fitting.

Column kinds: the Top-k paper treats every column of its *categorical* datasets as categorical
(one-hot), so those load with every feature as ``category`` (integer codes stay categories, in
numeric order). Elsewhere a column is numeric when all its values parse as numbers, categorical
otherwise. ``categorical=True``/``False`` overrides this per call.

Names look like ``"topk/car"``, ``"uci/wine"``, ``"dl85/anneal"``, ``"benchmark/bar-7"``; the
file's name also works (``"uci/sonar.all-data"``, ``"uci/spambase.data"``); the optimal-tree suite's split files are
``"quantbnb/bank-train"``, ``"quantbnb/bank-test"``, ``"contree/avila-train"``. scikit-learn's bundled
``"sklearn/iris"``, ``"sklearn/wine"`` and ``"sklearn/breast_cancer"`` need no data directory.
"""
from __future__ import annotations

import difflib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from treelearn._validation import TreeLearnValueError

__all__ = ["default_data_dir", "default_anchors_dir", "list_datasets", "load_dataset", "dataset_info",
           "load_binarized_anchor", "list_binarized_anchors", "load_anchor_source", "ANCHOR_SOURCES",
           "DatasetNotFoundError"]

ENV_VAR = "TREELEARN_DATA_DIR"


class DatasetNotFoundError(FileNotFoundError):
    """A dataset file (or the data directory) is missing; the message names the directory."""


@dataclass(frozen=True)
class DatasetSpec:
    """How to read one file of the data directory."""

    name: str               # "group/name"
    file: str               # path relative to the data directory
    sep: str = ","          # "," ";" or "ws" (any run of whitespace)
    header: bool = True     # the first (non-preamble) line holds column names
    label: int = -1         # column index of the label (negative: from the end)
    drop: tuple = ()        # id columns (indices) dropped from the features
    fmt: str = "csv"        # "csv", "arff", or "preamble" (UCI segmentation)
    skip: int = 0           # preamble lines (fmt="preamble")
    all_categorical: bool = False  # Top-k categorical set: every feature is a category
    aliases: tuple = field(default_factory=tuple)
    task: str = "classification"  # or "regression": y is float64
    n_targets: int = 1      # regression with several targets: the last n_targets columns (y a DataFrame)


def _specs() -> list[DatasetSpec]:
    s: list[DatasetSpec] = []
    # --- topk: comma, header, label last. The categorical set is one-hot encoded by Top-k.
    topk_cat = ["audiology", "balance-scale", "car", "hayes-roth", "hiv-1-protease", "kr-vs-kp",
                "letter-recognition", "molecular-biology-promoters", "molecular-biology-splice", "monks-1",
                "monks-2", "monks-3", "mushroom", "nursery", "primary-tumor", "soybean", "tic-tac-toe", "vote"]
    # topk categorical-set files whose values are numbers / binary / mixed: inferred per column
    topk_auto = ["breast-cancer", "led-display", "lymph", "rice", "spect", "wireless-indoor", "yeast",
                 "artificial-characters", "avila-test", "avila-train", "credit-card", "dry-bean",
                 "electrical-grid-stability", "ml-prove-test", "ml-prove-train", "occupancy-estimation",
                 "spambase", "telescope"]
    for n in topk_cat:
        s.append(DatasetSpec(f"topk/{n}", f"topk/{n}.csv", all_categorical=True))
    for n in topk_auto:
        s.append(DatasetSpec(f"topk/{n}", f"topk/{n}.csv"))
    # --- benchmark: binarised, header, label last (tic-tac-toe-binary: semicolons)
    for n in ["fico-1000", "fico-binary", "compas-binary", "monk-1-binary", "monk-2-binary", "monk-3-binary",
              "car-evaluation-binary", "balance-scale-binary", "bar-7"]:
        s.append(DatasetSpec(f"benchmark/{n}", f"benchmark/{n}.csv"))
    s.append(DatasetSpec("benchmark/tic-tac-toe-binary", "benchmark/tic-tac-toe-binary.csv", sep=";"))
    # --- dl85: space separated, no header, label = column 0 (compas.csv: comma, header, label last)
    for n in ["anneal", "audiology", "australian-credit", "breast-wisconsin", "diabetes", "german-credit",
              "heart-cleveland", "hepatitis", "hypothyroid", "ionosphere", "kr-vs-kp", "lymph", "mushroom",
              "pendigits", "primary-tumor", "segment", "soybean", "splice-1", "tic-tac-toe", "vehicle", "vote",
              "yeast", "zoo-1"]:
        s.append(DatasetSpec(f"dl85/{n}", f"dl85/{n}.txt", sep="ws", header=False, label=0))
    s.append(DatasetSpec("dl85/compas", "dl85/compas.csv"))
    # --- uci: formats differ per file (MANIFEST "format" column)
    U = DatasetSpec
    s += [
        U("uci/breast-cancer-wisconsin-diagnostic", "uci/wdbc.data", header=False, label=1, drop=(0,),
          aliases=("uci/wdbc",)),
        U("uci/cardiotocography-10", "uci/CTG.csv", label=21, drop=(22,), aliases=("uci/ctg",)),
        U("uci/climate-model-simulation-crashes", "uci/pop_failures.dat", sep="ws", drop=(0, 1),
          aliases=("uci/pop_failures",)),
        U("uci/connectionist-bench-sonar", "uci/sonar.all-data", header=False, aliases=("uci/sonar",)),
        U("uci/diabetic-retinopathy-debrecen", "uci/messidor_features.arff", fmt="arff",
          aliases=("uci/messidor_features", "uci/messidor")),
        U("uci/fertility", "uci/fertility_Diagnosis.txt", header=False),
        U("uci/haberman", "uci/haberman.data", header=False),
        U("uci/image-segmentation-train", "uci/segmentation.data", fmt="preamble", skip=5, label=0,
          aliases=("uci/segmentation",)),
        U("uci/image-segmentation-test", "uci/segmentation.test", fmt="preamble", skip=5, label=0),
        U("uci/ionosphere", "uci/ionosphere.data", header=False),
        U("uci/iris", "uci/iris.csv"),
        U("uci/parkinsons", "uci/parkinsons.data", label=17, drop=(0,)),
        U("uci/planning-relax", "uci/plrx.txt", sep="ws", header=False, aliases=("uci/plrx",)),
        U("uci/qsar-biodegradation", "uci/biodeg.csv", sep=";", header=False, aliases=("uci/biodeg",)),
        U("uci/seeds", "uci/seeds_dataset.txt", sep="ws", header=False),
        U("uci/spambase", "uci/spambase.data", header=False),
        U("uci/vertebral-column-3c", "uci/column_3C.dat", sep="ws", header=False, aliases=("uci/column_3c",)),
        U("uci/wall-following-robot-24", "uci/sensor_readings_24.data", header=False,
          aliases=("uci/sensor_readings_24",)),
        U("uci/wine", "uci/wine.data", header=False, label=0),
        U("uci/yeast", "uci/yeast.data", sep="ws", header=False, drop=(0,)),
    ]
    # --- quantbnb / contree: the optimal-tree suite (Quant-BnB, ConTree): header x0..,y, label last,
    # features min-max scaled; classification sets as train/test files, regression sets likewise
    for n in ["bank", "bidding", "fault", "htru", "magic", "occupancy", "page", "raisin", "rice", "room",
              "segment", "wilt"]:
        for part in ("train", "test"):
            s.append(DatasetSpec(f"quantbnb/{n}-{part}", f"quantbnb/class/{n}_{part}.csv"))
    for n in ["avila", "bean", "eeg"]:
        s.append(DatasetSpec(f"contree/{n}-train", f"contree/{n}_train.csv"))
    for n in ["carbon", "concrete", "fish", "grid", "qsar", "query1"]:
        for part in ("train", "test"):
            s.append(DatasetSpec(f"quantbnb/{n}-{part}", f"quantbnb/regress/{n}_{part}.csv", task="regression",
                                 n_targets=3 if n == "carbon" else 1))
    # --- regression/osrt-binarized: OSRT's 0/1 regression sets, target last
    for n in ["airfoil", "airquality", "enb-cool", "enb-heat", "insurance", "optical", "real-estate",
              "seoul-bike", "servo", "sync", "yacht"]:
        s.append(DatasetSpec(f"regression/{n}", f"regression/osrt-binarized/{n}.csv", task="regression"))
    return s


_SPECS = {spec.name: spec for spec in _specs()}
_SKLEARN = ("sklearn/breast_cancer", "sklearn/iris", "sklearn/wine")


def _alias_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for spec in _SPECS.values():
        group = spec.name.split("/")[0]
        stem = Path(spec.file).name
        for key in (spec.name, spec.file, f"{group}/{stem.rsplit('.', 1)[0]}", *spec.aliases):
            table.setdefault(key.lower(), spec.name)
    for key in _SKLEARN:
        table[key] = key
        table[key.replace("_", "-")] = key
    return table


_ALIASES = _alias_table()


# ---------------------------------------------------------------------- directories
def _repo_root_candidates() -> list[Path]:
    out = []
    here = Path(__file__).resolve()
    out.extend(here.parents)
    cwd = Path.cwd().resolve()
    out.append(cwd)
    out.extend(cwd.parents)
    return out


def _find_repo_root() -> Path | None:
    for p in _repo_root_candidates():
        if (p / "pyproject.toml").is_file() and (p / "src" / "treelearn").is_dir():
            return p
    return None


def default_data_dir() -> Path:
    """``$TREELEARN_DATA_DIR``, else ``../shared/datasets`` relative to the repository root.

    The root is found from the package's location (an editable install or a checkout), else from
    the current directory. The path is returned even when it does not exist; loaders then raise a
    :class:`DatasetNotFoundError` naming it.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    root = _find_repo_root()
    if root is not None:
        return root.parent / "shared" / "datasets"
    for p in _repo_root_candidates():  # no checkout found: the first ../shared/datasets that exists
        cand = p.parent / "shared" / "datasets"
        if cand.is_dir():
            return cand
    return Path.cwd().resolve().parent / "shared" / "datasets"


def default_anchors_dir(data_dir=None) -> Path:
    """The peer-timing anchors' binarized matrices: ``<data_dir>/../anchors/binarized``."""
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    return base.parent / "anchors" / "binarized"


def _resolve_dir(data_dir) -> Path:
    return Path(data_dir).expanduser() if data_dir is not None else default_data_dir()


# ---------------------------------------------------------------------- listing
def _canonical(name: str) -> str:
    if not isinstance(name, str):
        raise TreeLearnValueError(f"dataset name must be a string like 'topk/car', got {name!r}")
    key = name.strip().lower()
    if key in _ALIASES:
        return _ALIASES[key]
    close = difflib.get_close_matches(key, list(_ALIASES), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise TreeLearnValueError(
        f"unknown dataset {name!r}{hint} (names look like 'topk/car', 'uci/wine', 'dl85/anneal', "
        "'benchmark/bar-7', 'sklearn/iris'; see treelearn.datasets.list_datasets())"
    )


def list_datasets(data_dir=None, *, group: str | None = None, available_only: bool = True) -> list[str]:
    """Names of the datasets :func:`load_dataset` knows (sorted).

    With ``available_only`` (default) only those whose file exists in the data directory, plus
    the scikit-learn bundled ones. ``group`` restricts to one of topk, uci, benchmark, dl85, sklearn.
    """
    d = _resolve_dir(data_dir)
    names = []
    for name, spec in _SPECS.items():
        if not available_only or (d / spec.file).is_file():
            names.append(name)
    names.extend(_SKLEARN)
    if group is not None:
        names = [n for n in names if n.split("/")[0] == group.strip().lower()]
    return sorted(names)


def dataset_info(name: str) -> DatasetSpec:
    """The reading recipe of a dataset (file, separator, header, label and id columns)."""
    key = _canonical(name)
    if key in _SKLEARN:
        return DatasetSpec(key, "", fmt="sklearn")
    return _SPECS[key]


# ---------------------------------------------------------------------- parsing
def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    # CRLF, LF and old-Mac CR-only line ends all become "\n"
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _clean_token(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        s = s[1:-1].strip()
    return s


def _parse_table(spec: DatasetSpec, text: str) -> tuple[list[str] | None, pd.DataFrame]:
    """-> (header names or None, DataFrame of strings with integer column labels)."""
    names = None
    if spec.fmt == "arff":
        lines = text.split("\n")
        attrs, start = [], None
        for i, line in enumerate(lines):
            t = line.strip()
            low = t.lower()
            if low.startswith("@attribute"):
                parts = t.split(None, 2)
                attrs.append(_clean_token(parts[1]) if len(parts) > 1 else f"x{len(attrs)}")
            elif low.startswith("@data"):
                start = i + 1
                break
        if start is None:
            raise TreeLearnValueError(f"ARFF file {spec.file} has no @data section")
        body = "\n".join(ln for ln in lines[start:] if ln.strip() and not ln.lstrip().startswith("%"))
        names = attrs
        header = None
    elif spec.fmt == "preamble":
        lines = text.split("\n")
        pre = lines[: spec.skip]
        body = "\n".join(lines[spec.skip:])
        name_lines = [ln for ln in pre if ln.strip() and not ln.lstrip().startswith(";")]
        if name_lines:
            names = [_clean_token(t) for t in name_lines[-1].split(",")]
        header = None
    else:
        body = text
        header = 0 if spec.header else None
    sep = r"\s+" if spec.sep == "ws" else spec.sep
    # numbers are parsed by pandas' C reader; other columns stay strings and are cleaned later
    df = pd.read_csv(io.StringIO(body), sep=sep, header=header, keep_default_na=False, na_values=["?"],
                     skip_blank_lines=True, skipinitialspace=spec.sep != "ws", quotechar='"', engine="c")
    if header == 0:
        # names from the raw header line (pandas would rename duplicates 'a', 'a.1', ...)
        first = next((ln for ln in body.split("\n") if ln.strip()), "")
        raw_names = first.split() if spec.sep == "ws" else first.split(spec.sep)
        names = [_clean_token(t) for t in raw_names]
    # a trailing separator gives an empty last column: drop it
    while df.shape[1] > 1 and not pd.api.types.is_numeric_dtype(df.iloc[:, -1]) and (
            df.iloc[:, -1].astype(str).str.strip() == "").all():
        df = df.iloc[:, :-1]
        if names is not None and len(names) > df.shape[1]:
            names = names[: df.shape[1]]
    df.columns = range(df.shape[1])
    if spec.fmt == "preamble" and names is not None and len(names) == df.shape[1] - 1:
        # the attribute-name line names the features only; the label (column 0) is unnamed
        names = ["class"] + names
    if names is not None and len(names) != df.shape[1]:
        names = None
    return names, df


def _strip_column(col: pd.Series) -> pd.Series:
    """Strings stripped of blanks and quotes ('?' and '' stand for missing); numbers unchanged."""
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        return col.astype(np.float64)
    s = col.astype(str).str.strip()
    s = s.where(~col.isna(), "?")
    quoted = s.str.len().ge(2) & (
        (s.str.startswith("'") & s.str.endswith("'")) | (s.str.startswith('"') & s.str.endswith('"'))
    )
    if quoted.any():
        s = s.where(~quoted, s.str.slice(1, -1).str.strip())
    return s


def _to_numeric(s: pd.Series) -> pd.Series | None:
    """Strings -> float64 (missing '?' / '' -> NaN), or None when some value is not a number."""
    if pd.api.types.is_float_dtype(s):
        return s
    missing = s.isin(["?", ""])
    try:
        out = pd.to_numeric(s.where(~missing, None), errors="raise")
    except (ValueError, TypeError):
        return None
    return out.astype(np.float64)


def _label_series(s: pd.Series, name: str) -> pd.Series:
    num = _to_numeric(s)
    if num is not None and not num.isna().any():
        v = num.to_numpy()
        if np.all(v == np.round(v)) and np.all(np.abs(v) < 2**53):
            return pd.Series(v.astype(np.int64), name=name)
        return pd.Series(v, name=name)
    out = s.where(~s.isin(["?", ""]), None)
    return pd.Series(out.to_numpy(dtype=object), name=name, dtype=object)


def _feature_column(s: pd.Series, categorical: bool) -> pd.Series:
    num = _to_numeric(s)
    if categorical:
        missing = s.isin(["?", ""])
        if num is not None:  # integer codes etc.: categories in numeric order
            v = num.to_numpy()
            ok = ~np.isnan(v)
            integral = bool(np.all(v[ok] == np.round(v[ok])))
            vals = np.empty(v.size, dtype=object)
            vals[:] = None
            vals[ok] = v[ok].astype(np.int64).tolist() if integral else v[ok].tolist()
            cats = sorted(set(vals[ok].tolist()))
            return pd.Series(pd.Categorical(vals, categories=cats), index=s.index)
        vals = s.where(~missing, None)
        cats = sorted(set(vals.dropna().tolist()))
        return pd.Series(pd.Categorical(vals, categories=cats), index=s.index)
    if num is not None:
        return num
    vals = s.where(~s.isin(["?", ""]), None)
    cats = sorted(set(vals.dropna().tolist()))
    return pd.Series(pd.Categorical(vals, categories=cats), index=s.index)


def _load_sklearn(key: str):
    from sklearn import datasets as skd

    loader = {"sklearn/iris": skd.load_iris, "sklearn/wine": skd.load_wine,
              "sklearn/breast_cancer": skd.load_breast_cancer}[key]
    bunch = loader()
    X = pd.DataFrame(np.asarray(bunch.data, dtype=np.float64), columns=[str(c) for c in bunch.feature_names])
    y = pd.Series(np.asarray(bunch.target_names)[bunch.target].astype(object), name="class", dtype=object)
    return X, y


def load_dataset(name: str, data_dir=None, *, categorical: bool | None = None, dropna: bool = False,
                 missing_category: bool = False):
    """Load a dataset of the data directory as ``(X, y)`` (see the module docstring).

    Parameters
    ----------
    name : str
        ``"group/name"`` (e.g. ``"topk/car"``, ``"uci/wine"``, ``"dl85/anneal"``, ``"sklearn/iris"``).
    data_dir : path-like, optional
        The data directory (default :func:`default_data_dir`).
    categorical : bool, optional
        True: every feature column becomes ``category``; False: columns whose values are numbers
        become float64 (even in the Top-k categorical set); None: the dataset's default.
    dropna : bool
        Drop the rows with a missing value (default False: they are kept as NaN).
    missing_category : bool
        A missing value of a *categorical* column becomes the category ``"?"`` (what a one-hot
        encoding of the raw values does); applied before ``dropna``, which then drops only rows
        missing a numeric value or the label.

    Raises
    ------
    TreeLearnValueError
        Unknown name (with suggestions) or a file that cannot be parsed.
    DatasetNotFoundError
        The file is not in the data directory (the message names the directory).
    """
    key = _canonical(name)
    if key in _SKLEARN:
        return _load_sklearn(key)
    spec = _SPECS[key]
    d = _resolve_dir(data_dir)
    path = d / spec.file
    if not path.is_file():
        where = "does not exist" if not d.is_dir() else "does not contain it"
        raise DatasetNotFoundError(
            f"dataset {key!r}: file {spec.file} not found; the data directory {d} {where} "
            f"(pass data_dir=..., --data-dir, or set {ENV_VAR})"
        )
    try:
        names, df = _parse_table(spec, _read_text(path))
    except pd.errors.ParserError as exc:
        raise TreeLearnValueError(f"dataset {key!r}: could not parse {path}: {exc}") from None
    n_cols = df.shape[1]
    label = spec.label % n_cols
    targets = list(range(n_cols - spec.n_targets, n_cols)) if spec.n_targets > 1 else [label]
    drop = {c % n_cols for c in spec.drop}
    feat_idx = [j for j in range(n_cols) if j not in targets and j not in drop]
    if names is None or len(set(names[j] for j in feat_idx)) != len(feat_idx):
        feat_names = [f"x{i}" for i in range(len(feat_idx))]
    else:
        feat_names = [names[j] for j in feat_idx]
    label_name = names[label] if names is not None and names[label] and names.count(names[label]) == 1 else "class"
    all_cat = spec.all_categorical if categorical is None else bool(categorical)
    cols = {}
    for fname, j in zip(feat_names, feat_idx):
        cols[fname] = _feature_column(_strip_column(df[j]), all_cat)
    X = pd.DataFrame(cols)
    if spec.task == "regression":
        ys = {}
        for j in targets:
            v = _to_numeric(_strip_column(df[j]))
            if v is None:
                raise TreeLearnValueError(f"dataset {key!r}: the target column {j} is not numeric")
            ys[names[j] if names is not None else f"y{len(ys)}"] = v.astype(np.float64).reset_index(drop=True)
        y = pd.DataFrame(ys) if len(ys) > 1 else next(iter(ys.values())).rename(label_name)
    else:
        y = _label_series(_strip_column(df[label]), label_name)
    if missing_category:
        for c in X.columns:
            if isinstance(X[c].dtype, pd.CategoricalDtype) and X[c].isna().any():
                X[c] = X[c].cat.add_categories(["?"]).fillna("?")
    if dropna:
        y_missing = y.isna().to_numpy()
        keep = ~(X.isna().any(axis=1).to_numpy() | (y_missing.any(axis=1) if y_missing.ndim == 2 else y_missing))
        X = X.loc[keep].reset_index(drop=True)
        y = y.loc[keep].reset_index(drop=True)
        for c in X.columns:  # categories that no longer occur are dropped too
            if isinstance(X[c].dtype, pd.CategoricalDtype):
                X[c] = X[c].cat.remove_unused_categories()
    return X, y


# ---------------------------------------------------------------------- anchors
def list_binarized_anchors(anchors_dir=None) -> list[str]:
    """Names of the binarized matrices the peer timings were measured on (``car``, ``spambase``, ...)."""
    d = Path(anchors_dir) if anchors_dir is not None else default_anchors_dir()
    if not d.is_dir():
        return []
    return sorted(p.stem for p in d.glob("*.csv"))


def load_binarized_anchor(name: str, anchors_dir=None):
    """One of the anchors' binarized matrices: ``(B, y)`` with ``B`` uint8 0/1 ``(n, d)``, ``y`` int64.

    Format: comma separated, a header ``f0, ..., f{d-1}, class``, 0/1 features, integer labels
    0..C-1 (rows in the order the peers received them).
    """
    d = Path(anchors_dir) if anchors_dir is not None else default_anchors_dir()
    path = d / f"{name}.csv"
    if not path.is_file():
        raise DatasetNotFoundError(
            f"binarized anchor {name!r}: {path.name} not found in {d} "
            f"(available: {', '.join(list_binarized_anchors(d)) or 'none'})"
        )
    arr = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    B, y = arr[:, :-1], arr[:, -1]
    if B.size and not np.isin(B, (0, 1)).all():
        raise TreeLearnValueError(f"binarized anchor {name!r} has values other than 0/1")
    return np.ascontiguousarray(B, dtype=np.uint8), y.astype(np.int64)


# How each anchor matrix was made (../anchors/README.md), as (dataset, row order, Binarizer settings).
# Row orders: "topk-cat" = the Top-k categorical loader's np.random.seed(4); np.random.shuffle(arange(n));
# "topk-num" = its numerical loader's sklearn.utils.shuffle(frame, random_state=4); "file" = file order.
ANCHOR_SOURCES = {
    "car": ("topk/car", "topk-cat", {"full_one_hot": True}),
    "tic-tac-toe": ("topk/tic-tac-toe", "topk-cat", {"full_one_hot": True}),
    "monks-1": ("topk/monks-1", "topk-cat", {"full_one_hot": True}),
    "kr-vs-kp": ("topk/kr-vs-kp", "topk-cat", {"full_one_hot": True}),
    "nursery": ("topk/nursery", "topk-cat", {"full_one_hot": True}),
    "spambase": ("topk/spambase", "topk-num", {"max_binary_features": 200}),
    "fico-binary": ("benchmark/fico-1000", "file", {}),
    "fico-binary-17": ("benchmark/fico-binary", "file", {}),
}


def load_anchor_source(name: str, data_dir=None):
    """The raw data behind an anchor matrix, rows in the order the peers received them.

    Returns ``(X, y, binarizer_params)``: ``treelearn.Binarizer(**binarizer_params).fit_transform(X)``
    equals the matrix of :func:`load_binarized_anchor` (and ``y`` its labels, up to the codes
    0..C-1 of the sorted labels), so treelearn can be fitted on the raw data and compared with the
    peer timings of ``../anchors``.
    """
    if name not in ANCHOR_SOURCES:
        raise TreeLearnValueError(f"no anchor named {name!r}; known: {', '.join(sorted(ANCHOR_SOURCES))}")
    dataset, order, params = ANCHOR_SOURCES[name]
    X, y = load_dataset(dataset, data_dir)
    n = len(X)
    if order == "topk-cat":
        perm = np.arange(n)
        np.random.RandomState(4).shuffle(perm)  # the legacy global-seed shuffle, reproduced exactly
    elif order == "topk-num":
        from sklearn.utils import shuffle

        perm = shuffle(np.arange(n), random_state=4)
    else:
        perm = np.arange(n)
    return X.iloc[perm].reset_index(drop=True), y.iloc[perm].reset_index(drop=True), dict(params)
