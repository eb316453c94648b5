"""The compiled working-set selection (issue 31): LIBSVM's WSS2 for one equality, branchy below
``_BRANCH_FREE_MIN`` active variables and branch-free from there on, against a numpy
transcription of the rule (Fan, Chen & Lin 2005, WSS2 with LIBSVM's ties: the *last* index
achieving the maximum of ``-s_t G_t`` over I_up, then the last index achieving the minimum of
``-(gd^2)/qc`` over I_low with ``gd > 0``).  Gradients are drawn from a few values so that ties
are frequent; a kernel column is read from a precomputed matrix through the float32 cache, as
the solver does.  Also: the RBF dot products of two rows per pass do not depend on the column's
first row (a column extended from any offset is the column computed at once).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from primaldual.backends.smo.inputs import _NO_ROWS
from primaldual.backends.smo.solver import _NO_XT as NO_XT

core = pytest.importorskip("primaldual.backends.smo.core")
cache = pytest.importorskip("primaldual.backends.smo.cache")
columns = pytest.importorskip("primaldual.backends.smo.columns")
select = pytest.importorskip("primaldual.backends.smo.select")
TAU = 1e-12
XSQ = np.zeros(0)


def _reference(G, sign, status, QD, col, tol):
    up = np.where(sign > 0, status != 1, status != 0)
    low = np.where(sign > 0, status != 0, status != 1)
    if not up.any():
        return None
    v = np.where(up, -sign * G, -np.inf)
    gmax = v.max()
    i = int(np.flatnonzero(up & (v == gmax))[-1])
    w = sign * G
    gmax2 = w[low].max() if low.any() else -np.inf
    gd = gmax + w
    qc = QD[i] + QD - 2.0 * col[i].astype(np.float32).astype(np.float64)
    qc[qc <= 0] = TAU
    od = -(gd * gd) / qc
    ok = low & (gd > 0)
    gap = gmax + gmax2
    if gap < tol or not ok.any():
        return -1, -1, gap
    j = int(np.flatnonzero(ok & (od == od[ok].min()))[-1])
    return i, j, gap


@njit
def _select(G, sign, status, QD, dpos, E2, Xt, Xptr, Xind, Xval, Xs, xsq, K, ctrl, hbuf):
    # the core's selection on a fresh cache (its list of columns lives in compiled code)
    l = G.shape[0]
    c = cache._new_cache(l, 2 * l)
    return select._select(0, l, G, sign, status, QD, dpos, True, 1e-3, 4, E2, Xt, Xptr, Xind,
                          Xval, Xs, xsq, K, dpos.copy(), 0.0, 0.0, 3.0, c[0], c[1], c[2], c[3],
                          c[4], c[5], ctrl, hbuf, np.empty((5, l)))


@pytest.mark.parametrize("l", [300, select._BRANCH_FREE_MIN, 3000])
def test_select_is_libsvm_wss2_with_its_ties(l):
    rng = np.random.default_rng(l)
    A = rng.standard_normal((l, 5))
    K = np.exp(-0.2 * ((A[:, None, :] - A[None, :, :]) ** 2).sum(-1))
    QD = np.diag(K).copy()
    E2 = np.zeros((0, 0))
    ctrl, hbuf = core.no_helpers(1 << 30)
    for trial in range(20):
        G = rng.choice(np.linspace(-1.5, 1.0, 6), size=l) * (1 + (trial % 2) * 1e-3)
        sign = rng.choice([-1.0, 1.0], size=l)
        status = rng.choice([0, 1, 2], size=l, p=[0.5, 0.2, 0.3]).astype(np.int8)
        if trial == 0:
            status[:] = 0  # I_up: the + side only
        dpos = np.arange(l, dtype=np.int64)
        got = _select(G, sign, status, QD, dpos, E2, NO_XT, *_NO_ROWS, XSQ, K, ctrl, hbuf)
        ref = _reference(G, sign, status, QD, K, 1e-3)
        assert got[:2] == ref[:2], (trial, got, ref)
        assert got[2] == ref[2]


def test_rbf_column_from_any_offset_equals_the_whole_column():
    X = np.random.default_rng(3).standard_normal((1501, 13))
    xsq = np.einsum("ij,ij->i", X, X)
    E2, EI = np.zeros((0, 0)), np.zeros(0, dtype=np.int64)
    whole = np.zeros(1501, dtype=np.float32)
    columns._kcol_serial(1, X, *_NO_ROWS, xsq, E2, EI, 7, 0, 1501, whole, 0.1, 0.0, 3.0)
    for start in (1, 2, 511, 1000, 1499):
        part = whole.copy()
        part[start:] = -1.0
        columns._kcol_serial(1, X, *_NO_ROWS, xsq, E2, EI, 7, start, 1501, part, 0.1, 0.0, 3.0)
        assert np.array_equal(part, whole), start


@njit
def _select_two_per_row(G, sign, status, QD, dpos, E2, Xt, Xptr, Xind, Xval, Xs, xsq, K, ctrl,
                        hbuf, buf):
    # SVR's layout: 2N variables on N kernel rows (no identity), columns of length N
    l = G.shape[0]
    n = K.shape[0]
    c = cache._new_cache(n, 2 * n)
    return select._select(0, l, G, sign, status, QD, dpos, False, 1e-3, 4, E2, Xt, Xptr, Xind,
                          Xval, Xs, xsq, K, np.arange(n), 0.0, 0.0, 3.0, c[0], c[1], c[2], c[3],
                          c[4], c[5], ctrl, hbuf, buf)


@pytest.mark.parametrize("n", [150, select._BRANCH_FREE_MIN // 2, 1500])
def test_select_on_two_variables_per_row_is_wss2(n):
    """Without identity (each data row carries two variables, in shuffled positions as after
    shrinking swaps) the selection reads ``K[dpos[i], dpos[t]]``: the same pair and gap as the
    rule on the ``2N x 2N`` matrix; from ``_BRANCH_FREE_MIN`` variables on, ``i``'s column is
    left in ``buf[2]`` in variable order."""
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, 5))
    K = np.exp(-0.2 * ((A[:, None, :] - A[None, :, :]) ** 2).sum(-1))
    l = 2 * n
    E2 = np.zeros((0, 0))
    ctrl, hbuf = core.no_helpers(1 << 30)
    for trial in range(10):
        dpos = rng.permutation(np.concatenate([np.arange(n), np.arange(n)])).astype(np.int64)
        sign = np.where(rng.random(l) < 0.5, 1.0, -1.0)
        QD = np.diag(K)[dpos].copy()
        G = rng.choice(np.linspace(-1.5, 1.0, 6), size=l) * (1 + (trial % 2) * 1e-3)
        status = rng.choice([0, 1, 2], size=l, p=[0.5, 0.2, 0.3]).astype(np.int8)
        buf = np.full((5, l), np.nan)
        got = _select_two_per_row(G, sign, status, QD, dpos, E2, NO_XT, *_NO_ROWS, XSQ, K, ctrl,
                                  hbuf, buf)
        Kvar = K[np.ix_(dpos, dpos)]
        ref = _reference(G, sign, status, QD, Kvar, 1e-3)
        assert got[:2] == ref[:2], (trial, got, ref)
        assert got[2] == ref[2]
        if l >= select._BRANCH_FREE_MIN and got[0] >= 0:
            assert np.array_equal(buf[2], Kvar[got[0]].astype(np.float32)), trial


def test_svr_on_shared_rows_equals_the_duplicated_rows():
    """eps-SVR's ``2N`` variables on ``N`` kernel rows (the columns laid out in variable order
    for the selection and the gradient update from ``_BRANCH_FREE_MIN`` active variables on)
    give the solve of the same dual written on ``2N`` rows ``[X; X]`` (identity mode, no
    layout): the same iterations, the same variables, the same objective."""
    from primaldual.backends.smo import smo_epsilon_svr, smo_solve
    from primaldual.kernels import RBF

    rng = np.random.default_rng(7)
    n = 700
    X = rng.standard_normal((n, 6))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(n)
    k = RBF(gamma=0.2)
    r = smo_epsilon_svr(X, y, k, 1.0, 0.05, tol=1e-3)
    sign = np.concatenate([np.ones(n), -np.ones(n)])
    d = smo_solve(np.vstack([X, X]), k, np.concatenate([0.05 - y, 0.05 + y]),
                  np.ones(2 * n), sign=sign, tol=1e-3)
    assert r.route == d.route == "numba"
    assert 2 * n >= select._BRANCH_FREE_MIN and r.n_iter == d.n_iter > 100
    np.testing.assert_allclose(r.alpha, d.alpha, rtol=0, atol=1e-12)
    assert r.objective == pytest.approx(d.objective, rel=1e-13)


def _reference_nu(G, sign, status, QD, col, tol):
    """LIBSVM's ``Solver_NU`` selection (one equality per sign) with its ties, in numpy."""
    pos = sign > 0
    ups, lows = [pos & (status != 1), ~pos & (status != 0)], [pos & (status != 0),
                                                               ~pos & (status != 1)]
    first, gmax, gmax2 = [], [], []
    for side, v, w in ((0, -G, G), (1, G, -G)):
        up, low = ups[side], lows[side]
        gmax.append(v[up].max() if up.any() else -np.inf)
        first.append(int(np.flatnonzero(up & (v == gmax[-1]))[-1]) if up.any() else -1)
        gmax2.append(w[low].max() if low.any() else -np.inf)
    od = np.full(G.shape[0], np.inf)
    for side, w in ((0, G), (1, -G)):
        i = first[side]
        if i < 0:
            continue
        gd = gmax[side] + w
        qc = QD[i] + QD - 2.0 * col[i].astype(np.float32).astype(np.float64)
        qc[qc <= 0] = TAU
        ok = lows[side] & (gd > 0)
        od[ok] = (-(gd * gd) / qc)[ok]
    gap = max(gmax[0] + gmax2[0], gmax[1] + gmax2[1])
    if gap < tol or not np.isfinite(od).any():
        return -1, -1, gap
    j = int(np.flatnonzero(od == od.min())[-1])
    return first[0 if sign[j] > 0 else 1], j, gap


@njit
def _select_nu(G, sign, status, QD, dpos, identity, E2, Xt, Xptr, Xind, Xval, Xs, xsq, K, ctrl,
               hbuf, buf):
    l = G.shape[0]
    n = K.shape[0]
    c = cache._new_cache(n, 2 * n)
    return select._select(1, l, G, sign, status, QD, dpos, identity, 1e-3, 4, E2, Xt, Xptr,
                          Xind, Xval, Xs, xsq, K, np.arange(n), 0.0, 0.0, 3.0, c[0], c[1], c[2],
                          c[3], c[4], c[5], ctrl, hbuf, buf)


@pytest.mark.parametrize("identity", [True, False])
@pytest.mark.parametrize("l", [300, select._BRANCH_FREE_MIN, 3000])
def test_nu_select_is_libsvm_solver_nu_with_its_ties(l, identity):
    """The nu-variants' selection (two columns, one per side; without identity read through
    ``dpos``) against the rule in numpy, including a side (or both) without a first
    variable.  (A branch-free form like the one-equality selection's was measured slower on
    an SVR state, whose signs come in blocks the branches predict: 57-75 us against 30-36 us
    per selection at ``2N = 10,000``.)"""
    rng = np.random.default_rng(l + identity)
    n = l if identity else l // 2
    A = rng.standard_normal((n, 5))
    K = np.exp(-0.2 * ((A[:, None, :] - A[None, :, :]) ** 2).sum(-1))
    E2 = np.zeros((0, 0))
    ctrl, hbuf = core.no_helpers(1 << 30)
    for trial in range(24):
        dpos = (np.arange(l) if identity else rng.permutation(
            np.concatenate([np.arange(n), np.arange(n)]))).astype(np.int64)
        QD = np.diag(K)[dpos].copy()
        G = rng.choice(np.linspace(-1.5, 1.0, 6), size=l) * (1 + (trial % 2) * 1e-3)
        sign = rng.choice([-1.0, 1.0], size=l)
        status = rng.choice([0, 1, 2], size=l, p=[0.5, 0.2, 0.3]).astype(np.int8)
        if trial == 0:
            status[sign > 0] = 1      # no first variable on the + side
        elif trial == 1:
            status[:] = np.where(sign > 0, 1, 0)   # on neither side
        got = _select_nu(G, sign, status, QD, dpos, identity, E2, NO_XT, *_NO_ROWS, XSQ, K,
                         ctrl, hbuf, np.full((5, l), np.nan))
        ref = _reference_nu(G, sign, status, QD, K[np.ix_(dpos, dpos)], 1e-3)
        assert got[:2] == ref[:2], (trial, got, ref)
        assert got[2] == ref[2] or (trial == 1 and got[2] == -np.inf == ref[2])


def test_nusvr_on_shared_rows_equals_the_duplicated_rows():
    """nu-SVR's two equalities on shared rows and on the duplicated rows ``[X; X]``
    (identity): the same solve."""
    from primaldual.backends.smo import smo_solve
    from primaldual.kernels import RBF

    rng = np.random.default_rng(8)
    n = 700
    X = rng.standard_normal((n, 6))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(n)
    k = RBF(gamma=0.2)
    sign = np.concatenate([np.ones(n), -np.ones(n)])
    p = np.concatenate([-y, y])
    C = np.ones(2 * n)
    a0 = np.zeros(2 * n)
    a0[:175] = a0[n:n + 175] = 1.0                     # 1^T(alpha + alpha*) = nu C N, nu = 0.5
    kw = dict(sign=sign, equality="nu", tol=1e-3, alpha0=a0)
    r = smo_solve(X, k, p, C, index=np.concatenate([np.arange(n), np.arange(n)]), **kw)
    d = smo_solve(np.vstack([X, X]), k, p, C, **kw)
    assert r.route == d.route == "numba"
    assert r.n_iter == d.n_iter > 100
    np.testing.assert_allclose(r.alpha, d.alpha, rtol=0, atol=1e-12)
    assert r.objective == pytest.approx(d.objective, rel=1e-13)
