"""The fuzz suite's worker process: runs one risky call at a time (a fit, a model load, a CLI
command) and sends back a plain summary, so that a segfault, an abort or a hang in compiled code
kills the worker, not the test session (see ``fuzz_harness.Worker``)."""
from __future__ import annotations

import io
import os
import sys
import tempfile
import traceback
import warnings
from contextlib import redirect_stderr, redirect_stdout


def _origin(exc: BaseException) -> str:
    """The file (relative to its package) of the innermost frame that raised ``exc``."""
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return "?"
    fn = tb[-1].filename.replace(os.sep, "/")
    for root in ("/treelearn/", "/sklearn/", "/numpy/", "/pandas/", "/typer/", "/click/"):
        if root in fn:
            return root.strip("/") + "/" + fn.split(root, 1)[1]
    return fn.rsplit("/", 1)[-1]


def _error(exc: BaseException) -> dict:
    t = type(exc)
    return {
        "status": "error",
        "type": f"{t.__module__}.{t.__qualname__}",
        "bases": [f"{b.__module__}.{b.__qualname__}" for b in t.__mro__],
        "message": str(exc)[:2000],
        "origin": _origin(exc),
        "traceback": "".join(traceback.format_exception(t, exc, exc.__traceback__))[-4000:],
    }


def _summary(est, X_test):
    import numpy as np

    pred = est.predict(X_test)
    proba = est.predict_proba(X_test)
    tree = est.tree_
    attrs = sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("_"))
    return {
        "status": "ok",
        "pred": np.asarray(pred),
        "proba": np.asarray(proba),
        "classes": np.asarray(est.classes_),
        "n_leaves": int(tree.n_leaves),
        "depth": int(tree.depth),
        "rank": int(tree.rank),
        "attrs": attrs,
        "tree_json": tree.to_json(),
        "values": {k: getattr(est, k) for k in ("timed_out_", "is_optimal_", "training_error_", "lower_bound_")
                   if isinstance(getattr(est, k, None), (bool, float, int))},
    }


def do_fit(cls_name: str, params: dict, X, y, w, X_test):
    import treelearn

    cls = getattr(treelearn, cls_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(**params)
        est.fit(X, y, sample_weight=w)
        return _summary(est, X_test)


def do_reference_fit(X, y, w, max_depth):
    """scikit-learn's CART tree: its weighted training misclassifications and its rank."""
    import numpy as np
    from sklearn.tree import DecisionTreeClassifier

    from treelearn.tree.export import from_sklearn

    sk = DecisionTreeClassifier(max_depth=max_depth, random_state=0).fit(X, y, sample_weight=w)
    pred = sk.predict(X)
    ww = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    return {"status": "ok", "error": float(np.sum(ww * (pred != np.asarray(y)))),
            "rank": int(from_sklearn(sk).rank)}


def do_json(text, X_test):
    import numpy as np

    from treelearn.tree.export import tree_from_json

    tree = tree_from_json(text)
    out = {"status": "ok", "n_leaves": int(tree.n_leaves)}
    if X_test is not None and X_test.shape[1] == tree.n_features:
        p = tree.predict_proba(X_test)
        out["proba"] = np.asarray(p)
        out["pred"] = np.asarray(tree.predict(X_test))
        out["classes"] = np.asarray(tree.classes)
    return out


def do_cli(commands: list, files: dict):
    """Write ``files`` (name -> bytes) into a fresh directory and run the ``treelearn`` commands
    (argument lists; ``{dir}`` stands for the directory) there in turn, until one fails."""
    from treelearn import cli

    runs = []
    with tempfile.TemporaryDirectory() as d:
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        for argv in commands:
            args = [a.replace("{dir}", d) for a in argv]
            out, err = io.StringIO(), io.StringIO()
            with redirect_stdout(out), redirect_stderr(err), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    code = cli.main(args)
                except SystemExit as exc:  # pragma: no cover - main returns its code
                    code = exc.code
            runs.append({"argv": argv, "code": code, "stdout": out.getvalue()[-4000:],
                         "stderr": err.getvalue()[-4000:]})
            if code != 0:
                break
    return {"status": "ok", "runs": runs}


def do_json_capped(text, max_size: int):
    """Load a JSON model under a byte cap of ``max_size``: the tree's size, the seconds it took."""
    import time

    from treelearn.tree import Tree

    t0 = time.perf_counter()
    tree = Tree.from_json(text, max_size=max_size)
    return {"status": "ok", "n_leaves": int(tree.n_leaves), "seconds": time.perf_counter() - t0}


def do_timed_fit(cls_name: str, params: dict, X, y):
    """A fit's wall time (a limit's overshoot is measured here, not across the pipe)."""
    import time

    import treelearn

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = getattr(treelearn, cls_name)(**params)
        t0 = time.perf_counter()
        est.fit(X, y)
        return {"status": "ok", "seconds": time.perf_counter() - t0, "n_leaves": int(est.tree_.n_leaves)}


def do_sigint_thread(cls_name: str, params: dict, X, y, delay: float):
    """A fit in a worker thread, SIGINT to this process ``delay`` seconds in: the seconds from the
    signal until the thread's fit ended, and how it ended."""
    import signal
    import threading
    import time

    import treelearn

    # A process started as a background job inherits SIGINT ignored, and the library leaves an
    # ignored SIGINT ignored (the user's choice): Python's handler first, as a terminal gives it.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    est = getattr(treelearn, cls_name)(**params)
    done = {}
    entered = threading.Event()

    def run():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                entered.set()
                est.fit(X, y)
            done["how"] = "fitted"
        except KeyboardInterrupt:
            done["how"] = "interrupted"
        except BaseException as exc:  # noqa: BLE001 - reported
            done["how"] = f"{type(exc).__name__}: {exc}"[:300]
        done["end"] = time.perf_counter()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    # the delay counts from the call of fit: a signal before the fit began is the caller's (the
    # main thread's KeyboardInterrupt), not the fit's to see
    entered.wait(60)
    sent = None
    try:
        t_stop = time.perf_counter() + delay
        while th.is_alive() and time.perf_counter() < t_stop:
            time.sleep(0.005)
        sent = time.perf_counter()
        if th.is_alive():
            os.kill(os.getpid(), signal.SIGINT)
        while th.is_alive():
            time.sleep(0.005)
    except KeyboardInterrupt:
        pass
    th.join(120)
    if th.is_alive():
        return {"status": "ok", "how": "still running after 120 s", "latency": float("inf")}
    latency = max(0.0, done["end"] - sent) if sent is not None and done["end"] > sent else 0.0
    return {"status": "ok", "how": done["how"], "latency": latency}


TASKS = {"fit": do_fit, "reference": do_reference_fit, "json": do_json, "cli": do_cli, "json_capped": do_json_capped,
         "timed_fit": do_timed_fit, "sigint_thread": do_sigint_thread}


def serve(conn, memory_limit_bytes: int | None) -> None:
    """Answer requests ``(task, args)`` on ``conn`` until it closes."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if memory_limit_bytes:
        try:
            import resource

            # on top of what the (possibly forked) process already maps
            try:
                with open("/proc/self/statm") as f:
                    mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, ValueError):
                mapped = 0
            limit = mapped + memory_limit_bytes
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):  # pragma: no cover - not on this platform
            pass
    import treelearn  # noqa: F401  (import once, before the first request)

    while True:
        try:
            task, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            result = TASKS[task](*args)
        except MemoryError as exc:
            result = _error(exc)
            result["memory"] = True
        except BaseException as exc:  # noqa: BLE001 - everything is reported to the parent
            result = _error(exc)
        try:
            conn.send(result)
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable result
            conn.send(_error(exc))
        sys.stdout.flush()
