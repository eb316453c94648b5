"""Issue 31 (small data, round 4): the lean one-vs-one pairs run side by side on the free CPUs
(:func:`primaldual.methods._pair.pair_threads`, :func:`primaldual.kernels.pool.run_in_order`).

Each case is fitted twice, with the pairs forced onto two threads and with ``n_jobs=1`` (one
after the other), and every fitted attribute is compared recursively -- every sub-problem's
dual point, intercept, support, solution and certificate (objectives, gap, every KKT residual):
the same numbers bit for bit, the same order of sub-problems. Timings are the only entries
skipped. Then the contract around the threads: an exception in a pair propagates and leaves
the estimator as it was, a pair the lean route declines is fitted by the generic route, and
``n_jobs=1`` keeps every pair on the calling thread.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine, make_blobs, make_classification

import primaldual as pdl
import primaldual.methods._multiclass as mc
import primaldual.methods._pair as pr

#: entries that are wall-clock measurements (differ between any two fits)
_TIMES = ("time [s]", "solve_time", "compile_time")


def _diff(a, b, path="", seen=None):
    """The first path at which ``a`` and ``b`` differ (``None``: equal, bit for bit)."""
    seen = set() if seen is None else seen
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{path}: {a.shape}/{a.dtype} != {b.shape}/{b.dtype}"
        if a.dtype == object:
            return _diff(list(a.ravel()), list(b.ravel()), path, seen)
        return None if np.array_equal(a, b, equal_nan=a.dtype.kind in "fc") else path
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys {list(a)} != {list(b)}"
        for k in a:
            if k not in _TIMES:
                d = _diff(a[k], b[k], f"{path}.{k}", seen)
                if d:
                    return d
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            d = _diff(u, v, f"{path}[{i}]", seen)
            if d:
                return d
        return None
    if isinstance(a, float):
        return None if (a != a and b != b) or a == b else f"{path}: {a!r} != {b!r}"
    if a is None or isinstance(a, (str, int, bool, np.number, type)):
        return None if a == b else f"{path}: {a!r} != {b!r}"
    if hasattr(a, "__dict__") and not callable(a) or hasattr(a, "get_params"):
        if id(a) in seen:
            return None
        seen.add(id(a))
        return _diff(vars(a), vars(b), path, seen)
    return None  # (functions, kernels' bound methods: not fitted values)


def _force_threads(monkeypatch, threads=2):
    monkeypatch.setattr(pr, "free_cpus", lambda: threads)
    monkeypatch.setattr(pr, "PAIR_THREADS_MIN_WORK", 0)


def _data(name, seed):
    if name == "iris":
        return load_iris(return_X_y=True)
    if name == "wine":
        X, y = load_wine(return_X_y=True)
        return (X - X.mean(axis=0)) / X.std(axis=0), y
    if name == "blobs5":
        return make_blobs(n_samples=250, centers=5, n_features=6, cluster_std=3.0,
                          random_state=seed)
    return make_classification(n_samples=240, n_features=8, n_informative=5, n_classes=4,
                               n_clusters_per_class=1, flip_y=0.05, random_state=seed)


def test_diff_sees_a_one_ulp_change():
    """The comparison below can fail: one ulp in one sub-problem's certificate is seen."""
    X, y = load_iris(return_X_y=True)
    a, b = pdl.CSVC().fit(X, y), pdl.CSVC().fit(X, y)
    assert _diff(vars(a), vars(b)) is None
    cert = b.estimators_[2].certificate_
    cert.duality_gap = float(np.nextafter(cert.duality_gap, np.inf))
    assert "certificate_" in (_diff(vars(a), vars(b)) or "")


@pytest.mark.parametrize("make", [
    lambda: pdl.CSVC(), lambda: pdl.NuSVC(), lambda: pdl.CSVC(kernel="linear", C=0.1),
    lambda: pdl.CSVC(kernel="poly", C=10.0, decision_function_shape="ovo"),
    lambda: pdl.NuSVC(nu=0.2, gamma=0.1)])
@pytest.mark.parametrize("data, seed", [("iris", 0), ("wine", 0), ("blobs5", 1),
                                        ("blobs5", 2), ("classification4", 3)])
def test_pairs_side_by_side_fit_what_one_thread_fits(monkeypatch, make, data, seed):
    X, y = _data(data, seed)
    _force_threads(monkeypatch)
    idents = set()
    real = pr.fit_pair

    def spy(*args, **kw):
        idents.add(threading.get_ident())
        time.sleep(0.002)            # (both threads claim pairs even on a loaded machine)
        return real(*args, **kw)

    monkeypatch.setattr(mc, "fit_pair", spy)
    par = make().fit(X, y)
    assert par.pair_threads_ == 2 and len(idents) == 2
    idents.clear()
    ser = make().set_params(n_jobs=1).fit(X, y)
    assert ser.pair_threads_ == 1 and idents == {threading.get_ident()}
    assert ser.n_jobs == 1
    ser.n_jobs = None
    vp, vs = vars(par), vars(ser)
    vp.pop("pair_threads_"), vs.pop("pair_threads_")
    assert _diff(vp, vs) is None
    assert np.array_equal(par.decision_function(X), ser.decision_function(X))
    assert all(c.status == "optimal" for c in par.certificates_)


def test_a_failing_pair_propagates_and_leaves_the_estimator_as_it_was(monkeypatch):
    X, y = _data("blobs5", 0)
    est = pdl.CSVC().fit(X[y < 3], y[y < 3])            # an earlier fit, kept on failure
    before = {k: v for k, v in vars(est).items()}
    _force_threads(monkeypatch)
    real = pr.fit_pair
    calls = []

    def failing(*args, **kw):
        calls.append(threading.get_ident())
        if len(calls) == 4:
            raise FloatingPointError("pair 4 fails")
        return real(*args, **kw)

    monkeypatch.setattr(mc, "fit_pair", failing)
    with pytest.raises(FloatingPointError, match="pair 4 fails"):
        est.fit(X, y)
    assert len(calls) < 10                                # no pair started after the failure
    assert list(vars(est)) == list(before)
    assert all(vars(est)[k] is v for k, v in before.items())


def test_a_declined_pair_takes_the_generic_route(monkeypatch):
    """Pairs whose SMO solve reports a stop at the iteration limit leave the lean route; the
    generic route fits them (on the calling thread, in order) as it does without threads."""
    X, y = _data("blobs5", 1)
    real = pr._smo_solve
    lock = threading.Lock()
    seen = []

    def stopped(*args, **kw):
        r = real(*args, **kw)
        with lock:
            seen.append(1)
            if len(seen) % 3 == 0:
                r.status = "max_iter"
        return r

    monkeypatch.setattr(pr, "_smo_solve", stopped)
    _force_threads(monkeypatch)
    par = pdl.NuSVC().fit(X, y)
    assert par.pair_threads_ == 2 and len(seen) == 10
    monkeypatch.setattr(pr, "_smo_solve", real)
    ser = pdl.NuSVC(n_jobs=1).fit(X, y)
    assert all(e.certificate_.status == "optimal" for e in par.estimators_)
    for k in ("support_", "dual_coef_", "intercept_", "n_support_"):
        assert np.array_equal(getattr(par, k), getattr(ser, k)), k


def test_threads_only_when_they_pay(monkeypatch):
    """Two threads need two free CPUs and enough work; ``n_jobs=1`` is the opt-out."""
    X, y = _data("blobs5", 0)
    monkeypatch.setattr(pr, "free_cpus", lambda: 1)
    assert pdl.CSVC().fit(X, y).pair_threads_ == 1           # no free CPU
    monkeypatch.setattr(pr, "free_cpus", lambda: 2)
    assert pdl.CSVC().fit(X, y).pair_threads_ == 1           # blobs: 100 x 6 per pair
    assert pr.pair_threads([400] * 3, 64) == 2
    assert pr.pair_threads([400], 64) == 1                   # a single pair
    assert pr.pair_threads([100, 100, 100], 4) == 1          # too little work per pair
    monkeypatch.setattr(pr, "PAIR_THREADS_MIN_WORK", 0)
    assert pdl.CSVC().fit(X, y).pair_threads_ == 2
    assert pdl.CSVC(n_jobs=1).fit(X, y).pair_threads_ == 1
    m = pdl.CSVC().fit(X, y)
    m.fit(X, y == 0)                                         # a binary refit
    assert not hasattr(m, "pair_threads_")


def test_pairs_side_by_side_on_a_shared_gram_matrix(monkeypatch):
    """nu-SVC on 600 rows: the first pair alone decides to share one Gram matrix, the others
    read it from two threads; the same model as one thread."""
    from primaldual.kernels.gram import SharedGram

    X, y = make_blobs(n_samples=600, centers=4, n_features=5, cluster_std=4.0, random_state=0)
    made = []
    real = SharedGram.of

    def spy(*args, **kw):
        made.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(SharedGram, "of", staticmethod(spy))
    _force_threads(monkeypatch)
    par = pdl.NuSVC().fit(X, y)
    ser = pdl.NuSVC(n_jobs=1).fit(X, y)
    assert made == [1, 1] and par.pair_threads_ == 2
    ser.n_jobs = None
    vp, vs = vars(par), vars(ser)
    vp.pop("pair_threads_"), vs.pop("pair_threads_")
    assert _diff(vp, vs) is None
