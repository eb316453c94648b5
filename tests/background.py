"""Subprocess tests started early on the second CPU, while the in-process tests run on the first.

The examples and the benchmarks' smoke runs are scripts in fresh Python processes: most of their
time is importing scikit-learn, SciPy and CVXPY and loading numba's caches, work that overlaps
freely with the rest of the suite. A test that runs a script declares its command with
:func:`job` (a function of the test's parameters); once collection is final, ``tests/conftest.py``
hands every selected test's command to :func:`start`, which runs them one at a time on a worker
thread. The test then calls :func:`run` with the same command: it gets the finished process, waits
for a running one, or (when its command has not started yet, or the machine has one CPU) cancels
the queued run and runs the command itself. The command, its environment and its timeout are the
test's own in every case, so a test means the same whether or not it ran in the background.

Before collection, :func:`warm_up` starts one more command, ``tests/warm_numba.py``, which fills
numba's on-disk cache for the compiled routes on the second CPU; the worker thread starts the
queued commands when it is done, and the session's end stops it if it still runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

#: attribute a test function carries: its parameters -> the command (see :func:`job`)
ATTR = "_background_command"

_pool: ThreadPoolExecutor | None = None
_futures: dict[tuple, Future] = {}
_lock = threading.Lock()
#: (command's script name, seconds it ran) of every command run in the background
_ran: list[tuple[str, float]] = []
#: seconds the session's end waited for the background worker
_waited: list[float] = []
#: (process, start time, script name, timeout) of the :func:`warm_up` command
_warm: tuple[subprocess.Popen, float, str, float | None] | None = None


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not on Linux
        return os.cpu_count() or 1


def job(command: Callable[..., dict[str, Any]]) -> Callable:
    """Mark a test as one that runs ``subprocess.run(**command(**params))``.

    ``command`` takes the test's parametrize arguments by name (none for a plain test) and
    returns ``subprocess.run``'s keyword arguments (``args``, ``env``, ``cwd``, ``timeout``);
    output is always captured as text.
    """
    def mark(test: Callable) -> Callable:
        setattr(test, ATTR, command)
        return test
    return mark


def script(path: str | os.PathLike, *args: str, timeout: float = 300) -> dict[str, Any]:
    """The command running ``python <path> <args>`` in the repository, the package importable
    from the checkout (``PYTHONPATH``), as :func:`run` and :func:`job` take it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {"args": [sys.executable, os.path.join(root, str(path)), *args], "cwd": root,
            "env": env, "timeout": timeout}


def stdout(**kw: Any) -> str:
    """:func:`run`'s standard output, after checking that the command exited 0."""
    r = run(**kw)
    assert r.returncode == 0, f"{kw['args']} failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def _key(kw: dict[str, Any]) -> tuple:
    env = kw.get("env")
    return (tuple(map(str, kw["args"])), str(kw.get("cwd")),
            tuple(sorted(env.items())) if env is not None else None)


def _execute(kw: dict[str, Any]) -> subprocess.CompletedProcess:
    return subprocess.run(capture_output=True, text=True, **kw)


def _execute_timed(kw: dict[str, Any]) -> subprocess.CompletedProcess:
    t0 = time.perf_counter()
    try:
        return _execute(kw)
    finally:
        _ran.append((os.path.basename(str(kw["args"][1] if len(kw["args"]) > 1 else kw["args"][0])),
                     time.perf_counter() - t0))


def enabled() -> bool:
    """Whether background commands run: two CPUs or more, and ``PRIMALDUAL_TEST_BACKGROUND``
    not ``0``."""
    return _cpus() >= 2 and os.environ.get("PRIMALDUAL_TEST_BACKGROUND", "1") != "0"


def warm_up(kw: dict[str, Any]) -> None:
    """Start ``kw``'s command now (before collection), as the first of the background
    commands: the worker thread waits for it before it starts the next (nothing when
    :func:`enabled` is false)."""
    global _warm
    if enabled() and _warm is None:
        t0 = time.perf_counter()
        opts = {k: v for k, v in kw.items() if k != "timeout"}
        proc = subprocess.Popen(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **opts)
        _warm = (proc, t0, os.path.basename(str(kw["args"][-1])), kw.get("timeout"))


def _wait_warm() -> None:
    if _warm is not None:
        proc, t0, name, timeout = _warm
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
        _ran.append((name, time.perf_counter() - t0))


def start(commands: Sequence[dict[str, Any]]) -> None:
    """Queue ``commands`` on one worker thread, after the :func:`warm_up` command (nothing on a
    one-CPU machine)."""
    global _pool
    if not enabled():
        return
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="background-test")
            _pool.submit(_wait_warm)
        for kw in commands:
            key = _key(kw)
            if key not in _futures:
                _futures[key] = _pool.submit(_execute_timed, kw)


def run(**kw: Any) -> subprocess.CompletedProcess:
    """``subprocess.run(capture_output=True, text=True, **kw)``, taken from the background run of
    the same command when one was queued (``subprocess.TimeoutExpired`` is raised as there)."""
    with _lock:
        fut = _futures.pop(_key(kw), None)
    if fut is not None and not fut.cancel():
        return fut.result()
    return _execute(kw)


def shutdown() -> None:
    """Stop the :func:`warm_up` command if it still runs (the session needs no more of the
    cache; numba writes each entry whole), cancel what has not started and wait for what
    has (the session's end)."""
    if _warm is not None and _warm[0].poll() is None:
        _warm[0].kill()
    if _pool is None:
        _wait_warm()
    else:
        t0 = time.perf_counter()
        _pool.shutdown(wait=True, cancel_futures=True)
        _waited.append(time.perf_counter() - t0)


def summary() -> str:
    """One line on the background work: how many commands ran there, their total and longest
    times, and how long the session's end waited for them (empty when nothing ran)."""
    if not _ran:
        return ""
    name, longest = max(_ran, key=lambda r: r[1])
    return (f"background: {len(_ran)} commands, {sum(t for _, t in _ran):.0f} s in all "
            f"(longest {name} {longest:.0f} s); the session's end waited "
            f"{sum(_waited):.0f} s for them")
