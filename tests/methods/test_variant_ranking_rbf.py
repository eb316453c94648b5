"""An RBF ranking SVM written on a sparse pair-difference matrix, ``Data("D", D) @ (w @
phi(X))`` with ``D`` a scipy CSR ``P x N`` matrix: ``Data`` keeps it sparse, the derived dual's
``Q = D K Dᵀ`` is an operator (the kernel, the rows and ``B = Dᵀ``: never the ``P x P`` matrix
nor a ``P x rank(K)`` factor), and the fit matches an independent CVXPY model."""

from __future__ import annotations

import functools

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import primaldual as pd
from primaldual.kernels import make_kernel
from primaldual.model import Data, FeatureVariable, Problem, Variable, norm2, phi, vsum
from primaldual.model.dualize import dualize
from primaldual.ranking import pair_matrix


def ranking_rbf(X, y, kernel, C, qid):
    D = pair_matrix(y, qid)
    w, xi = FeatureVariable("w", kernel, X), Variable("xi", D.shape[0], index="P")
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi),
                [(Data("D", D) @ (w @ phi(X)) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "RBF ranking SVM primal")
    return P, w @ phi(X)


def data(n, per=20, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    rel = np.digitize(np.sin(X[:, 0]) + X[:, 1] ** 2 / 2 + 0.2 * rng.normal(size=n),
                      [0.0, 0.5, 1.2])
    return X, rel.astype(float), np.repeat(np.arange(n // per), per)


@functools.lru_cache(maxsize=2)
def _reference(n, gamma, C):
    X, rel, qid = data(n)
    return reference(X, pair_matrix(rel, qid), gamma, C)


def reference(X, D, gamma, C):
    """The primal in CVXPY, by hand: w = Σ_j β_j φ(x_j), ||w||² = βᵀKβ = ||Lᵀβ||², the
    training scores ``f = Kβ`` a variable of their own (the pair rows read the sparse ``D``)."""
    K = make_kernel("rbf", gamma=gamma)(X)
    L = np.linalg.cholesky(K + 1e-10 * np.eye(len(K)))
    beta, f, xi = cp.Variable(len(K)), cp.Variable(len(K)), cp.Variable(D.shape[0])
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ beta) + C * cp.sum(xi)),
                      [f == K @ beta, D @ f >= 1 - xi, xi >= 0])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value, K @ beta.value


def test_sparse_data_stays_sparse_and_prints_its_entries():
    X, rel, qid = data(60)
    D = pair_matrix(rel, qid)
    dd = Data("D", D)
    assert sp.issparse(dd.value) and dd.ndim == 2
    assert sp.issparse(Data("D", D.tocsc()).value) and Data("D", D.tocoo()).value.format == "csr"
    P, _ = ranking_rbf(X, rel, make_kernel("rbf", gamma=0.3), 1.0, qid)
    (c, _), = [(c, None) for c in P.constraints if c.multiplier == "alpha"]
    assert sp.issparse(c.g.lin[P.variables[1] if P.variables[1].feature else P.variables[0]])
    text = str(dualize(P))
    assert "Σ_i D_pi ⟨w, φ(x_i)⟩ ≥ 1 - ξ_p,  p = 1..P   [α_p ≥ 0]" in text
    assert "w = Σ_p α_p Σ_i D_pi φ(x_i)" in text
    assert "Q_pq = ⟨a_p, a_q⟩ with a_p = Σ_i D_pi φ(x_i) for α_p" in text


def test_pair_gram_is_an_operator_not_a_p_by_p_matrix():
    X, rel, qid = data(60)
    P, _ = ranking_rbf(X, rel, make_kernel("rbf", gamma=0.3), 1.0, qid)
    op = dualize(P).dual.objective.terms[0].op
    n_pairs = pair_matrix(rel, qid).shape[0]
    # the combination form: the N rows themselves and B = Dᵀ (N x P, two entries a column)
    assert op.matrix is None and op.X.shape == X.shape and op.coef.shape == (60, n_pairs)
    assert op.coef.nnz == 2 * n_pairs
    K = make_kernel("rbf", gamma=0.3)(X)
    D = pair_matrix(rel, qid).toarray()
    np.testing.assert_array_equal(op.coef.toarray(), D.T)
    v = np.random.default_rng(1).normal(size=n_pairs)
    np.testing.assert_allclose(op.matvec(v), D @ (K @ (D.T @ v)), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(op.dense(), D @ K @ D.T, rtol=1e-9, atol=1e-9)
    L = op.factor()   # D L_K: what CVXPY reads, rank(K) columns
    assert L.shape[1] <= X.shape[0]
    np.testing.assert_allclose(L @ L.T, D @ K @ D.T, atol=1e-8)


@pytest.mark.parametrize("backend", ["cvxpy", "auto", "lowrank"])
def test_rbf_ranking_fit_matches_cvxpy(backend):
    X, rel, qid = data(300)
    D = pair_matrix(rel, qid)
    assert 1500 <= D.shape[0] <= 3000
    gamma, C = 0.3, 1.0
    kw = {} if backend == "cvxpy" else {"tol": 1e-9}
    m = pd.Variant(ranking_rbf, task="ranking", kernel="rbf", gamma=gamma, C=C,
                   backend=backend, **kw).fit(X, rel, qid=qid)
    ref, f_ref = _reference(300, gamma, C)   # one solve for the three backends
    assert m.certificate_.status == "optimal"
    assert abs(m.certificate_.primal_objective - ref) <= 1e-6 * abs(ref)
    # the scores (w is unique: the primal is 1-strongly convex in w) to 1e-6 on CVXPY; a route
    # stopping at a relative gap g has ||w - w*||² <= 2 g |P|, scores within sqrt(2 g |P|) (the
    # linear route auto picks on the factor's rows, the low-rank one: ~1e-5, ~4e-4 here)
    atol = {"cvxpy": 1e-6, "auto": 1e-4, "lowrank": 2e-3}[backend] * max(1.0, np.abs(f_ref).max())
    np.testing.assert_allclose(m.predict(X), f_ref, atol=atol)


def test_linear_feature_pairs_use_the_points_as_factor():
    """A linear kernel: Q = D X Xᵀ Dᵀ is the linear kernel on the rows of D X (P x d), without
    the N x N Gram matrix (the feature variable's cached Gram stays unset)."""
    from primaldual.kernels import Linear
    X, rel, qid = data(80)
    P, _ = ranking_rbf(X, rel, Linear(), 1.0, qid)
    w = next(v for v in P.variables if v.feature)
    op = dualize(P).dual.objective.terms[0].op
    D = pair_matrix(rel, qid)
    assert op.X.shape == (D.shape[0], X.shape[1]) and w._K is None
    np.testing.assert_allclose(op.X, D @ X, atol=1e-12)
