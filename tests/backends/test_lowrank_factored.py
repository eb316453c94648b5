"""Issue 31: ``rank="auto"`` without forming ``V`` -- the factor kept as ``V = C P``
(``FactoredNystrom``) and ``B = D_s C P`` as an operator (``FactoredB``).

References are independent of the code under test where they can be: ``C`` from scikit-learn's
``rbf_kernel``, the trace error from numpy's trace of ``K - V V^T``; the model of the factored
route is compared with the route that forms ``V`` (``AUTO_RANK_FACTORED = False``), the
pre-existing code path, on the same seeded problems.
"""

import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import primaldual.backends.lowrank.adapter as lra
from primaldual import CSVC, RankNotConvergedWarning
from primaldual.backends.lowrank._factored import FactoredB
from primaldual.backends.lowrank._threads import matvec, rmatvec
from primaldual.kernels import FactoredNystrom, NystromGrowth, make_kernel


def _data(n, seed=0, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
def test_factored_growth_is_the_formed_growth(seed):
    X, y = _data(400, seed)
    g = 0.3
    kern = make_kernel("rbf", g, 3, 0.0, X)
    full = NystromGrowth(kern, X, random_state=seed)
    kept = NystromGrowth(kern, X, random_state=seed, form_V=False, float32_copy=True)
    for m, prefer in [(30, None), (80, np.arange(0, 400, 2)), (150, np.arange(0, 400, 3))]:
        F, G = full.factor(m, prefer=prefer), kept.factor(m, prefer=prefer)
        assert isinstance(G, FactoredNystrom) and not G.formed
        np.testing.assert_array_equal(G.basis_index, F.basis_index)
        # C is the kernel block against the landmarks (scikit-learn's RBF)
        np.testing.assert_allclose(G.C, rbf_kernel(X, X[G.basis_index], gamma=g), atol=1e-12)
        np.testing.assert_allclose(kept.C32[:, :m], G.C.astype(np.float32), rtol=0, atol=0)
        w = np.random.default_rng(m).normal(size=F.rank)
        ref = F.V @ w
        assert G.rank == F.rank
        np.testing.assert_allclose(G.dot(w), ref, rtol=0, atol=1e-10 * np.abs(ref).max())
        rows = np.array([3, 17, 250])
        np.testing.assert_allclose(G.rows(rows), F.V[rows], atol=1e-10)
        op = G.operator()
        z = np.random.default_rng(1).normal(size=400)
        np.testing.assert_allclose(op.T @ z, F.V.T @ z, atol=1e-9)
        np.testing.assert_allclose(op @ np.eye(F.rank)[:, :3], F.V[:, :3], atol=1e-10)
    assert not G.formed
    # V and the trace error on first access: the same as the formed factor's, and the trace
    # error is numpy's trace of K - V V^T
    K = rbf_kernel(X, gamma=g)
    assert G.trace_error == pytest.approx(np.trace(K - G.V @ G.V.T), abs=1e-8)
    assert G.formed and G.relative_error == pytest.approx(F.relative_error, abs=1e-12)
    np.testing.assert_allclose(G.V, F.V, atol=1e-10)
    with pytest.raises(ValueError, match="residual"):
        kept.factor(160, prefer=np.arange(10), sampling="residual")


@pytest.mark.parametrize("threads", [1, 2])
def test_factored_B_products_and_rows(monkeypatch, threads):
    import primaldual.backends.lowrank._factored as fb
    monkeypatch.setattr(fb, "n_threads", lambda work: threads)  # rows on row blocks
    rng = np.random.default_rng(4)
    C = rng.random((300, 40))
    s = np.where(rng.random(300) > 0.5, 1.0, -1.0)
    for P in (np.triu(rng.normal(size=(40, 40))), rng.normal(size=(40, 25))):
        B = s[:, None] * (C @ P)
        op = FactoredB(C, P, s)
        assert op.triangular == (P.shape == (40, 40))
        x, a = rng.normal(size=P.shape[1]), rng.normal(size=300)
        np.testing.assert_allclose(matvec(op, x), B @ x, atol=1e-12)
        np.testing.assert_allclose(rmatvec(op, a), B.T @ a, atol=1e-11)
        idx = np.array([5, 0, 299, 5])
        np.testing.assert_allclose(op[idx], B[idx], atol=1e-12)
        np.testing.assert_allclose(op[np.arange(300) < 7], B[:7], atol=1e-12)
        np.testing.assert_allclose(op.rows_rmatvec(idx, a[:4]), B[idx].T @ a[:4], atol=1e-12)
        np.testing.assert_allclose(op.dense(), B, atol=1e-12)
        # the float32 copy: float32 passes and rows, to float32 accuracy
        op32 = FactoredB(C.astype(np.float32), P, s)
        assert op32[idx].dtype == np.float32
        np.testing.assert_allclose(op32[idx], B[idx], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(matvec(op32, x), B @ x, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("f32", [False, True])
def test_csvc_auto_same_certified_model_with_and_without_V(monkeypatch, f32):
    """The C P route and the route forming V reach the same ranks and the same certified
    model (decision values to 1e-7 relative); with ``f32`` the float32 copy of C runs the
    continuation (its smoothed points decide the growth), as at N = 200,000."""
    X, y = _data(1500, seed=3)
    monkeypatch.setattr(lra, "AUTO_RANK_START", 25)
    monkeypatch.setattr(lra, "AUTO_RANK_MAX", 200)
    if f32:
        monkeypatch.setattr(lra, "AUTO_RANK_FLOAT32_MIN", 0)
    Z = np.random.default_rng(9).normal(size=(50, 4))
    fits = {}
    for factored in (False, True):
        monkeypatch.setattr(lra, "AUTO_RANK_FACTORED", factored)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankNotConvergedWarning)
            fits[factored] = CSVC(C=1.0, gamma=0.5, backend="lowrank").fit(X, y)
    old, new = fits[False], fits[True]
    F = new.lowrank_factor_
    assert isinstance(F, FactoredNystrom) and not F.formed  # V was never formed by the fit
    assert not isinstance(old.lowrank_factor_, FactoredNystrom)
    s_old, s_new = (m.solution_.info["rank_selection"] for m in (old, new))
    assert s_new["ranks"] == s_old["ranks"] and s_new["converged"] == s_old["converged"]
    for m in (old, new):
        assert m.certificate_.status == "optimal" and m.certificate_.relative_gap <= 1e-8
    ref = old.decision_function(np.vstack([X, Z]))
    got = new.decision_function(np.vstack([X, Z]))
    tol = 1e-7 if not f32 else 1e-3  # float32 smoothed points may pick other landmarks
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol * np.abs(ref).max())
    if not f32:
        np.testing.assert_array_equal(F.basis_index, old.lowrank_factor_.basis_index)
    # the certificate is the eta-problem of what predict uses: recomputed here from the
    # returned eta with B = D_y k(X, X_L) P from scikit-learn's kernel (V formed by us)
    V = rbf_kernel(X, F.basis, gamma=0.5) @ F.proj
    f = V @ new.eta_ + new.b_
    np.testing.assert_allclose(new.decision_function(X), f, atol=1e-10)
    primal = 0.5 * new.eta_ @ new.eta_ + np.maximum(0.0, 1.0 - y * f).sum()
    r = new.solution_.info["lowrank"]
    assert primal == pytest.approx(r.primal_objective, rel=1e-9)
    assert not F.formed
