"""The eta-problem's smoothing Newton method (the default route of
:func:`primaldual.backends.lowrank.solver.lowrank_qp_solve` when ``diag == 0`` and the bounds
are finite). Its working-set IPM finish, which solves sub-QPs through ``lowrank_qp_solve``
itself, is ``solver._smooth_newton``; this module imports nothing of ``solver``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ._threads import matvec, rmatvec
from .ipm import _gram_upper

# problem  min_{w, lambda} 1/2||w||^2 - lambda^T delta - l^T r + sum_i c_i max(0, -r_i)  with
# r = p + B w - A^T lambda and c = upper - lower (for C-SVC: the low-rank SVM primal, r_i =
# y_i f(x_i) - 1). Replacing max(0, t) by the Huber function H_h(t) (t^2/(2h) on 0 < t < h) makes
# it piecewise quadratic; its gradient is (w - B^T a, A a - delta) with a = l + c clip(-r/h, 0, 1)
# in the box, and its Hessian involves only the rows J = {0 < -r_i < h}. Newton steps with an exact
# line search for a decreasing sequence of h take O(N M + |J_change| M^2) each. The smoothed
# solution then fixes every variable whose |r_i| is clearly away from 0 at its bound, the exact QP
# on the remaining working set is solved by the IPM, and the optimality of the fixed variables is
# checked on all N rows (violators join the working set). The result is certified on the full
# problem like any other; a failure falls back to the IPM on the full problem.


#: gathers of more rows than this (the first smoothing level, where every row is in the
#: quadratic zone) bypass the per-row record of :class:`_JHessian`: its Python loop over
#: 200,000 rows cost more than forming them (a row leaving the zone is formed again)
KEEP_MAX_ROWS: int = 16384


class _JHessian:
    """``T_J = sum_{i in J} c_i B_i B_i^T``, updated by the rows that enter or leave ``J``."""

    def __init__(self, B, c):
        self.B, self.c = B, c
        self.c0 = float(c[0]) if c.size and np.all(c == c[0]) else None  # uniform weights
        self.J = np.zeros(B.shape[0], dtype=bool)
        self.T = np.zeros((B.shape[1], B.shape[1]))
        self.rows = 0  # rows processed by syrk (diagnostics)
        # B = D_s C P (an operator): a row costs O(B M) to form, so the rows of J are kept
        # while they are in J (a row leaving J is subtracted with the row that was added)
        self._kept: dict[int, np.ndarray] | None = (
            None if isinstance(B, np.ndarray) else {})

    def _take(self, idx):
        """``B[idx]`` (an operator's rows: the kept ones reused, the others formed; a gather of
        more than :data:`KEEP_MAX_ROWS` rows is formed in one product and not kept)."""
        if self._kept is None or idx.size > KEEP_MAX_ROWS:
            return self.B[idx]
        kept = self._kept
        miss = np.array([i for i in idx.tolist() if i not in kept], dtype=np.intp)
        if miss.size:
            for i, row in zip(miss.tolist(), self.B[miss], strict=True):
                kept[i] = row
        if not idx.size:
            return self.B[idx]
        return np.stack([kept[i] for i in idx.tolist()])

    def _gram(self, idx):
        if self.c0 is not None:  # no scaled copy; no gather when every row is in
            G = self.B if idx.size == self.B.shape[0] and isinstance(self.B, np.ndarray) \
                else self._take(idx)
            S = _gram_upper(self.c0, G)
        else:
            S = _gram_upper(1.0, self._take(idx) * np.sqrt(self.c[idx])[:, None])
        self.rows += idx.size
        # syrk leaves the strict lower triangle of its fresh output zero: S + S^T doubles the
        # diagonal only
        d = S.diagonal().copy()
        S += S.T
        S[np.diag_indices_from(S)] = d
        return S

    def update(self, Jn):
        add = np.flatnonzero(Jn & ~self.J)
        rem = np.flatnonzero(self.J & ~Jn)
        if add.size + rem.size == 0:
            return
        nj = int(Jn.sum())
        if add.size + rem.size < nj:
            if add.size:
                self.T += self._gram(add)
            if rem.size:
                self.T -= self._gram(rem)
        else:
            self.T = self._gram(np.flatnonzero(Jn)) if nj else np.zeros_like(self.T)
        if self._kept is not None:  # only the rows of J stay kept
            for i in rem.tolist():
                self._kept.pop(i, None)
        self.J = Jn.copy()


def exact_line_search(w, dw, rhs, dl, r, dr, lo, c, h) -> float:
    """Minimiser in [0, 1] of the Huber-smoothed objective along ``(dw, dl)``.

    ``phi'(s) = (w + s dw).dw - delta.dl - a(s).dr`` with ``a(s) = lo + c clip(-(r + s dr)/h,
    0, 1)`` is piecewise linear and nondecreasing; safeguarded Newton on it (bisection bracket).
    """
    ww, w0, rl = float(dw @ dw), float(w @ dw), float(rhs @ dl)

    def dphi(s):
        return w0 + s * ww - rl - float((lo + c * np.clip(-(r + s * dr) / h, 0.0, 1.0)) @ dr)

    s, d = 1.0, dphi(1.0)
    if d <= 0:
        return s
    a_, b_ = 0.0, 1.0
    for _ in range(40):
        if d > 0:
            b_ = s
        else:
            a_ = s
        ts = -(r + s * dr)
        Js = (ts > 0) & (ts < h)
        curv = ww + float(np.sum(c[Js] * dr[Js] ** 2)) / h
        sn = s - d / curv if curv > 0 else 0.5 * (a_ + b_)
        if not a_ < sn < b_:
            sn = 0.5 * (a_ + b_)
        s, d = sn, dphi(sn)
        if abs(d) <= 1e-13 * (1.0 + abs(w0) + abs(rl)) or b_ - a_ <= 1e-13:
            break
    return s


def _passes(B, Bmv):
    """``(x -> B x, a -> B^T a)``: the full passes over ``B``, through ``Bmv`` (a float32 copy
    of ``B``, half the memory traffic of these memory-bound products) when given."""
    if Bmv is None:
        return (lambda x: matvec(B, x)), (lambda a: rmatvec(B, a))
    f32 = Bmv.dtype

    def mv(x):
        return matvec(Bmv, x.astype(f32)).astype(float)

    def rmv(a):
        return rmatvec(Bmv, a.astype(f32)).astype(float)

    return mv, rmv


def _huber_level(B, p, lo, c, A, rhs, w, lam, h, hess, gtol, max_iter, stall=None, Bmv=None):
    """Newton with exact line search on the Huber-smoothed problem at one ``h``.

    Per step one full pass over ``B`` (``dr = B dw``); ``B^T a`` is updated from the rows whose
    ``a`` changed (a few hundred to a few thousand rows once the warm start is close; a full
    ``B^T a`` when more than a quarter of the rows changed) and recomputed in full before the
    stop test accepts a point. ``stall`` (a fraction): also stop once the step changed the sign
    of ``r_i - p_i = (B w - A^T lam)_i`` on at most that fraction of the rows (for a C-SVC's
    dual the training labels ``sign(f(x_i))``): the early stop of ``rank="auto"``'s
    intermediate ranks, whose labels are all that is compared. ``Bmv``: a float32 copy of
    ``B`` for the full passes (``B w``, ``B^T a``, ``B dw``; rows gathered for the Hessian and
    the updates of ``B^T a`` come from ``B``): the smoothed point is a starting point, the
    certificate is computed later from ``B`` itself.
    """
    n, m, k = B.shape[0], B.shape[1], A.shape[0]
    mv, rmv = _passes(B, Bmv)
    r = p + mv(w) - A.T @ lam
    a = lo + c * np.clip(-r / h, 0.0, 1.0)
    Ba = rmv(a)
    exact = True  # Ba = B^T a computed in full (not accumulated)
    g0 = None
    steps = 0
    while steps < max_iter:
        t = -r
        gw = w - Ba
        gl = A @ a - rhs
        gn = max(float(np.max(np.abs(gw), initial=0.0)), float(np.max(np.abs(gl), initial=0.0)))
        if not np.isfinite(gn):
            raise FloatingPointError("non-finite gradient")
        g0 = gn if g0 is None else g0
        if gn <= gtol * max(g0, 1.0) or gn <= 1e-12 * (1.0 + float(np.max(np.abs(w)))):
            if exact:
                break
            Ba, exact = rmv(a), True  # the stop test on the exact gradient
            continue
        Jm = (t > 0) & (t < h)
        hess.update(Jm)
        J = np.flatnonzero(Jm)
        dj = c[J] / h
        H = np.empty((m + k, m + k))
        H[:m, :m] = hess.T / h
        H[np.diag_indices(m)] += 1.0
        if k:
            AJ = A[:, J]
            # only the rows of J: one pass over |J| rows, not N (in B's precision)
            X = -(B[J].T @ (AJ * dj).T.astype(B.dtype))
            H[:m, m:] = X
            H[m:, :m] = X.T
            H[m:, m:] = (AJ * dj) @ AJ.T
            H[m:, m:][np.diag_indices(k)] += 1e-12 * max(1.0, float(np.trace(H[:m, :m])) / m)
        g = np.concatenate([gw, gl])
        step = -sla.cho_solve(sla.cho_factor(H, check_finite=False), g, check_finite=False)
        dw, dl = step[:m], step[m:]
        dr = mv(dw) - A.T @ dl
        s = exact_line_search(w, dw, rhs, dl, r, dr, lo, c, h)
        w = w + s * dw
        lam = lam + s * dl
        r_old, r = r, r + s * dr
        a_new = lo + c * np.clip(-r / h, 0.0, 1.0)
        ch = np.flatnonzero(a_new != a)
        if ch.size > n // 4:
            Ba, exact = rmv(a_new), True
        elif ch.size:
            if isinstance(B, np.ndarray):
                Ba = Ba + B[ch].T @ (a_new[ch] - a[ch]).astype(B.dtype)
            else:  # B = D_s C P: P^T (C_ch^T (s_ch da)), no rows of B formed
                Ba = Ba + B.rows_rmatvec(ch, a_new[ch] - a[ch])
            exact = False
        a = a_new
        steps += 1
        if stall is not None and \
                np.count_nonzero(np.signbit(r - p) != np.signbit(r_old - p)) <= stall * n:
            break
    return w, lam, r, steps


def _qp_value(B, p, a):
    """``(eta, 1/2 ||eta||^2 + p^T a)`` with ``eta = B^T a`` (the QP objective when d = 0)."""
    eta = rmatvec(B, a)
    return eta, 0.5 * float(eta @ eta) + float(p @ a)


def _continuation(B, p, upper, lower, A, rhs, verbose, w0=None, lam0=None, stall=None,
                  Bmv=None, gtol=1e-3):
    """The Huber-smoothing Newton continuation alone: ``(w, lam, r, h_last, scale, n_steps,
    hessian_rows)``
    at the finest smoothing level (``r = p + B w - A^T lam``); a warm start runs the finest
    level only. No working set, no certificate: the smoothed point, e.g. to compare the
    labels of successive ranks (``rank="auto"``). ``stall``: the finest level also stops once
    a Newton step changes the sign of ``r_i - p_i`` on at most that fraction of the rows
    (:func:`_huber_level`); the point is then not the smoothed optimum. ``Bmv``: a float32
    copy of ``B`` for the full passes (:func:`_huber_level`). ``gtol``: each level stops once
    the gradient's max-norm is ``gtol`` times its value at the level's start."""
    n, m = B.shape
    k = A.shape[0]
    c = upper - lower
    # the scale of r: |p| (C-SVC: 1); for p == 0 (nu-type duals) |r| at the middle of the box
    scale = float(np.max(np.abs(p), initial=0.0))
    if scale <= 0.0:
        mid = 0.5 * (lower + upper)
        scale = float(np.median(np.abs(matvec(B, rmatvec(B, mid)))))
    scale = scale if scale > 0.0 else 1.0
    hess = _JHessian(B, c)
    w, lam = np.zeros(m), np.zeros(k)
    levels = [3.0 * scale * 0.1**j for j in range(3)]
    if w0 is not None and np.shape(w0) == (m,) and np.isfinite(w0).all():
        w = np.array(w0, dtype=float)
        if lam0 is not None and np.shape(lam0) == (k,) and np.isfinite(lam0).all():
            lam = np.array(lam0, dtype=float)
        levels = levels[2:]  # measured at N = 50,000: the finest level alone is cheaper
    n_newton = 0
    hl = levels[-1]
    for h in levels:
        w, lam, r, it = _huber_level(B, p, lower, c, A, rhs, w, lam, h, hess, gtol, 50,
                                     stall if h == hl else None, Bmv=Bmv)
        n_newton += it
        if verbose:
            nj = int(np.sum((r < 0) & (-r < h)))
            print(f"newton h {h:.1e}: {it} steps, |J| = {nj}")
    return w, lam, r, hl, scale, n_newton, hess.rows

