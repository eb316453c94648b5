"""The working-set IPM's start on its central path (issue 31, N = 200,000 speed) and the factor's
record of the eta-solver's products.

The start is checked against the equations that define it (the barrier's stationarity, the
equality row, complementarity products equal to mu); the warm-started solve against the cold
one and CVXPY+Clarabel on the same QP; the recorded products against the products recomputed
from ``C`` and ``P``.
"""

import numpy as np
import pytest

# the same seeded problems and CVXPY reference as the Newton route's tests
from test_lowrank_newton import _cvxpy_value, _problem

import primaldual as pd
import primaldual.backends.lowrank.solver as lrs
from primaldual.backends.lowrank import lowrank_qp_solve


def test_central_x_solves_the_barrier_equation_inside_the_box():
    r = np.array([-1e30, -1e3, -5.0, -0.1, -1e-12, 0.0, 1e-12, 0.1, 5.0, 1e3, 1e30])
    lower, c, mu = -0.5, 2.0, 0.01
    x = lrs._central_x(r, lower, c, mu)
    assert np.all(x >= lower) and np.all(x <= lower + c)
    ok = np.abs(r) <= 1e3  # the extremes round onto the bound
    assert np.all((x[ok] > lower) & (x[ok] < lower + c))
    resid = mu / (x[ok] - lower) - mu / (lower + c - x[ok]) - r[ok]
    assert np.all(np.abs(resid) <= 1e-9 * (1.0 + np.abs(r[ok])))
    assert np.all(np.diff(x) <= 0)  # decreasing in r


def test_central_start_meets_the_equality_and_is_centred():
    rng = np.random.default_rng(0)
    n = 300
    r = rng.normal(scale=0.05, size=n)
    y = np.where(rng.random(n) < 0.3, 1.0, -1.0)  # unbalanced: the shift is needed
    lower, upper = np.zeros(n), np.full(n, 2.0)
    mu = 0.01
    x, lam, zl, zu = lrs.central_start(r, np.array([0.7]), lower, upper, mu, y[None, :],
                                        np.array([0.0]))
    assert abs(y @ x) <= 1e-9 * np.sum(np.abs(x))
    assert np.all((x > lower) & (x < upper))
    assert np.allclose((x - lower) * zl, mu) and np.allclose((upper - x) * zu, mu)
    # z_l - z_u is the reduced gradient with the shifted multiplier: r - y (lam - 0.7)
    assert np.allclose(zl - zu, r - y * (lam[0] - 0.7), atol=1e-9)


@pytest.mark.parametrize("kind", ["csvc", "svr", "nu"])
@pytest.mark.parametrize("seed", [0, 2])
def test_warm_started_working_set_ipm_matches_the_cold_one(kind, seed, monkeypatch):
    args, kw = _problem(kind, seed)
    warm = lowrank_qp_solve(*args, **kw, method="newton")
    monkeypatch.setattr(lrs, "IPM_WARM_START", False)
    cold = lowrank_qp_solve(*args, **kw, method="newton")
    assert warm.status == cold.status == "optimal"
    assert "fallback" not in warm.info and warm.relative_gap <= 1e-7
    scale = max(1.0, abs(cold.objective))
    assert abs(warm.objective - cold.objective) <= 1e-7 * scale
    assert abs(warm.objective - _cvxpy_value(args, kw)) <= 1e-6 * scale


def test_factor_serves_recorded_products_and_computes_the_rest():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=400) > 0, 1, -1)
    m = pd.CSVC(C=1.0, gamma=0.5, backend="lowrank").fit(X, y)
    F = m.lowrank_factor_
    assert type(F).__name__ == "FactoredNystrom" and not F.formed
    C, P = F.C, F.proj
    eta = np.asarray(m.eta_, dtype=float)
    # the certified training decision equals the product recomputed from C and P
    f = m.decision_function(X)
    assert np.allclose(f, C @ (P @ eta) + m.b_, rtol=0, atol=1e-10 * np.max(np.abs(f)))
    w = rng.normal(size=P.shape[1])
    F.remember(w, Vw=np.full(C.shape[0], 7.0), z=np.ones(C.shape[0]))
    assert np.all(F.dot(w) == 7.0)  # a recorded product is served as recorded ...
    assert np.array_equal(F.operator().rmatvec(np.ones(C.shape[0])), w)
    w2 = w + 1.0  # ... any other vector is computed
    assert np.allclose(F.dot(w2), C @ (P @ w2))
    assert "_memo" in F.__dict__ and "_memo" not in F.__getstate__()  # not serialised


def test_fit_reuses_the_eta_solvers_products(monkeypatch):
    from primaldual.kernels.factors import FactoredNystrom

    served = []
    real = FactoredNystrom._recalled

    def counting(self, kind, v):
        hit = real(self, kind, v)
        served.append((kind, hit is not None))
        return hit

    monkeypatch.setattr(FactoredNystrom, "_recalled", counting)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 3))
    y = np.where(X[:, 1] + 0.3 * rng.normal(size=600) > 0, 1, -1)
    pd.CSVC(C=1.0, gamma=0.5, backend="lowrank").fit(X, y)
    # the recovery's V (V^T beta) and the training decision's V eta: no pass over C
    assert served and all(hit for _, hit in served)
    assert {kind for kind, _ in served} == {"V", "VT"}


def test_prefault_keeps_values_and_accepts_any_layout():
    from primaldual.kernels.growth import _SMALL_PAGES_MIN, _empty, _prefault

    n = _SMALL_PAGES_MIN // 8 // 64 + 1
    a = _empty((n, 64), order="F")  # the growth's column-major buffer (an anonymous map)
    a[:, :3] = 1.5
    _prefault(a[:, 3:9])  # a block of new columns, page-unaligned start
    a[:, 3:9] = 2.5
    assert np.all(a[:, :3] == 1.5) and np.all(a[:, 3:9] == 2.5)
    small = np.arange(10.0)
    _prefault(small)
    _prefault(a[::2])  # not contiguous: nothing
    assert np.array_equal(small, np.arange(10.0))
