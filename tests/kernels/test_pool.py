"""Issue 31: the process's worker threads (:mod:`primaldual.kernels.pool`)."""
from __future__ import annotations

import os
import threading
import time

import pytest

from primaldual.kernels import cpus as cpus_mod
from primaldual.kernels import pool


def test_run_in_order_returns_the_tasks_outcomes_in_order_from_two_threads():
    seen = set()

    def task(i):
        def run():
            seen.add(threading.get_ident())
            time.sleep(0.002)
            return i * i
        return run

    out = pool.run_in_order([task(i) for i in range(8)], 2, "test")
    assert out == [(True, i * i) for i in range(8)]
    assert len(seen) == 2
    assert pool.run_in_order([task(i) for i in range(3)], 1) == [(True, 0), (True, 1), (True, 4)]


def test_run_in_order_stops_after_an_exception():
    started = []

    def task(i):
        def run():
            started.append(i)
            if i == 2:
                raise KeyError("task 2")
            time.sleep(0.005)
            return i
        return run

    out = pool.run_in_order([task(i) for i in range(20)], 2, "test")
    ok = [o for o, _ in out]
    assert ok[:2] == [True, True] and isinstance(out[2][1], KeyError)
    assert len(started) < 20                      # later tasks were not started
    assert all(out[i] == (False, None) for i in range(20) if i not in started)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_gets_its_own_pool():
    pool.run_in_order([lambda: 1, lambda: 2], 2, "test")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            res = pool.run_in_order([lambda: 3, lambda: 4], 2, "test")
            os.write(w, b"ok" if res == [(True, 3), (True, 4)] else b"no")
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert os.read(r, 2) == b"ok"


def test_free_cpus_is_a_count_of_this_process_cpus():
    n = cpus_mod.free_cpus()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert 1 <= n <= cpus
    time.sleep(cpus_mod.CPU_WINDOW)
    assert 1 <= cpus_mod.free_cpus() <= cpus
    # the reading counts this process's own CPU time, which the estimate subtracts from the
    # machine's busy time (a loop of fits is not mistaken for other processes' work)
    before = cpus_mod._cpu_reading()
    c0, t0 = time.process_time(), time.monotonic()
    while time.process_time() - c0 < 0.1 and time.monotonic() - t0 < 5.0:
        pass                                           # 0.1 s of this process's CPU
    after = cpus_mod._cpu_reading()
    assert before is not None and after is not None and after[3] >= 1
    own = after[2] - before[2]
    assert own >= 0.1
    assert after[1] - before[1] >= own - 0.05          # the machine's busy time includes it
