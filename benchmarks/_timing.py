"""The interleaved timing the benchmark scripts share (imported from the scripts' own folder,
which ``python benchmarks/<script>.py`` puts on the path)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any


def best_interleaved(fns: Sequence[Callable[[], Any]], repeats: int
                     ) -> tuple[list[float], list[float], list[Any]]:
    """Run ``fns`` in turn ``repeats`` times (ours, the reference, ours, ...: a shared machine's
    load falls on all alike); the best wall time, the best process CPU time and the last result
    of each."""
    wall: list[list[float]] = [[] for _ in fns]
    cpu: list[list[float]] = [[] for _ in fns]
    outs: list[Any] = [None] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            c0, t0 = time.process_time(), time.perf_counter()
            outs[k] = fn()
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
    return [min(t) for t in wall], [min(c) for c in cpu], outs
