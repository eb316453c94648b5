"""The direct QP route (backend "qpdirect"): the Problem read as ``min 1/2 zᵀPz + qᵀz`` over
plain variables and solved by Clarabel without CVXPY. Checked against CVXPY models written
here from the raw arrays, and the door it came through: its name is in no file of the package
outside its own folder and the registry."""

from __future__ import annotations

import pathlib
import warnings

import cvxpy as cp
import numpy as np
import pytest

import primaldual
from primaldual.backends import choose
from primaldual.model import Data, GramOperator, Problem, Variable, quad_form, sum_squares, vsum


def _svm_data(seed, n=80, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _linear_svm_primal(X, y, C):
    n, d = X.shape
    w, b, xi = Variable("w", d), Variable("b"), Variable("xi", n)
    A, yy = Data("A", y[:, None] * X), Data("y", y)
    return Problem(0.5 * sum_squares(w) + C * vsum(xi),
                   [A @ w + yy * b + xi >= 1, xi >= 0], name="linear SVM primal")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_linear_svm_primal_matches_an_independent_cvxpy_model(seed):
    X, y = _svm_data(seed)
    P = _linear_svm_primal(X, y, C=0.5)
    assert choose(P)[0] == "qpdirect"
    sol = P.solve(backend="auto")
    assert sol.backend == "qpdirect" and sol.status == "optimal"
    w, b, xi = cp.Variable(X.shape[1]), cp.Variable(), cp.Variable(X.shape[0])
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + 0.5 * cp.sum(xi)),
                     [cp.multiply(y, X @ w + b) >= 1 - xi, xi >= 0])
    ref.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert sol.objective_value == pytest.approx(ref.value, rel=1e-7)
    np.testing.assert_allclose(sol.values["w"], w.value, atol=1e-6)
    margin = P.constraints[0].multiplier
    np.testing.assert_allclose(sol.multipliers[margin], ref.constraints[0].dual_value,
                               atol=1e-6)
    cert = sol.certificate()
    assert abs(cert.relative_gap) < 1e-7 and cert.max_kkt_residual < 1e-6


@pytest.mark.parametrize("seed", [0, 1])
def test_a_dual_with_coupled_rows_matches_cvxpy(seed):
    """max -1/2 aᵀQa + 1ᵀa over two blocks with random coupled inequality rows and an
    equality: a shape no SMO takes."""
    rng = np.random.default_rng(seed)
    n, m = 30, 4
    Z = rng.normal(size=(n, 3))
    Q = Z @ Z.T + 0.1 * np.eye(n)
    R = rng.uniform(0, 1, size=(m, n))
    a, t = Variable("a", n), Variable("t", 2)
    D = Data("R", R)
    prob = Problem(-0.5 * quad_form(a, GramOperator.dense_matrix(Q)) + vsum(a)
                   - 0.3 * sum_squares(t) + vsum(t),
                   [a >= 0, a <= 1.0, D @ a <= 2.0 + vsum(t), vsum(a) == 5.0 + t[0] - t[1]],
                   sense="max", name="coupled dual")
    assert choose(prob)[0] == "qpdirect"
    sol = prob.solve(backend="qpdirect")
    av, tv = cp.Variable(n), cp.Variable(2)
    L = np.linalg.cholesky(Q)
    ref = cp.Problem(cp.Maximize(-0.5 * cp.sum_squares(L.T @ av) + cp.sum(av)
                                 - 0.3 * cp.sum_squares(tv) + cp.sum(tv)),
                     [av >= 0, av <= 1, R @ av <= 2 + cp.sum(tv), cp.sum(av) == 5 + tv[0] - tv[1]])
    ref.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert sol.objective_value == pytest.approx(ref.value, rel=1e-7)
    cert = sol.certificate()
    assert abs(cert.relative_gap) < 1e-7 and cert.max_kkt_residual < 1e-6
    # the same point and multipliers as the library's CVXPY route
    via = prob.solve(backend="cvxpy")
    np.testing.assert_allclose(sol.values["a"], via.values["a"], atol=1e-5)
    for name, lam in via.multipliers.items():
        np.testing.assert_allclose(sol.multipliers[name], lam, atol=1e-5, err_msg=name)


def test_refusals_name_the_condition_and_an_infeasible_qp_says_so():
    x = Variable("x", 3)
    lp = Problem(vsum(x), [x >= 0], name="an LP")
    assert "linear" in primaldual.backends.get_backend("qpdirect").refusal(lp)
    bad = Problem(sum_squares(x), [vsum(x) >= 1, vsum(x) <= 0], name="empty")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        sol = bad.solve(backend="qpdirect")
    assert sol.status == "infeasible"


def test_the_backend_name_is_only_in_its_folder_and_the_registry():
    root = pathlib.Path(primaldual.__file__).parent
    own = root / "backends" / "qpdirect"
    hits = [p.relative_to(root).as_posix() for p in root.rglob("*.py")
            if own not in p.parents and "qpdirect" in p.read_text(encoding="utf-8")]
    assert hits == ["backends/__init__.py"]


def test_interior_point_answer_is_rounded_so_the_support_is_the_models():
    # Clarabel leaves alpha ~ 1e-11 on the lower bound; unrounded, every row counted as a
    # support vector (100 of 100 here): the answer is rounded as CVXPY's is
    import primaldual as pd
    from primaldual.datasets import load_dataset

    X, y = load_dataset("ripley")
    X, y = X[:100], y[:100]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = {b: pd.CSVC(kernel="linear", C=1.0).fit(X, y, backend=b)
                for b in ("qpdirect", "cvxpy", "smo")}
    assert fits["qpdirect"].status_ == "optimal"
    sv = set(fits["qpdirect"].support_.tolist())
    assert sv == set(fits["cvxpy"].support_.tolist()) == set(fits["smo"].support_.tolist())
    assert len(sv) < 60
    assert not np.any((fits["qpdirect"].alpha_ > 0) & (fits["qpdirect"].alpha_ < 1e-9))
