"""Issue 31, small data: the multiclass fit's per-sub-problem pipeline (one validation per fit,
one kernel object, the shared Gram matrix, the BLAS limit set on demand) changes nothing a fit
returns: the shared-Gram path equals the per-pair path, and every sub-problem's certificate
agrees with the independent oracle."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from sklearn.datasets import make_classification

import primaldual as pd
import primaldual.methods._multiclass as MC
from primaldual.kernels import SharedGram, kernel_matvec, make_kernel
from primaldual.kernels import gram as G
from primaldual.testing import assert_oracle_optimal


@pytest.fixture(scope="module")
def four_classes():
    # N = 520 >= SHARED_GRAM_MIN_N: the shared Gram matrix is considered
    return make_classification(n_samples=520, n_features=6, n_informative=4, n_classes=4,
                               n_clusters_per_class=1, random_state=0)


@pytest.mark.parametrize("Est", [pd.CSVC, pd.NuSVC, pd.EpsilonSVR, pd.NuSVR])
def test_every_libsvm_type_estimator_takes_the_lean_sub_problem_path(Est):
    # CSVC / EpsilonSVR inherit fit from the Dask mixin, which hands numpy input to the shared
    # pipeline: their sub-problems must not be cloned and validated again
    assert MC._lean(Est())


def test_a_multiclass_fit_checks_its_parameters_once(count_C_checks):
    calls = count_C_checks
    rng = np.random.default_rng(0)
    X = rng.standard_normal((45, 3))
    y = np.repeat([0, 1, 2], 15)
    m = pd.CSVC(C=2.0).fit(X, y)
    assert len(m.estimators_) == 3 and calls == ["C"]


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear", "sigmoid"])
def test_shared_gram_products_equal_the_per_sub_problem_products(kernel):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((70, 5))
    k = make_kernel(kernel, 0.3, 3, 0.5, X)
    rows = np.flatnonzero(rng.random(70) < 0.6)
    sg = SharedGram.of(k, X).subset(rows)
    v = rng.standard_normal(rows.shape[0]) * (rng.random(rows.shape[0]) < 0.4)
    Xs = X[rows]
    want = kernel_matvec(k, Xs, v)
    scale = np.abs(k(Xs)).max() * np.abs(v).sum()
    assert np.abs(sg.matvec(v) - want).max() <= 1e-12 * scale
    assert np.abs(sg.block() - k(Xs)).max() <= 1e-12 * np.abs(k(Xs)).max()
    V = rng.standard_normal((rows.shape[0], 2))
    assert np.allclose(sg.matvec(V), k(Xs) @ V, rtol=1e-12, atol=1e-12 * scale)


def _fit(Est, X, y, share, monkeypatch):
    made = []
    orig = SharedGram.of

    def spy(kernel, X_):
        made.append(orig(kernel, X_))
        return made[-1]

    monkeypatch.setattr(MC, "_gram_pays", lambda *a: share)
    monkeypatch.setattr(SharedGram, "of", staticmethod(spy))
    m = Est().fit(X, y)
    monkeypatch.undo()
    return m, made


def test_shared_gram_fit_equals_the_per_pair_fit_and_is_certified(four_classes, monkeypatch):
    X, y = four_classes
    a, made = _fit(pd.NuSVC, X, y, True, monkeypatch)
    b, none = _fit(pd.NuSVC, X, y, False, monkeypatch)
    assert len(made) == 1 and made[0].K.shape == (520, 520) and not none
    # the same SMO runs (kernel columns read from K instead of evaluated), the same model
    assert [int(e.n_iter_[0]) for e in a.estimators_] == [int(e.n_iter_[0]) for e in b.estimators_]
    assert np.array_equal(a.support_, b.support_)
    assert np.abs(a.dual_coef_ - b.dual_coef_).max() <= 1e-12 * np.abs(b.dual_coef_).max()
    assert np.abs(a.intercept_ - b.intercept_).max() <= 1e-12 * np.abs(b.intercept_).max()
    a.set_params(decision_function_shape="ovo")
    b.set_params(decision_function_shape="ovo")
    fa, fb = a.decision_function(X), b.decision_function(X)
    assert np.abs(fa - fb).max() <= 1e-12 * np.abs(fb).max()
    # each sub-problem's certificate (computed from the gathered products) is the oracle's
    rep = assert_oracle_optimal(a, X, y)
    for e, part in zip(a.estimators_, rep.parts, strict=True):
        c = e.certificate_
        assert c.status == "optimal"
        assert abs(c.dual_objective - part.dual) <= 1e-9 * abs(part.dual)
        assert abs(c.primal_objective - part.primal) <= 1e-6 * abs(part.primal)
        assert abs(c.relative_gap - part.relative_gap) <= 1e-6


def test_csvc_on_the_shared_gram_is_certified_by_the_oracle(four_classes, monkeypatch):
    # C-SVC's SMO may take another path on the float32-rounded columns read from K (ties):
    # a different optimal point within tol, certified the same way
    X, y = four_classes
    a, made = _fit(pd.CSVC, X, y, True, monkeypatch)
    assert len(made) == 1
    rep = assert_oracle_optimal(a, X, y)
    for e, part in zip(a.estimators_, rep.parts, strict=True):
        assert e.certificate_.status == "optimal"
        assert abs(e.certificate_.relative_gap - part.relative_gap) <= 1e-6


def test_the_gram_is_shared_only_when_it_pays(four_classes):
    X, y = four_classes
    first = pd.NuSVC().fit(X[y < 2], y[y < 2])
    rows = [np.flatnonzero((y == i) | (y == j)) for i in range(4) for j in range(i + 1, 4)]
    jobs = [(r, None) for r in rows]
    # nu-SVC: at least a nu share of support vectors, the columns cost more than K
    assert MC._gram_pays(first, jobs, X.shape[0])
    sparse_sv = pd.CSVC(C=100.0, kernel="linear").fit(X[y < 2], y[y < 2])
    phi = len(sparse_sv.support_) / rows[0].shape[0]
    assert MC._gram_pays(sparse_sv, jobs, X.shape[0]) == (
        phi * sum(r.shape[0] ** 2 for r in rows[1:]) > 0.5 * 520 ** 2)
    # small data, callable kernels, precomputed kernels, parallel fits: never
    est = pd.NuSVC()
    p = est._validate_params()
    assert not MC._may_share_gram(est, X[:100], p, None, None, 6)
    assert MC._may_share_gram(est, X, p, None, None, 6)
    assert not MC._may_share_gram(est, X, {**p, "kernel": "precomputed"}, None, None, 6)
    assert not MC._may_share_gram(est, X, {**p, "cache_size": 1.0}, None, None, 6)
    assert not MC._may_share_gram(est, X, p, "cvxpy", None, 6)


def test_no_sub_problem_keeps_the_shared_gram(four_classes, monkeypatch):
    X, y = four_classes
    m, made = _fit(pd.NuSVC, X, y, True, monkeypatch)
    ref = weakref.ref(made[0].K)
    made.clear()
    gc.collect()
    assert ref() is None
    assert m.score(X, y) > 0.7  # (the model still predicts: its rows are its own)


def test_one_blas_thread_on_demand_is_set_by_the_first_large_product_only():
    rng = np.random.default_rng(2)
    k = make_kernel("rbf", 0.5, 3, 0.0)
    small, large = rng.standard_normal((20, 3)), rng.standard_normal((400, 40))
    with G.one_blas_thread_on_demand():
        kernel_matvec(k, small, np.ones(20))
        assert G._BLAS_LIMIT.get() is None          # nothing asked for a limit
        kernel_matvec(k, large, np.ones(400))
        assert G._BLAS_LIMIT.get() == 1             # set once, kept for what follows
        kernel_matvec(k, large, np.ones(400))
        assert G._BLAS_LIMIT.get() == 1
    assert G._BLAS_LIMIT.get() is None and G._ON_DEMAND.get() is None


@pytest.mark.parametrize("dense", [False, True])
def test_smo_reads_kernel_columns_from_a_shared_gram_with_row_indices(dense):
    # the compiled core's precomputed form with data positions ``rows`` (and the numpy route on
    # the gathered block): the same solution as kernel columns evaluated from X[rows], for the
    # identity layout (a classifier) and an index map (epsilon-SVR's 2n variables)
    from primaldual.backends.smo import compile_core
    from primaldual.backends.smo.solver import solve_arrays

    if not dense:
        compile_core()
    rng = np.random.default_rng(3)
    X = rng.standard_normal((90, 4))
    k = make_kernel("rbf", 0.4, 3, 0.0)
    sg = SharedGram.of(k, X).subset(np.flatnonzero(rng.random(90) < 0.7))
    Xs = X[sg.rows]
    n = Xs.shape[0]
    s = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    r0 = solve_arrays(Xs, k, -np.ones(n), np.ones(n), sign=s, tol=1e-6, dense=dense)
    r1 = solve_arrays(Xs, k, -np.ones(n), np.ones(n), sign=s, tol=1e-6, dense=dense,
                gram=(sg.K, sg.rows))
    assert np.abs(r0.alpha - r1.alpha).max() <= 1e-9 and abs(r0.b - r1.b) <= 1e-9
    idx = np.r_[np.arange(n), np.arange(n)]
    t = rng.standard_normal(n)
    p = np.r_[0.1 - t, 0.1 + t]
    sign2 = np.r_[np.ones(n), -np.ones(n)]
    q0 = solve_arrays(Xs, k, p, np.ones(2 * n), sign=sign2, index=idx, tol=1e-6, dense=dense)
    q1 = solve_arrays(Xs, k, p, np.ones(2 * n), sign=sign2, index=idx, tol=1e-6, dense=dense,
                gram=(sg.K, sg.rows))
    assert np.abs(q0.alpha - q1.alpha).max() <= 1e-9 and abs(q0.b - q1.b) <= 1e-9
    with pytest.raises(ValueError, match="rows"):
        solve_arrays(Xs[:-1], k, -np.ones(n - 1), np.ones(n - 1), sign=s[:-1],
               gram=(sg.K, sg.rows))
