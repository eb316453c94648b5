"""The twin-SVM benchmark of docs/benchmarks.md runs on tiny sizes: the linear planes and the
RBF surfaces against the CVXPY models (the same objectives), and past ``--ref-max`` ours alone
(the reference's columns ``-``)."""

from __future__ import annotations

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
