"""The LS-SVM family's numeric certificate equals the modelling layer's certificate of the
same point (the primal and dual problem objects evaluated term by term), on seeded problems:
LS-SVC (unit and Fisher targets, sample weights), LS-SVR with and without the bias, kernel
ridge and the proximal SVC. A wrong constant or sign in the closed form shows here."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
from primaldual.certificate import certify
from primaldual.methods._fit import stationarity_in_residual_units


def _cases():
    return [("lssvc", lambda: pd.LSSVC(C=2.0, gamma=0.5), "clf", None),
            ("lssvc-fisher", lambda: pd.LSSVC(C=0.7, gamma=0.3, targets="fisher"), "clf", None),
            ("lssvc-weights", lambda: pd.LSSVC(C=3.0, gamma=0.5), "clf", "w"),
            ("lssvr", lambda: pd.LSSVR(C=3.0, gamma=0.5), "reg", None),
            ("lssvr-nobias", lambda: pd.LSSVR(C=3.0, gamma=0.5, fit_intercept=False), "reg", "w"),
            ("krr", lambda: pd.KernelRidge(C=2.0, gamma=0.5), "reg", "w"),
            ("proximal", lambda: pd.ProximalSVC(C=2.0, gamma=0.5), "clf", "w")]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name,make,kind,weights", _cases(), ids=[c[0] for c in _cases()])
def test_numeric_ls_certificate_equals_the_modelling_layers(seed, name, make, kind, weights):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(40) > 0, 1, -1) if kind == "clf" \
        else X[:, 1] + 0.1 * rng.standard_normal(40)
    sw = rng.uniform(0.5, 2.0, 40) if weights else None
    m = make()
    data = m._prepare(X, y, sw)
    task = m._fit_task(data, "dual")
    sol, rec, _ = m._solve(data, "auto", "dual", task=task)
    P, D = task.P, task.D
    # perturb the point so the gap and residuals are not all zero: the check then compares
    # nonzero numbers, not two zeros
    a = np.asarray(sol.values["alpha"]) * (1 + 0.05 * rng.standard_normal(40))
    sol.values["alpha"] = a
    rec = task.recover(sol)
    fast = m._certify(data, rec, task, "optimal")
    ref = certify(P, rec.primal_point, rec.primal_multipliers, D, rec.dual_point)
    for key in ("stationarity[e]", "stationarity[xi]"):
        stationarity_in_residual_units(ref, key, data.C)
    assert fast.primal_objective == pytest.approx(ref.primal_objective, rel=1e-10)
    assert fast.dual_objective == pytest.approx(ref.dual_objective, rel=1e-10)
    assert abs(fast.duality_gap) > 1e-6          # the perturbation is visible
    assert set(fast.kkt) == set(ref.kkt)
    for k in ref.kkt:
        assert fast.kkt[k] == pytest.approx(ref.kkt[k], rel=1e-8, abs=1e-12), k
