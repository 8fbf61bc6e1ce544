"""Farmed-out searches: tasks that share a bound and a stop request, and the driver's wait.

Learner-free plumbing for a search whose root's candidates (or features) are dealt to tasks, one
per worker thread (:func:`run_tasks`): each task reads the best error any task has published
(:class:`SharedBound`, a ``distributed.Variable``: any value published is the error of a real
candidate, so a lost update only weakens the bound) and watches a stop request
(:class:`StopWatcher`, a ``distributed.Event`` polled by a thread of the task, which calls the
search's ``request_stop()``; the search then returns what it found, marked stopped). The driver
waits until the fit's deadline plus a grace, then sets the stop event and takes what came back;
Ctrl-C sets it, cancels the tasks and is re-raised. A task lost with its worker runs again
elsewhere (the tasks are deterministic: the bound they read only prunes).
"""
from __future__ import annotations

import threading
import time
import uuid

INF = float("inf")
GRACE_SECONDS = 5.0  # past the deadline, how long the driver waits for tasks to stop


def after_submit(futures) -> None:
    """Called with the tasks' futures once they are submitted (a hook for the fault tests)."""


def seconds_left(deadline):
    """Seconds left until the wall-clock ``deadline`` (None: no limit; 0.0 means none to the
    compiled searches, so a passed deadline is a tiny positive limit)."""
    if deadline is None:
        return None
    return max(deadline - time.time(), 1e-3)


def task_client(name):
    """A client of this task's scheduler for the shared bound and the stop event (None without
    ``name``). Not ``distributed.get_client()``: that makes the worker's client the process's
    default scheduler, which in a cluster of threads (``processes=False``) is the caller's process."""
    if name is None:
        return None
    from distributed import Client, get_worker

    w = get_worker()
    return Client(w.scheduler.address, set_as_default=False, security=w.security, name="treelearn-search")


class SharedBound:
    """The best error published by any task (a ``distributed.Variable``), or none (``name`` None)."""

    def __init__(self, name, client):
        self.var = None
        if name is not None:
            from distributed import Variable

            self.var = Variable(name, client=client)

    def get(self) -> float:
        if self.var is None:
            return INF
        try:
            return float(self.var.get(timeout=5))
        except Exception:  # noqa: BLE001 - unreachable scheduler: no shared bound, still correct
            return INF

    def offer(self, err: float) -> None:
        if self.var is not None and err < self.get():
            try:
                self.var.set(float(err))
            except Exception:  # noqa: BLE001 - a lost update only weakens the bound
                pass


class StopWatcher:
    """A thread that calls ``search.request_stop()`` when the driver sets the stop event (time
    limit, Ctrl-C). When the scheduler cannot be reached it stops watching and leaves the search
    alone: a stopped search's result must not pass for a finished one."""

    def __init__(self, name, search, client):
        self.done = threading.Event()
        self.thread = None
        if name is None:
            return
        from distributed import Event

        ev = Event(name, client=client)

        def watch():
            while not self.done.wait(0.2):  # (close() wakes it at once)
                try:
                    if ev.is_set():
                        search.request_stop()
                        return
                except Exception:  # noqa: BLE001 - no scheduler (the worker is closing): the search
                    return  # runs on, its result is complete or discarded, never a stopped one

        self.thread = threading.Thread(target=watch, name="treelearn-stop-watch", daemon=True)
        self.thread.start()

    def close(self):
        self.done.set()
        if self.thread is not None:
            self.thread.join(timeout=5)


class TaskLink:
    """Inside a task: its client, the shared bound and the stop watcher of ``search`` (a context
    manager; without names, as in-process tasks run, a bound of +inf and no watcher)."""

    def __init__(self, bound_name, stop_name, search):
        self.client = task_client(bound_name)
        self.watcher = StopWatcher(stop_name, search, self.client)
        self.bound = SharedBound(bound_name, self.client)

    def __enter__(self):
        return self.bound

    def __exit__(self, *exc):
        self.watcher.close()
        if self.client is not None:
            self.client.close()
        return False


def _wait(client, futures, stop_event, deadline):
    """The tasks' results: waits until ``deadline`` (plus a grace); past it the stop event asks
    the searches to return what they have. A task's error (e.g. Dask's ``KilledWorker``) is
    raised; Ctrl-C stops and cancels the tasks and is re-raised."""
    end = None if deadline is None else deadline + GRACE_SECONDS
    try:
        after_submit(futures)
        for f in futures:
            try:
                f.result(timeout=None if end is None else max(end - time.time(), 0.01))
            except TimeoutError:
                stop_event.set()
                end = time.time() + GRACE_SECONDS
                for g in futures:
                    try:
                        g.result(timeout=max(end - time.time(), 0.01))
                    except TimeoutError:
                        pass
                break
    except KeyboardInterrupt:
        stop_event.set()
        client.cancel(futures)
        raise
    done = [f for f in futures if f.status == "finished"]
    client.cancel([f for f in futures if f.status != "finished"])
    return [f.result() for f in done], len(done) < len(futures)


def run_tasks(ex, fn, args_of, n_tasks: int, deadline=None):
    """``n_tasks`` tasks ``fn(*args_of(t, bound_name, stop_name))`` on the executor: their results
    and whether some never returned (stopped past ``deadline``, a wall-clock time or None).
    Without a client they run one after the other in this process, with no names."""
    if ex.client is None:
        return [fn(*args_of(t, None, None)) for t in range(n_tasks)], False
    from distributed import Event, Variable

    key = uuid.uuid4().hex
    bname, sname = f"treelearn-search-bound-{key}", f"treelearn-search-stop-{key}"
    var = Variable(bname, client=ex.client)
    var.set(INF)
    ev = Event(sname, client=ex.client)
    futures = [ex.client.submit(fn, *args_of(t, bname, sname), pure=False) for t in range(n_tasks)]
    try:
        return _wait(ex.client, futures, ev, deadline)
    finally:
        var.delete()
        if not ev.is_set():  # (a set event stays: tasks still running must see it)
            ev.clear()  # no waiter: the scheduler forgets it
