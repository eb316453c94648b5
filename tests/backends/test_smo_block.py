"""The block working-set route of the SMO backend (``backends/smo/block.py``) against
independent references: the pair route (LIBSVM's SMO, itself checked against CVXPY and LIBSVM
in test_smo.py), scikit-learn's LIBSVM and CVXPY on the same dual.

Both routes stop on the same rule (maximal violating pair below ``tol``, then the relative
duality gap below ``gap_tol``), so their duals agree to what that rule leaves: at ``tol = 1e-3``
and ``gap_tol = 1e-3`` well within 1e-6 relative on these problems (measured 1e-9 to 3e-8);
the working-set size is made small (``BLOCK_SIZE``) so that the problems, small enough for a
test, still run many outer iterations, shrinking and reconstructing the shrunk gradients.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.svm import SVC

import primaldual
from primaldual.backends.smo import ConvergenceWarning, smo_csvc
from primaldual.kernels import RBF, Polynomial

block = pytest.importorskip("primaldual.backends.smo.block")

SEEDS = [0, 1, 2]


def _data(seed, n, d=10):
    X, y = make_classification(n, d, n_informative=min(6, d - 2), n_redundant=min(2, d - 3),
                               flip_y=0.05, random_state=seed)
    X = (X - X.mean(0)) / X.std(0)
    return X, np.where(y == 1, 1.0, -1.0)


def _dual(X, y, gamma, beta):
    """The C-SVC dual ``1^T |beta| - 1/2 beta^T K beta`` (maximised form), in float64."""
    K = RBF(gamma=gamma)(X, X)
    return float(np.abs(beta).sum() - 0.5 * beta @ K @ beta)


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(block, "BLOCK_SIZE", 64)


@pytest.mark.parametrize("seed", SEEDS)
def test_block_equals_pair_route_and_libsvm(seed, small_blocks):
    X, y = _data(seed, 2500)
    rng = np.random.default_rng(seed)
    C, gamma = float(rng.uniform(0.5, 4.0)), 1.0 / X.shape[1]
    kw = dict(tol=1e-3, gap_tol=1e-3)
    rb = smo_csvc(X, y, RBF(gamma=gamma), C, block=True, **kw)
    rp = smo_csvc(X, y, RBF(gamma=gamma), C, block=False, **kw)
    assert rb.route == "block" and rp.route == "numba"
    assert rb.status == "optimal" and rb.max_violation < 1e-3
    d_block, d_pair = _dual(X, y, gamma, rb.beta), _dual(X, y, gamma, rp.beta)
    s = SVC(C=C, gamma=gamma, tol=1e-3).fit(X, y)
    beta_s = np.zeros(len(y))
    beta_s[s.support_] = s.dual_coef_.ravel()
    d_libsvm = _dual(X, y, gamma, beta_s)
    assert abs(d_block - d_pair) / abs(d_pair) < 1e-6
    assert abs(d_block - d_libsvm) / abs(d_libsvm) < 1e-6
    # the result record is consistent: the gradient is Q a - 1 (float32 kernel: ~1e-6), the
    # objective is 1/2 a^T (G + p), the equality holds, the bias is LIBSVM's
    K = RBF(gamma=gamma)(X, X)
    Qm = np.outer(y, y) * K
    assert np.abs(rb.grad - (Qm @ rb.alpha - 1.0)).max() < 1e-4
    assert abs(rb.objective + d_block) / abs(d_block) < 1e-6
    assert abs(y @ rb.alpha) < 1e-8
    assert np.all(rb.alpha >= 0) and np.all(rb.alpha <= C)
    assert abs(rb.b - s.intercept_[0]) < 5e-3


def test_block_shrinks_and_reconstructs(small_blocks):
    # enough outer iterations for shrinking epochs and a reconstruction: the stats say so,
    # and the reconstructed gradient of every variable is Q a - 1
    X, y = _data(3, 3000)
    gamma = 0.1
    from primaldual.backends.smo.solver import _transposed
    from primaldual.kernels.compiled import row_sq_norms
    Xr, Xt = _transposed(X, 0)
    alpha, G = np.zeros(len(y)), np.empty(len(y))
    it, code, gap, obj, b, stats = block.block_smo(
        Xt, row_sq_norms(Xr), gamma, -np.ones(len(y)), y, np.ones(len(y)), alpha, G, 1e-3,
        10**7)
    assert code == 0 and gap < 1e-3
    assert stats["shrunk"] > 0 and stats["rebuilt"] >= 1 and stats["outer"] > 10
    Qm = np.outer(y, y) * RBF(gamma=gamma)(Xr, Xr)
    assert np.abs(G - (Qm @ alpha - 1.0)).max() < 1e-4


@pytest.mark.parametrize("seed", SEEDS)
def test_block_matches_cvxpy(seed, monkeypatch):
    monkeypatch.setattr(block, "BLOCK_SIZE", 16)
    X, y = _data(seed, 160, d=5)
    rng = np.random.default_rng(seed)
    C, gamma = float(rng.uniform(0.5, 4.0)), float(rng.uniform(0.1, 0.5))
    w = rng.uniform(0.5, 2.0, len(y))   # per-variable bounds C w_i
    r = smo_csvc(X, y, RBF(gamma=gamma), C, sample_weight=w, block=True, tol=1e-6,
                 gap_tol=1e-8)
    assert r.route == "block" and r.status == "optimal"
    K = RBF(gamma=gamma)(X, X)
    L = np.linalg.cholesky(K + 1e-9 * np.eye(len(y)))
    a = cp.Variable(len(y))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ cp.multiply(y, a)) - cp.sum(a)),
                      [y @ a == 0, a >= 0, a <= C * w])
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == cp.OPTIMAL
    assert abs(r.objective - prob.value) / abs(prob.value) < 1e-6
    assert np.all(r.alpha <= C * w + 1e-12)


def test_route_by_size_and_form(monkeypatch):
    X, y = _data(0, 600)
    monkeypatch.setattr(block, "BLOCK_MIN_VAR", 500)
    assert smo_csvc(X, y, RBF(gamma=0.1), 1.0).route == "block"
    assert smo_csvc(X, y, RBF(gamma=0.1), 1.0, block=False).route == "numba"
    # another kernel, or a trace asked for: the pair route
    assert smo_csvc(X, y, Polynomial(degree=2, gamma=0.1), 1.0).route == "numba"
    assert smo_csvc(X, y, RBF(gamma=0.1), 1.0, record_trace=True).route == "numba"
    monkeypatch.setattr(block, "BLOCK_MIN_VAR", 10_000)
    assert smo_csvc(X, y, RBF(gamma=0.1), 1.0).route == "numba"


def test_stall_is_continued_by_the_pair_route(monkeypatch):
    # a block run declared stalled at once is finished by the pair route from its point
    X, y = _data(1, 800)
    monkeypatch.setattr(block, "STALL_OUTER", -1)
    r = smo_csvc(X, y, RBF(gamma=0.1), 1.0, block=True, gap_tol=1e-3)
    ref = smo_csvc(X, y, RBF(gamma=0.1), 1.0, block=False, gap_tol=1e-3)
    assert r.route == "block+numba" and r.status == "optimal"
    assert abs(r.objective - ref.objective) / abs(ref.objective) < 1e-6


def test_max_iter_warns_on_the_block_route():
    X, y = _data(2, 800)
    with pytest.warns(ConvergenceWarning):
        r = smo_csvc(X, y, RBF(gamma=0.1), 1.0, block=True, max_iter=20)
    assert r.status == "max_iter" and r.route == "block"


def test_public_fit_on_the_block_route_is_certified(monkeypatch):
    X, y = _data(4, 1500)
    monkeypatch.setattr(block, "BLOCK_MIN_VAR", 1000)
    monkeypatch.setattr(block, "BLOCK_SIZE", 128)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = primaldual.CSVC(C=1.0, gamma=0.1).fit(X, y)
    assert est.certificate_.status == "optimal"
    monkeypatch.setattr(block, "BLOCK_MIN_VAR", 10**9)
    ref = primaldual.CSVC(C=1.0, gamma=0.1).fit(X, y)
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), atol=2e-3)
