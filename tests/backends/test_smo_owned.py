"""``solve_arrays(..., owned=True)`` (the lean one-vs-one route hands over fresh, checked
vectors and dense rows, issue 31) gives the bits of the checked call, and the caller's arrays it was
given are the only ones the core may permute."""

import numpy as np
import pytest

import primaldual.backends.smo.solver as solver
from primaldual.kernels import make_kernel

pytest.importorskip("numba")


@pytest.fixture(scope="module", autouse=True)
def _core():
    solver.compile_core()


def _fields(r):
    return (r.alpha.tobytes(), r.grad.tobytes(), r.b, r.r1, r.r2, r.objective, r.n_iter,
            r.max_violation, r.status, r.route)


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("equality", ["one", "nu"])
@pytest.mark.parametrize("shrinking", [True, False])
def test_owned_same_bits(kernel, equality, shrinking):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 5))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(60) > 0, 1.0, -1.0)
    kern = make_kernel(kernel, gamma=0.3, degree=2, coef0=1.0)
    C = np.full(60, 0.8)
    p = -np.ones(60) if equality == "one" else np.zeros(60)
    a0 = None
    if equality == "nu":
        a0 = np.zeros(60)
        for s in (1.0, -1.0):   # a feasible start: 6 of each sign at the bound
            a0[np.flatnonzero(y == s)[:6]] = 0.8
    kw = dict(equality=equality, tol=1e-3, shrinking=shrinking, alpha0=a0)
    ref = solver.solve_arrays(X, kern, p, C, sign=y, **kw)
    Xc, pc, Cc, yc = X.copy(), p.copy(), C.copy(), y.copy()
    got = solver.solve_arrays(X, kern, pc, Cc, sign=yc, owned=True, **kw)
    assert _fields(got) == _fields(ref)
    assert np.array_equal(X, Xc)   # the rows are still copied (the core permutes its copy)
