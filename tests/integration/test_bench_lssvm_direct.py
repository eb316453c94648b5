"""The LS-SVM direct-route benchmark of docs/benchmarks.md runs, and its two routes agree."""

from __future__ import annotations

from tests import background

_COMMAND = background.script("benchmarks/bench_lssvm_direct.py",
    "--sizes", "150", "--repeats", "1", timeout=300)


@background.job(lambda: _COMMAND)
def test_bench_lssvm_direct_runs_and_routes_agree():
    r = background.run(**_COMMAND)
    assert r.returncode == 0, r.stderr
    row = [ln for ln in r.stdout.splitlines() if ln.startswith("| 150 |")]
    assert len(row) == 1
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    # max abs diff beta, abs diff b, the certificate's max KKT residual
    assert float(cells[10]) < 1e-8 and float(cells[11]) < 1e-8 and float(cells[12]) < 1e-8
