"""Kernels and low-rank factors against independent references.

References: ``sklearn.metrics.pairwise`` kernels, ``sklearn.gaussian_process.kernels``
(RationalQuadratic, ExpSineSquared, anisotropic RBF), explicit double loops over a
written-out formula on tiny data, and dense eigendecompositions.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from sklearn.gaussian_process import kernels as gpk
from sklearn.metrics import pairwise

import primaldual.kernels as kmod
import primaldual.kernels.factors as factors_mod
from primaldual.exceptions import IndefiniteKernelWarning
from primaldual.kernels import (
    ARDRBF,
    RBF,
    BSpline,
    CallableKernel,
    Kernel,
    Laplacian,
    Linear,
    LowRankFactor,
    Paraboloid,
    Periodic,
    Polynomial,
    Precomputed,
    Product,
    RationalQuadratic,
    Sigmoid,
    Sum,
    eig_factor,
    incomplete_cholesky,
    kernel_from_dict,
    low_rank_factor,
    make_kernel,
    mercer_check,
    nystrom_factor,
)

SEEDS = [0, 1, 2]


def data(seed, n=23, m=9, d=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((m, d))


# ----------------------------------------------------------- independent point formulas


def bspline_1d(t, n):
    """B_n(t) by the Cox-de Boor recursion with the integer knots -(n+1)/2, ..., (n+1)/2
    (independent of the truncated-power formula used in the library)."""
    knots = np.arange(n + 2) - (n + 1) / 2.0

    def N(i, k, x):
        if k == 0:
            return 1.0 if knots[i] <= x < knots[i + 1] else 0.0
        left = (x - knots[i]) / (knots[i + k] - knots[i]) * N(i, k - 1, x)
        right = (knots[i + k + 1] - x) / (knots[i + k + 1] - knots[i + 1]) * N(i + 1, k - 1, x)
        return left + right

    return N(0, n, t)


def point_formula(kernel, x, z):
    """k(x, z) written out from the docstring formula, one pair at a time."""
    if isinstance(kernel, Laplacian):
        nrm = np.sum(np.abs(x - z)) if kernel.norm == "l1" else math.sqrt(np.sum((x - z) ** 2))
        return math.exp(-kernel.gamma * nrm)
    if isinstance(kernel, BSpline):
        n = 2 * kernel.order + 1
        return float(np.prod([bspline_1d(a - b, n) for a, b in zip(x, z, strict=True)]))
    if isinstance(kernel, ARDRBF):
        return math.exp(-sum(g * (a - b) ** 2 for g, a, b in zip(kernel.gammas, x, z, strict=True)))
    if isinstance(kernel, Periodic):
        r = math.sqrt(np.sum((x - z) ** 2))
        return math.exp(-2 * math.sin(math.pi * r / kernel.period) ** 2 / kernel.length_scale**2)
    if isinstance(kernel, RationalQuadratic):
        r2 = np.sum((x - z) ** 2)
        return (1 + r2 / (2 * kernel.alpha * kernel.length_scale**2)) ** (-kernel.alpha)
    if isinstance(kernel, Paraboloid):
        return float(sum(a * b for a, b in zip(x, z, strict=True))
                     + sum(a * a for a in x) * sum(b * b for b in z))
    raise AssertionError(kernel)


def loop_gram(kernel, X, Z):
    return np.array([[point_formula(kernel, x, z) for z in Z] for x in X])


# ------------------------------------------------------------------ against references


@pytest.mark.parametrize("seed", SEEDS)
def test_sklearn_pairwise_kernels(seed):
    X, Z = data(seed)
    g = 0.3 + seed * 0.2
    cases = [
        (Linear(), pairwise.linear_kernel(X, Z), pairwise.linear_kernel(X)),
        (RBF(gamma=g), pairwise.rbf_kernel(X, Z, gamma=g), pairwise.rbf_kernel(X, gamma=g)),
        (Polynomial(degree=3, gamma=g, coef0=1.5),
         pairwise.polynomial_kernel(X, Z, degree=3, gamma=g, coef0=1.5),
         pairwise.polynomial_kernel(X, degree=3, gamma=g, coef0=1.5)),
        (Sigmoid(gamma=g, coef0=-0.5), pairwise.sigmoid_kernel(X, Z, gamma=g, coef0=-0.5),
         pairwise.sigmoid_kernel(X, gamma=g, coef0=-0.5)),
        (Laplacian(gamma=g), pairwise.laplacian_kernel(X, Z, gamma=g),
         pairwise.laplacian_kernel(X, gamma=g)),
    ]
    for k, ref_xz, ref_xx in cases:
        np.testing.assert_allclose(k(X, Z), ref_xz, rtol=1e-12, atol=1e-12, err_msg=repr(k))
        np.testing.assert_allclose(k(X), ref_xx, rtol=1e-12, atol=1e-12, err_msg=repr(k))
        np.testing.assert_allclose(k.diag(X), np.diag(ref_xx), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_sklearn_gp_kernels(seed):
    X, Z = data(seed)
    rng = np.random.default_rng(seed + 10)
    a, ls, p = rng.uniform(0.5, 2.0, size=3)
    np.testing.assert_allclose(RationalQuadratic(alpha=a, length_scale=ls)(X, Z),
                               gpk.RationalQuadratic(length_scale=ls, alpha=a)(X, Z),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(Periodic(period=p, length_scale=ls)(X, Z),
                               gpk.ExpSineSquared(length_scale=ls, periodicity=p)(X, Z),
                               rtol=1e-10, atol=1e-12)
    lengths = rng.uniform(0.5, 2.0, size=X.shape[1])
    np.testing.assert_allclose(ARDRBF(1.0 / (2 * lengths**2))(X, Z),
                               gpk.RBF(length_scale=lengths)(X, Z), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("seed", SEEDS)
def test_double_loop_formulas(seed):
    X, Z = data(seed, n=7, m=5, d=2)
    X, Z = 0.7 * X, 0.7 * Z  # keep B-spline arguments inside the support sometimes
    kernels = [Laplacian(gamma=0.4), Laplacian(gamma=0.4, norm="l2"), BSpline(order=0),
               BSpline(order=1), BSpline(order=2), ARDRBF([0.3, 1.7]),
               Periodic(period=1.3, length_scale=0.8), RationalQuadratic(2.0, 0.6), Paraboloid()]
    for k in kernels:
        np.testing.assert_allclose(k(X, Z), loop_gram(k, X, Z), rtol=1e-10, atol=1e-12,
                                   err_msg=repr(k))
        np.testing.assert_allclose(k(X), loop_gram(k, X, X), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(k.diag(X), np.diag(loop_gram(k, X, X)), rtol=1e-12)


def test_paraboloid_is_the_inner_product_of_its_lifting():
    """``k(x, z) = x^T z + ||x||^2 ||z||^2`` is ``<phi(x), phi(z)>`` with ``phi(x) = (x, ||x||^2)``
    (Amini's lifting of the plane onto the paraboloid), in any dimension."""
    X, Z = data(0, n=7, m=5, d=3)
    lift = lambda A: np.column_stack([A, (A ** 2).sum(axis=1)])  # noqa: E731
    np.testing.assert_allclose(Paraboloid()(X, Z), lift(X) @ lift(Z).T, rtol=1e-13)
    assert make_kernel("paraboloid") == Paraboloid() and Paraboloid().psd


def test_bspline_is_partition_of_unity():
    # Independent property of cardinal B-splines: sum_j B_n(t - j) = 1 for every t.
    t = np.linspace(-0.5, 0.5, 11)
    for p in range(4):
        k = BSpline(order=p)
        shifts = np.arange(-10, 11, dtype=float)
        vals = k(t.reshape(-1, 1), shifts.reshape(-1, 1)).sum(axis=1)
        np.testing.assert_allclose(vals, 1.0, atol=1e-12)


# ------------------------------------------------------------------ structure


ALL_PSD = [Linear(), RBF(0.7), Polynomial(2, 0.5, 1.0), Laplacian(0.5),
           Laplacian(0.5, norm="l2"), RationalQuadratic(1.5, 0.9), ARDRBF([0.2, 0.5, 1.0]),
           BSpline(1), Paraboloid(), RBF(0.3) + Linear(), RBF(0.3) * Polynomial(2)]


@pytest.mark.parametrize("k", ALL_PSD, ids=repr)
@pytest.mark.parametrize("seed", SEEDS)
def test_symmetric_and_psd(k, seed):
    X, _ = data(seed, n=40)
    K = k(X)
    np.testing.assert_array_equal(K, K.T)
    assert k.psd
    lo = mercer_check(K, warn=True)
    assert lo >= -1e-10 * max(1.0, np.abs(K).max())


def test_periodic_psd_in_one_dimension():
    # ExpSineSquared on ||x - z|| is PSD in 1-D (the classical periodic kernel).
    X = np.random.default_rng(0).uniform(-3, 3, size=(40, 1))
    assert mercer_check(Periodic(1.1, 0.7)(X)) >= -1e-10


def test_sigmoid_flagged_non_psd_and_warns():
    assert Sigmoid().psd is False
    assert (Sigmoid() + RBF(1.0)).psd is False
    X, _ = data(0, n=40)
    with pytest.warns(IndefiniteKernelWarning):
        lo = mercer_check(Sigmoid(gamma=2.0, coef0=-1.0)(X))
    assert lo < 0
    ref = np.linalg.eigvalsh(Sigmoid(gamma=2.0, coef0=-1.0)(X))[0]
    assert lo == pytest.approx(ref, rel=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mercer_check(Sigmoid(gamma=2.0, coef0=-1.0)(X), warn=False)
    assert issubclass(IndefiniteKernelWarning, UserWarning)


def test_kernel_not_psd_warning_is_a_deprecated_alias():
    import primaldual
    import primaldual.exceptions as exc

    for module in (kmod, exc):
        with pytest.warns(DeprecationWarning, match="IndefiniteKernelWarning"):
            assert module.KernelNotPSDWarning is IndefiniteKernelWarning
    assert primaldual.IndefiniteKernelWarning is IndefiniteKernelWarning


@pytest.mark.parametrize("k", ALL_PSD + [Sigmoid(0.5, 0.1), Periodic(1.0, 1.0)], ids=repr)
def test_chunking_matches_unchunked(k, monkeypatch):
    X, Z = data(3, n=37, m=11)
    full_xz, full_xx = k(X, Z), k(X)
    monkeypatch.setattr(kmod.functions, "CHUNK_ELEMENTS", 40)  # a few rows per chunk
    np.testing.assert_allclose(k(X, Z), full_xz, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(k(X), full_xx, rtol=1e-13, atol=1e-14)
    monkeypatch.setattr(kmod.functions, "CHUNK_ELEMENTS", 1)  # one row per chunk
    np.testing.assert_allclose(k(X, Z), full_xz, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(k(X), full_xx, rtol=1e-13, atol=1e-14)


def test_chunk_size_bounds_block_size(monkeypatch):
    seen = []
    k = RBF(1.0)
    orig = RBF._block

    def spy(self, A, B, **kw):
        seen.append(A.shape[0] * B.shape[0])
        return orig(self, A, B, **kw)

    monkeypatch.setattr(RBF, "_block", spy)
    monkeypatch.setattr(kmod.functions, "CHUNK_ELEMENTS", 500)
    X, Z = data(0, n=200, m=50)
    k(X, Z)
    k(X)
    assert max(seen) <= 500 * 1.0 + 200  # at most CHUNK_ELEMENTS (+ one row's slack)
    assert len(seen) > 5


@pytest.mark.parametrize("seed", SEEDS)
def test_gamma_conversions(seed):
    X, Z = data(seed)
    s2 = 0.5 + seed
    sigma = 0.4 + seed
    assert RBF(sigma2=s2) == RBF(gamma=1.0 / s2)
    np.testing.assert_allclose(RBF(sigma2=s2)(X, Z), np.exp(-pairwise.euclidean_distances(
        X, Z, squared=True) / s2), rtol=1e-12)
    np.testing.assert_allclose(RBF(sigma=sigma)(X, Z), RBF(gamma=1 / (2 * sigma**2))(X, Z),
                               rtol=1e-14)
    np.testing.assert_allclose(RBF(sigma=sigma)(X, Z), np.exp(-pairwise.euclidean_distances(
        X, Z, squared=True) / (2 * sigma**2)), rtol=1e-12)
    assert RBF(sigma2=s2).sigma2 == pytest.approx(s2)
    assert RBF(sigma=sigma).sigma == pytest.approx(sigma)
    with pytest.raises(ValueError, match="exactly one"):
        RBF()
    with pytest.raises(ValueError, match="exactly one"):
        RBF(gamma=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="sigma2"):
        RBF(sigma2=-1.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_sum_and_product(seed):
    X, Z = data(seed)
    k1, k2 = RBF(0.4), Polynomial(2, 0.3, 1.0)
    s, p = k1 + k2, k1 * k2
    assert isinstance(s, Sum) and isinstance(p, Product)
    np.testing.assert_allclose(s(X, Z), pairwise.rbf_kernel(X, Z, gamma=0.4)
                               + pairwise.polynomial_kernel(X, Z, 2, 0.3, 1.0), rtol=1e-12)
    np.testing.assert_allclose(p(X, Z), pairwise.rbf_kernel(X, Z, gamma=0.4)
                               * pairwise.polynomial_kernel(X, Z, 2, 0.3, 1.0), rtol=1e-12)
    np.testing.assert_allclose(s.diag(X), np.diag(s(X)), rtol=1e-12)
    np.testing.assert_allclose(p.diag(X), np.diag(p(X)), rtol=1e-12)
    nested = (k1 + Linear()) * k2 + Laplacian(0.2)
    assert kernel_from_dict(json.loads(json.dumps(nested.to_dict()))) == nested
    with pytest.raises(ValueError, match="precomputed"):
        Sum(Precomputed(), RBF(1.0))


def test_serialisation_and_repr():
    ks = [Linear(), RBF(0.5), Polynomial(3, 0.5, 2.0), Sigmoid(0.1, -1.0), Laplacian(0.3),
          Laplacian(0.3, "l2"), RationalQuadratic(2.0, 0.5), Periodic(2.0, 0.5),
          ARDRBF([0.1, 0.2]), BSpline(2), Paraboloid(), Precomputed(), RBF(1.0) + Linear()]
    for k in ks:
        d = k.to_dict()
        assert d["name"] == k.name and d["name"] in kmod.KERNEL_NAMES
        d2 = json.loads(json.dumps(d))
        k2 = Kernel.from_dict(d2)
        assert k2 == k and repr(k2) == repr(k)
        assert isinstance(k.latex(), str) and k.latex()
    assert repr(RBF(gamma=0.5)) == "RBF(gamma=0.5)"
    assert str(RBF(gamma=0.5)) == "RBF(gamma=0.5)"
    assert str(RBF(0.5) + Linear()) == "RBF(gamma=0.5) + Linear()"
    with pytest.raises(AttributeError):
        RBF(0.5).gamma = 2.0
    with pytest.raises(ValueError, match="unknown kernel"):
        kernel_from_dict({"name": "nope"})


def test_pickle_and_deepcopy():
    import copy
    import pickle

    X, Z = data(0)
    for k in [RBF(0.5), ARDRBF([0.1, 0.2, 0.3]), Laplacian(0.3, "l2"), RBF(0.5) * Linear()]:
        for k2 in (pickle.loads(pickle.dumps(k)), copy.deepcopy(k)):
            assert k2 == k
            np.testing.assert_array_equal(k2(X, Z), k(X, Z))
            with pytest.raises(AttributeError):
                k2.foo = 1
    F = incomplete_cholesky(RBF(0.5), X, rank=5)
    G = pickle.loads(pickle.dumps(F))
    np.testing.assert_array_equal(G.transform(Z), F.transform(Z))


def test_precomputed_and_callable():
    X, Z = data(0)
    K = pairwise.rbf_kernel(X, gamma=0.5)
    pk = Precomputed()
    np.testing.assert_array_equal(pk(K), K)
    np.testing.assert_array_equal(pk.diag(K), np.diag(K))
    Kt = pairwise.rbf_kernel(Z, X, gamma=0.5)
    np.testing.assert_array_equal(pk(Kt), Kt)
    ck = make_kernel(lambda A, B: pairwise.rbf_kernel(A, B, gamma=0.5))
    assert isinstance(ck, CallableKernel)
    np.testing.assert_allclose(ck(X, Z), pairwise.rbf_kernel(X, Z, gamma=0.5), rtol=1e-14)
    np.testing.assert_allclose(ck.diag(X), 1.0)
    bad = CallableKernel(lambda A, B: np.zeros((1, 1)))
    with pytest.raises(ValueError, match="shape"):
        bad(X, Z)


def test_make_kernel():
    X, _ = data(0)
    k = make_kernel("rbf", gamma="scale", X=X)
    assert k == RBF(1.0 / (X.shape[1] * X.var()))
    assert make_kernel("rbf", gamma="auto", X=X) == RBF(1.0 / X.shape[1])
    assert make_kernel("poly", gamma=0.5, degree=2, coef0=1.0) == Polynomial(2, 0.5, 1.0)
    assert make_kernel("sigmoid", gamma=0.5, coef0=1.0) == Sigmoid(0.5, 1.0)
    assert make_kernel("linear") == Linear()
    assert make_kernel("precomputed") == Precomputed()
    assert make_kernel("laplacian", gamma=0.2) == Laplacian(0.2)
    assert make_kernel("exponential", gamma=0.2) == Laplacian(0.2, "l2")
    assert make_kernel("ard_rbf", gamma=0.2, X=X) == ARDRBF([0.2] * X.shape[1])
    assert make_kernel("bspline", degree=2) == BSpline(2)
    rq = make_kernel("rational_quadratic", gamma=0.5)
    assert rq.length_scale == pytest.approx(1.0)
    inst = RBF(2.0)
    assert make_kernel(inst) is inst
    # scikit-learn agrees on what "scale" means
    from sklearn.svm import SVC

    y = np.where(X[:, 0] > 0, 1, -1)
    svc = SVC(gamma="scale").fit(X, y)
    assert make_kernel("rbf", X=X).gamma == pytest.approx(svc._gamma)
    with pytest.raises(ValueError, match="kernel must be one of"):
        make_kernel("gaussian")
    with pytest.raises(ValueError, match="gamma must be 'scale', 'auto' or a positive"):
        make_kernel("rbf", gamma=0.0)
    with pytest.raises(TypeError, match="gamma"):
        make_kernel("rbf", gamma=[1.0])
    with pytest.raises(ValueError, match="gamma"):
        make_kernel("rbf", gamma=-1.0)
    with pytest.raises(ValueError, match="gamma"):
        make_kernel("rbf", gamma="wide", X=X)
    with pytest.raises(ValueError, match="X"):
        make_kernel("rbf", gamma="scale")
    with pytest.raises(TypeError):
        make_kernel(3)


def test_bad_inputs():
    with pytest.raises(ValueError, match="degree"):
        Polynomial(degree=0)
    with pytest.raises(ValueError, match="gammas"):
        ARDRBF([1.0, -1.0])
    with pytest.raises(ValueError, match="features"):
        RBF(1.0)(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        RBF(1.0)(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="features"):
        ARDRBF([1.0, 2.0])(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="square"):
        mercer_check(np.zeros((2, 3)))


# ------------------------------------------------------------------ low-rank factors


class CountingRBF(RBF):
    """RBF that records the shape of every block it evaluates."""

    def __init__(self, gamma):
        object.__setattr__(self, "calls", [])
        super().__init__(gamma)

    def __call__(self, X, Z=None):
        Xa = np.asarray(X)
        Za = Xa if Z is None else np.asarray(Z)
        self.calls.append((len(Xa), len(Za)))
        return super().__call__(X, Z)


FACTORS = {
    "eig": lambda k, X, r, s: eig_factor(k, X, rank=r),
    "nystrom": lambda k, X, r, s: nystrom_factor(k, X, r, random_state=s),
    "nystrom_kmeans": lambda k, X, r, s: nystrom_factor(k, X, r, landmarks="kmeans++",
                                                        random_state=s),
    "icholesky": lambda k, X, r, s: incomplete_cholesky(k, X, rank=r, tol=0.0),
    "rpcholesky": lambda k, X, r, s: incomplete_cholesky(k, X, rank=r, tol=0.0,
                                                         pivoting="random", random_state=s),
}


@pytest.mark.parametrize("method", FACTORS)
@pytest.mark.parametrize("seed", SEEDS)
def test_full_rank_reproduces_K(method, seed):
    X, Z = data(seed, n=30)
    k = RBF(0.5)
    K = k(X)
    F = FACTORS[method](k, X, 30, seed)
    np.testing.assert_allclose(F.V @ F.V.T, K, atol=1e-8)
    assert F.trace_error <= 1e-8 * np.trace(K)
    # the feature map reproduces cross-kernel values at full rank too
    np.testing.assert_allclose(F.transform(Z) @ F.V.T, k(Z, X), atol=1e-6)


@pytest.mark.parametrize("method", FACTORS)
@pytest.mark.parametrize("seed", SEEDS)
def test_transform_of_training_rows_is_V(method, seed):
    X, _ = data(seed, n=40)
    k = Laplacian(0.3) + RBF(0.2)
    F = FACTORS[method](k, X, 12, seed)
    assert F.V.shape == (40, F.rank) and F.rank <= 12
    np.testing.assert_allclose(F.transform(X), F.V, atol=1e-9)
    # trace error is what it says, against the dense Gram
    K = k(X)
    R = K - F.V @ F.V.T
    assert F.trace_error == pytest.approx(np.trace(R), rel=1e-8, abs=1e-10)
    assert F.relative_error == pytest.approx(F.trace_error / np.trace(K), rel=1e-12)
    assert np.linalg.eigvalsh(R)[0] >= -1e-9  # K - V V^T is PSD for these factors


@pytest.mark.parametrize("method", FACTORS)
def test_transform_in_row_blocks_equals_one_block(method, monkeypatch):
    # transform writes row blocks straight into its result (no second n x M copy); with a
    # block of 7 rows it must give the one-block map (to rounding)
    X, Z = data(1, n=40)
    F = FACTORS[method](RBF(0.4), X, 12, 1)
    whole = F.transform(Z)
    monkeypatch.setattr(factors_mod, "TRANSFORM_CHUNK", 7 * max(F.proj.shape))
    blocked = F.transform(Z)
    assert blocked.shape == whole.shape and blocked.flags.c_contiguous
    np.testing.assert_allclose(blocked, whole, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(F.transform(X), F.V, atol=1e-9)


@pytest.mark.parametrize("method", ["eig", "icholesky"])
@pytest.mark.parametrize("seed", SEEDS)
def test_trace_error_decreases_with_rank(method, seed):
    X, _ = data(seed, n=35)
    k = RBF(0.4)
    errs = [FACTORS[method](k, X, r, seed).trace_error for r in range(1, 36, 3)]
    assert all(b <= a + 1e-12 for a, b in zip(errs[:-1], errs[1:], strict=True))
    assert errs[0] > errs[-1]


@pytest.mark.parametrize("seed", SEEDS)
def test_eig_factor_is_the_dense_truncated_eigendecomposition(seed):
    X, _ = data(seed, n=30)
    K = RBF(0.5)(X)
    lam = np.linalg.eigvalsh(K)[::-1]
    for r in (1, 5, 17):
        F = eig_factor(RBF(0.5), X, rank=r)
        assert F.trace_error == pytest.approx(lam[r:].sum(), rel=1e-7, abs=1e-10)
        np.testing.assert_allclose(np.linalg.svd(F.V, compute_uv=False) ** 2, lam[:r],
                                   rtol=1e-8)
    F = eig_factor(RBF(0.5), X, tol=1e-3)
    assert F.relative_error <= 1e-3
    assert eig_factor(RBF(0.5), X, rank=F.rank - 1).relative_error > 1e-3


@pytest.mark.parametrize("seed", SEEDS)
def test_icholesky_equals_nystrom_on_its_pivots(seed):
    X, Z = data(seed, n=50)
    k = RBF(0.3)
    F = incomplete_cholesky(k, X, rank=10, tol=0.0)
    G = nystrom_factor(k, X, 10, landmarks=F.basis_index)
    np.testing.assert_allclose(F.V @ F.V.T, G.V @ G.V.T, atol=1e-9)
    np.testing.assert_allclose(F.transform(Z) @ F.V.T, G.transform(Z) @ G.V.T, atol=1e-9)
    # greedy pivoting: each pivot had the largest residual diagonal, the first the largest K_ii
    K = k(X)
    resid = np.diag(K).copy()
    for m, p in enumerate(F.basis_index):
        assert resid[p] == pytest.approx(resid.max(), rel=1e-9)
        resid = np.diag(K - F.V[:, : m + 1] @ F.V[:, : m + 1].T)


def test_icholesky_never_forms_the_gram():
    X, _ = data(0, n=60)
    k = CountingRBF(0.5)
    incomplete_cholesky(k, X, rank=20, tol=0.0)
    incomplete_cholesky(k, X, tol=1e-8)
    low_rank_factor(k, X, rank=15)
    assert k.calls, "kernel was never called"
    assert all(z <= 1 for _, z in k.calls), k.calls
    k.calls.clear()
    nystrom_factor(k, X, 10, random_state=0)
    nystrom_factor(k, X, 10, landmarks="kmeans++", random_state=0)
    assert all(z <= 10 for _, z in k.calls), k.calls


def test_icholesky_tolerance_stop():
    X, _ = data(1, n=80)
    k = RBF(0.2)
    for tol in (1e-1, 1e-3, 1e-6):
        F = incomplete_cholesky(k, X, tol=tol)
        assert F.relative_error <= tol
        if F.rank > 1:
            G = incomplete_cholesky(k, X, rank=F.rank - 1, tol=0.0)
            assert G.relative_error > tol


def test_low_rank_with_precomputed_kernel():
    X, Z = data(2, n=40)
    k = RBF(0.4)
    K, Kt = k(X), k(Z, X)
    for method in ("icholesky", "nystrom", "eig"):
        F = low_rank_factor(k, X, rank=15, method=method, random_state=0)
        P = low_rank_factor(Precomputed(), K, rank=15, method=method, random_state=0)
        np.testing.assert_allclose(P.V @ P.V.T, F.V @ F.V.T, atol=1e-9)
        np.testing.assert_allclose(P.transform(Kt) @ P.V.T, F.transform(Z) @ F.V.T, atol=1e-8)
        np.testing.assert_allclose(P.transform(K), P.V, atol=1e-9)


def test_low_rank_factor_roundtrip_and_errors():
    X, Z = data(0, n=30)
    F = low_rank_factor(RBF(0.5), X, rank=8)
    d = F.to_dict()
    meta = {k: v for k, v in d.items() if not isinstance(v, np.ndarray) and v is not None}
    json.dumps(meta)
    G = LowRankFactor.from_dict(d)
    np.testing.assert_array_equal(G.V, F.V)
    np.testing.assert_allclose(G.transform(Z), F.transform(Z), rtol=1e-14)
    assert (G.rank, G.method, G.trace_error) == (F.rank, F.method, F.trace_error)
    with pytest.raises(ValueError, match="rank"):
        low_rank_factor(RBF(0.5), X, rank=31)
    with pytest.raises(ValueError, match="rank"):
        low_rank_factor(RBF(0.5), X, rank=0)
    with pytest.raises(ValueError, match="method"):
        low_rank_factor(RBF(0.5), X, rank=5, method="svd")
    with pytest.raises(ValueError, match="nystrom"):
        low_rank_factor(RBF(0.5), X, method="nystrom")
    with pytest.raises(TypeError, match="kernel"):
        low_rank_factor("rbf", X, rank=3)
    with pytest.raises(ValueError, match="landmarks"):
        nystrom_factor(RBF(0.5), X, 3, landmarks="random")


def test_rbf_block_exact_where_the_gemm_form_cancels():
    """Features of 1e6 with gamma = 1e5: the GEMM form ||x||^2 + ||z||^2 - 2 x.z is off by
    ~1e-4 (times gamma: e^-10 instead of e^0 on the diagonal); the block then comes from the
    differences, so k(x, x) = 1 exactly and every block of the same points agrees (the
    certificate's K[:, S] and predict's K(X, X[S]))."""
    from primaldual.kernels import RBF

    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2)) * 1e6
    k = RBF(gamma=1e5)
    K = k(X)
    np.testing.assert_array_equal(np.diag(K), 1.0)
    S = np.array([0, 3, 7])
    np.testing.assert_array_equal(k(X, X[S]), K[:, S])
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(K, np.exp(-1e5 * D), rtol=0, atol=1e-300)
    # ordinary scales keep the GEMM form (scikit-learn's rbf_kernel to round-off)
    from sklearn.metrics.pairwise import rbf_kernel
    A = rng.normal(size=(40, 5))
    np.testing.assert_allclose(RBF(gamma=0.3)(A), rbf_kernel(A, gamma=0.3), rtol=1e-13)
