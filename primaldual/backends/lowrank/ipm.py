"""The eta-problem's interior-point method: Mehrotra predictor-corrector steps whose Newton
systems ``(B B^T + D) dx - A^T dy = r1, A dx = r2`` are solved in O(N M) (Woodbury on
``B``). Called by :func:`primaldual.backends.lowrank.solver.lowrank_qp_solve`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ._threads import gram_upper


def _gram_upper(alpha: float, G: np.ndarray) -> np.ndarray:
    """``alpha G^T G`` (upper triangle) by ``syrk`` without copying ``G`` (C- or F-order);
    large products on row blocks in threads (:func:`._threads.gram_upper`)."""
    return gram_upper(alpha, G)

# ----------------------------------------------------------------------------- Newton systems


#: rows of the IPM's normal matrix whose total contribution ``sum_i trace(B_i B_i^T) / D_i`` is
#: at most this are left out of it (iterative refinement with the exact operator makes up the
#: difference)
DROP_TOL: float = 1e-4


class _Newton:
    """Solves ``[[B B^T + D, -A^T], [A, 0]] [dx; dy] = [r1; r2]`` in O(N M) per solve.

    ``(B B^T + D)^{-1} = D^{-1} - D^{-1} B (I + B^T D^{-1} B)^{-1} B^T D^{-1}``
    (Sherman-Morrison-Woodbury) with the M x M Cholesky factored once per iteration; the
    equality rows through the k x k Schur complement ``A (B B^T + D)^{-1} A^T``.
    """

    def __init__(self, B, A, D, rownorm2=None, drop_tol=None, work=None):
        drop_tol = DROP_TOL if drop_tol is None else drop_tol
        self.B, self.A, self.D = B, A, D
        self.dinv = 1.0 / D
        sq = np.sqrt(self.dinv)
        self.n_dropped = 0
        keep = None
        if rownorm2 is not None and drop_tol > 0:
            # rows whose total contribution trace(sum_i dinv_i B_i B_i^T) <= drop_tol are left
            # out of the M x M matrix (a PSD perturbation of norm <= drop_tol of a matrix >= I);
            # iterative refinement with the exact operator removes the difference.
            contrib = self.dinv * rownorm2
            order = np.argsort(contrib)
            ndrop = int(np.searchsorted(np.cumsum(contrib[order]), drop_tol, side="right"))
            if ndrop > B.shape[0] // 10:
                self.n_dropped = ndrop
                keep = np.sort(order[ndrop:])
        # G = D^{-1/2} B (the kept rows), written into the caller's buffer ``work`` when given:
        # a fresh |W| x M temporary per IPM iteration costs its page faults (measured on
        # 5,220 x 1,600: 64 ms against 18 ms into a buffer, for a 200 ms syrk)
        rows = B.shape[0] if keep is None else keep.size
        buf = None if work is None else work.get("G")
        if buf is not None and buf.shape[0] >= rows and buf.shape[1] == B.shape[1]:
            G = buf[:rows]
        else:
            G = np.empty((rows, B.shape[1]), dtype=np.result_type(B, sq))
            if work is not None:
                work["G"] = G
        if keep is None:
            np.multiply(B, sq[:, None], out=G, casting="same_kind")
        else:
            np.multiply(B[keep], sq[keep, None], out=G, casting="same_kind")
        S = _gram_upper(1.0, G)  # G^T G, upper triangle
        del G
        S[np.diag_indices_from(S)] += 1.0
        try:
            self.cho = sla.cho_factor(S, lower=False, check_finite=False)
        except (np.linalg.LinAlgError, sla.LinAlgError):
            jitter = 1e-12 * float(np.max(np.diag(S)))
            S[np.diag_indices_from(S)] += jitter
            self.cho = sla.cho_factor(S, lower=False, check_finite=False)
        if not np.isfinite(self.cho[0]).all():
            raise np.linalg.LinAlgError("non-finite Cholesky factor")
        k = A.shape[0]
        if k:
            self.W = self.hinv(A.T.copy())  # N x k
            Sch = A @ self.W
            self.sch = sla.cho_factor(0.5 * (Sch + Sch.T), lower=True, check_finite=False)

    def hinv(self, v):
        t = self.dinv[:, None] * v if v.ndim == 2 else self.dinv * v
        u = self.B.T @ t
        s = sla.cho_solve(self.cho, u, check_finite=False)
        sv = self.B @ s
        return t - (self.dinv[:, None] * sv if v.ndim == 2 else self.dinv * sv)

    def _solve_once(self, r1, r2):
        t = self.hinv(r1)
        if self.A.shape[0] == 0:
            return t, np.zeros(0)
        dy = sla.cho_solve(self.sch, r2 - self.A @ t, check_finite=False)
        return t + self.W @ dy, dy

    def solve(self, r1, r2, refine=4):
        dx, dy = self._solve_once(r1, r2)
        scale = max(float(np.max(np.abs(r1), initial=0.0)), float(np.max(np.abs(r2), initial=0.0)))
        for _ in range(refine):
            res1 = r1 - (self.B @ (self.B.T @ dx) + self.D * dx - self.A.T @ dy)
            res2 = r2 - self.A @ dx
            err = max(
                float(np.max(np.abs(res1), initial=0.0)), float(np.max(np.abs(res2), initial=0.0))
            )
            if err <= 1e-14 * max(scale, 1e-300):
                break
            ex, ey = self._solve_once(res1, res2)
            dx += ex
            dy += ey
        return dx, dy


def _max_step(v, dv):
    """Largest t > 0 with v + t dv >= 0 (v > 0); inf if unbounded."""
    neg = dv < 0
    if not neg.any():
        return np.inf
    return float(np.min(-v[neg] / dv[neg]))


# ----------------------------------------------------------------------------- presolve


def _direction(state, rcl, rcu):
    newton, rd, rp, sl, su, zl, zu, fl, fu = state
    r1 = -rd - np.where(fl, rcl / sl, 0.0) + np.where(fu, rcu / su, 0.0)
    dx, dy = newton.solve(r1, -rp)
    dzl = np.where(fl, (-rcl - zl * dx) / sl, 0.0)
    dzu = np.where(fu, (-rcu + zu * dx) / su, 0.0)
    return dx, dy, dzl, dzu


def _step(state, dx, dzl, dzu):
    _, _, _, sl, su, zl, zu, fl, fu = state
    t = min(_max_step(sl[fl], dx[fl]), _max_step(su[fu], -dx[fu]))
    return min(t, _max_step(zl[fl], dzl[fl]), _max_step(zu[fu], dzu[fu]))


def _ipm(B, p, upper, lower, A, rhs, d, tol, max_iter, verbose, x0=None, start=None):
    fl = np.isfinite(lower)
    fu = np.isfinite(upper)
    lo = np.where(fl, lower, 0.0)
    hi = np.where(fu, upper, 0.0)
    nb = int(fl.sum() + fu.sum())
    # starting point: strictly inside the box
    width = np.where(fl & fu, upper - lower, np.inf)
    x = np.where(fl & fu, lo + 0.5 * np.where(np.isfinite(width), width, 0.0),
                 np.where(fl, lo + 1.0, np.where(fu, hi - 1.0, 0.0)))
    if x0 is not None:
        x = np.clip(x0, np.where(fl, lo + 1e-3 * np.minimum(width, 1.0), -np.inf),
                    np.where(fu, hi - 1e-3 * np.minimum(width, 1.0), np.inf))
    z0 = max(1.0, float(np.mean(np.abs(p))))  # the scale of the linear term (1 for C-SVC)
    zl = np.where(fl, z0, 0.0)
    zu = np.where(fu, z0, 0.0)
    y = np.zeros(A.shape[0])
    if start is not None:
        x, y, zl, zu = (np.array(v, dtype=float) for v in start)
    pn = 1.0 + float(np.max(np.abs(p), initial=0.0))
    rn = 1.0 + float(np.max(np.abs(rhs), initial=0.0))
    status = "max_iter"
    hist: dict[str, float] = {}
    it = 0
    rownorm2 = np.einsum("ij,ij->i", B, B)
    one_fl = fl.astype(float)
    one_fu = fu.astype(float)
    work: dict = {}  # the buffer of D^{-1/2} B, reused by every iteration
    for it in range(1, max_iter + 1):
        sl = np.where(fl, x - lo, 1.0)
        su = np.where(fu, hi - x, 1.0)
        eta = B.T @ x
        Hx = B @ eta + d * x
        rd = Hx + p - A.T @ y - zl + zu
        rp = A @ x - rhs
        comp = float((sl * zl * one_fl).sum() + (su * zu * one_fu).sum())
        mu = comp / max(nb, 1)
        xHx = float(eta @ eta) + float(x @ (d * x))
        pobj = 0.5 * xHx + float(p @ x)
        dobj = -0.5 * xHx + float(rhs @ y) + float(lo @ zl) - float(hi @ zu)
        rgap = (pobj - dobj) / max(1.0, abs(pobj))
        rpn = float(np.max(np.abs(rp), initial=0.0)) / (
            rn + float(np.max(np.abs(A), initial=0.0)) * float(np.max(np.abs(x), initial=0.0))
        )
        rdn = float(np.max(np.abs(rd), initial=0.0)) / (pn + float(np.max(np.abs(Hx))))
        hist = {"ipm_relative_gap": rgap, "ipm_primal_residual": rpn,
                "ipm_dual_residual": rdn, "ipm_mu": mu}
        if verbose:
            print(f"{it:3d} pobj {pobj: .10e} dobj {dobj: .10e} rgap {rgap:.2e} "
                  f"rp {rpn:.2e} rd {rdn:.2e} mu {mu:.2e}")
        if abs(rgap) <= tol and rpn <= tol and rdn <= tol:
            status = "optimal"
            it -= 1
            break
        if not (np.isfinite(pobj) and np.isfinite(dobj)):
            status = "numerical_error"
            break
        D = d + np.where(fl, zl / sl, 0.0) + np.where(fu, zu / su, 0.0)
        try:
            newton = _Newton(B, A, D, rownorm2, work=work)
        except (np.linalg.LinAlgError, sla.LinAlgError, ValueError):
            status = "numerical_error"
            break

        state = (newton, rd, rp, sl, su, zl, zu, fl, fu)
        # predictor (affine scaling)
        rcl = sl * zl * one_fl
        rcu = su * zu * one_fu
        dxa, dya, dzla, dzua = _direction(state, rcl, rcu)
        ta = min(1.0, _step(state, dxa, dzla, dzua))
        mu_aff = (((sl + ta * dxa) * (zl + ta * dzla) * one_fl).sum()
                  + ((su - ta * dxa) * (zu + ta * dzua) * one_fu).sum()) / max(nb, 1)
        sigma = min(1.0, (mu_aff / mu) ** 3) if mu > 0 else 0.0
        # corrector
        rcl = (sl * zl + dxa * dzla - sigma * mu) * one_fl
        rcu = (su * zu - dxa * dzua - sigma * mu) * one_fu
        dx, dy, dzl, dzu = _direction(state, rcl, rcu)
        t = _step(state, dx, dzl, dzu)
        t = min(1.0, 0.995 * t)
        if not np.isfinite(t) or not np.isfinite(dx).all():
            status = "numerical_error"
            break
        x = x + t * dx
        y = y + t * dy
        zl = zl + t * dzl
        zu = zu + t * dzu
        # keep x strictly inside the box (round-off)
        if fl.any():
            x = np.where(fl, np.maximum(x, lo + 1e-300), x)
        if fu.any():
            x = np.where(fu, np.minimum(x, hi - 1e-300), x)
    return x, y, it, status, hist
