"""Process-wide worker threads shared by the library's threaded loops.

Two users: the low-rank backend's row-block products (:mod:`primaldual.backends.lowrank.
_threads`) and the one-vs-one sub-problems of a multiclass SMO fit, run side by side on the
CPUs other processes leave free (:func:`~primaldual.kernels.cpus.free_cpus`). Each user has its
own named pool, so that a task of one never waits for a worker the other keeps busy. A pool
belongs to the process that created it: a forked child (a joblib/loky worker, a
``multiprocessing`` fork) gets new ones, as the parent's threads do not exist in the child and
an inherited executor would never run its work.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["run_in_order", "thread_pool"]

#: the pools of this process, by name (see :func:`thread_pool`)
_POOLS: dict[str, ThreadPoolExecutor] = {}
_PID: list[int] = []
_LOCK = threading.Lock()


def _after_fork_in_child() -> None:  # pragma: no cover - runs in a forked child
    """A forked child starts with no pool threads and an unlocked lock (a thread of the parent
    may have held it at the fork)."""
    global _LOCK
    _LOCK = threading.Lock()
    _POOLS.clear()
    _PID[:] = []


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def thread_pool(name: str, workers: int) -> ThreadPoolExecutor:
    """The pool ``name`` of this process, with at least ``workers`` threads (created on first
    use; a larger request replaces it, the old one finishing its queued work)."""
    pid = os.getpid()
    with _LOCK:
        if _PID != [pid]:  # a forked child: the parent's pools have no threads here
            _POOLS.clear()
            _PID[:] = [pid]
        pool = _POOLS.get(name)
        if pool is None or pool._max_workers < workers:
            if pool is not None:
                pool.shutdown(wait=False)
            pool = _POOLS[name] = ThreadPoolExecutor(
                max(1, int(workers)), thread_name_prefix=f"primaldual-{name}")
        return pool


def run_in_order(tasks: Sequence[Callable[[], Any]], threads: int,
                 name: str = "tasks") -> list[tuple[bool, Any]]:
    """Run ``tasks`` on the calling thread and ``threads - 1`` workers of the pool ``name``;
    return one ``(ok, value)`` per task, in the tasks' order: ``(True, result)``, ``(False,
    exception)``, or ``(False, None)`` for a task not started because an earlier one raised.

    Tasks are claimed in increasing index order by whichever thread is free (no thread waits
    while tasks remain), and each thread runs them in a copy of the caller's context
    (:mod:`contextvars`: a BLAS-thread limit the caller set holds there too). After a task
    raises, no further task is started; every started task finishes before this returns.
    A caller that handles the outcomes in order therefore meets the first exception before any
    task that was not run, as a plain loop would.
    """
    n = len(tasks)
    out: list[tuple[bool, Any]] = [(False, None)] * n
    nxt = [0]
    stop = [False]
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if stop[0] or nxt[0] >= n:
                    return
                k = nxt[0]
                nxt[0] = k + 1
            try:
                out[k] = (True, tasks[k]())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, in order
                out[k] = (False, exc)
                stop[0] = True

    helpers = max(0, min(int(threads), n) - 1)
    if helpers == 0:
        work()
        return out
    pool = thread_pool(name, helpers)
    futures = [pool.submit(contextvars.copy_context().run, work) for _ in range(helpers)]
    try:
        work()
    finally:
        for f in futures:
            f.result()
    return out
