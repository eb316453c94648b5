"""Tests of the low-rank eta-reformulation backend against independent references.

References: CVXPY+Clarabel on the exact (full-kernel) duals, scikit-learn's SVC/SVR (LIBSVM) with a
precomputed kernel, and a dense re-evaluation of primal objectives. Problems are small (N <= 150)
and seeded.
"""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC, SVR

from primaldual.backends.lowrank import (
    LowRankResult,
    choose_rank,
    eta_problem_cvxpy,
    exact_gap,
    lowrank_csvc,
    lowrank_qp_solve,
)

SEEDS = [0, 1, 2]
TIGHT = 1e-11  # solver tolerance used where alpha itself is compared


def _data(seed, n=120, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.5, 1.0, -1.0)
    return X, y


def _exact_factor(K):
    """M = N factor V with V V^T = K (stand-in for kernels.eig_factor)."""
    lam, Phi = np.linalg.eigh(0.5 * (K + K.T))
    return Phi * np.sqrt(np.maximum(lam, 0.0))


def _clarabel(prob):
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status == "optimal"
    return prob.value


def _csvc_dual_cvxpy(K, y, C):
    n = y.size
    Q = y[:, None] * K * y[None, :]
    a = cp.Variable(n)
    prob = cp.Problem(
        cp.Minimize(0.5 * cp.quad_form(a, cp.psd_wrap(Q)) - cp.sum(a)),
        [y @ a == 0, a >= 0, a <= C],
    )
    return _clarabel(prob), a.value


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


# ---------------------------------------------------------------------------- exact factor M = N


@pytest.mark.parametrize("seed", SEEDS)
def test_exact_factor_equals_exact_csvc_dual_and_libsvm(seed):
    X, y = _data(seed)
    C = [0.5, 2.0, 10.0][seed]
    K = rbf_kernel(X, gamma=0.5)
    V = _exact_factor(K)
    res = lowrank_qp_solve(V * y[:, None], -np.ones(y.size), C, sign=y, tol=TIGHT)
    assert isinstance(res, LowRankResult)
    assert res.status == "optimal"
    ref_obj, ref_alpha = _csvc_dual_cvxpy(K, y, C)
    assert np.max(np.abs(res.alpha - ref_alpha)) <= 1e-5
    assert _rel(res.objective, ref_obj) <= 1e-7
    # LIBSVM on the same exact kernel: same decision function and bias
    svc = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K, y)
    f = K @ (res.alpha * y) + res.b
    assert np.max(np.abs(f - svc.decision_function(K))) <= 1e-4
    assert abs(res.b - svc.intercept_[0]) <= 1e-4
    assert abs(res.b - res.info["b_gradient"]) <= 1e-6
    # eta is w in the factor's feature space
    assert np.allclose(res.eta, V.T @ (y * res.alpha))


@pytest.mark.parametrize("seed", SEEDS)
def test_eta_problem_gap_and_primal_recomputed(seed):
    X, y = _data(seed, n=150)
    rng = np.random.default_rng(seed + 10)
    C = 1.0 * rng.uniform(0.5, 2.0, size=y.size)  # per-sample C_i
    K = rbf_kernel(X, gamma=0.2)
    lam, Phi = np.linalg.eigh(K)
    V = Phi[:, -30:] * np.sqrt(lam[-30:])  # rank-30 truncation: a genuinely low-rank problem
    res = lowrank_qp_solve(V * y[:, None], -np.ones(y.size), C, sign=y)
    assert res.status == "optimal"
    assert 0.0 <= res.gap
    assert res.relative_gap <= 1e-6
    # primal of the eta-problem recomputed by hand: 1/2||w||^2 + sum C_i hinge(y_i (V_i w + b))
    w = V.T @ (y * res.alpha)
    primal = 0.5 * w @ w + C @ np.maximum(0.0, 1.0 - y * (V @ w + res.b))
    dual = res.alpha.sum() - 0.5 * w @ w
    assert _rel(primal, res.primal_objective) <= 1e-12
    assert _rel(dual, res.dual_objective) <= 1e-12
    assert res.kkt["primal_feasibility"] <= 1e-9
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= C)


# ---------------------------------------------------------------------------- random B vs CVXPY


@pytest.mark.parametrize("seed", SEEDS)
def test_random_B_matches_eta_problem_cvxpy(seed):
    rng = np.random.default_rng(seed)
    n, m = 100, [5, 20, 60][seed]
    B = rng.normal(size=(n, m))
    p = rng.normal(size=n)
    upper = rng.uniform(0.5, 3.0, size=n)
    lower = -rng.uniform(0.0, 1.0, size=n)
    sign = rng.choice([-1.0, 1.0], size=n)
    delta = 0.3
    res = lowrank_qp_solve(B, p, upper, lower=lower, sign=sign, delta=delta)
    prob, a, eta = eta_problem_cvxpy(B, p, upper, lower=lower, sign=sign, delta=delta)
    assert prob.status == "optimal"
    assert res.status == "optimal"
    assert _rel(res.objective, prob.value) <= 1e-6
    assert np.max(np.abs(res.eta - eta.value)) <= 1e-3  # eta is unique (strictly convex)
    assert res.relative_gap <= 1e-6
    assert abs(sign @ res.alpha - delta) <= 1e-9


def test_no_equality_and_two_equalities_match_cvxpy():
    rng = np.random.default_rng(7)
    n, m = 80, 12
    B = rng.normal(size=(n, m))
    p = rng.normal(size=n)
    upper = np.full(n, 1.0)
    # no equality: b = 0 by convention
    res = lowrank_qp_solve(B, p, upper)
    prob, _, _ = eta_problem_cvxpy(B, p, upper)
    assert res.status == "optimal" and res.b == 0.0
    assert _rel(res.objective, prob.value) <= 1e-6
    # nu-SVC-like: y^T a = 0 and 1^T a = nu-ish
    y = rng.choice([-1.0, 1.0], size=n)
    A = np.vstack([y, np.ones(n)])
    rhs = np.array([0.0, 0.4 * n])
    res2 = lowrank_qp_solve(B * y[:, None], np.zeros(n), upper, sign=A, delta=rhs)
    prob2, a2, _ = eta_problem_cvxpy(B * y[:, None], np.zeros(n), upper, sign=A, delta=rhs)
    assert res2.status == "optimal"
    assert _rel(res2.objective, prob2.value) <= 1e-6
    assert np.max(np.abs(A @ res2.alpha - rhs)) <= 1e-8
    assert res2.multipliers.shape == (2,)


# ---------------------------------------------------------------------------- L2-SVC and SVR


@pytest.mark.parametrize("seed", SEEDS)
def test_l2svc_matches_cvxpy(seed):
    X, y = _data(seed, n=100)
    C = [0.3, 1.0, 5.0][seed]
    K = rbf_kernel(X, gamma=0.5)
    V = _exact_factor(K)
    n = y.size
    res = lowrank_qp_solve(V * y[:, None], -np.ones(n), np.inf, sign=y, diag=1.0 / C, tol=TIGHT)
    assert res.status == "optimal"
    Q = y[:, None] * K * y[None, :] + np.eye(n) / C
    a = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(a, cp.psd_wrap(Q)) - cp.sum(a)),
                      [y @ a == 0, a >= 0])
    ref = _clarabel(prob)
    assert np.max(np.abs(res.alpha - a.value)) <= 1e-5
    assert _rel(res.objective, ref) <= 1e-7
    # the primal of L2-SVC: 1/2||w||^2 + C/2 sum xi^2, xi = max(0, 1 - y f)
    w = res.eta
    xi = np.maximum(0.0, 1.0 - y * (V @ w + res.b))
    assert _rel(0.5 * w @ w + 0.5 * C * xi @ xi, res.primal_objective) <= 1e-10
    assert res.relative_gap <= 1e-8


@pytest.mark.parametrize("seed", SEEDS)
def test_epsilon_svr_matches_cvxpy_and_libsvm(seed):
    rng = np.random.default_rng(seed)
    n = 80
    X = rng.uniform(-3, 3, size=(n, 1))
    t = np.sinc(X[:, 0]) + 0.1 * rng.normal(size=n)
    C, eps = [1.0, 3.0, 10.0][seed], 0.05
    K = rbf_kernel(X, gamma=1.0)
    V = _exact_factor(K)
    B = np.vstack([V, -V])
    p = np.concatenate([eps - t, eps + t])
    sign = np.concatenate([np.ones(n), -np.ones(n)])
    res = lowrank_qp_solve(B, p, C, sign=sign, tol=TIGHT)
    assert res.status == "optimal"
    beta = res.alpha[:n] - res.alpha[n:]
    # exact SVR dual in CVXPY with alpha, alpha_star and the full K
    al, ast = cp.Variable(n), cp.Variable(n)
    prob = cp.Problem(
        cp.Minimize(0.5 * cp.quad_form(al - ast, cp.psd_wrap(K)) + eps * cp.sum(al + ast)
                    - t @ (al - ast)),
        [cp.sum(al - ast) == 0, al >= 0, ast >= 0, al <= C, ast <= C],
    )
    ref = _clarabel(prob)
    assert _rel(res.objective, ref) <= 1e-7
    assert np.max(np.abs(beta - (al.value - ast.value))) <= 1e-5
    svr = SVR(kernel="precomputed", C=C, epsilon=eps, tol=1e-10).fit(K, t)
    f = K @ beta + res.b
    assert np.max(np.abs(f - svr.predict(K))) <= 1e-4
    assert res.relative_gap <= 1e-8
    # primal: 1/2||w||^2 + C sum eps-insensitive loss
    w = res.eta
    loss = np.maximum(0.0, np.abs(t - V @ w - res.b) - eps)
    assert _rel(0.5 * w @ w + C * loss.sum(), res.primal_objective) <= 1e-10


# ---------------------------------------------------------------------------- infeasible and edges


def test_infeasible_equality_over_box_is_reported_not_certified():
    rng = np.random.default_rng(0)
    n, m = 30, 4
    B = rng.normal(size=(n, m))
    y = rng.choice([-1.0, 1.0], size=n)
    res = lowrank_qp_solve(B, -np.ones(n), 0.0, sign=y, delta=1.0)
    assert res.status == "infeasible"
    assert np.all(np.isnan(res.alpha)) and np.isnan(res.gap) and np.isnan(res.objective)
    # delta beyond what the box allows
    res = lowrank_qp_solve(B, -np.ones(n), 1.0, sign=np.ones(n), delta=n + 1.0)
    assert res.status == "infeasible" and np.isnan(res.primal_objective)
    # two rows jointly inconsistent (each alone is feasible)
    A = np.vstack([np.ones(n), np.ones(n)])
    res = lowrank_qp_solve(B, -np.ones(n), 1.0, sign=A, delta=[1.0, 2.0])
    assert res.status == "infeasible"
    # empty box
    res = lowrank_qp_solve(B, -np.ones(n), 0.0, lower=1.0)
    assert res.status == "infeasible"


def test_forced_variables_presolve():
    rng = np.random.default_rng(1)
    n = 20
    B = rng.normal(size=(n, 3))
    # all labels +1, y^T a = 0 with a >= 0 forces a = 0
    res = lowrank_qp_solve(B, -np.ones(n), 1.0, sign=np.ones(n), delta=0.0)
    assert res.status == "optimal"
    assert np.all(res.alpha == 0.0)
    assert res.gap >= -1e-12


def test_max_iter_status_and_finite_certificate():
    X, y = _data(0, n=60)
    V = _exact_factor(rbf_kernel(X, gamma=0.5))
    res = lowrank_qp_solve(V * y[:, None], -np.ones(y.size), 1.0, sign=y, max_iter=2)
    assert res.status == "max_iter"
    assert np.isfinite(res.primal_objective) and np.isfinite(res.dual_objective)
    assert res.n_iter == 2


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"B": np.ones(5)}, "B"),
        ({"B": np.full((5, 2), np.nan)}, "B"),
        ({"p": np.ones(4)}, "p"),
        ({"upper": np.full(5, np.nan)}, "upper"),
        ({"lower": np.inf}, "lower"),
        ({"sign": np.ones((2, 4))}, "sign"),
        ({"sign": np.ones(5), "delta": [0.0, 1.0]}, "delta"),
        ({"diag": -1.0}, "diag"),
        ({"tol": 0.0}, "tol"),
        ({"max_iter": 0}, "max_iter"),
        ({"lower": -np.inf, "upper": np.inf}, "lower/upper"),
    ],
)
def test_bad_input_raises_naming_argument(kwargs, name):
    args = {"B": np.ones((5, 2)), "p": -np.ones(5), "upper": 1.0}
    args.update(kwargs)
    B, p, upper = args.pop("B"), args.pop("p"), args.pop("upper")
    with pytest.raises(ValueError, match=name):
        lowrank_qp_solve(B, p, upper, **args)


# ---------------------------------------------------------------------------- with kernels.py


def _kernels():
    kernels = pytest.importorskip("primaldual.kernels")
    if not hasattr(kernels, "low_rank_factor"):
        pytest.skip("primaldual.kernels.low_rank_factor not available")
    return kernels


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_lowrank_csvc_full_rank_equals_exact_and_exact_gap(seed):
    kernels = _kernels()
    X, y = _data(seed, n=100)
    kern = kernels.RBF(gamma=0.5)
    C = 1.0
    res, factor = lowrank_csvc(X, y, kern, C, rank=y.size, method="eig",
                                  solver_tol=TIGHT)
    K = rbf_kernel(X, gamma=0.5)
    ref_obj, ref_alpha = _csvc_dual_cvxpy(K, y, C)
    assert np.max(np.abs(res.alpha - ref_alpha)) <= 1e-5
    # the exact-kernel gap of the recovered point equals the eta gap when M = N
    eg = exact_gap(K, y, C, res.alpha, res.b)
    assert abs(eg["gap"] - res.gap) <= 1e-6 * max(1.0, abs(res.primal_objective))
    assert eg["relative_gap"] <= 1e-8
    # blockwise path with (kernel, X) equals the dense path
    eg2 = exact_gap((kern, X), y, C, res.alpha, res.b, block_size=17)
    assert abs(eg2["gap"] - eg["gap"]) <= 1e-9
    # predictions on new points: v(z)^T eta + b = sum beta_i k(z, x_i) + b
    Z = np.random.default_rng(99).normal(size=(20, X.shape[1]))
    f_low = factor.transform(Z) @ res.eta + res.b
    f_exact = rbf_kernel(Z, X, gamma=0.5) @ (res.alpha * y) + res.b
    assert np.max(np.abs(f_low - f_exact)) <= 1e-6


def test_lowrank_csvc_small_rank_gap_and_approximation_cost():
    kernels = _kernels()
    X, y = _data(3, n=150)
    kern = kernels.RBF(gamma=0.1)
    res, factor = lowrank_csvc(X, y, kern, 1.0, rank=15)
    assert factor.rank == 15 and res.status == "optimal"
    assert res.relative_gap <= 1e-6
    eg = exact_gap((kern, X), y, 1.0, res.alpha, res.b)
    # the exact-kernel gap is a true gap (>= 0) and at least as large as with the best bias
    assert eg["gap"] >= -1e-9 and eg["gap_best_b"] <= eg["gap"] + 1e-9
    # sample weights scale the box
    sw = np.where(y > 0, 2.0, 0.5)
    res_w, _ = lowrank_csvc(X, y, kern, 1.0, rank=15, sample_weight=sw)
    assert np.all(res_w.alpha <= sw + 1e-12)
    with pytest.raises(ValueError, match="y"):
        lowrank_csvc(X, (y > 0).astype(float), kern, 1.0, rank=5)
    with pytest.raises(ValueError, match="C"):
        lowrank_csvc(X, y, kern, -1.0, rank=5)


def test_choose_rank_from_trace_error():
    kernels = _kernels()
    X, _ = _data(0, n=150)
    kern = kernels.RBF(gamma=0.1)
    m_loose = choose_rank(kern, X, 1e-2, 150)
    m_tight = choose_rank(kern, X, 1e-6, 150)
    assert 1 <= m_loose <= m_tight <= 150
    f = kernels.low_rank_factor(kern, X, rank=m_loose, method="icholesky")
    assert f.relative_error <= 1e-2
    assert choose_rank(kern, X, 1e-12, 7) == 7
    with pytest.raises(ValueError, match="max_rank"):
        choose_rank(kern, X, 1e-3, 0)


def test_lowrank_fit_never_evaluates_the_exact_dual(monkeypatch):
    # a low-rank fit is certified on its eta-problem: the exact-kernel objective (a kernel
    # product over the support) is evaluated only if someone asks for objective_value, and
    # then it is the problem's own evaluation
    from primaldual.methods.svc import CSVC
    from primaldual.model.problem import Problem

    X, y = _data(4, n=150)
    calls = []
    original = Problem.evaluate

    def counting(self, *args, **kwargs):
        calls.append(self.name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Problem, "evaluate", counting)
    m = CSVC(C=1.0, gamma=0.2, rank=20).fit(X, y, backend="lowrank")
    assert calls == [] and m.certificate_.relative_gap <= 1e-6
    sol = m.solution_
    value = sol.objective_value
    assert len(calls) == 1
    assert value == pytest.approx(original(sol.problem, sol.values), rel=1e-14)
    assert sol.objective_value == value and len(calls) == 1  # computed once


def test_eta_solve_runs_blas_on_one_thread(monkeypatch):
    # N x M products and M x M factorisations: a second BLAS thread only adds synchronisation
    # (32 s against 4.8 s for a loaded 50k fit), so the solve pins BLAS to one thread and
    # restores the caller's setting afterwards
    from threadpoolctl import threadpool_info

    import primaldual.backends.lowrank.solver as solver_mod

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    seen = []
    original = solver_mod._smooth_newton

    def spy(*args, **kwargs):
        seen.extend(blas_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(solver_mod, "_smooth_newton", spy)
    before = blas_threads()
    X, y = _data(5, n=120)
    V = np.random.default_rng(5).normal(size=(120, 10))
    r = lowrank_qp_solve(y[:, None] * V, -np.ones(120), np.ones(120), sign=y, method="newton")
    assert r.status == "optimal" and seen and set(seen) == {1}
    assert blas_threads() == before
