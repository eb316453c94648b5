"""The CVXPY-route benchmark of docs/benchmarks.md runs on tiny sizes: the library's route and
the hand model both optimal, the same objective."""

from __future__ import annotations

from tests import background

_COMMAND = background.script("benchmarks/bench_cvxpy_route.py",
    "--cases", "twin:200", "ranking:200", timeout=300)


@background.job(lambda: _COMMAND)
def test_bench_cvxpy_route_tiny():
    out = background.stdout(**_COMMAND)
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in out.splitlines()
            if ln.startswith(("| twin |", "| ranking |"))]
    assert [r[0] for r in rows] == ["twin", "ranking"], out
    assert all(r[8] == "optimal" and float(r[7]) <= 1e-6 for r in rows), out
