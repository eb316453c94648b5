"""The pairs route: dual coordinate descent with the scores ``f = K B a`` kept, on box QPs whose
``Q = Bᵀ K B`` is a kernel over combinations of rows (the RBF ranking SVM over a sparse
pair-difference matrix). Checked against an independent CVXPY primal written by hand: the
objective, the certificate's dual = primal, the scores and the pairwise order on held-out
queries; and the cache, the refusals and a stopped solve that is not certified."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import primaldual as pd
from primaldual.backends import choose, get_backend
from primaldual.exceptions import ConvergenceWarning
from primaldual.kernels import make_kernel
from primaldual.model import Data, FeatureVariable, Problem, Variable, norm2, phi, vsum
from primaldual.model.dualize import dualize
from primaldual.ranking import pair_matrix

GAMMA, C = 0.3, 1.0


def ranking():
    """The RBF ranking SVM factory."""
    def spec(X, y, kernel, C, qid):
        D = pair_matrix(y, qid)
        w, xi = FeatureVariable("w", kernel, X), Variable("xi", D.shape[0], index="P")
        P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi),
                    [(Data("D", D) @ (w @ phi(X)) >= 1 - xi).named("alpha"),
                     (xi >= 0).named("mu")], "min", "RBF ranking SVM primal")
        return P, w @ phi(X)
    return spec


def data(n, seed, per=20, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    rel = np.digitize(np.sin(X[:, 0]) + X[:, 1] ** 2 / 2 + 0.2 * rng.normal(size=n),
                      [0.0, 0.5, 1.2])
    return X, rel.astype(float), np.repeat(np.arange(n // per), per)


def reference(X, D, kernel, C):
    """The primal by hand in CVXPY: ``w = Σ_j β_j φ(x_j)``, ``||w||² = ||Lᵀβ||²`` with
    ``K + 1e-10 I = L Lᵀ``; the training scores ``f = K β`` a variable of their own, so the
    pair rows read the sparse ``D`` (not a dense ``P x N`` block); returns the optimal value and
    ``β``."""
    K = kernel(X)
    L = np.linalg.cholesky(K + 1e-10 * np.eye(len(K)))
    beta, f, xi = cp.Variable(len(K)), cp.Variable(len(K)), cp.Variable(D.shape[0])
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ beta) + C * cp.sum(xi)),
                      [f == K @ beta, D @ f >= 1 - xi, xi >= 0])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == "optimal"
    return prob.value, beta.value


def reference_value(X, D, kernel, C):
    """The primal's value by hand in CVXPY on explicit features: ``K = V Vᵀ`` (numpy's
    eigendecomposition, eigenvalues below ``1e-12`` of the largest dropped), ``w`` in that
    space, the training scores ``f = V w`` a variable of their own (well posed for a low-rank
    kernel too; the pair rows read the sparse ``D``)."""
    lam, U = np.linalg.eigh(kernel(X))
    keep = lam > 1e-12 * lam.max()
    V = U[:, keep] * np.sqrt(lam[keep])
    w, f, xi = cp.Variable(V.shape[1]), cp.Variable(V.shape[0]), cp.Variable(D.shape[0])
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(xi)),
                      [f == V @ w, D @ f >= 1 - xi, xi >= 0])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == "optimal"
    return prob.value


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pairs_matches_an_independent_cvxpy_primal(seed):
    X, rel, qid = data(300, seed)
    Xt, relt, qidt = data(200, seed + 100)
    D = pair_matrix(rel, qid)
    kern = make_kernel("rbf", gamma=GAMMA)
    m = pd.Variant(ranking(), task="ranking", kernel="rbf", gamma=GAMMA, C=C,
                   backend="pairs", tol=1e-9).fit(X, rel, qid=qid)
    ref, beta = reference(X, D, kern, C)
    cert = m.certificate_
    assert m.backend_ == "pairs" and cert.status == "optimal"
    # primal = CVXPY's, and the certificate's own dual = its primal (both recomputed)
    assert abs(cert.primal_objective - ref) <= 1e-6 * abs(ref)
    assert abs(cert.dual_objective - cert.primal_objective) <= 1e-6 * abs(ref)
    assert cert.max_kkt_residual <= 1e-6 * max(1.0, abs(ref))
    # the scores: w is unique (the primal is 1-strongly convex in w), and a point at gap g
    # has ||w - w*||^2 <= 2 g, so |f(x) - f*(x)| <= sqrt(2 g) sqrt(k(x, x)) (k(x, x) = 1);
    # g <= 1e-9 |P| (the route's target) plus CVXPY's own 1e-10: sqrt(2 * 1.1e-9 * |P|)
    bound = np.sqrt(2 * 1.1e-9 * abs(ref)) + 1e-6
    f_ref, ft_ref = kern(X) @ beta, kern(Xt, X) @ beta
    np.testing.assert_allclose(m.predict(X), f_ref, atol=bound)
    ft = m.predict(Xt)
    np.testing.assert_allclose(ft, ft_ref, atol=bound)
    # the pairwise order on held-out queries: equal wherever the reference's two scores are
    # more than twice the bound apart (within that, the order is not determined by the tol)
    Dt = pair_matrix(relt, qidt)
    diff, diff_ref = Dt @ ft, Dt @ ft_ref
    sure = np.abs(diff_ref) > 2 * bound
    assert sure.mean() > 0.99
    np.testing.assert_array_equal(np.sign(diff[sure]), np.sign(diff_ref[sure]))
    assert abs(np.mean(diff > 0) - np.mean(diff_ref > 0)) <= 1.0 - sure.mean()


def test_auto_takes_the_pairs_route_and_the_linear_kernel_keeps_its_own():
    X, rel, qid = data(100, 3)
    m = pd.Variant(ranking(), task="ranking", kernel="rbf", gamma=GAMMA, C=C,
                   tol=1e-6).fit(X, rel, qid=qid)
    assert m.backend_ == "pairs" and m.certificate_.status == "optimal"
    # the derivation never formed the N x N Gram matrix of the feature variable, nor P x P
    w = next(v for v in m.derivation_.primal.variables if v.feature)
    assert w._K is None


def test_the_named_linear_route_reads_the_factor_rows_and_agrees():
    X, rel, qid = data(200, 10)
    fits = {b: pd.Variant(ranking(), task="ranking", kernel="rbf", gamma=GAMMA, C=C,
                          backend=b, tol=1e-8).fit(X, rel, qid=qid) for b in ("pairs", "linear")}
    for b, m in fits.items():
        assert m.backend_ == b and m.certificate_.status == "optimal"
    ref = fits["linear"].certificate_.primal_objective
    assert abs(fits["pairs"].certificate_.primal_objective - ref) <= 1e-7 * abs(ref)


def test_a_tiny_cache_evicts_rows_and_gives_the_same_point():
    X, rel, qid = data(200, 4)
    fits = [pd.Variant(ranking(), task="ranking", kernel="rbf", gamma=GAMMA, C=C,
                       backend="pairs", tol=1e-8, cache_size=cs).fit(X, rel, qid=qid)
            for cs in (200.0, 0.005)]
    small = fits[1].solution_.info
    assert small["cache_rows"] == 3       # 0.005 MB of 200-entry rows
    assert small["kernel_rows_computed"] > X.shape[0]   # rows were evicted and recomputed
    assert fits[0].solution_.info["kernel_rows_computed"] <= X.shape[0]
    for m in fits:
        assert m.certificate_.status == "optimal"
    np.testing.assert_allclose(fits[0].predict(X), fits[1].predict(X), atol=1e-4)


def test_a_kernel_without_a_compiled_spec_reads_its_gram_matrix():
    X, rel, qid = data(160, 5)
    kern = make_kernel("rbf", gamma=GAMMA) + make_kernel("linear")
    assert kern.spec() is None
    m = pd.Variant(ranking(), task="ranking", kernel=kern, C=C, backend="pairs",
                   tol=1e-9).fit(X, rel, qid=qid)
    ref = reference_value(X, pair_matrix(rel, qid), kern, C)
    assert m.certificate_.status == "optimal"
    assert abs(m.certificate_.primal_objective - ref) <= 1e-6 * abs(ref)


def test_polynomial_kernel_rows_match_cvxpy():
    X, rel, qid = data(160, 6)
    kern = make_kernel("poly", gamma=0.5, coef0=1.0, degree=2)
    m = pd.Variant(ranking(), task="ranking", kernel=kern, C=C, backend="pairs",
                   tol=1e-9).fit(X, rel, qid=qid)
    ref = reference_value(X, pair_matrix(rel, qid), kern, C)
    assert m.certificate_.status == "optimal"
    assert abs(m.certificate_.primal_objective - ref) <= 1e-6 * abs(ref)


def test_a_stopped_solve_warns_and_is_not_certified():
    X, rel, qid = data(200, 7)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = pd.Variant(ranking(), task="ranking", kernel="rbf", gamma=GAMMA, C=C,
                       backend="pairs", tol=1e-6, max_iter=1).fit(X, rel, qid=qid)
    assert any(isinstance(w.message, ConvergenceWarning) for w in caught)
    assert m.solution_.status == "max_iter" and m.status_ == "max_iter"
    assert m.certificate_.status != "optimal"


def test_other_routes_refuse_the_combination_form_and_pairs_refuses_other_duals():
    X, rel, qid = data(60, 8)
    P, _ = ranking()(X, rel, make_kernel("rbf", gamma=GAMMA), C, qid)
    dual = dualize(P).dual
    assert choose(dual)[0] == "pairs"
    assert "combinations" in get_backend("smo").refusal(dual)
    assert get_backend("gsmo").refusal(dual) is not None
    # the linear route takes it when named (on the P x rank(K) rows of D L), never for auto
    assert get_backend("linear").refusal(dual) is None
    assert "pairs route" in get_backend("linear").auto_refusal(dual)
    with pytest.raises(ValueError, match="does not accept"):
        pd.Variant(ranking(), task="ranking", kernel="rbf", gamma=GAMMA, C=C,
                   backend="smo").fit(X, rel, qid=qid)
    # the linear kernel keeps the rows of D X (the linear route's w): not this route's
    from primaldual.kernels import Linear
    lin = dualize(ranking()(X, rel, Linear(), C, qid)[0]).dual
    assert "combinations" in get_backend("pairs").refusal(lin)
    assert choose(lin)[0] != "pairs"


def test_combination_operator_substitution_keeps_its_form():
    """Scaling, an added diagonal and a signed selection of a combination-form operator stay
    in that form (the reading of a dual builds them) and equal the dense products."""
    from primaldual.model.detection import _scaled, _substituted, _with_diag
    from primaldual.model.gram import GramOperator
    rng = np.random.default_rng(9)
    X = rng.normal(size=(30, 3))
    B = sp.random(30, 12, density=0.15, random_state=3, format="csc")
    op = GramOperator(make_kernel("rbf", gamma=0.5), X, coef=B, diag=np.linspace(0, 1, 12))
    Q = op.dense()
    A = sp.csc_matrix((rng.choice([-1.0, 2.0], 12), (rng.permutation(12), np.arange(12))))
    for new, want in ((_scaled(op, 3.0), 3.0 * Q), (_with_diag(op, np.ones(12)),
                                                     Q + np.eye(12)),
                      (_substituted(op, A), A.T.toarray() @ Q @ A.toarray())):
        assert new.coef is not None
        np.testing.assert_allclose(new.dense(), want, atol=1e-12)
        v = rng.normal(size=12)
        np.testing.assert_allclose(new.matvec(v), want @ v, atol=1e-10)


@pytest.mark.parametrize("seed", [5, 6])
def test_the_cvxpy_route_compiles_the_combination_form_on_the_scores(seed, monkeypatch):
    # Q = Bᵀ K B reaches CVXPY as ||Lᵀv||² with v = B α (N r + 2P non-zeros); the P x r
    # factor rows Bᵀ L (GramOperator.factor) are never formed, and the optimum is the hand
    # model's
    from primaldual.model.gram import GramOperator

    def refuse(self):
        raise AssertionError("the P x r factor rows were formed on the CVXPY route")
    monkeypatch.setattr(GramOperator, "factor", refuse)
    X, rel, qid = data(120, seed)
    m = pd.Variant(ranking(), task="ranking", kernel="rbf", gamma=GAMMA, C=C,
                   backend="cvxpy").fit(X, rel, qid=qid)
    assert m.backend_ == "cvxpy" and m.certificate_.status == "optimal"
    ref, _ = reference(X, pair_matrix(rel, qid), make_kernel("rbf", gamma=GAMMA), C)
    assert abs(m.certificate_.primal_objective - ref) <= 1e-6 * abs(ref)
