"""The twin-SVM benchmark of docs/benchmarks.md runs on tiny sizes: the linear planes and the
RBF surfaces against the CVXPY models (the same objectives), past ``--ref-max`` ours alone
(the reference's columns ``-``), and ``--ref-timeout`` both ways (the reference's child killed,
and finished in time)."""

from __future__ import annotations

import pytest

from tests import background

_COMMAND = background.script("benchmarks/bench_twin.py",
    "--sizes", "60", "--rbf-sizes", "60", "80", "--repeats", "1", "--tol", "1e-8", "--ref-max",
    "60", timeout=600)


@background.job(lambda: _COMMAND)
def test_bench_twin_tiny():
    out = background.stdout(**_COMMAND)
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in out.splitlines()
            if ln.startswith(("| linear |", "| RBF |"))]
    assert [(r[0], r[1]) for r in rows] == [("linear", "60"), ("RBF", "60"), ("RBF", "80")], out
    for r in rows[:2]:        # with the reference: the objectives agree
        assert float(r[6]) <= 1e-6, out
    assert rows[2][3] == rows[2][6] == "-" and float(rows[2][2]) > 0, out
    assert all("smo" in r[5] or "linear" in r[5] for r in rows), out


_TIMED = background.script("benchmarks/bench_twin.py",
    "--sizes", "60", "--rbf-sizes", "60", "--repeats", "1", "--tol", "1e-8", "--ref-timeout",
    "0.001", timeout=600)


@background.job(lambda: _TIMED)
def test_bench_twin_ref_timeout_kills_the_reference():
    """``--ref-timeout``: the CVXPY models' child is killed (no 60-row model solves in a
    millisecond), the row prints a lower bound on their time and an upper bound on the ratio,
    ``ours / T``, and the peak memory of both sides."""
    out = background.stdout(**_TIMED)
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in out.splitlines()
            if ln.startswith(("| linear |", "| RBF |"))]
    assert [(r[0], r[1]) for r in rows] == [("linear", "60"), ("RBF", "60")], out
    for r in rows:
        assert r[3].startswith("> ") and float(r[3][2:]) >= 0.001, out
        assert r[4].startswith("< "), out
        # the printed columns are rounded: ours to 1e-3 s, T to 4 and the ratio to 3 digits
        t, T, ratio = float(r[2]), float(r[3][2:]), float(r[4][2:])
        lo = max(t - 5e-4, 0.0) / (T * (1 + 5e-4)) * (1 - 5e-3)
        assert lo <= ratio <= (t + 5e-4) / (T * (1 - 5e-4)) * (1 + 5e-3), out
        assert r[6] == r[7] == "-", out
        mine, ref = (float(v) for v in r[9].split("/"))
        assert mine > 0 and ref > 0, out


_TIMED_DONE = background.script("benchmarks/bench_twin.py",
    "--sizes", "60", "--rbf-sizes", "--repeats", "1", "--tol", "1e-8", "--ref-timeout", "300",
    timeout=600)


@background.job(lambda: _TIMED_DONE)
def test_bench_twin_ref_timeout_child_returns_the_reference():
    """``--ref-timeout`` with time to spare: the child's models finish and send their planes
    back, so the row has a time, a ratio and the objectives' agreement."""
    out = background.stdout(**_TIMED_DONE)
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in out.splitlines()
            if ln.startswith("| linear |")]
    assert len(rows) == 1, out
    r = rows[0]
    assert float(r[3]) > 0 and float(r[4]) == pytest.approx(float(r[2]) / float(r[3]), rel=0.02)
    assert float(r[6]) <= 1e-6 and float(r[7]) <= 1e-4, out
    mine, ref = (float(v) for v in r[9].split("/"))
    assert mine > 0 and ref > 0, out
