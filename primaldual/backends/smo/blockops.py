"""The compiled passes of the block working-set SMO (:mod:`primaldual.backends.smo.block`):
the RBF kernel rows from their dot products (a float32 ``exp`` the compiler vectorises), the
gradient update by a set of rows, the working set's ``q x q`` block, the row cache's packing,
the bound codes and LIBSVM's shrinking test (the inner SMO on the working set:
:mod:`primaldual.backends.smo.blockinner`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ...kernels.bitcast import bits_to_float as _bits_to_f32
from ...kernels.bitcast import float_to_bits as _f32_to_bits
from .stamp import tie

INF = np.inf


_F = np.float32
_LOG2E32 = _F(1.4426950408889634)
_ROUND32 = _F(12582912.0)                 # 1.5 * 2**23: x + _ROUND32 rounds x to an integer
_ROUND32_BITS = 0x4B400000                # its bits: the integer is theirs minus these
_LN2_HI32 = _F(0.693359375)               # ln 2 = _LN2_HI32 + _LN2_LO32 (Cephes' split)
_LN2_LO32 = _F(-2.12194440e-4)
_EXP_MIN32 = _F(-87.0)                    # exp(-87) ~ 1.6e-38: still a normal float32
_ZERO32 = _F(0.0)
_ONE32 = _F(1.0)
_TWO32 = _F(2.0)
_T2, _T3, _T4, _T5, _T6, _T7 = (_F(1 / 2), _F(1 / 6), _F(1 / 24), _F(1 / 120), _F(1 / 720),
                                _F(1 / 5040))


@njit(cache=True, inline="always", fastmath={"contract"})
def _exp32(x):
    r"""``exp(x)`` for ``-87 <= x <= 0`` (clamped below) in float32 arithmetic, eight lanes
    per vector instruction: ``x = k ln 2 + r``, ``|r| <= ln(2) / 2`` (the ``1.5 * 2^23``
    rounding trick and a two-part Cody-Waite reduction), ``exp(r)`` by its Taylor polynomial
    of degree 7 (truncation ``0.35^8 / 8! < 6e-9``), times ``2^k`` built in the exponent bits.
    Measured: within 1e-7 relative of ``exp`` (two float32 units in the last place; the
    cache stores float32), 0.9 ns per kernel entry for the whole pass against 1.9 ns for the
    float64 :func:`~primaldual.backends.smo.columns._exp_f32`.  Only contraction is allowed
    (reassociation would fold the rounding trick away)."""
    x = max(x, _EXP_MIN32)
    kd = x * _LOG2E32 + _ROUND32
    kb = _f32_to_bits(kd)
    kd = kd - _ROUND32
    r = x - kd * _LN2_HI32
    r = r - kd * _LN2_LO32
    q = _T7
    q = q * r + _T6
    q = q * r + _T5
    q = q * r + _T4
    q = q * r + _T3
    q = q * r + _T2
    q = q * r + _ONE32
    q = q * r + _ONE32
    k = np.int64(kb) - _ROUND32_BITS
    return q * _bits_to_f32(np.int32((k + 127) << 23))


@njit(cache=True, fastmath={"contract"}, nogil=True)
def _rbf_rows(D, xsq_w, xsq, w, gamma):
    """In place: the dot products ``D[k, t] = x_{w_k} . x_t`` become the RBF kernel values
    ``exp(-gamma max(|x_{w_k}|^2 + |x_t|^2 - 2 D[k, t], 0))`` in float32 (``xsq_w``, ``xsq``,
    ``gamma`` float32), the diagonal entry ``D[k, w_k]`` exactly 1 (the pair route's ``QD``;
    none for ``w_k < 0``)."""
    m, n = D.shape
    for k in range(m):
        a = xsq_w[k]
        row = D[k]
        for t in range(n):
            d2 = a + xsq[t] - _TWO32 * row[t]
            row[t] = _exp32(-gamma * max(d2, _ZERO32))
        if w[k] >= 0:
            row[w[k]] = 1.0


@njit(cache=True, fastmath={"contract"}, nogil=True)
def _grad_update(G, rows, slots, coef, sign, start, stop):
    """``G_t += s_t sum_k coef_k rows[slots_k, t]`` for ``start <= t < stop`` (float64 sums
    of the float32 rows, over ``k`` in order), in blocks of ``t`` so that the partial sums stay
    in the CPU's first-level cache, eight rows per pass over a block (the partial sums loaded
    and stored once per eight rows instead of once per row: measured 0.23 ms against 1.8 ms
    for 512 rows of 5,000 entries in the CPU's cache, 0.48 against 2.1 ms out of it; the
    same operations in the same order, so the same sums bit for bit)."""
    m = slots.shape[0]
    B = 1024
    acc = np.empty(B)
    nz = np.empty(m, dtype=np.int64)   # the rows with a nonzero coefficient, in order
    nk = 0
    for k in range(m):
        if coef[k] != 0.0:
            nz[nk] = k
            nk += 1
    for lo in range(start, stop, B):
        hi = min(stop, lo + B)
        n = hi - lo
        for t in range(n):
            acc[t] = 0.0
        k = 0
        while k + 8 <= nk:
            c0, c1, c2, c3 = coef[nz[k]], coef[nz[k + 1]], coef[nz[k + 2]], coef[nz[k + 3]]
            c4, c5, c6, c7 = coef[nz[k + 4]], coef[nz[k + 5]], coef[nz[k + 6]], coef[nz[k + 7]]
            r0, r1 = rows[slots[nz[k]], lo:hi], rows[slots[nz[k + 1]], lo:hi]
            r2, r3 = rows[slots[nz[k + 2]], lo:hi], rows[slots[nz[k + 3]], lo:hi]
            r4, r5 = rows[slots[nz[k + 4]], lo:hi], rows[slots[nz[k + 5]], lo:hi]
            r6, r7 = rows[slots[nz[k + 6]], lo:hi], rows[slots[nz[k + 7]], lo:hi]
            for t in range(n):
                v = acc[t] + c0 * np.float64(r0[t])
                v = v + c1 * np.float64(r1[t])
                v = v + c2 * np.float64(r2[t])
                v = v + c3 * np.float64(r3[t])
                v = v + c4 * np.float64(r4[t])
                v = v + c5 * np.float64(r5[t])
                v = v + c6 * np.float64(r6[t])
                acc[t] = v + c7 * np.float64(r7[t])
            k += 8
        while k < nk:
            c0 = coef[nz[k]]
            r0 = rows[slots[nz[k]], lo:hi]
            for t in range(n):
                acc[t] += c0 * np.float64(r0[t])
            k += 1
        for t in range(n):
            G[lo + t] += sign[lo + t] * acc[t]


@njit(cache=True, nogil=True)
def _gather(rows, slots, w, order, Kw, start, stop):
    """``Kw[a, b] = rows[slots_a, w_b]`` (float64) for ``start <= a < stop``: the working
    set's ``q x q`` block, each row read in the increasing order of ``w`` (``order``, an
    argsort of ``w``: a row mostly out of the CPU's cache is then streamed, measured 0.55 ms
    against 0.95 ms for 256 rows of 5,000 entries in ``w``'s own order)."""
    q = w.shape[0]
    for a in range(start, stop):
        row = rows[slots[a]]
        out = Kw[a]
        for k in range(q):
            b = order[k]
            out[b] = row[w[b]]


@njit(cache=True, nogil=True)
def _scatter(rows, slots, part):
    """``rows[slots_k] = part[k]``."""
    for k in range(slots.shape[0]):
        rows[slots[k]] = part[k]


@njit(cache=True)
def _compact(buf, m_old, var_of, new_of_old, keep_pos, tmp):
    """The cached rows of the variables that stay active, cut to the new active set's columns
    ``keep_pos`` and packed at the front of ``buf`` (row ``k`` of length ``m_new`` at
    ``k m_new``: never past the old rows still to be read); returns their new variable
    indices, in slot order."""
    m_new = keep_pos.shape[0]
    out = np.empty(var_of.shape[0], dtype=np.int64)
    k = 0
    for s in range(var_of.shape[0]):
        v = var_of[s]
        if v < 0 or new_of_old[v] < 0:
            continue
        base = s * m_old
        for t in range(m_new):
            tmp[t] = buf[base + keep_pos[t]]
        nb = k * m_new
        for t in range(m_new):
            buf[nb + t] = tmp[t]
        out[k] = new_of_old[v]
        k += 1
    return out[:k]


@njit(cache=True)
def _status(alpha, upper, status):
    """The pair route's codes: 1 at the upper bound, 0 at zero, 2 free."""
    for t in range(alpha.shape[0]):
        if alpha[t] >= upper[t]:
            status[t] = 1
        elif alpha[t] <= 0.0:
            status[t] = 0
        else:
            status[t] = 2


@njit(cache=True)
def _shrink_mask(G, sign, alpha, upper, mask, nu):
    """LIBSVM's ``be_shrunk`` on every variable (``mask`` written): a variable at a bound whose
    gradient lies beyond the maximal violating pair's, ``(Gmax1, Gmax2)`` (``nu``: that of its
    own sign, ``Solver_NU``'s ``(Gmax1, Gmax2)`` and ``(Gmax4, Gmax3)``); returns the
    violation ``Gmax1 + Gmax2`` (``nu``: the larger of the two signs')."""
    n = alpha.shape[0]
    g1 = -INF   # max over I_up of -s G (nu: of the positive variables)
    g2 = -INF   # max over I_low of s G (nu: of the positive variables)
    g3 = -INF   # nu: max of G over the negative variables above zero
    g4 = -INF   # nu: max of -G over the negative variables below their bound
    for t in range(n):
        if sign[t] > 0:
            if alpha[t] < upper[t]:
                g1 = max(g1, -G[t])
            if alpha[t] > 0.0:
                g2 = max(g2, G[t])
        elif nu:
            if alpha[t] < upper[t]:
                g4 = max(g4, -G[t])
            if alpha[t] > 0.0:
                g3 = max(g3, G[t])
        else:
            if alpha[t] > 0.0:
                g1 = max(g1, G[t])
            if alpha[t] < upper[t]:
                g2 = max(g2, -G[t])
    if not nu:
        g3 = g2     # (one equality: the negative variables read the same pair, swapped)
        g4 = g1
    else:
        g3, g4 = g4, g3
    for t in range(n):
        if alpha[t] >= upper[t]:
            mask[t] = -G[t] > g1 if sign[t] > 0 else -G[t] > g3
        elif alpha[t] <= 0.0:
            mask[t] = G[t] > g2 if sign[t] > 0 else G[t] > g4
        else:
            mask[t] = False
    if nu:
        return max(g1 + g2, g3 + g4)
    return g1 + g2


@njit(cache=True)
def _list_values(G, sign, alpha, upper, kept, nu, V):
    """``V[l, t]``: variable ``t``'s value on list ``l`` of the working-set choice, ``-inf``
    off it or in ``kept``: ``l = 0`` ``I_up`` (``-s G``), ``1`` ``I_low`` (``s G``); ``nu``:
    those of the positive variables, then (``2, 3``) of the negative ones."""
    for t in range(G.shape[0]):
        yg = sign[t] * G[t]
        pos = sign[t] > 0
        if pos:
            up = alpha[t] < upper[t]
            low = alpha[t] > 0.0
        else:
            up = alpha[t] > 0.0
            low = alpha[t] < upper[t]
        vu = -yg if up and not kept[t] else -INF
        vl = yg if low and not kept[t] else -INF
        if not nu:
            V[0, t] = vu
            V[1, t] = vl
        elif pos:
            V[0, t], V[1, t], V[2, t], V[3, t] = vu, vl, -INF, -INF
        else:
            V[0, t], V[1, t], V[2, t], V[3, t] = -INF, -INF, vu, vl


@njit(cache=True)
def _alternate(tops, V, kept, m):
    """``m`` variables taken from the lists in turn, each the next of its list (``tops[l]``,
    most violating first) not taken yet and on it (``V[l, t] > -inf``); when every list is
    used up, the rest outside ``kept`` in index order."""
    n_lists, k = tops.shape
    pos = np.zeros(n_lists, dtype=np.int64)
    taken = np.zeros(V.shape[1], dtype=np.bool_)
    out = np.empty(m, dtype=np.int64)
    c = 0
    while c < m:
        moved = False
        for side in range(n_lists):
            if c == m:
                break
            i = pos[side]
            while i < k and (taken[tops[side, i]] or V[side, tops[side, i]] == -INF):
                i += 1
            pos[side] = i
            if i < k:
                out[c] = tops[side, i]
                taken[out[c]] = True
                c += 1
                moved = True
        if not moved:   # (every variable is in I_up or I_low: not reached for N >= 2 q)
            for t in range(V.shape[1]):
                if c == m:
                    break
                if not kept[t] and not taken[t]:
                    out[c] = t
                    taken[t] = True
                    c += 1
    return out


tie(globals(), __file__)  # the core's files and this one (smo/stamp.py)
