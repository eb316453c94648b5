r"""The block working-set SMO's set choice and its passes over every variable
(:mod:`primaldual.backends.smo.block`): the new half of a working set, the gradient at the
start and the shrunk gradients brought up to date.

Every pass here reads the kernel by *data rows*: variable ``t`` sits on data row ``dpos_t``
(eps-SVR and nu-SVR: ``2N`` variables ``[alpha; alpha*]`` on ``N`` rows, ``dpos_t = t mod N``,
LIBSVM's ``SVR_Q``; C-SVC: ``dpos_t = t``), ``Q_jt = s_j s_t K(x_{dpos_j}, x_{dpos_t})``.  A
sum over variables ``sum_j s_j c_j Q_jt`` is therefore ``s_t H_{dpos_t}`` with
``H_u = sum_v (sum_{dpos_j = v} s_j c_j) K(x_v, x_u)``: the two variables of a row share its
kernel row, and their coefficients are added before the row is read.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .blockops import _alternate, _grad_update, _list_values

INF = np.inf


def _split(lo: int, hi: int, n: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` in ``n`` nearly equal ranges (the empty ones left out)."""
    per = max(1, -(-(hi - lo) // n))
    return [(a, min(hi, a + per)) for a in range(lo, hi, per)]


def _select_new(G: np.ndarray, sign: np.ndarray, alpha: np.ndarray, upper: np.ndarray,
                kept: np.ndarray, m: int, nu: bool = False) -> np.ndarray:
    """``m`` variables outside ``kept`` (a mask), alternately the next most violating of
    ``I_up`` (largest ``-s G``) and of ``I_low`` (largest ``s G``), each once.  ``nu`` (two
    equalities, one per sign: every pair step moves two variables of one sign): the four
    lists ``I_up`` and ``I_low`` of each sign in turn."""
    V = np.empty((4 if nu else 2, G.shape[0]))
    _list_values(G, sign, alpha, upper, kept, nu, V)
    k = min(m, G.shape[0] - 1)
    tops = np.empty((V.shape[0], k), dtype=np.int64)   # each list's top k, largest first
    for side, v in enumerate(V):
        top = np.argpartition(-v, k)[:k]
        tops[side] = top[np.argsort(-v[top], kind="stable")]
    return _alternate(tops, V, kept, m)


def _row_coef(coef: np.ndarray, dpos: np.ndarray, n_data: int) -> np.ndarray:
    """``sum_{dpos_j = v} coef_j`` for every data row ``v``."""
    return np.bincount(dpos, weights=coef, minlength=n_data)


def _start_gradient(X32: np.ndarray, Xt: np.ndarray, xsq: np.ndarray, dpos: np.ndarray,
                    gamma: Any, p: np.ndarray, sign: np.ndarray, alpha: np.ndarray,
                    G: np.ndarray, q: int, rows: np.ndarray, stats: dict, pool: Any) -> None:
    """``G = p + Q a`` in blocks of ``q`` kernel rows: the rows of the data rows whose
    coefficient ``sum_{dpos_j = v} s_j a_j`` is not zero (nu-SVR's start, ``alpha_i =
    alpha*_i``, has none)."""
    n_data = X32.shape[0]
    c = _row_coef(alpha * sign, dpos, n_data)
    nz = np.flatnonzero(c)
    H = np.zeros(n_data)
    r2 = rows[:q * n_data].reshape(q, n_data)
    ones = np.ones(n_data)
    for lo in range(0, nz.shape[0], q):
        w = nz[lo:lo + q]
        k = np.arange(w.shape[0])
        pool.rows_into(X32[w], xsq[w], Xt, xsq, w, gamma, r2, k)
        stats["entries"] += w.shape[0] * n_data
        pool.grad(H, r2, k, c[w], ones)
    G[:] = p + sign * H[dpos]


def _reconstruct(epochs: list, X32: np.ndarray, xsq: np.ndarray, dpos: np.ndarray,
                 gamma: Any, sign: np.ndarray, alpha: np.ndarray, G: np.ndarray, q: int,
                 rows: np.ndarray, stats: dict, pool: Any) -> None:
    """The gradient of the shrunk variables brought up to date: the variables of epoch ``e``
    (shrunk when ``a`` was ``a_e``) receive ``s_t sum_j (a_j - a_e,j) s_j K_jt``, the kernel
    rows of the moved data rows computed once, in blocks of ``q``, against the data rows of
    every epoch's shrunk variables (a row listed once per epoch it has a variable in)."""
    n_data = X32.shape[0]
    own = []                 # per epoch: its data rows and the position of each variable's
    for S, _ in epochs:
        D, key = np.unique(dpos[S], return_inverse=True)
        own.append((D, key))
    idx = np.concatenate([D for D, _ in own])
    cuts = np.cumsum([0] + [D.shape[0] for D, _ in own])
    coefs = [_row_coef((alpha - snap) * sign, dpos, n_data) for _, snap in epochs]
    moved = np.flatnonzero(np.any(np.stack(coefs) != 0.0, axis=0))
    m = idx.shape[0]
    XtI = np.ascontiguousarray(X32[idx].T)
    xsqI = xsq[idx]
    H = np.zeros(m)
    ones = np.ones(m)
    q = max(1, min(q, rows.shape[0] // m))
    buf = rows[:q * m].reshape(q, m)
    # (no exact diagonal: a moved row's entry against its own copy in idx, whose variable is
    # shrunk while its twin moved, is the float32 kernel of the distance 0, 1 to ~1e-7)
    no_diag = np.full(q, -1, dtype=np.int64)
    for lo in range(0, moved.shape[0], q):
        w = moved[lo:lo + q]
        k = np.arange(w.shape[0])
        pool.rows_into(X32[w], xsq[w], XtI, xsqI, no_diag, gamma, buf, k)
        stats["entries"] += w.shape[0] * m
        stats["rec"] += w.shape[0] * m
        for e in range(len(epochs)):
            coef = coefs[e][w]
            if np.any(coef):
                pool.map(_grad_update, [(H, buf, k, coef, ones, int(a), int(b)) for a, b in
                                        _split(int(cuts[e]), int(cuts[e + 1]), pool.n)])
    for e, (S, _) in enumerate(epochs):
        G[S] += sign[S] * H[cuts[e] + own[e][1]]
