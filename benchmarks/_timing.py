"""The interleaved timing the benchmark scripts share (imported from the scripts' own folder,
which ``python benchmarks/<script>.py`` puts on the path)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any


def interleaved_runs(fns: Sequence[Callable[[], Any]], repeats: int
                     ) -> tuple[list[list[float]], list[list[float]], list[Any]]:
    """Run ``fns`` in turn ``repeats`` times (ours, the reference, ours, ...: a shared machine's
    load falls on all alike); every wall time, every process CPU time (all threads) and the
    last result of each."""
    wall: list[list[float]] = [[] for _ in fns]
    cpu: list[list[float]] = [[] for _ in fns]
    outs: list[Any] = [None] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            c0, t0 = time.process_time(), time.perf_counter()
            outs[k] = fn()
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
    return wall, cpu, outs


def best_interleaved(fns: Sequence[Callable[[], Any]], repeats: int
                     ) -> tuple[list[float], list[float], list[Any]]:
    """:func:`interleaved_runs` summarised by the best wall time and best CPU time of each."""
    wall, cpu, outs = interleaved_runs(fns, repeats)
    return [min(t) for t in wall], [min(c) for c in cpu], outs


def median_interleaved(fns: Sequence[Callable[[], Any]], repeats: int
                       ) -> tuple[list[float], list[float], list[Any]]:
    """:func:`interleaved_runs` summarised by the median wall time and median CPU time of each
    (less flattering than the best, and what a user waiting on a shared machine sees)."""
    wall, cpu, outs = interleaved_runs(fns, repeats)
    return ([statistics.median(t) for t in wall], [statistics.median(c) for c in cpu], outs)
