"""SMO kernel columns shared with helper threads (issue 31): the shared path gives the serial
path's columns bit for bit, the same iterates and the same result on every run.

The reference is the serial column routine (itself checked against numpy's kernels in
test_smo_sparse.py and against CVXPY/LIBSVM through test_smo.py); a helper thread computes an
entry with the same compiled code, so equality is exact, not approximate.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from sklearn.datasets import make_classification

import primaldual.backends.smo.solver as smo_solver
from primaldual.backends.smo import smo_csvc, smo_nusvc, smo_solve
from primaldual.backends.smo.inputs import _NO_ROWS
from primaldual.backends.smo.solver import _NO_XT as NO_XT
from primaldual.backends.smo.solver import _transposed
from primaldual.kernels import RBF, Linear, Polynomial, _fastexp

core = pytest.importorskip("primaldual.backends.smo.core")
columns = pytest.importorskip("primaldual.backends.smo.columns")
threads = pytest.importorskip("primaldual.backends.smo.threads")

KCODES = [(0, 1.0, 0.0, 1.0), (1, 0.3, 0.0, 3.0), (2, 0.2, 1.0, 3.0), (3, 0.05, 0.1, 3.0)]
E2, EI = np.zeros((0, 0)), np.zeros(0, dtype=np.int64)


def _rows(n=5000, d=7, seed=0):
    X = np.random.default_rng(seed).standard_normal((n, d))
    return X, np.einsum("ij,ij->i", X, X)


def test_rbf_column_matches_numpy_to_float32_rounding():
    # the vectorised exps (_fastexp._exp; columns._exp_f32 in the columns) against numpy's exp,
    # rounded to the cache's float32
    X, xsq = _rows(3000, 20)
    col = np.zeros(3000, dtype=np.float32)
    for r in (0, 1234, 2999):
        columns._kcol_serial(1, X, *_NO_ROWS, xsq, E2, EI, r, 0, 3000, col, 0.05, 0.0, 3.0)
        ref = np.exp(-0.05 * ((X - X[r]) ** 2).sum(axis=1))
        np.testing.assert_allclose(col, ref, rtol=2e-7, atol=1e-30)
    x = np.concatenate([-np.geomspace(1e-12, 745.0, 4001), np.linspace(-5, 5, 101)])

    from numba import njit

    @njit
    def many(x, out):
        for i in range(x.shape[0]):
            out[i] = _fastexp._exp(x[i])

    out = np.empty_like(x)
    many(x, out)
    ok = x >= -700.0
    np.testing.assert_allclose(out[ok], np.exp(x[ok]), rtol=4e-16, atol=0)
    assert np.all(out[~ok] < 1e-300)  # clamped at -700: 0 in the float32 cache

    @njit
    def many32(x, out):
        for i in range(x.shape[0]):
            out[i] = columns._exp_f32(x[i])

    many32(x, out)  # the degree-9 polynomial of the transposed route: 1e-11 relative
    np.testing.assert_allclose(out[ok], np.exp(x[ok]), rtol=1e-11, atol=0)
    assert np.all(out[~ok] < 1e-300)


@pytest.mark.parametrize("kcode, gamma, coef0, degree", KCODES)
def test_shared_column_equals_serial_column(kcode, gamma, coef0, degree):
    X, xsq = _rows()
    n = X.shape[0]
    serial = np.zeros(n, dtype=np.float32)
    shared = np.zeros(n, dtype=np.float32)
    with core.column_helpers(kcode, X, NO_XT, *_NO_ROWS, xsq, E2, EI, gamma, coef0, degree, 0,
                             threads=2) as (ctrl, hbuf):
        assert ctrl[threads._C_NHELP] == 2
        for r, start in ((0, 0), (17, 1000), (n - 1, 3)):
            serial[:] = -1.0
            shared[:] = -1.0
            columns._kcol_serial(kcode, X, *_NO_ROWS, xsq, E2, EI, r, start, n, serial, gamma,
                              coef0, degree)
            for _ in range(20):  # whoever computes a chunk, the column is the same
                threads._kcol_shared(kcode, X, NO_XT, *_NO_ROWS, xsq, E2, EI, r, start, n, shared,
                                  gamma, coef0, degree, ctrl, hbuf)
                np.testing.assert_array_equal(shared, serial)
    st = core.column_stats(ctrl)
    # chunks of threads._MIN_CHUNK = 512 rows: 10 + 8 + 10 per round
    assert threads._MIN_CHUNK == 512
    assert st["solver_chunks"] + st["helper_chunks"] + st["recomputed_chunks"] == 20 * 28


def test_helper_worker_computes_published_chunks():
    # the helper's side alone, deterministically: publish a column by hand, let one helper
    # thread claim every chunk, compare its buffer with the serial column
    X, xsq = _rows(4500, 5)
    n = X.shape[0]
    ctrl, _ = core.no_helpers(0)
    hbuf = np.zeros((1, n), dtype=np.float32)
    ctrl[threads._C_NHELP] = 1
    ctrl[threads._C_SPIN] = 10
    args = (ctrl, hbuf, 1, X, NO_XT, *_NO_ROWS, xsq, E2, EI, 0.2, 0.0, 3.0)
    th = threading.Thread(target=threads._column_worker, args=(0, *args), daemon=True)
    th.start()
    try:
        cs, nch, g = 1024, 5, 7
        for f, v in ((threads._C_ROW, 11), (threads._C_START, 0), (threads._C_END, n),
                     (threads._C_CHUNK, cs), (threads._C_NCHUNK, nch),
                     (threads._C_NEXT, g << threads._GEN_SHIFT), (threads._C_GEN, g)):
            ctrl[f] = v
        t0 = time.monotonic()
        while (ctrl[threads._C_DONE:threads._C_DONE + nch] != g).any():
            assert time.monotonic() - t0 < 30, "helper thread never ran"
            time.sleep(0.001)
    finally:
        ctrl[threads._C_STOP] = 1
        th.join(30)
    assert not th.is_alive()
    ref = np.zeros(n, dtype=np.float32)
    columns._kcol_serial(1, X, *_NO_ROWS, xsq, E2, EI, 11, 0, n, ref, 0.2, 0.0, 3.0)
    np.testing.assert_array_equal(hbuf[0], ref)
    np.testing.assert_array_equal(ctrl[threads._C_OWN:threads._C_OWN + nch], 0)


@pytest.fixture
def force_helpers(monkeypatch):
    """Helper threads on a small problem: two, whatever the machine's CPU count."""
    monkeypatch.setattr(core, "HELPER_MIN_WORK", 0)
    monkeypatch.setattr(core, "helper_threads", lambda: 2)


@pytest.mark.parametrize("kernel", [RBF(gamma=0.2), Linear(), Polynomial(degree=2, gamma=0.1)],
                         ids=lambda k: k.name)
def test_smo_with_helper_threads_gives_the_serial_iterates(force_helpers, kernel):
    X, y = make_classification(2500, 6, n_informative=4, flip_y=0.05, random_state=3)
    y = 2.0 * y - 1.0
    serial = smo_csvc(X, y, kernel, 1.0, tol=1e-4, n_threads_min_work=1 << 60)
    runs = [smo_csvc(X, y, kernel, 1.0, tol=1e-4, n_threads_min_work=0) for _ in range(2)]
    for r in runs:  # same iterates: same count, alpha and gradient bit for bit
        assert r.n_iter == serial.n_iter
        np.testing.assert_array_equal(r.alpha, serial.alpha)
        np.testing.assert_array_equal(r.grad, serial.grad)
        assert r.b == serial.b


def test_nu_and_unshrunk_paths_with_helper_threads(force_helpers):
    X, y = make_classification(2200, 5, n_informative=3, random_state=4)
    y = 2.0 * y - 1.0
    k = RBF(gamma=0.3)
    a = smo_nusvc(X, y, k, 0.3, tol=1e-4, n_threads_min_work=1 << 60)
    b = smo_nusvc(X, y, k, 0.3, tol=1e-4, n_threads_min_work=0)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    p = -np.ones(len(y))
    c = smo_solve(X, k, p, 1.0, sign=y, shrinking=False, n_threads_min_work=1 << 60)
    d = smo_solve(X, k, p, 1.0, sign=y, shrinking=False, n_threads_min_work=0)
    np.testing.assert_array_equal(c.alpha, d.alpha)


def test_no_helper_threads_for_small_or_sparse_problems():
    X, xsq = _rows(100, 4)
    with core.column_helpers(1, X, NO_XT, *_NO_ROWS, xsq, E2, EI, 0.1, 0.0, 3.0,
                             0) as (ctrl, hbuf):
        assert ctrl[threads._C_NHELP] == 0 and hbuf.size == 0  # below HELPER_MIN_WORK
    Xptr = np.zeros((100, 2), dtype=np.int64)  # CSR rows: one scratch row, serial columns
    with core.column_helpers(1, np.zeros((0, 0)), NO_XT, Xptr, *_NO_ROWS[1:], xsq, E2, EI,
                             0.1, 0.0, 3.0, 0, threads=2) as (ctrl, _):
        assert ctrl[threads._C_NHELP] == 0
    before = threading.active_count()
    with pytest.raises(RuntimeError):
        with core.column_helpers(1, *_rows(3000, 3)[:1], NO_XT, *_NO_ROWS, _rows(3000, 3)[1],
                                 E2, EI, 0.1, 0.0, 3.0, 0, threads=1):
            raise RuntimeError("a failed solve still stops its helpers")
    assert threading.active_count() == before


def test_sharing_stops_while_measured_slower_and_columns_stay_equal():
    X, xsq = _rows(6000, 6)
    n = X.shape[0]
    ref = np.zeros(n, dtype=np.float32)
    got = np.zeros(n, dtype=np.float32)
    with core.column_helpers(1, X, NO_XT, *_NO_ROWS, xsq, E2, EI, 0.2, 0.0, 3.0, 0,
                             threads=1) as (ctrl, hbuf):
        for c in range(2 * threads._PROBE):
            # pretend sharing measured 10x slower before every column: only the probe half-way
            # after each lone probe is shared, the rest are kept alone
            ctrl[threads._C_RATE_1], ctrl[threads._C_RATE_N] = 100, 1000
            threads._kcol_adaptive(1, X, NO_XT, *_NO_ROWS, xsq, E2, EI, c, 0, n, got, 0.2, 0.0,
                                3.0, ctrl, hbuf)
            columns._kcol_serial(1, X, *_NO_ROWS, xsq, E2, EI, c, 0, n, ref, 0.2, 0.0, 3.0)
            np.testing.assert_array_equal(got, ref)
        st = core.column_stats(ctrl)
    assert st["shareable_columns"] == 2 * threads._PROBE
    assert st["kept_alone"] == 2 * (threads._PROBE - 2)  # all but the two probes of each round
    chunks = -(-n // threads._MIN_CHUNK)
    assert st["solver_chunks"] + st["helper_chunks"] + st["recomputed_chunks"] == 2 * chunks


def test_transposed_rbf_column_is_the_kernel_of_the_rounded_data():
    # columns._kcol from the transposed float32 rows: the RBF kernel of the data rounded to
    # float32 (numpy, float64 arithmetic) to the cache's float32 rounding; from any offset, and
    # shared with helper threads, bit for bit the whole serial column
    X0, _ = _rows(3000, 20)
    X, Xt = _transposed(np.repeat(X0, 5, axis=0))  # 15,000 x 20: above TRANSPOSED_MIN_WORK
    assert Xt.dtype == np.float32 and Xt.shape == (20, 15000)
    np.testing.assert_array_equal(X, X.astype(np.float32))  # rows rounded to float32
    n = X.shape[0]
    xsq = np.einsum("ij,ij->i", X, X)
    whole = np.zeros(n, dtype=np.float32)
    part = np.zeros(n, dtype=np.float32)
    shared = np.zeros(n, dtype=np.float32)
    with core.column_helpers(1, X, Xt, *_NO_ROWS, xsq, E2, EI, 0.05, 0.0, 3.0, 0,
                             threads=2) as (ctrl, hbuf):
        for r in (0, 1234, n - 1):
            columns._kcol(1, X, Xt, *_NO_ROWS, xsq, E2, EI, r, 0, n, whole, 0.05, 0.0, 3.0)
            ref = np.exp(-0.05 * ((X - X[r]) ** 2).sum(axis=1))
            np.testing.assert_allclose(whole, ref, rtol=3e-7, atol=1e-30)
            for start in (1, 511, 513, 4001):
                part[:] = -1.0
                columns._kcol(1, X, Xt, *_NO_ROWS, xsq, E2, EI, r, start, n, part, 0.05, 0.0, 3.0)
                np.testing.assert_array_equal(part[start:], whole[start:])
                shared[:] = -1.0
                threads._kcol_shared(1, X, Xt, *_NO_ROWS, xsq, E2, EI, r, start, n, shared, 0.05,
                                  0.0, 3.0, ctrl, hbuf)
                np.testing.assert_array_equal(shared[start:], whole[start:])
    # data that float32 cannot hold to its relative precision keep the float64 route
    assert _transposed(np.full((20000, 20), 1e-40))[1].size == 0
    assert _transposed(np.full((20000, 20), 1e31))[1].size == 0
    assert _transposed(np.ones((100, 20)))[1].size == 0  # small: the rows stay in cache


def test_transposed_route_with_helpers_shrinking_gives_the_serial_iterates(force_helpers,
                                                                           monkeypatch):
    # the transposed float32 rows through a whole solve with shrinking (their columns are
    # swapped with the variables): helper threads change nothing, and the solution is that of
    # the float64 route to the rounding of the data
    X, y = make_classification(2500, 6, n_informative=4, flip_y=0.05, random_state=3)
    y = 2.0 * y - 1.0
    k = RBF(gamma=0.2)
    f64 = smo_csvc(X, y, k, 1.0, tol=1e-4, n_threads_min_work=1 << 60)
    monkeypatch.setattr(smo_solver, "TRANSPOSED_MIN_WORK", 0)
    serial = smo_csvc(X, y, k, 1.0, tol=1e-4, n_threads_min_work=1 << 60)
    shared = smo_csvc(X, y, k, 1.0, tol=1e-4, n_threads_min_work=0)
    assert shared.n_iter == serial.n_iter
    np.testing.assert_array_equal(shared.alpha, serial.alpha)
    np.testing.assert_array_equal(shared.grad, serial.grad)
    assert not np.array_equal(serial.alpha, f64.alpha)  # (the route was taken)
    assert abs(serial.objective - f64.objective) <= 1e-5 * abs(f64.objective)


def test_cache_size_changes_no_iterate():
    # the cache only decides which kernel columns are recomputed (columns stored at the
    # requested length, the entries of shrunk variables swapped when a column is next used):
    # from two columns' room to every column's, the same iterates bit for bit, with shrinking
    X, y = make_classification(1500, 6, n_informative=4, flip_y=0.05, random_state=5)
    y = 2.0 * y - 1.0
    k = RBF(gamma=0.3)
    runs = [smo_csvc(X, y, k, 2.0, tol=1e-4, cache_size=cs, dense=False)
            for cs in (1e-4, 1.0, 100.0)]  # 2 columns, ~40 of 1,500 floats' columns, all
    for r in runs[1:]:
        assert r.n_iter == runs[0].n_iter
        np.testing.assert_array_equal(r.alpha, runs[0].alpha)
        np.testing.assert_array_equal(r.grad, runs[0].grad)
    # nu-SVC: the selection requests two columns in a row (one per sign) and keeps the first
    a = smo_nusvc(X, y, k, 0.3, tol=1e-4, cache_size=1e-4, dense=False)
    b = smo_nusvc(X, y, k, 0.3, tol=1e-4, cache_size=100.0, dense=False)
    assert a.n_iter == b.n_iter
    np.testing.assert_array_equal(a.alpha, b.alpha)
    # SVR: 2n variables on n data rows (columns keyed by data position, no swaps)
    Xr = X[:800]
    yr = Xr @ np.linspace(-1.0, 1.0, 6)
    from primaldual.backends.smo import smo_epsilon_svr

    a = smo_epsilon_svr(Xr, yr, k, 5.0, 0.1, tol=1e-4, cache_size=1e-4, dense=False)
    b = smo_epsilon_svr(Xr, yr, k, 5.0, 0.1, tol=1e-4, cache_size=100.0, dense=False)
    assert a.n_iter == b.n_iter
    np.testing.assert_array_equal(a.alpha, b.alpha)
