"""Issue 31 (small data): the per-sub-problem shortcuts give exactly what the general code gives.

* ``FitData.kmatvec``'s small dense block (``_small_block_matvec``) is bit-for-bit
  :func:`~primaldual.kernels.kernel_matvec` (same block, same GEMV) -- the RBF block with
  numba loaded to a derived round-off bound (its exponent from the coordinate differences,
  issue 31 round 3) -- and refuses the cases that function evaluates another way;
* the certificate units' fast path (bounds >= 0) equals the ``|.|`` path on the same bounds;
* a multiclass fit through the shortcut has every sub-problem certified by the independent
  oracle.
"""
from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from sklearn.datasets import load_iris

import primaldual as pdl
from primaldual.certificate import certificate_unit, objective_unit
from primaldual.kernels import kernel_matvec, make_kernel
from primaldual.methods._fit import FitData, _small_block_matvec


@pytest.mark.parametrize("name", ["rbf", "poly", "sigmoid", "laplacian"])
def test_small_block_matvec_is_kernel_matvec_bitwise(name):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((120, 5))
    ker = make_kernel(name, 0.3, 3, 0.5, X)
    S = np.sort(rng.choice(120, 37, replace=False))
    v = rng.standard_normal(37)
    got = _small_block_matvec(ker, X, S, v)
    assert got is not None
    want = kernel_matvec(ker, X, v, columns=S)
    # through FitData.kmatvec (memoised; a strict subset of the rows takes the shortcut)
    beta = np.zeros(120)
    beta[S] = v
    data = FitData(X, np.ones(120), ker, np.ones(120), params={})
    memo = data.kmatvec(beta)
    assert np.array_equal(memo, got)
    if name == "rbf" and "numba" in sys.modules:
        # the compiled RBF exponent (issue 31) sums the coordinate differences, the kernel's
        # block ||x||^2 + ||z||^2 - 2 x.z: each entry k <= 1 agrees to a few roundings of
        # gamma (||x||^2 + ||z||^2), so K v agrees to that times sum |v|
        err = 8 * np.finfo(float).eps * 0.3 * 2 * float(np.max(np.sum(X * X, axis=1)))
        assert np.max(np.abs(got - want)) <= err * float(np.sum(np.abs(v)))
    else:
        assert np.array_equal(got, want)


def test_compiled_rbf_exponent_is_the_difference_form():
    from primaldual.backends.smo import compile_core
    from primaldual.kernels.compiled import rbf_exponent

    compile_core()                       # (numba at hand: the compiled route is taken)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 4)) * 10.0 + 100.0   # norms 4e4, differences ~10
    S = np.array([3, 7, 11, 29])
    out = np.empty((30, 4))
    rbf_exponent(X, S, 0.01, out)
    want = -0.01 * ((X[:, None, :] - X[None, S, :]) ** 2).sum(axis=2)   # independent
    assert np.allclose(out, want, rtol=1e-14, atol=0.0)
    ker = make_kernel("rbf", 0.01, 3, 0.0, X)
    v = rng.standard_normal(4)
    assert np.allclose(_small_block_matvec(ker, X, S, v), np.exp(want) @ v, rtol=1e-13)


def test_small_block_matvec_refuses_other_routes():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 3))
    S = np.arange(0, 200, 2)
    v = np.ones(S.shape[0])
    assert _small_block_matvec(make_kernel("linear", 1.0, 3, 0.0, X), X, S, v) is None
    assert _small_block_matvec(make_kernel("rbf", 1.0, 3, 0.0, X), X.astype(np.float32), S,
                               v) is None
    Xb = rng.standard_normal((400, 3))   # 400 x 100 = 40,000 entries: kernel_matvec's chunks
    assert _small_block_matvec(make_kernel("rbf", 1.0, 3, 0.0, Xb), Xb, np.arange(100),
                               np.ones(100)) is None


@pytest.mark.parametrize("upper", [np.array([0.5, 2.0, 1.0]), np.array([0.1, 0.2]),
                                   np.array([0.0, 0.0]), np.array([0.3, math.inf]),
                                   np.array([-0.4, 0.2]), np.array([math.nan, 0.5])])
def test_certificate_unit_fast_path_equals_abs_path(upper):
    up = np.abs(upper)
    fin = up[np.isfinite(up) & (up > 0)]
    want_obj = min(1.0, float(np.max(fin)) ** 2) if fin.size else 1.0  # the definition
    assert objective_unit(upper) == pytest.approx(want_obj, rel=0, abs=0) or (
        np.isnan(upper).any())
    w = np.array([3.0, 0.25])
    want_cert = objective_unit(up) if (up.size and fin.size) else objective_unit(w)
    assert certificate_unit(upper, w) == want_cert


def test_multiclass_subproblems_oracle_certified():
    from primaldual.testing import assert_oracle_optimal

    X, y = load_iris(return_X_y=True)
    for est in (pdl.CSVC(), pdl.NuSVC()):
        est.fit(X, y)
        rep = assert_oracle_optimal(est, X, y)   # every sub-problem, by the oracle
        assert len(rep.parts) == len(est.estimators_) == 3
        for e, part in zip(est.estimators_, rep.parts, strict=True):
            c = e.certificate_
            assert c.status == "optimal"
            assert abs(c.dual_objective - part.dual) <= 1e-9 * abs(part.dual)
            assert abs(c.relative_gap - part.relative_gap) <= 1e-6


def test_gamma_scale_shortcut_is_the_factorys():
    from primaldual.kernels.factory import resolve_gamma

    rng = np.random.default_rng(3)
    est = pdl.CSVC()
    params = est._validate_params()
    for X in (rng.standard_normal((60, 4)), np.asfortranarray(rng.standard_normal((30, 9)) * 1e5),
              np.zeros((5, 2))):
        assert est._resolve_gamma(X, params) == resolve_gamma("scale", X)
    X = np.full((4, 2), 1e300)
    X[0] = -1e300   # finite, X.var() overflows: the same error as before
    with pytest.raises(ValueError, match="overflows"), np.errstate(over="ignore"):
        est._resolve_gamma(X, params)
    with pytest.raises(ValueError, match="NaN or infinite"):
        est._resolve_gamma(np.array([[0.0, np.nan], [1.0, 2.0]]), params)
