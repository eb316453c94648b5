"""The RBF ranking benchmark of docs/benchmarks.md runs on a tiny size: ours (auto) and the
hand CVXPY model both optimal, the same objective."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT


def test_bench_ranking_rbf_tiny():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_ranking_rbf.py"),
                          "--sizes", "120", "--cases", "ours-auto", "hand"], capture_output=True,
                         text=True, timeout=300, check=True, env=env).stdout
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in out.splitlines()
            if ln.startswith("| 120 |")]
    assert [r[2] for r in rows] == ["ours-auto", "hand"], out
    assert all(r[4].startswith("optimal") for r in rows), out
    assert float(rows[0][7]) <= 1e-5 and int(rows[0][1]) > 120
