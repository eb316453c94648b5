"""The derivation forms no N x N array (issue 26): the dual's Q is a kernel-form GramOperator
built from the sparse coefficients of the eliminated block, read by SMO through kernel columns."""

from __future__ import annotations

import tracemalloc

import numpy as np

from primaldual.kernels import make_kernel
from primaldual.model import Data, FeatureVariable, Problem, Variable, norm2, phi, vsum
from primaldual.model.dualize import dualize
from primaldual.model.gram import GramOperator


def _one_class(X, nu, kernel):
    N = X.shape[0]
    w = FeatureVariable("w", kernel, X)
    rho, xi = Variable("rho"), Variable("xi", N)
    c = Data("c", 1.0 / (nu * N), txt="1/(νN)", tex=r"\frac{1}{\nu N}")
    return Problem(0.5 * norm2(w) + c * vsum(xi) - rho,
                   [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "one-class SVM primal", variables=[w, rho, xi])


class _NoGram:
    """An RBF kernel that refuses to form a square Gram matrix of more than 100 rows."""

    def __init__(self) -> None:
        self.k = make_kernel("rbf", gamma=0.5)

    def __call__(self, A, B=None):
        if B is None and A.shape[0] > 100:
            raise AssertionError("the derivation formed an N x N kernel matrix")
        return self.k(A, B)

    def __repr__(self) -> str:
        return "RBF(gamma=0.5)"


def test_one_class_derivation_forms_no_square_array():
    N = 4000
    X = np.random.default_rng(0).standard_normal((N, 2))
    P = _one_class(X, 0.1, _NoGram())
    tracemalloc.start()
    der = dualize(P)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # one N x N float array is 128 MB; the derivation keeps O(N) objects
    assert peak < 16 * N * 8 * 20, peak
    (term,) = der.dual.objective.terms
    op = term.op
    assert isinstance(op, GramOperator) and op.matrix is None and op._Q is None
    assert op.index is None and np.all(op.sign == 1.0) and np.all(op.diag == 0.0)


def test_lazy_q_equals_the_dense_formula_and_smo_solves_it():
    # Q = K (the one-class dual: max -1/2 αᵀKα, 1ᵀα = 1, 0 <= α <= 1/(νN)), checked against the
    # kernel matrix computed here, and SMO's solution satisfies the dual's constraints
    N, nu = 300, 0.2
    X = np.random.default_rng(1).standard_normal((N, 2))
    kernel = make_kernel("rbf", gamma=0.5)
    der = dualize(_one_class(X, nu, kernel))
    (term,) = der.dual.objective.terms
    v = np.random.default_rng(2).standard_normal(N)
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    assert np.allclose(term.op.matvec(v), K @ v)
    sol = der.dual.solve(backend="smo", tol=1e-8)
    a = np.asarray(sol.values["alpha"])
    assert abs(a.sum() - 1.0) < 1e-8
    assert a.min() >= -1e-12 and a.max() <= 1.0 / (nu * N) + 1e-12
    ref = der.dual.solve(backend="cvxpy")
    f, g = sol.objective_value, ref.objective_value
    assert abs(f - g) <= 1e-6 * max(1.0, abs(g))


def test_smo_solution_reports_its_solve_time():
    X = np.random.default_rng(4).standard_normal((80, 2))
    der = dualize(_one_class(X, 0.3, make_kernel("rbf", gamma=0.5)))
    sol = der.dual.solve(backend="smo", tol=1e-6)
    assert sol.solve_time > 0.0


def test_ls_svm_derivation_keeps_the_diagonal_block_sparse():
    # 1/2 C Σ e_i²: its curvature C I stays a sparse diagonal; Q + I/C is a kernel operator
    from primaldual.model import sum_squares
    N = 3000
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    w = FeatureVariable("w", _NoGram(), X)
    b, e = Variable("b"), Variable("e", N)
    P = Problem(0.5 * norm2(w) + Data("C", 2.0) * (0.5 * sum_squares(e)),
                [(Data("y", y) * (w @ phi(X) + b) == 1 - e).named("alpha")], "min", "LS-SVM")
    tracemalloc.start()
    der = dualize(P)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 16 * N * 8 * 20, peak
    (term,) = der.dual.objective.terms
    op = term.op
    assert op.matrix is None and np.allclose(op.diag, 0.5) and np.allclose(op.sign, y)
    assert "αᵀ(Q + I/C)α" in str(der.dual)


def test_ball_constraint_diagonal_without_the_gram_matrix():
    # ||phi(z_r) - a||^2 needs diag(S K Sᵀ): points and pair differences from the kernel's
    # diagonal and row-wise cross terms, equal to the Gram formula computed here
    from primaldual.model.atoms import _sks_diag
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    k = make_kernel("rbf", gamma=0.7)
    a = FeatureVariable("a", k, X)
    K = k(X)
    I, J = rng.integers(0, 40, 25), rng.integers(0, 40, 25)
    for S in (phi(X).S, phi(X)[I].S, (phi(X).at(I, "i_p") - phi(X).at(J, "j_p")).S):
        Sd = S.toarray()
        assert np.allclose(_sks_diag(a, S), np.einsum("ij,jk,ik->i", Sd, K, Sd), atol=1e-12)


def test_svdd_derivation_forms_no_square_array():
    from primaldual.model import norm2 as n2

    class _NoGramDiag(_NoGram):
        def diag(self, A):
            return self.k.diag(A)

    N = 2000
    X = np.random.default_rng(0).normal(size=(N, 2))
    a, R2, xi = FeatureVariable("a", _NoGramDiag(), X), Variable("R2"), Variable("xi", N)
    P = Problem(R2 + Data("C", 0.05) * vsum(xi),
                [(n2(phi(X) - a) <= R2 + xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "SVDD primal")
    der = dualize(P)
    (term,) = der.dual.objective.terms
    assert term.op.matrix is None
