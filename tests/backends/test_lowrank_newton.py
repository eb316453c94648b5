"""The smoothing-Newton + working-set path of the low-rank backend (``method="newton"``).

Every result is checked against an independent solve of the same QP: the full interior-point
method of the same module (``method="ipm"``) and CVXPY+Clarabel on the eta-problem. Problems are
seeded and small (N <= 400); the point is certified on the full problem by the module's own
certificate, which these tests recompute where it matters.
"""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

import primaldual.backends.lowrank.newton as lr
import primaldual.backends.lowrank.solver as lrs
from primaldual.backends.lowrank import eta_problem_cvxpy, lowrank_qp_solve


def _factor(X, m, gamma=0.3):
    lam, U = np.linalg.eigh(rbf_kernel(X, gamma=gamma))
    return U[:, -m:] * np.sqrt(np.maximum(lam[-m:], 0.0))


def _problem(kind, seed):
    """C-SVC, epsilon-SVR (2N variables) and a nu-type dual (p = 0, two equality rows)."""
    rng = np.random.default_rng(seed)
    n, m = 150 + 50 * seed, 10 + 7 * seed
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    V = _factor(X, m)
    C = [0.1, 1.0, 30.0][seed % 3]
    if kind == "csvc":
        return (V * y[:, None], -np.ones(n), C), {"sign": y}
    if kind == "svr":
        t, eps = X[:, 1] + 0.1 * rng.normal(size=n), 0.1
        return ((np.vstack([V, -V]), np.concatenate([eps - t, eps + t]), C),
                {"sign": np.concatenate([np.ones(n), -np.ones(n)])})
    return (V * y[:, None], np.zeros(n), 1.0 / n), {"sign": np.vstack([y, np.ones(n)]),
                                                     "delta": [0.0, 0.4]}


def _cvxpy_value(args, kw):
    B, p, upper = args
    prob, _, _ = eta_problem_cvxpy(B, p, upper, sign=kw["sign"], delta=kw.get("delta", 0.0),
                                   solver=None)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert prob.status == "optimal"
    return prob.value


@pytest.mark.parametrize("kind", ["csvc", "svr", "nu"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_newton_path_matches_ipm_and_cvxpy(kind, seed):
    args, kw = _problem(kind, seed)
    res = lowrank_qp_solve(*args, **kw, method="newton")
    ipm = lowrank_qp_solve(*args, **kw, method="ipm")
    assert res.status == "optimal" and ipm.status == "optimal"
    assert res.info["method"] == "newton" and "fallback" not in res.info
    assert res.relative_gap <= 1e-7
    assert res.kkt["primal_feasibility"] <= 1e-8
    scale = max(1.0, abs(ipm.objective))
    assert abs(res.objective - ipm.objective) <= 1e-7 * scale
    assert abs(res.objective - _cvxpy_value(args, kw)) <= 1e-6 * scale
    # the certificate is the module's own, recomputed here from the returned point
    B, p, upper = args
    A = np.atleast_2d(kw["sign"])
    a = res.alpha
    assert np.all(a >= -1e-12) and np.all(a <= upper + 1e-12)
    assert np.allclose(A @ a, kw.get("delta", 0.0), atol=1e-8)
    eta = B.T @ a
    assert np.isclose(res.objective, 0.5 * eta @ eta + p @ a, rtol=1e-12, atol=1e-12)


def test_auto_picks_newton_only_where_it_applies():
    args, kw = _problem("csvc", 0)
    assert lowrank_qp_solve(*args, **kw).info["method"] == "newton"
    B, p, C = args
    l2 = lowrank_qp_solve(B, p, np.inf, sign=kw["sign"], diag=1.0 / C)  # L2-SVC: diag > 0
    assert l2.info["method"] == "ipm" and l2.status == "optimal"
    with pytest.raises(ValueError, match="method='newton'"):
        lowrank_qp_solve(B, p, np.inf, sign=kw["sign"], diag=1.0 / C, method="newton")
    with pytest.raises(ValueError, match="method must be"):
        lowrank_qp_solve(*args, **kw, method="simplex")


def test_violators_join_the_working_set(monkeypatch):
    """A deliberately poor smoothed point fixes wrong variables; the check on all N rows finds
    them, the working set grows, and the result still equals the IPM's."""
    args, kw = _problem("csvc", 1)
    real = lr._huber_level

    def poor(B, p, lo, c, A, rhs, w, lam, h, hess, gtol, max_iter, stall=None, Bmv=None):
        w, lam, r, steps = real(B, p, lo, c, A, rhs, w, lam, h, hess, gtol, 1, stall, Bmv)
        return 0.3 * w, lam, p + B @ (0.3 * w) - A.T @ lam, steps

    monkeypatch.setattr(lr, "_huber_level", poor)
    res = lowrank_qp_solve(*args, **kw, method="newton")
    monkeypatch.undo()
    ipm = lowrank_qp_solve(*args, **kw, method="ipm")
    assert res.status == "optimal" and res.info["method"] == "newton"
    assert res.info["working_set_rounds"] >= 2
    assert abs(res.objective - ipm.objective) <= 1e-7 * max(1.0, abs(ipm.objective))


def test_failure_falls_back_to_the_full_ipm(monkeypatch):
    args, kw = _problem("svr", 0)

    def broken(*a, **k):
        raise FloatingPointError("injected")

    monkeypatch.setattr(lrs, "_smooth_newton", broken)
    res = lowrank_qp_solve(*args, **kw)
    assert res.status == "optimal"
    assert res.info["method"] == "ipm" and "injected" in res.info["fallback"]
    assert res.relative_gap <= 1e-7


def test_incremental_hessian_equals_fresh_sum():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(300, 7))
    c = rng.uniform(0.5, 2.0, size=300)
    H = lr._JHessian(B, c)
    for _ in range(6):
        J = rng.random(300) < rng.uniform(0.05, 0.9)
        H.update(J)
        assert np.allclose(H.T, (B[J] * c[J, None]).T @ B[J], rtol=1e-12, atol=1e-10)
    Hu = lr._JHessian(B, np.full(300, 0.7))  # uniform weights: the no-copy branch
    J = rng.random(300) < 0.4
    Hu.update(J)
    Hu.update(np.ones(300, dtype=bool))
    assert np.allclose(Hu.T, 0.7 * B.T @ B, rtol=1e-12)


def test_exact_line_search_minimises_along_the_direction():
    rng = np.random.default_rng(3)
    n, m = 200, 5
    B = rng.normal(size=(n, m))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    A, rhs, lo, c, p = y[None, :], np.zeros(1), np.zeros(n), np.full(n, 2.0), -np.ones(n)
    w, lam, h = rng.normal(size=m), np.array([0.1]), 0.3
    dw, dl = rng.normal(size=m), np.array([0.5])
    r = p + B @ w - A.T @ lam
    dr = B @ dw - A.T @ dl

    def F(s):  # Huber-smoothed objective along the line (module comment's formula)
        ws, ls, rs = w + s * dw, lam + s * dl, r + s * dr
        t = -rs
        hub = np.where(t <= 0, 0.0, np.where(t < h, t * t / (2 * h), t - h / 2))
        return 0.5 * ws @ ws - ls @ rhs - lo @ rs + c @ hub

    s = lr.exact_line_search(w, dw, rhs, dl, r, dr, lo, c, h)
    grid = np.linspace(0.0, 1.0, 2001)
    assert 0.0 <= s <= 1.0
    assert F(s) <= min(F(g) for g in grid) + 1e-9


@pytest.mark.parametrize("C", [130.0, 5e3])
def test_large_C_and_weights_certify_without_fallback(C):
    """Large C: the working-set QP drops a large constant of the full objective, so its own
    tolerance is rescaled; the full certificate must still meet tol without the IPM fallback."""
    rng = np.random.default_rng(100)
    n, m = 900, 40
    X = rng.normal(size=(n, 6))
    X[: n // 3] = X[0]  # duplicated rows
    y = np.where(X[:, 0] + 0.4 + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    V = _factor(X, m, gamma=0.2)
    upper = C * rng.uniform(0.2, 2.0, size=n)  # per-sample weights
    res = lowrank_qp_solve(V * y[:, None], -np.ones(n), upper, sign=y)
    ipm = lowrank_qp_solve(V * y[:, None], -np.ones(n), upper, sign=y, method="ipm")
    assert res.info["method"] == "newton" and "fallback" not in res.info
    assert res.relative_gap <= 1e-7
    assert abs(res.objective - ipm.objective) <= 1e-7 * abs(ipm.objective)


def test_row_block_threads_equal_the_plain_products(monkeypatch):
    """The threaded products (row blocks, partial sums in a fixed order) are the plain ones up
    to rounding, for float64 and float32, C- and F-ordered B."""
    from primaldual.backends.lowrank import _threads

    monkeypatch.setattr(_threads, "MIN_WORK", 0)
    monkeypatch.setattr(_threads, "free_cpus", lambda: 2)
    assert _threads.n_threads(1) == 2
    rng = np.random.default_rng(0)
    for dtype, order in ((np.float64, "F"), (np.float64, "C"), (np.float32, "C")):
        B = np.asarray(rng.normal(size=(301, 17)), dtype=dtype, order=order)
        x = rng.normal(size=17).astype(dtype)
        a = rng.normal(size=301).astype(dtype)
        rtol = 1e-12 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(_threads.matvec(B, x), B @ x, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(_threads.rmatvec(B, a), B.T @ a, rtol=rtol, atol=rtol)
        G = _threads.gram_upper(2.0, B)
        assert G.dtype == np.float64
        np.testing.assert_allclose(np.triu(G), np.triu(2.0 * B.T.astype(float) @ B),
                                   rtol=rtol, atol=10 * rtol)


def test_row_block_threads_work_in_a_forked_child(monkeypatch):
    """A child forked after the pool exists gets a pool of its own (an inherited executor has
    no threads in the child and would never run the products)."""
    import multiprocessing as mp

    from primaldual.backends.lowrank import _threads

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork on this platform")
    monkeypatch.setattr(_threads, "MIN_WORK", 0)
    monkeypatch.setattr(_threads, "free_cpus", lambda: 2)
    B = np.arange(60.0).reshape(20, 3)
    x = np.ones(3)
    np.testing.assert_array_equal(_threads.matvec(B, x), B @ x)  # the parent's pool exists
    with mp.get_context("fork").Pool(1) as pool:
        out = pool.apply_async(_threads.matvec, (B, x)).get(timeout=60)
    np.testing.assert_array_equal(out, B @ x)
