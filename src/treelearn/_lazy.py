"""Lazy package facades (PEP 562): a package ``__init__`` lists the public names of its modules,
and a module is imported the first time one of its names is used.

Why: ``import treelearn`` (and everything below it, e.g. ``treelearn.cli``) must not pay for
scikit-learn, SciPy, pandas or matplotlib before a name that needs them is used; ``treelearn
--help`` and ``treelearn show`` start in a fraction of a second. ``from treelearn import X``,
``treelearn.X`` and ``dir(treelearn)`` work as with eager imports.
"""
from __future__ import annotations

import importlib
import sys
from typing import Iterable, Mapping


def lazy_exports(package: str, exports: Mapping[str, Iterable[str]], *, submodules: Iterable[str] = ()):
    """``(__getattr__, __dir__, __all__)`` for the package ``package`` re-exporting, for each
    module of ``exports``, the names listed with it; ``submodules`` are subpackages reachable as
    attributes (``treelearn.tree``) before anything imported them."""
    index = {name: module for module, names in exports.items() for name in names}
    public = sorted(index)
    subs = set(submodules)

    def __getattr__(name: str):
        if name in subs:
            return importlib.import_module(f"{package}.{name}")
        module = index.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later look-ups bypass __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(public) | subs)

    return __getattr__, __dir__, public
