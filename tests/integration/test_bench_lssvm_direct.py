"""The LS-SVM direct-route benchmark of docs/benchmarks.md runs, and its two routes agree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_lssvm_direct_runs_and_routes_agree():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH",
                                                                                  "")]))
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_lssvm_direct.py"),
                        "--sizes", "150", "--repeats", "1"], capture_output=True, text=True,
                       timeout=300, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    row = [ln for ln in r.stdout.splitlines() if ln.startswith("| 150 |")]
    assert len(row) == 1
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    # max abs diff beta, abs diff b, the certificate's max KKT residual
    assert float(cells[10]) < 1e-8 and float(cells[11]) < 1e-8 and float(cells[12]) < 1e-8
