"""How many CPUs the library's threaded work may use: one rule for every caller (the KKT
backend's BLAS threads, the low-rank backend's row blocks, the kernel factor's columns, the
kernel products and Gram fill of :mod:`~primaldual.kernels.gram`, the one-vs-one pairs side by
side).

:func:`free_cpus` is the CPUs this process may run on minus the CPUs other processes keep busy,
measured from the machine's CPU counters (``/proc/stat``) over the last :data:`CPU_WINDOW`
seconds or more, with this process's own CPU time (every thread) subtracted, so a loop of fits
is never mistaken for other work. Until a first window has passed in a process it is the
1-minute load average's estimate (:func:`load_average_cpus`); where neither exists, every CPU
the process may use. (The SMO core's helper threads decide by timing instead: each kernel
column is shared only while sharing is measured faster, see ``backends/smo``.)
"""

from __future__ import annotations

import os
import time

__all__ = ["CPU_WINDOW", "free_cpus", "load_average_cpus"]


def _after_fork_in_child() -> None:  # pragma: no cover - runs in a forked child
    _READING.clear()  # (the child's CPU time restarts: the parent's reading does not apply)
    _ESTIMATE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _allowed() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def load_average_cpus() -> int:
    """CPUs this process may use that other runnable processes do not already keep busy, from
    the 1-minute load average (the estimate of :func:`free_cpus` before its first window).

    ``round(cpus - max(0, load - 1))`` with ``load`` the 1-minute load average (this process
    counts as 1), at least 1.  A large threaded LAPACK call (the KKT backend's Cholesky) uses
    this many BLAS threads: OpenBLAS threads spin while they wait for a partner that the OS
    has descheduled, so on an oversubscribed machine the threaded ``potrf`` of N = 4000
    measured 2x slower (wall, 3.7-4.1 s) than the single-threaded one (1.6-1.9 s), while on an
    idle machine every CPU is used.
    """
    cpus = _allowed()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - no load average on this platform
        return cpus
    return max(1, min(cpus, int(cpus - max(0.0, load - 1.0) + 0.5)))


#: seconds between two readings of the CPU counters (:func:`free_cpus`)
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


def free_cpus() -> int:
    """CPUs the other processes of the machine leave free, measured over the last
    :data:`CPU_WINDOW` seconds or more: ``cpus - round(others)``, ``others`` the machine's busy
    CPU time (``/proc/stat``) minus this process's own (:func:`time.process_time`, every
    thread) per second of wall time, at most the CPUs this process may run on, at least 1.

    Unlike the load average (:func:`load_average_cpus`, a one-minute mean
    that counts this process's own threads), it follows the machine within a fraction of a
    second and does not mistake the threads a loop of fits starts for other work. Read at
    most once per window (~10 us): between readings the last estimate is returned. Until a
    window has passed since the first reading, it is the load average's estimate.
    """
    now = time.monotonic()
    if _READING and _ESTIMATE and now - _READING[0] < CPU_WINDOW:
        return _ESTIMATE[0]
    allowed = _allowed()
    r = _cpu_reading()
    if r is None:  # pragma: no cover - not Linux
        return load_average_cpus()
    if _READING:
        wall = r[0] - _READING[0]
        others = max(0.0, (r[1] - _READING[1]) - (r[2] - _READING[2])) / wall
        est = max(1, min(allowed, int(r[3] - others + 0.5)))
    else:
        est = load_average_cpus()
    _READING[:] = r
    _ESTIMATE[:] = [est]
    return est
