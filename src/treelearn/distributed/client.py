"""Where a Dask fit runs: the client in scope and the executor the plug-ins submit tasks through.

Learner-free plumbing (``docs/architecture.md``): nothing here knows a learner. Dask itself is
imported only inside the functions, so importing this module costs nothing without Dask.
"""
from __future__ import annotations

import contextlib

from treelearn._validation import TreeLearnValueError

_client_stack: list = []
#: attempts of a scatter whose connection closed (a worker left while the data went out): the
#: scheduler drops the lost worker, and the next attempt goes to those that remain
SCATTER_ATTEMPTS = 3


class WorkerLostError(ConnectionError):
    """The Dask cluster lost the connection to its workers while data went out to them, every
    attempt (:data:`SCATTER_ATTEMPTS`); the fit did not end."""


@contextlib.contextmanager
def use_client(client_or_address):
    """Fit Dask input on this client (a ``distributed.Client`` or a scheduler address) inside the
    ``with`` block."""
    client = client_or_address
    own = False
    if isinstance(client_or_address, str):
        from distributed import Client

        client, own = Client(client_or_address), True
    _client_stack.append(client)
    try:
        yield client
    finally:
        _client_stack.pop()
        if own:
            client.close()


def require_dask() -> None:
    """Dask must be installed for Dask input (a clear error otherwise)."""
    try:
        import dask  # noqa: F401
    except ImportError as e:  # pragma: no cover - dask is an optional extra
        raise TreeLearnValueError("Dask input needs the optional dependency: pip install 'treelearn[dask]'") from e


class LocalExecutor:
    """The executor without a Dask client: every task runs at once in this process."""

    client = None

    def compute(self, delayed_objs):
        import dask

        return list(dask.compute(*delayed_objs, scheduler="sync"))

    def submit(self, fn, *args):
        return fn(*args)

    def gather(self, futs):
        return futs

    def release(self, futs):
        pass

    def scatter(self, obj, broadcast=False):
        return obj

    @property
    def n_workers(self) -> int:
        return 1

    @property
    def slots(self) -> int:
        """Tasks that can run at once (1: this process)."""
        return 1


class ClientExecutor:
    """Tasks on a ``distributed.Client``: results stay on the workers as futures until gathered."""

    def __init__(self, client):
        self.client = client

    def compute(self, delayed_objs):
        return self.client.compute(delayed_objs)

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False)

    def gather(self, futs):
        return self.client.gather(futs)

    def release(self, futs):
        for f in futs if isinstance(futs, list) else [futs]:
            if hasattr(f, "release"):
                f.release()

    def scatter(self, obj, broadcast=False):
        """A future of ``obj`` held by the cluster (on every worker with ``broadcast``); a
        connection closed on the way (a worker killed) is retried, then named."""
        from distributed.comm.core import CommClosedError

        last = None
        for _ in range(SCATTER_ATTEMPTS):
            try:
                return self.client.scatter([obj], broadcast=broadcast)[0]
            except (CommClosedError, OSError) as exc:  # CommClosedError is an OSError in recent versions
                last = exc
        raise WorkerLostError(f"sending data to the Dask workers failed {SCATTER_ATTEMPTS} times: a connection "
                              f"closed ({type(last).__name__}: {' '.join(str(last).split())[:200]}); are the "
                              "workers alive?") from last

    @property
    def n_workers(self) -> int:
        return len(self.client.scheduler_info()["workers"])

    @property
    def slots(self) -> int:
        """Tasks that can run at once: the workers' threads."""
        workers = self.client.scheduler_info()["workers"].values()
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers))


def current_executor():
    """The executor of the client in scope: the innermost :func:`use_client`, else
    ``distributed.get_client()`` (the client made last, or the one of a ``with Client(...)``
    block), else this process."""
    if _client_stack:
        return ClientExecutor(_client_stack[-1])
    try:
        from distributed import get_client

        return ClientExecutor(get_client())
    except (ImportError, ValueError):
        return LocalExecutor()
