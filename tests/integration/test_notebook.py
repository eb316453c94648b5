"""examples/primal_dual_tour.ipynb runs: its code cells, parsed with the standard library's json,
execute in order in this process (no Jupyter), print what the markdown around them says, and
the outputs stored in the notebook are what they print now."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import primaldual as pd
from primaldual.datasets import AMINI_EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]\d+)?")


def _runner():
    spec = importlib.util.spec_from_file_location("run_notebook",
                                                  ROOT / "scripts" / "run_notebook.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def ran():
    runner = _runner()
    nb = runner.load()
    printed, ns = runner.run(nb)
    return runner, nb, printed, ns


def test_notebook_is_nbformat_4_with_code_and_prose(ran):
    runner, nb, printed, _ = ran
    assert nb["nbformat"] == 4 and nb["metadata"]["kernelspec"]["language"] == "python"
    kinds = [c["cell_type"] for c in nb["cells"]]
    assert kinds[0] == "markdown" and kinds.count("code") == len(printed) >= 7
    assert all(text.strip() for text in printed)        # every code cell shows something


def test_tour_prints_the_fit_the_certificate_and_the_checks(ran):
    _, _, printed, ns = ran
    out = "\n".join(printed)
    assert "C-SVC primal" in out and "Stationarity in b" in out and "C-SVC dual" in out
    m, ex = ns["model"], AMINI_EXAMPLES["amini_soft"]
    np.testing.assert_array_equal(ns["X"], ex.X)
    ref = pd.CSVC(kernel="linear", C=ex.C).fit(ex.X, ex.y, backend="cvxpy")
    np.testing.assert_allclose(m.alpha_, ref.alpha_, atol=1e-6)
    assert m.certificate_.status == "optimal" and m.certificate_.relative_gap < 1e-8
    # the printed numbers are the fit's
    shown = re.search(r"alpha = \[([^\]]*)\]\s+b = (\S+)", out)
    np.testing.assert_array_equal([float(v) for v in shown.group(1).split()],
                                  np.round(m.alpha_, 4))
    assert float(shown.group(2)) == round(float(m.b_), 4)
    assert "True True" in out                             # weak duality by hand
    assert "derivation OK for 'C-SVC primal'" in out      # the right dual
    planted = printed[-1]
    assert "differs from the mechanical one" in planted and "α_i ≤ C_i" in planted
    assert "witness" in planted


def _same(stored: str, fresh: str) -> bool:
    """Equal text; numbers equal to 1e-4 relative, or both at round-off level (< 1e-6)."""
    if NUMBER.sub("#", stored) != NUMBER.sub("#", fresh):
        return False
    for a, b in zip(NUMBER.findall(stored), NUMBER.findall(fresh), strict=True):
        u, v = float(a), float(b)
        if not (abs(u - v) <= 1e-4 * abs(v) or max(abs(u), abs(v)) < 1e-6):
            return False
    return True


def test_stored_outputs_are_what_the_cells_print(ran):
    runner, nb, printed, _ = ran
    stale = [k for k, (s, f) in enumerate(zip(runner.stored(nb), printed, strict=True))
             if not _same(s, f)]
    assert not stale, (f"code cells {stale}: the stored outputs are stale "
                       "(python scripts/run_notebook.py)")
