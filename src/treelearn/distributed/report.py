"""What the last Dask fit measured, for benchmarks and tests: the plug-ins publish, users read.

Three records, each replaced by the next fit that makes it: ``"levels"`` (per level or split of a
sharded greedy growth: seconds, nodes counted, bytes of histograms), ``"passes"`` (seconds of
each data pass of that growth), ``"search"`` (phases of a farmed-out search: seconds and bytes
moved, tasks).
"""
from __future__ import annotations

import copy

_records: dict = {}


def publish(name: str, value) -> None:
    """Record ``value`` as the last ``name`` (see the module doc)."""
    _records[name] = value


def forget(name: str) -> None:
    """Drop the last ``name`` (a fit that may not make it again)."""
    _records.pop(name, None)


def _last(name: str, empty):
    return copy.copy(_records.get(name, empty))


def last_fit_log() -> list:
    """Per level of the last distributed greedy fit: seconds, nodes counted, bytes of histograms."""
    return list(_last("levels", []))


def last_fit_passes() -> dict:
    """Seconds of each data pass of the last distributed greedy fit (statistics and threshold
    sample, thresholds on the driver, coding)."""
    return dict(_last("passes", {}))


def last_search_info() -> dict:
    """Phases of the last Top-k / optimal fit on Dask (binary or continuous search): seconds and
    bytes moved, the number of search tasks (``shares``) and their seconds."""
    return dict(_last("search", {}))
