"""Process-wide worker threads shared by the library's threaded loops (issue 31).

Two users: the low-rank backend's row-block products (:mod:`primaldual.backends.lowrank.
_threads`) and the one-vs-one sub-problems of a multiclass SMO fit, run side by side on the
CPUs other processes leave free (:func:`~primaldual.kernels.gram.free_cpus`). Each user has its
own named pool, so that a task of one never waits for a worker the other keeps busy. A pool
belongs to the process that created it: a forked child (a joblib/loky worker, a
``multiprocessing`` fork) gets new ones, as the parent's threads do not exist in the child and
an inherited executor would never run its work.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["free_cpus_now", "run_in_order", "thread_pool"]

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
    _READING.clear()  # (the child's CPU time restarts: the parent's reading does not apply)
    _ESTIMATE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


#: seconds between two readings of the CPU counters (:func:`free_cpus_now`)
CPU_WINDOW: float = 0.25
#: the last reading ``[wall, busy CPU seconds of the machine, CPU seconds of this process,
#: CPUs of the machine]`` and the estimate made from it ``[free CPUs]``
_READING: list[float] = []
_ESTIMATE: list[int] = []


def _cpu_reading() -> list[float] | None:
    """``[wall, busy, own, cpus]`` now: the machine's busy CPU seconds since boot (``/proc/stat``,
    steal time counted as busy), this process's CPU seconds (all its threads), the number of
    CPUs ``/proc/stat`` counts; ``None`` where ``/proc/stat`` cannot be read."""
    try:
        with open("/proc/stat", "rb") as f:
            lines = f.read(8192).split(b"\n")
    except OSError:  # pragma: no cover - not Linux
        return None
    head = lines[0].split()
    if not head or head[0] != b"cpu" or len(head) < 5:  # pragma: no cover - unknown format
        return None
    ticks = [int(v) for v in head[1:9]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    cpus = sum(1 for ln in lines[1:] if ln[:3] == b"cpu")
    hz = float(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100.0
    return [time.monotonic(), (sum(ticks) - idle) / hz, time.process_time(), float(cpus)]


def free_cpus_now() -> int:
    """CPUs the other processes of the machine leave free, measured over the last
    :data:`CPU_WINDOW` seconds or more: ``cpus - round(others)``, ``others`` the machine's busy
    CPU time (``/proc/stat``) minus this process's own (:func:`time.process_time`, every
    thread) per second of wall time, at most the CPUs this process may run on, at least 1.

    Unlike the load average (:func:`~primaldual.kernels.gram.free_cpus`, a one-minute mean
    that counts this process's own threads), it follows the machine within a fraction of a
    second and does not mistake the threads a loop of fits starts for other work. Read at
    most once per window (~10 us): between readings the last estimate is returned. Until a
    window has passed since the first reading, it is the load average's estimate.
    """
    now = time.monotonic()
    if _READING and _ESTIMATE and now - _READING[0] < CPU_WINDOW:
        return _ESTIMATE[0]
    try:
        allowed = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        allowed = os.cpu_count() or 1
    r = _cpu_reading()
    if r is None:  # pragma: no cover - not Linux
        from .gram import free_cpus

        return free_cpus()
    if _READING:
        wall = r[0] - _READING[0]
        others = max(0.0, (r[1] - _READING[1]) - (r[2] - _READING[2])) / wall
        est = max(1, min(allowed, int(r[3] - others + 0.5)))
    else:
        from .gram import free_cpus

        est = free_cpus()
    _READING[:] = r
    _ESTIMATE[:] = [est]
    return est


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
