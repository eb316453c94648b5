"""The linear route (backend "linear"): dual coordinate descent with ``w`` kept, the equality
rows by an augmented Lagrangian. Every dual shape it takes is checked against a CVXPY model
written here from the raw arrays (not through the library's CVXPY compilation), the
certificate against the same optimum, and ``auto`` is checked to choose it for linear kernels
only."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from primaldual.methods.nusvc import NuSVC
from primaldual.methods.svc import CSVC, L2SVC, HardMarginSVC
from primaldual.methods.svr import EpsilonSVR, NuSVR


def _data(seed, n=60, d=4, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1, -1)
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0.0
        X = sp.csr_matrix(X)
    return X, y


def _cvx_dual(Z, q, p, C, diag=None, eq=None):
    """min 1/2 ||Z^T D_q a||^2 + 1/2 sum diag a^2 + p^T a, 0 <= a <= C, rows A a = b."""
    a = cp.Variable(p.size)
    obj = 0.5 * cp.sum_squares(Z.T @ cp.multiply(q, a)) + p @ a
    if diag is not None:
        obj = obj + 0.5 * cp.sum(cp.multiply(diag, cp.square(a)))
    cons = [a >= 0] + ([a <= C] if np.isfinite(C).all() else [])
    if eq is not None:
        A, b = eq
        cons.append(A @ a == b)
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return prob.value


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sparse", [False, True])
def test_csvc_dual_matches_cvxpy(seed, sparse):
    X, y = _data(seed, sparse=sparse)
    w = np.random.default_rng(seed + 10).uniform(0.2, 2.0, size=y.size)
    m = CSVC(kernel="linear", C=0.7, tol=1e-9, backend="linear").fit(X, y, sample_weight=w)
    assert m.backend_ == "linear"
    Z = X.toarray() if sparse else X
    yy = np.where(y == m.classes_[1], 1.0, -1.0)
    ref = _cvx_dual(Z, yy, -np.ones(y.size), 0.7 * w, eq=(yy[None, :], np.zeros(1)))
    cert = m.certificate_
    assert cert.status == "optimal"
    assert -cert.dual_objective == pytest.approx(ref, rel=1e-7)
    assert cert.primal_objective == pytest.approx(-ref, rel=1e-7)
    # the equality row y^T alpha = 0 holds exactly (restored after the last pass)
    alpha = np.zeros(y.size)
    alpha[m.support_] = np.abs(np.asarray(m.dual_coef_.todense() if sparse
                                          else m.dual_coef_).ravel())
    assert abs(yy @ alpha) <= 1e-10 * max(1.0, alpha.sum())


@pytest.mark.parametrize("seed", [0, 1])
def test_every_taken_shape_matches_the_smo_backend(seed):
    """L2-SVC (infinite box, diagonal term), eps-SVR (2N variables on N rows), nu-SVC and
    nu-SVR (the two nu rows): the same dual optimum as SMO solved tightly."""
    X, y = _data(seed, n=50)
    t = X @ np.array([1.0, -0.5, 0.2, 0.0]) + 0.1 * np.random.default_rng(seed).normal(size=50)
    cases = [
        (L2SVC, dict(C=0.8), y), (EpsilonSVR, dict(C=1.5, epsilon=0.1), t),
        (NuSVC, dict(nu=0.4), y), (NuSVR, dict(nu=0.5, C=2.0), t),
    ]
    for cls, kw, target in cases:
        lin = cls(kernel="linear", tol=1e-9, backend="linear", **kw).fit(X, target)
        smo = cls(kernel="linear", tol=1e-9, backend="smo", **kw).fit(X, target)
        assert lin.backend_ == "linear", cls.__name__
        assert lin.certificate_.status == "optimal", cls.__name__
        assert lin.certificate_.dual_objective == pytest.approx(
            smo.certificate_.dual_objective, rel=1e-6, abs=1e-9), cls.__name__
        Xt = np.random.default_rng(99).normal(size=(20, 4))
        np.testing.assert_allclose(lin.decision_function(Xt) if hasattr(lin, "classes_")
                                   else lin.predict(Xt),
                                   smo.decision_function(Xt) if hasattr(smo, "classes_")
                                   else smo.predict(Xt), rtol=1e-3, atol=1e-3)


def test_auto_chooses_the_linear_route_for_linear_kernels_only():
    from primaldual.backends.linear.adapter import AUTO_MIN_ROWS

    X, y = _data(3, n=AUTO_MIN_ROWS, sparse=True)
    assert CSVC(kernel="linear").fit(X, y).backend_ == "linear"
    assert CSVC(kernel="linear").fit(X.toarray(), y).backend_ == "linear"
    assert EpsilonSVR(kernel="linear").fit(X, X[:, 0].toarray().ravel()).backend_ == "linear"
    assert CSVC(kernel="rbf").fit(X[:300], y[:300]).backend_ != "linear"
    # below AUTO_MIN_ROWS, SMO (LIBSVM's iterates, scikit-learn's SVC model)
    small = CSVC(kernel="linear").fit(X[:300], y[:300])
    assert small.backend_ == "smo"
    from primaldual.backends import choose
    why = choose(CSVC(kernel="linear").dual(X[:300].toarray(), y[:300]))[1]
    assert why.startswith("smo: accepts") and "linear: 300 data rows" in why
    # the hard margin stays with SMO, which detects the unbounded ray of inseparable data
    Xs = np.array([[0.0, 1.0], [1.0, 2.0], [0.0, -1.0], [1.0, -2.0]])
    assert HardMarginSVC(kernel="linear").fit(Xs, [1, 1, -1, -1]).backend_ != "linear"
    with pytest.raises(ValueError, match="backend 'linear' does not accept"):
        CSVC(kernel="rbf", backend="linear").fit(X, y)


def test_a_stopped_solve_is_not_certified_optimal():
    X, y = _data(4, n=400)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = CSVC(kernel="linear", C=100.0, tol=1e-9, max_iter=1, backend="linear").fit(X, y)
    assert m.certificate_.status != "optimal"
    assert caught, "a fit stopped by max_iter warns"


def test_sparse_rows_stay_sparse_on_the_linear_route():
    X, y = _data(5, n=80, sparse=True)
    m = CSVC(kernel="linear", backend="linear").fit(X, y)
    assert sp.issparse(m.support_vectors_) and m._sparse_rows
    np.testing.assert_array_equal(m.predict(X), CSVC(kernel="linear", backend="linear")
                                  .fit(X.toarray(), y).predict(X.toarray()))
