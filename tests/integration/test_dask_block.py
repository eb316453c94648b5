"""The Dask block of docs/ecosystem.md runs as a script (``python block.py``): its names are all
defined and the cluster starts under ``if __name__ == "__main__":``; every grid-search fit
succeeds (fits in threads at once, the SMO core imported by several at a time)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_dask_block_runs_as_a_script(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    page = (ROOT / "docs" / "ecosystem.md").read_text().split("## Scaling out on Dask")[1]
    code = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    assert 'if __name__ == "__main__":' in code
    script = tmp_path / "dask_grid.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "fits failed" not in r.stderr and "non-finite" not in r.stderr, r.stderr[-3000:]
    best = re.search(r"\{'C': ([0-9.]+), 'gamma': ([0-9.]+)\} (0\.[0-9]+)", r.stdout)
    assert best, r.stdout
    assert float(best.group(3)) > 0.8   # ripley: a sensible grid reaches ~0.9 CV accuracy
