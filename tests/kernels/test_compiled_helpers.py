"""Issue 31: the compiled loops of :mod:`primaldual.kernels.compiled` give, bit for bit, what
the numpy expressions they replace give (the certificate's per-sample terms, the support split
of the fitted attributes), on random data with ties, zeros, bounds met exactly, both blocks.
"""
from __future__ import annotations

import numpy as np
import pytest

from primaldual.backends.smo import compile_core
from primaldual.methods._fit import support_split


@pytest.fixture(scope="module", autouse=True)
def _numba():
    compile_core()     # numba at hand: the compiled routes are taken


def _point(rng, n, upper):
    """Multipliers at 0, at the bound and strictly between (the three kinds of SVM rows)."""
    kind = rng.integers(0, 3, n)
    a = np.where(kind == 0, 0.0, np.where(kind == 1, upper, upper * rng.uniform(0.01, 0.99, n)))
    return a


@pytest.mark.parametrize("seed", range(6))
def test_box_terms_equal_numpy(seed):
    from primaldual.kernels.compiled import box_terms

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    u = rng.uniform(0.1, 3.0, n)
    a = _point(rng, n, u)
    a[0] = -1e-3 if seed % 2 else a[0]           # a bound violated: a dual infeasibility
    p, s = -np.ones(n), rng.choice([-1.0, 1.0], n)
    qs = s * (2.0 if seed == 3 else 1.0)
    Kr = rng.standard_normal(n)
    d = rng.uniform(0, 1, n) if seed % 3 == 0 else np.zeros(n)
    nu_eq, nu_sum = float(rng.standard_normal()), float(rng.standard_normal()) * (seed % 2)
    cut = n if seed < 3 else n // 2
    terms, mx, ok = box_terms(a, u, p, s, qs, Kr, d, bool(d.any()), nu_eq, nu_sum, cut)
    assert ok
    # the numpy expressions of primaldual.certificate.box_qp_certificate
    r = qs * Kr
    r += p
    if nu_eq:
        r -= nu_eq * s
    if nu_sum:
        r -= nu_sum
    if d.any():
        r += d * a
    xi = np.maximum(-r, 0.0)
    ua = u - a
    want = [np.maximum(-a, 0.0), np.maximum(-ua, 0.0), np.abs(a * np.maximum(r, 0.0)),
            np.abs(ua * xi), xi]
    for got, w in zip(terms, want, strict=True):
        assert np.array_equal(got, w)
    for t in range(4):
        for k, (lo, hi) in enumerate(((0, cut), (cut, n))):
            part = want[t][lo:hi]
            assert mx[t, k] == (float(part.max()) if part.size else 0.0)


def test_box_terms_flags_nan():
    from primaldual.kernels.compiled import box_terms

    n = 4
    Kr = np.array([0.5, np.nan, 0.1, 0.2])
    one = np.ones(n)
    assert not box_terms(one * 0.5, one, -one, one, one, Kr, one, False, 0.0, 0.0, n)[2]


@pytest.mark.parametrize("seed", range(8))
def test_support_layout_equals_support_split(seed):
    from primaldual.kernels.compiled import support_layout

    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 80))
    upper = rng.uniform(0.5, 2.0, n) if seed % 2 else np.full(n, 1.0)
    if seed == 5:
        upper[::3] = np.inf                      # an infinite bound is never "bounded"
    a = _point(rng, n, np.where(np.isfinite(upper), upper, 1.0))
    if seed == 6:
        a = a * 0.0                               # no support vector at all
    y = rng.choice([-1.0, 1.0], n)
    c = a * y if seed % 3 == 0 else a
    sv, free, bnd, n_pos, spectrum = support_layout(c, upper, y, True, a)
    s0, f0, b0 = support_split(c, upper)
    pos = y[s0] > 0
    want_pos = int(np.count_nonzero(pos))
    if 0 < want_pos < s0.shape[0]:
        s0 = np.concatenate([s0[~pos], s0[pos]])
    want_spec = np.abs(a)
    want_spec.sort()
    assert np.array_equal(sv, s0) and sv.dtype == s0.dtype
    assert np.array_equal(free, f0) and np.array_equal(bnd, b0)
    assert n_pos == want_pos
    assert np.array_equal(spectrum, want_spec)
    # without the class grouping: support_split's own order
    sv2, *_ = support_layout(c, upper, y, False, a)
    assert np.array_equal(sv2, support_split(c, upper)[0])


def test_support_layout_refuses_non_finite():
    from primaldual.kernels.compiled import support_layout

    c = np.array([0.5, np.nan, 0.0])
    assert support_layout(c, np.ones(3), np.ones(3), True, c)[3] == -1


@pytest.mark.parametrize("seed", range(4))
def test_rbf_block_compiled_exponent_equals_numpy_passes(seed):
    # issue 31: with numba loaded, RBF._block forms the exponent of its GEMM in one compiled
    # pass (kernels.compiled.rbf_exponent_gemm); the block is bit for bit the numpy passes'
    # (exp(-gamma max(0, -2 x.z + |x|^2 + |z|^2))), here written out independently, also with
    # a duplicated row (a distance that cancels to 0 or below) and a NaN in the data
    import sys

    from primaldual.kernels import RBF
    from primaldual.kernels.functions import _COMPILED

    assert "numba" in sys.modules
    rng = np.random.default_rng(seed)
    n, m, d = int(rng.integers(1, 300)), int(rng.integers(1, 60)), int(rng.integers(1, 70))
    A = rng.standard_normal((n, d)) * (1.0 + 9.0 * (seed % 2))
    Z = rng.standard_normal((m, d))
    Z[0] = A[0]
    if seed == 3:
        A[-1, 0] = np.nan
    k = RBF(gamma=float(rng.uniform(0.01, 2.0)))
    D = A @ Z.T
    D *= -2.0
    D += np.einsum("ij,ij->i", A, A)[:, None]
    D += np.einsum("ij,ij->i", Z, Z)[None, :]
    np.maximum(D, 0.0, out=D)
    D *= -k.gamma
    ref = np.exp(D)
    got = k._block(A, Z)  # (the public call refuses NaN data before any block)
    assert _COMPILED  # the compiled route was taken
    np.testing.assert_array_equal(got, ref)
    if seed != 3:
        np.testing.assert_array_equal(k(A, Z), ref)
    assert (np.isnan(got[-1]).all() if seed == 3 else np.isfinite(got).all())
