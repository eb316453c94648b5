"""Smoke test: every ``examples/*.py`` runs to completion (exit 0) within its time limit.

Each example runs in a subprocess with ``MPLBACKEND=Agg``; examples added by anyone are picked up
automatically.  An example whose method is not available must exit 0 with a "skipped" message.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
TIMEOUT = 120  # the budget per example is 60 s on an idle machine; CI machines are shared


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script: Path, tmp_path: Path) -> None:
    # figures go to a temporary folder: the smoke test must not rewrite docs/img
    # PRIMALDUAL_QUICK=1: long examples (suykens_table_3_4) run a reduced smoke-test protocol
    env = dict(os.environ, MPLBACKEND="Agg", PRIMALDUAL_FIGURES=str(tmp_path), PRIMALDUAL_QUICK="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    try:
        r = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{script.name} did not finish in {TIMEOUT} s")
    assert r.returncode == 0, f"{script.name} failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    assert r.stdout.strip(), f"{script.name} printed nothing"
    assert "Traceback" not in r.stderr
