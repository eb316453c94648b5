"""A factory variant on an extra data set of another length (Weston et al.'s universum SVM,
``fit(X, y, U=U)``): the feature-space variable spans the training rows and the universum, the
decision reads the training rows, and a zero-width box (``C_U = 0``, the universum ignored)
is solved at once. Checked against a plain CVXPY primal with the linear kernel."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import primaldual as pd
from primaldual.model import Data, FeatureVariable, Problem, Variable, norm2, phi, vsum


def universum(X, y, kernel, C, C_U, epsilon, U):
    n, m = X.shape[0], U.shape[0]
    B = np.vstack([X, U])                      # the training rows first, then the universum
    w, b = FeatureVariable("w", kernel, B), Variable("b")
    xi, z, zs = Variable("xi", n), Variable("zeta", m), Variable("zeta_star", m)
    f = w @ phi(B)[np.arange(n)] + b
    g = w @ phi(B)[n + np.arange(m)] + b
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi) + Data("C_U", C_U) * vsum(z + zs),
                [(Data("y", y) * f >= 1 - xi).named("alpha"), (xi >= 0).named("mu"),
                 (g <= epsilon + z).named("gamma"), (-1.0 * g <= epsilon + zs).named("gamma_s"),
                 (z >= 0).named("nu"), (zs >= 0).named("nu_s")], "min", "universum SVM primal")
    return P, f


def _cvx(X, y, U, C, C_U, eps):
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    obj = 0.5 * cp.sum_squares(w) + C * cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b)))
    if C_U > 0:
        obj = obj + C_U * cp.sum(cp.pos(cp.abs(U @ w + b) - eps))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value


@pytest.mark.parametrize("C_U", [0.5, 0.0])
def test_universum_factory_on_extra_rows_matches_cvxpy(C_U):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
    U = 0.3 * rng.normal(size=(15, 2))
    m = pd.Variant(universum, kernel="linear", C=1.0, C_U=C_U, epsilon=0.1, tol=1e-8)
    m.fit(X, y, U=U)
    cert = m.certificate_
    assert cert.status == "optimal" and m.n_iter_ < 100_000
    ref = _cvx(X, np.where(y == 1, 1.0, -1.0), U, 1.0, C_U, 0.1)
    assert cert.primal_objective == pytest.approx(ref, rel=1e-6)
    # the decision reads w over the training rows and the universum
    w = (m.dual_coef_ @ m.support_vectors_).ravel()
    np.testing.assert_allclose(m.decision_function(X), X @ w + m.intercept_[0], atol=1e-8)
    with pytest.raises(ValueError, match="finite"):
        m.fit(X, y, U=np.full((3, 2), np.nan))
