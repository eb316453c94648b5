"""The certificate certifies the predictor (issue 19): ``decision_function(X_train)`` equals the
``f`` the certificate was computed from, per backend, including badly scaled linear data."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from primaldual.kernels import RBF, Linear, kernel_matvec, matvec_cache
from primaldual.methods.lssvm import LSSVC
from primaldual.methods.svc import CSVC
from primaldual.methods.svr import EpsilonSVR


def _data(n=80, scale=1.0, seed=0):
    X, y = make_classification(n, 5, n_informative=3, random_state=seed)
    return X * scale, y


def _check(m, X):
    f = m.certificate_.f
    assert f is not None and f.shape == (X.shape[0],)
    d = m.decision_function(X)
    np.testing.assert_allclose(d, f, rtol=1e-10, atol=1e-10 * np.max(np.abs(f)))
    # the label predict returns is the sign of the certified f
    np.testing.assert_array_equal(m.predict(X), m.classes_[(f > 0).astype(int)])


@pytest.mark.parametrize("backend", ["smo", "cvxpy"])
def test_csvc_decision_is_certified_f(backend):
    X, y = _data()
    m = CSVC(C=1.0, gamma=0.3).fit(X, y, backend=backend)
    _check(m, X)
    # support is exactly the nonzero coefficients (nothing dropped after certification)
    assert np.all(m.beta_[m.support_] != 0)
    assert np.all(np.delete(m.beta_, m.support_) == 0)


@pytest.mark.parametrize("backend", ["smo", "cvxpy"])
def test_badly_scaled_linear_data_predicts_what_was_certified(backend):
    X, y = _data(n=40, scale=1e4, seed=1)
    # C = 1e-8 keeps C K ~ 1 (a well-posed problem) while every alpha is ~1e-8: a threshold
    # of 1e-7 * max(1, max alpha) after certification used to drop every support vector
    m = CSVC(C=1e-8, kernel="linear").fit(X, y, backend=backend)
    _check(m, X)
    # predict is the certified classifier, not a constant
    assert len(np.unique(m.predict(X))) == 2


def test_lssvc_kkt_and_lowrank_decision_is_certified_f():
    X, y = _data()
    m = LSSVC(C=1.0, gamma=0.3).fit(X, y, backend="kkt")
    _check(m, X)
    m = CSVC(C=1.0, gamma=0.3, rank=20).fit(X, y, backend="lowrank")
    _check(m, X)


def test_svr_decision_is_certified_f():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    m = EpsilonSVR(C=1.0, epsilon=0.1, gamma=0.5).fit(X, y, backend="smo")
    np.testing.assert_allclose(m.predict(X), m.certificate_.f, rtol=1e-10, atol=1e-12)


def test_kernel_matvec_matches_dense_and_caches():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 4))
    v = rng.standard_normal(50)
    v[::3] = 0.0
    for k in (RBF(0.7), Linear()):
        K = k(X)
        np.testing.assert_allclose(kernel_matvec(k, X, v, chunk_elements=7), K @ v,
                                   rtol=1e-12, atol=1e-12)
        S = np.array([3, 7, 11])
        np.testing.assert_allclose(kernel_matvec(k, X, v[S], columns=S), K[:, S] @ v[S],
                                   rtol=1e-12, atol=1e-12)
    w = rng.standard_normal((50, 2)) + 3.0  # no zero: the symmetric (lower-blocks) path
    for ce in (7, 400, 10**6):
        np.testing.assert_allclose(kernel_matvec(RBF(0.7), X, w, chunk_elements=ce),
                                   RBF(0.7)(X) @ w, rtol=1e-12, atol=1e-12)
    k = RBF(0.7)
    with matvec_cache() as cache:
        a = kernel_matvec(k, X, v)
        a[:] = 0.0  # callers get copies: the cached product cannot be corrupted
        b = kernel_matvec(k, X, v)
        assert len(cache) == 1
    np.testing.assert_allclose(b, k(X) @ v, rtol=1e-12, atol=1e-12)


def test_kernel_matvec_threads_match_one_thread(monkeypatch):
    # row blocks of a built-in kernel run in worker threads (3 forced here, whatever the
    # machine); a user's callable kernel is only ever called from the calling thread
    import threading

    import primaldual.kernels.gram as gram
    from primaldual.kernels import CallableKernel

    rng = np.random.default_rng(2)
    X = rng.standard_normal((61, 3))
    v = rng.standard_normal(61) + 3.0
    W = rng.standard_normal((61, 2))
    S = np.arange(0, 61, 2)
    monkeypatch.setattr(gram, "MATVEC_THREADS", 3)
    monkeypatch.setattr(gram.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr(gram, "free_cpus", lambda: 3)     # (an idle machine)
    assert gram._n_threads(61 * 61 // 2, 7) == 3
    k = RBF(0.4)
    K = k(X)
    for vv in (v, W):
        np.testing.assert_allclose(kernel_matvec(k, X, vv, chunk_elements=7), K @ vv,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(kernel_matvec(k, X, vv[S], columns=S, chunk_elements=7),
                                   K[:, S] @ vv[S], rtol=1e-12, atol=1e-12)
    idents = set()

    def f(A, B):
        idents.add(threading.get_ident())
        return RBF(0.4)(A, B)

    np.testing.assert_allclose(kernel_matvec(CallableKernel(f), X, v, chunk_elements=7), K @ v,
                               rtol=1e-12, atol=1e-12)
    assert idents == {threading.get_ident()}


def test_kernel_products_take_the_one_cpu_rule(monkeypatch):
    """The kernel product and the Gram fill run on at most the CPUs other processes leave
    free (kernels.cpus.free_cpus, as the Cholesky, the low-rank blocks and the pairs do):
    with one free CPU no worker pool is started, with three the work is split in three."""
    import primaldual.kernels.gram as gram

    pools = []

    class Counting(gram.ThreadPoolExecutor):
        def __init__(self, n, *a, **k):
            pools.append(n)
            super().__init__(n, *a, **k)

    monkeypatch.setattr(gram, "ThreadPoolExecutor", Counting)
    monkeypatch.setattr(gram, "MATVEC_THREADS", 3)
    monkeypatch.setattr(gram, "MATVEC_CHUNK", 16)
    monkeypatch.setattr(gram.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    X = np.random.default_rng(5).standard_normal((61, 3))
    v = np.ones(61)
    K = RBF(0.4)(X)
    for free, expected in ((1, []), (3, [3, 3])):
        pools.clear()
        monkeypatch.setattr(gram, "free_cpus", lambda free=free: free)
        np.testing.assert_allclose(kernel_matvec(RBF(0.4), X, v, chunk_elements=7), K @ v,
                                   rtol=1e-12, atol=1e-12)
        G = np.zeros((61, 61), order="F")
        gram.fill_gram_lower(X, RBF(0.4), G, block=8)
        assert pools == expected, (free, pools)


def test_nan_anywhere_is_never_optimal():
    import warnings

    from primaldual.certificate import Certificate
    from primaldual.validation import audit_certificate

    c = Certificate(1.0, 1.0, 0.0, 0.0, {"a": 0.0, "b": float("nan"), "c": 0.0})
    assert not c.is_optimal() and np.isnan(c.max_kkt_residual)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert audit_certificate(c) == "inaccurate"
    c = Certificate(1.0, float("nan"), float("nan"), float("nan"), {"a": 0.0})
    assert not c.is_optimal()


def test_smo_default_fit_stops_on_the_certified_gap():
    """Default tol: status "optimal" means the recomputed relative gap and residuals are
    within tol (SMO keeps going past LIBSVM's rule until its O(N) gap meets tol)."""
    from sklearn.datasets import load_breast_cancer

    from primaldual.datasets import load_dataset
    from primaldual.methods.svc import HardMarginSVC

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    m = CSVC(C=100.0, gamma=0.05).fit(X[:300], y[:300], backend="smo")
    c = m.certificate_
    assert m.status_ == "optimal" and 0 <= c.relative_gap <= 1e-3
    X, y = load_dataset("amini")
    m = HardMarginSVC(kernel="linear").fit(X, y, backend="smo")
    c = m.certificate_
    assert m.status_ == "optimal" and abs(c.relative_gap) <= 1e-3
    assert c.max_kkt_residual <= 1e-3 * max(1.0, abs(c.primal_objective))


def test_lowrank_certifies_the_eta_problem_and_exact_is_opt_in():
    X, y = _data(n=150)
    m = CSVC(C=1.0, gamma=0.3, rank=30).fit(X, y)  # auto -> lowrank, default Nystrom factor
    c = m.certificate_
    assert m.backend_ == "lowrank" and m.lowrank_factor_.method == "nystrom"
    assert m.status_ == "optimal" and abs(c.relative_gap) <= 1e-3
    assert "eta-problem" in c.extra["certifies"] and m.exact_certificate_ is None
    _check(m, X)
    m2 = CSVC(C=1.0, gamma=0.3, rank=30, factor="icholesky", certify="exact").fit(X, y)
    assert m2.lowrank_factor_.method == "icholesky"
    e = m2.exact_certificate_
    assert e is not None and m2.certificate_.extra["exact-kernel relative gap"] == e.relative_gap
    with pytest.raises(ValueError, match="factor"):
        CSVC(rank=5, factor="qr").fit(X, y)


def test_lowrank_warns_when_the_factor_explains_too_little():
    from primaldual.exceptions import LowRankApproximationWarning

    X, y = _data(n=120)
    with pytest.warns(LowRankApproximationWarning, match="unexplained"):
        CSVC(C=1.0, gamma=50.0, rank=5).fit(X, y)


def test_kernel_spec_is_what_the_compiled_backends_read():
    import primaldual.backends.smo.inputs as smo
    from primaldual.kernels import Laplacian, Polynomial
    from primaldual.kernels.gram import dense_form

    assert smo._kernel_spec(RBF(0.5)) == ("rbf", 0.5, 0.0, 0.0)
    assert smo._kernel_spec(Polynomial(2, 0.5, 1.0)) == ("poly", 0.5, 1.0, 2.0)
    assert smo._kernel_spec(Linear())[0] == "linear"
    # attributes are never guessed: an object named "rbf" without a spec is a Python kernel
    from primaldual.kernels import Precomputed

    class LooksLikeRBF:
        name, gamma = "rbf", 0.5

        def __call__(self, X, Z=None):
            return X @ (X if Z is None else Z).T

    assert smo._kernel_spec(LooksLikeRBF())[0] == "python"
    assert smo._kernel_spec(Precomputed())[0] == "precomputed"
    # dense blocks use the kernel's own elementwise profile; Laplacian (cityblock) is called
    assert dense_form(RBF(0.5)) == "dist" and dense_form(Polynomial(2, 0.5, 1.0)) == "dot"
    assert dense_form(Laplacian(1.0)) is None and Laplacian(1.0).spec() is None


def test_certified_smo_fit_allocates_no_n_by_n_array():
    # peak memory of the whole certified fit on the compiled SMO route (solve, recovery,
    # certificate, fitted attributes) with a 1 MB kernel cache stays far below one N x N
    # float64 array (32 MB at N = 2000); benchmarks/bench_memory.py measures the 50k fit
    import tracemalloc

    from sklearn.datasets import make_classification

    from primaldual.backends.smo.solver import compile_core
    from primaldual.methods.svc import CSVC

    n = 2000
    X, y = make_classification(n, 20, n_informative=10, random_state=0)
    # the compiled core, loaded outside the trace (without it a fit of <= 2500 variables takes
    # the dense numpy route, whose Gram matrix is N x N by design; large N never does)
    compile_core()
    tracemalloc.start()
    try:
        m = CSVC(C=1.0, gamma=0.05, cache_size=1.0).fit(X, y, backend="smo")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert m.certificate_.status == "optimal"
    assert peak < 0.2 * 8 * n * n, f"peak {peak / 1e6:.1f} MB"


def test_fill_gram_lower_in_threads_equals_the_kernel(monkeypatch):
    # the KKT backend's Gram matrix is written into the factor's storage by column blocks in
    # worker threads (3 forced here); its lower triangle is the kernel's, to rounding
    import primaldual.kernels.gram as gram
    from primaldual.kernels import Polynomial

    monkeypatch.setattr(gram, "MATVEC_THREADS", 3)
    monkeypatch.setattr(gram.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr(gram, "free_cpus", lambda: 3)
    monkeypatch.setattr(gram, "MATVEC_CHUNK", 16)
    X = np.random.default_rng(3).standard_normal((70, 4))
    from primaldual.kernels import RationalQuadratic, Sigmoid

    for k in (RBF(0.3), Polynomial(degree=3, gamma=0.5, coef0=1.0), Linear(), Sigmoid(0.1, 0.2),
              RationalQuadratic(1.5, 2.0)):
        G = np.zeros((70, 70), order="F")
        gram.fill_gram_lower(X, k, G, block=8)
        np.testing.assert_allclose(gram.gram(k, X[:9], X), k(X[:9], X), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gram.gram(k, X[:9], X, dtype=np.float32), k(X[:9], X),
                                   rtol=1e-4, atol=1e-5)
        low = np.tril_indices(70)
        np.testing.assert_allclose(G[low], k(X)[low], rtol=1e-12, atol=1e-12)


def test_free_cpus_follows_the_load(monkeypatch):
    # the KKT backend's Cholesky uses as many BLAS threads as other processes leave CPUs idle
    # (OpenBLAS threads spin when oversubscribed), by the one CPU rule (kernels.cpus); the
    # factor is the same to rounding either way
    import primaldual.backends.linsys.direct as direct
    import primaldual.kernels.cpus as cpus
    import primaldual.kernels.gram as gram

    # before its first window of CPU counters, the one CPU rule is the load average's (no
    # reading kept from an earlier call of this process: every kernel product asks the rule)
    monkeypatch.setattr(cpus, "_READING", [])
    monkeypatch.setattr(cpus, "_ESTIMATE", [])
    monkeypatch.setattr(cpus, "_cpu_reading", lambda: None)
    monkeypatch.setattr(gram.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    for load, expected in ((0.3, 4), (1.0, 4), (2.0, 3), (3.6, 1), (12.0, 1)):
        monkeypatch.setattr(gram.os, "getloadavg", lambda load=load: (load, load, load))
        assert gram.free_cpus() == expected == cpus.load_average_cpus()
    X = np.random.default_rng(4).standard_normal((300, 3))
    monkeypatch.setattr(direct, "free_cpus", lambda: 1)
    busy = direct.factor_kernel(X, RBF(0.5), 1.0)
    monkeypatch.setattr(direct, "free_cpus", lambda: 2)
    idle = direct.factor_kernel(X, RBF(0.5), 1.0)
    assert (busy.threads, idle.threads) == (1, 2)
    np.testing.assert_allclose(np.tril(busy.L), np.tril(idle.L), rtol=1e-12, atol=1e-12)
