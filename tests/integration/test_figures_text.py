"""What docs/img/smo_duality_gap.png says about the gap is the certificate's definition: the
label (stamped into the PNG's text metadata by examples/smo_duality_gap.py) is evaluated on
fitted models and equals ``certificate_.relative_gap``.  The tutorial's margin and KKT-region
figures carry their numbers in the same metadata: they are what their scripts compute now (the
committed PNG is not stale)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import primaldual as pd
from primaldual.datasets import load_dataset

ROOT = Path(__file__).resolve().parents[2]


def _example(name: str = "smo_duality_gap"):
    import matplotlib

    matplotlib.use("Agg")
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _evaluate(formula: str, P: float, D: float, C_max: float) -> float:
    expr = formula.replace("²", "**2").replace("|P|", "abs(P)")
    assert re.fullmatch(r"[PDC_max0-9()+\-*/, .absin]+", expr), expr
    return float(eval(expr, {"__builtins__": {}, "max": max, "min": min, "abs": abs},  # noqa: S307
                      {"P": P, "D": D, "C_max": C_max}))


def test_duality_gap_figure_label_is_the_certificates_definition():
    from PIL import Image

    formula = _example().GAP_FORMULA
    with Image.open(ROOT / "docs" / "img" / "smo_duality_gap.png") as im:
        assert im.text.get("Description") == f"relative gap {formula}", im.text
    X, y = load_dataset("ripley", n_samples=80, standardize=False)
    # C_max^2 < 1 with |P| < 1, and C_max^2 > 1: each branch of max(min(1, C_max^2), |P|)
    for C in (0.005, 10.0):
        m = pd.CSVC(C=C, gamma=2.0, max_iter=3, tol=1e-6)   # stopped early: a real gap
        with pytest.warns(Warning):
            m.fit(X, y)
        c = m.certificate_
        shown = _evaluate(formula, c.primal_objective, c.dual_objective, C)
        assert c.relative_gap > 0
        np.testing.assert_allclose(shown, c.relative_gap, rtol=1e-12)
        if C < 1:   # where the label it replaced, (P - D)/max(1, |P|), was wrong
            assert abs(c.primal_objective) < 1
            old = _evaluate("(P - D)/max(1, |P|)", c.primal_objective, c.dual_objective, C)
            assert not np.isclose(old, c.relative_gap, rtol=1e-3)


@pytest.mark.parametrize("name", ["margin_geometry", "kkt_regions"])
def test_tutorial_figure_says_what_its_script_computes(name):
    from PIL import Image

    mod = _example(name)
    with Image.open(ROOT / "docs" / "img" / f"{name}.png") as im:
        said = im.text.get("Description")
    assert said == mod.summary(*mod.fitted()), f"docs/img/{name}.png is stale (python " \
                                               f"examples/{name}.py)"
