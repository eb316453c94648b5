"""The Problem-level side of the low-rank backend (docs/formulations.md 14):
``accepts``/``solve`` for duals with a kernel-defined :class:`~primaldual.model.structure.BoxQP`.

Apply: factor ``K ~= V V^T`` (:func:`primaldual.kernels.low_rank_factor`, rank ``rank`` or trace
tolerance ``rank_tol``), ``B = D_s V[index]`` so ``Q ~= B B^T`` and the dual's quadratic term is
``||eta||^2`` with ``eta = B^T a``. Invert: ``a`` maps back to the Problem's variables, the
equality multipliers to ``nu = -b``, and ``eta`` is the low-rank ``w`` (prediction
``v(x)^T eta + b``). The eta-problem's own certificate is in ``solution.info["lowrank"]``; the
method's certificate then measures the recovered ``alpha`` on the exact-kernel problem, so the
difference is what the approximation cost.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from ...exceptions import LowRankApproximationWarning
from ...solution import Solution
from ...validation import warn_indefinite_kernel
from ._factored import FactoredB
from ._threads import matvec, rmatvec
from .solver import lowrank_qp_solve, lowrank_qp_solve_in_context


def _box(problem: Any):
    """The attached BoxQP record, or one detected from the problem itself."""
    from ...model.structure import box_qp_of
    return box_qp_of(problem)


def _rows_form(box: Any) -> Any:
    """``box`` with a combination-form ``Q = Bᵀ K B`` (pair differences) read as the linear
    kernel on the rows of ``Bᵀ L`` (``n x rank(K)``, ``K = L Lᵀ`` the pivoted Cholesky factor),
    the form whose rows this backend factors; any other record as it is."""
    import dataclasses

    if getattr(box.Q, "coef", None) is None:
        return box
    return dataclasses.replace(box, Q=box.Q.rows_form())


def accepts(problem: Any) -> bool:
    """Kernel-defined box QPs (no dense-matrix Q): their quadratic term is ``beta^T K beta``."""
    return refusal(problem) is None


def refusal(problem: Any) -> str | None:
    """Why the low-rank backend cannot take ``problem`` (the structural condition that fails),
    ``None`` when it can."""
    from ...model.structure import box_qp_refusal

    box = _box(problem)
    if box is None:
        return f"no kernel-defined BoxQP structure ({box_qp_refusal(problem)})"
    if box.Q.matrix is not None or box.Q.kernel is None:
        return "Q is a matrix, not a kernel the low-rank factor can approximate"
    return None


#: ``rank="auto"`` (the default when neither ``rank`` nor ``rank_tol`` is given): the first rank,
#: the cap, and the tolerances: for classifiers on the fraction of training rows whose predicted
#: label changed between rungs and on the estimated change still to come
#: (:func:`_remaining_change`), for every other dual on the relative RMS change of the decision
#: values on the training rows between rungs.
AUTO_RANK_START: int = 100
AUTO_RANK_MAX: int = 1600
AUTO_RANK_TOL_LABELS: float = 0.01
AUTO_RANK_TOL: float = 0.05
#: the ladder doubles the rank below ``AUTO_RANK_DOUBLE_BELOW`` and multiplies it by
#: ``AUTO_RANK_RATIO`` above (rounded to a multiple of 50): 100, 200, 400, 600, 900, 1350, 1600.
#: Near the end a rung costs O(N M^2) to grow and a Newton solve on N x M, so the finer steps
#: stop closer to the rank the criterion needs (N = 50,000: 600 instead of 800).
AUTO_RANK_DOUBLE_BELOW: int = 400
AUTO_RANK_RATIO: float = 1.5
#: intermediate ranks (before the criterion holds) stop their Newton solve once a step changes
#: the predicted label of at most this fraction of the tolerance's rows (classifiers only)
AUTO_RANK_STALL: float = 0.1
#: how the new landmarks are drawn from the support vectors: ``"uniform"`` or ``"residual"``
#: (probability proportional to the residual diagonal ``diag(K - V V^T)``, block randomly
#: pivoted Cholesky)
AUTO_RANK_SAMPLING: str = "uniform"
#: the Newton continuation of the ranks runs on a float32 copy of ``B`` when ``B`` at the cap
#: has at least ``AUTO_RANK_FLOAT32_MIN`` entries (1 GiB in float64). Measured (CPU of the whole
#: fit): N = 200,000 (cap 1600) 43.9 s with the copy, 47.3 s without (the Newton solves 7.2 s
#: against 11 s); N = 50,000 2.78 s with it, 2.45 s without.
AUTO_RANK_FLOAT32: bool = True
AUTO_RANK_FLOAT32_MIN: int = 2**27
#: C-SVC-like duals (no index, signs +-1): the factor is kept as ``V = C P``
#: (:class:`~primaldual.kernels.FactoredNystrom`, kernel columns ``C`` of the landmarks) and
#: ``B = D_s C P`` is an operator (:class:`._factored.FactoredB`); ``V`` is never formed.
#: Growing a rung then costs its kernel columns only, not an ``N x M x b`` product with the
#: old factor (N = 200,000 at rank 1600: the growth's ~5e11 multiply-adds). ``False``: the
#: factor ``V`` itself is formed, column block by column block.
AUTO_RANK_FACTORED: bool = True


def _remaining_change(changes: list[float]) -> float:
    """The classifiers' stop criterion: the label change still to come after the last rung,
    estimated from the last two changes as the tail of a geometric sequence,
    ``c_k q / (1 - q)`` with ``q = c_k / c_{k-1}`` (``inf`` when ``q >= 1`` or with one change
    only: no rate is known yet).

    The change between two rungs alone is no bound on how far the labels still are from those
    of a much larger rank: at N = 200,000 (make_classification, 5 informative features) the
    changes 0.0146, 0.0117, 0.0087 decay slowly (q ~ 0.75), and the last one is below 1% while
    the model is still 0.4 points of held-out accuracy from the exact one; at N = 50,000 the
    changes 0.0179, 0.0072 decay fast (q ~ 0.4) and the estimated rest, 0.0048, is small."""
    if len(changes) < 2:
        return float("inf")
    c, prev = changes[-1], changes[-2]
    if c <= 0.0:
        return 0.0
    if prev <= c:
        return float("inf")
    q = c / prev
    return c * q / (1.0 - q)


def _landmark_rows(r: np.ndarray, h: float, p: np.ndarray) -> np.ndarray:
    """The rows the next landmarks are drawn from, given the smoothed point's
    ``r = p + B eta - A^T lam``: those with ``a > 0`` (``r < h``)."""
    return np.flatnonzero(r < h)


def _next_rank(m: int, cap: int) -> int:
    """The rung after ``m`` on the ``rank="auto"`` ladder (at most ``cap``)."""
    if m < AUTO_RANK_DOUBLE_BELOW:
        return min(2 * m, cap)
    return min(max(m + 1, int(round(AUTO_RANK_RATIO * m / 50.0)) * 50), cap)


def _eta_problem(box: Any, factor: Any, B: np.ndarray | None = None):
    """``(B, p, upper, A, rhs, diag)`` of the eta-problem of ``box`` with ``K ~= V V^T``
    (``B = D_s V[index]``, formed unless given)."""
    op = box.Q
    if B is None:
        V = factor.V if op.index is None else factor.V[op.index]
        B = op.sign[:, None] * V
    n = box.n
    sign = np.ones(n) if box.sign is None else np.asarray(box.sign, dtype=float)
    diag = op.diag if np.any(op.diag) else None
    if box.equality == "one":
        A, rhs = sign, float(box.delta)
    elif box.equality == "nu":
        A, rhs = np.vstack([sign, np.ones(n)]), np.array([0.0, float(box.nu_total)])
    else:
        A, rhs = None, 0.0
    return B, np.asarray(box.p, float), np.asarray(box.C, float), A, rhs, diag


class _AutoMode:
    """How ``rank="auto"`` runs on ``box`` (:func:`_auto_rank`): the compared quantity, the
    route of the intermediate rungs and the form of ``B``."""

    def __init__(self, box: Any, qp_method: str, change_tol: float | None, n_rows: int,
                 cap: int) -> None:
        op = box.Q
        # a classifier's dual (equality row y^T a = delta with y in {-1, +1}, p = -1) is judged
        # by its labels; any other box QP by the relative RMS change of v(x)^T eta + b
        ysign = None if box.sign is None else np.asarray(box.sign, dtype=float)
        self.labels = bool(op.index is None and ysign is not None and np.all(np.abs(ysign) == 1)
                           and np.all(np.asarray(box.p, dtype=float) == -1.0))
        if change_tol is None:
            change_tol = AUTO_RANK_TOL_LABELS if self.labels else AUTO_RANK_TOL
        self.change_tol = change_tol
        # the Newton route (no diagonal, finite bounds): intermediate ranks stop at the
        # smoothed point of the continuation; only the final rank is solved exactly, certified
        self.smooth = bool(qp_method in ("auto", "newton") and not np.any(op.diag)
                           and np.isfinite(np.asarray(box.C, float)).all()
                           and box.equality == "one")
        # C-SVC-like duals (no index, signs +-1): B = D_s V is made in V's memory and undone
        self.sgn = sgn = np.asarray(op.sign, dtype=float)
        self.in_place = bool(op.index is None and np.all(np.abs(sgn) == 1.0))
        # then r = p + B eta - y lam = y (v(x)^T eta + b) + p: f on the training rows from r
        self.f_from_r = bool(self.smooth and self.in_place and ysign is not None
                             and ysign.shape == sgn.shape and np.array_equal(ysign, sgn))
        # a float32 copy of B (C-SVC-like duals on the Newton route): the Newton
        # continuation's full passes over B are memory-bound products, and the float32 copy
        # halves their traffic; the smoothed points only decide the growth and start the final
        # solve, whose working set, sub-QPs and certificate use the float64 B
        self.f32 = bool(self.f_from_r and AUTO_RANK_FLOAT32
                        and n_rows * cap >= AUTO_RANK_FLOAT32_MIN)
        # B = D_s C P as an operator: the factor's kernel columns (and their float32 copy for
        # the continuation's passes) are kept, V = C P is never formed
        self.factored = bool(self.in_place and AUTO_RANK_FACTORED)
        self.what = ("fraction of training rows whose predicted label changed" if self.labels
                     else "relative RMS change of the decision values on the training rows")


class _RungB:
    """The eta-problem's ``B`` over the rungs of ``rank="auto"``: its buffers grow with the
    nested factor, only the new columns are formed at each rung."""

    def __init__(self, box: Any, mode: _AutoMode, width: int) -> None:
        self.box, self.mode, self.width = box, mode, width
        self.Bbuf: Any = None
        self.Bcap = np.zeros((0, 0))
        self.B32 = np.zeros((box.n, 0), dtype=np.float32)
        self.b32 = 0

    def form(self, F: Any, grow: Any) -> tuple[Any, Any, bool]:
        """``(B, Bmv, flipped)`` at the factor ``F``: ``Bmv`` the float32 copy the Newton
        continuation's passes use (``None``: none), ``flipped`` whether ``F.V`` now holds
        ``B = D_s V`` (to be undone after the rung)."""
        mode, box = self.mode, self.box
        op, sgn = box.Q, mode.sgn
        k_old, k = self.Bbuf.shape[1] if self.Bbuf is not None else 0, F.rank
        flipped = False
        Bmv = None
        if mode.factored:  # B = D_s C P, never formed; the float32 passes through C's copy
            self.Bbuf = FactoredB(F.C, F.proj, sgn)
            Bmv = FactoredB(grow.C32[:, :grow.n_landmarks], F.proj, sgn) if mode.f32 else None
        elif mode.in_place:  # B = D_s V formed in V's own memory for a solve, undone after it
            self.Bbuf = F.V
            if mode.f32:  # the float32 copy of B: new columns only; V stays V until an exact
                if self.B32.shape[1] < k:  # solve
                    # row-major: the rows the Newton steps gather (the quadratic zone, the
                    # rows whose a changed) are contiguous; the passes are as fast either way
                    grown = np.empty((box.n, max(k, self.width)), dtype=np.float32)
                    grown[:, :self.b32] = self.B32[:, :self.b32]
                    self.B32 = grown
                np.multiply(sgn[:, None], F.V[:, self.b32:k], out=self.B32[:, self.b32:k],
                            casting="same_kind")
                self.b32 = k
                Bmv = self.B32[:, :k]
            else:
                F.V *= sgn[:, None]
                flipped = True
        else:
            if self.Bbuf is None or k > self.Bcap.shape[1]:  # column-major B = D_s V[index]
                self.Bcap = np.empty((box.n, max(k, self.width)), order="F")
                k_old = 0
            # nested factor: only the new columns of B are formed
            Vnew = F.V[:, k_old:k] if op.index is None else F.V[op.index, k_old:k]
            np.multiply(op.sign[:, None], Vnew, out=self.Bcap[:, k_old:k])
            self.Bbuf = self.Bcap[:, :k]
        return self.Bbuf, Bmv, flipped


def _rung_change(history: list[tuple[int, np.ndarray]], rank: int, f: np.ndarray, labels: bool,
                 changes: list[float], estimates: list[float],
                 compared: list[tuple[int, int]]) -> tuple[int, float, float]:
    """The change of ``f`` (the training rows' decision values at ``rank``) from the latest
    rung at most ``rank / AUTO_RANK_RATIO`` (the change over a growth of at least that ratio:
    a short last step to the cap, e.g. 1350 -> 1600, is no evidence of convergence), else from
    the first rung; appended to ``changes``, ``estimates`` and ``compared``.  Returns
    ``(reference rank, change, estimate)``: classifiers compare the fraction of labels that
    moved and estimate the change still to come (:func:`_remaining_change`)."""
    ref_rank, prev_f = next(((rk, fo) for rk, fo in reversed(history)
                             if rk * AUTO_RANK_RATIO <= rank * (1 + 1e-12)), history[0])
    compared.append((ref_rank, rank))
    if labels:  # classifiers: the fraction of training rows whose predicted label moved
        change = float(np.mean(np.sign(f) != np.sign(prev_f)))
    else:
        rms = float(np.sqrt(np.mean(f * f)))
        change = float(np.sqrt(np.mean((f - prev_f) ** 2))) / max(rms, 1e-300)
    changes.append(change)
    # classifiers: both the last change and the estimated change still to come
    est = _remaining_change(changes) if labels else change
    estimates.append(est)
    return ref_rank, change, est


def _cap_reached(cap: int, rank: int, mode: _AutoMode, changes: list[float],
                 estimates: list[float], compared: list[tuple[int, int]]) -> str:
    """Warn that ``rank="auto"`` stopped at its cap before the criterion held; the reason the
    selection records."""
    from ...exceptions import RankNotConvergedWarning

    what, change_tol = mode.what, mode.change_tol
    last = changes[-1] if changes else float("nan")
    est = estimates[-1] if estimates else float("nan")
    tail = f", estimated further change {est:.3g}" if mode.labels else ""
    warnings.warn(
        f"rank='auto' stopped at its cap, rank {rank}, before the solution stopped "
        f"moving: {what} {last:.3g} between ranks "
        f"{compared[-1][0] if compared else '-'} and {rank}{tail} (tolerance "
        f"{change_tol}); the low-rank model may be less accurate than the exact one "
        "(fit with backend='smo', or pass a larger rank)", RankNotConvergedWarning,
        stacklevel=5)  # (the caller of solve(), as from _auto_rank itself)
    return f"rank cap {cap} reached; {what}: {last:.3g}{tail} > {change_tol}"


def _signed_rows(F: Any, sgn: np.ndarray, may: bool, flipped: bool) -> bool:
    """The factor's rows multiplied by the signs ``s_i`` in place (``D_s V``, the form the exact
    eta-solver reads when ``B`` shares ``V``'s storage), once: whether they are now signed."""
    if may and not flipped:
        F.V *= sgn[:, None]
        return True
    return flipped


def _auto_rank(box: Any, X: np.ndarray, *, tol: float, max_iter: int, verbose: bool,
               random_state: int, qp_method: str, start: int, cap: int,
               change_tol: float | None):
    """Grow a nested Nystrom factor (ranks ``start``, then doubling up to
    ``AUTO_RANK_DOUBLE_BELOW``, then times ``AUTO_RANK_RATIO``, at most ``cap``; the new
    landmarks drawn from the current support vectors), each eta-problem warm-started from the
    previous solution (``[eta; 0]`` on the grown factor: the same decision values), until the
    model stops moving between a rank and the latest earlier rank at most ``1 /
    AUTO_RANK_RATIO`` of it (successive rungs, except a short last step to the cap, which is
    compared with the rung before): for a classifier's dual (``p = -1``, labels ``y`` in the
    equality row) both the fraction of training rows whose label ``sign(v(x)^T eta + b)``
    changed at the last rung and the label change still to come, estimated from the last two
    changes (:func:`_remaining_change`), are at most ``change_tol`` (default
    ``AUTO_RANK_TOL_LABELS``);
    for every other dual the relative RMS change of ``v(x)^T eta + b`` on the training rows
    (default ``AUTO_RANK_TOL``). A
    classifier's Newton solve at a rank is stopped once a step moves at
    most ``AUTO_RANK_STALL * change_tol`` of the labels (the compared quantity is then known to
    about that accuracy); the rank where the criterion holds continues from that point to the
    exact, certified eta-problem solution.

    Returns ``(result, factor, selection)``; ``selection`` records the ranks, the changes, the
    pairs of ranks compared and why the growth stopped.
    """
    from ...kernels import NystromGrowth

    op = box.Q
    n_rows = X.shape[0]
    cap = max(1, min(cap, n_rows))
    m = min(start, cap)
    mode = _AutoMode(box, qp_method, change_tol, n_rows, cap)
    labels, change_tol, smooth, what = mode.labels, mode.change_tol, mode.smooth, mode.what
    sgn, in_place, f_from_r, f32, factored = (mode.sgn, mode.in_place, mode.f_from_r, mode.f32,
                                              mode.factored)
    from .newton import _continuation

    stall = AUTO_RANK_STALL * change_tol if labels else None
    grad_final = None
    ranks: list[int] = []
    changes: list[float] = []
    estimates: list[float] = []  # what the tolerance is compared with (see _remaining_change)
    eta = lam = prefer = None
    history: list[tuple[int, np.ndarray]] = []  # (rank, f on the training rows) per rung
    compared: list[tuple[int, int]] = []
    grow = NystromGrowth(op.kernel, X, random_state=random_state, capacity=cap,
                         form_V=not factored, float32_copy=factored and f32)
    rung = _RungB(box, mode, min(cap, n_rows))
    solve_time = 0.0
    while True:
        F = grow.factor(m, prefer=prefer, sampling=AUTO_RANK_SAMPLING)
        k = F.rank
        Bbuf, Bmv, flipped = rung.form(F, grow)
        B, p, upper, A, rhs, diag = _eta_problem(box, F, B=Bbuf)
        warm = None
        if eta is not None:  # the smaller rank's solution: the same f on the grown factor
            warm = (np.concatenate([eta, np.zeros(k - eta.size)]), lam)
        t = time.perf_counter()
        if smooth:  # the smoothed point of the Newton continuation decides whether to grow
            try:  # with the float32 copy: every product of the continuation on it
                w_s, lam_s, r_s, h_s, _, _, _ = _continuation(
                    Bmv if f32 else B, p, upper, np.zeros_like(upper),
                    np.atleast_2d(A), np.atleast_1d(rhs), verbose,
                    *(warm if warm is not None else (None, None)), stall=stall,
                    Bmv=Bmv if f32 else None)
            except (np.linalg.LinAlgError, FloatingPointError):
                # the smoothed Newton system is numerically singular (features or C at extreme
                # scales): every rank from here on is solved by the exact eta-solver instead
                smooth = False
        if smooth:
            cur_eta, cur_b, cur_lam = w_s, float(-lam_s[0]), lam_s
            used = _landmark_rows(r_s, h_s, p)
        else:
            flipped = _signed_rows(F, sgn, in_place and not factored, flipped)
            r = lowrank_qp_solve(B, p, upper, sign=A, delta=rhs, diag=diag, tol=tol,
                                 max_iter=max_iter, verbose=verbose, method=qp_method,
                                 warm_start=warm)
            if r.status not in ("optimal", "max_iter"):
                solve_time += time.perf_counter() - t
                ranks.append(int(F.rank))
                reason = f"the eta-problem at rank {F.rank} ended {r.status}"
                converged = False
                if flipped:
                    F.V *= sgn[:, None]  # back to V
                break
            cur_eta, cur_b, cur_lam = r.eta, r.b, np.atleast_1d(r.multipliers)
            aa = np.abs(np.asarray(r.alpha, dtype=float))
            used = np.flatnonzero(aa > 1e-8 * max(float(aa.max(initial=0.0)), 1e-300))
        solve_time += time.perf_counter() - t
        ranks.append(int(F.rank))
        # v(x_i)^T eta + b on every training row: O(N M), one pass, as a Newton step (none
        # for a C-SVC's smoothed point: f = y (r - p))
        if f_from_r and smooth:
            f = sgn * (r_s - p)
        else:
            f = (sgn * matvec(B, cur_eta) if in_place else F.V @ cur_eta) + cur_b
        stop = m >= cap
        converged = False
        if m >= n_rows:  # every row is a landmark: V V^T = K up to rounding
            converged = True
            reason = f"rank reached N = {n_rows}: the factor reproduces the kernel matrix"
        elif history:
            ref_rank, change, est = _rung_change(history, int(F.rank), f, labels, changes,
                                                 estimates, compared)
            crit = max(change, est)
            if verbose:
                print(f"rank {F.rank}: change {change:.3g}, criterion {crit:.3g} ({what})")
            if crit <= change_tol:
                converged = True
                reason = (f"{what} from rank {ref_rank} to {ranks[-1]}: {change:.3g}"
                          + (f" and estimated further change {est:.3g}" if labels else "")
                          + f" <= {change_tol}")
                stop = True
        if stop and smooth:  # the final rank: the exact eta-problem from its smoothed point
            t = time.perf_counter()
            flipped = _signed_rows(F, sgn, in_place and not factored, flipped)
            r = lowrank_qp_solve_in_context(B, p, upper, lower=0.0, sign=A, delta=rhs, diag=diag,
                                  tol=tol, max_iter=max_iter, verbose=verbose,
                                  method=qp_method, warm_start=(cur_eta, cur_lam),
                                  Bmv=Bmv if f32 else None)
            solve_time += time.perf_counter() - t
        if in_place:
            if stop or converged:  # the gradient the recovery needs, while B is at hand
                flipped = _signed_rows(F, sgn, not factored, flipped)
                g = getattr(r, "_grad", None)  # the certificate's B eta + p (diag = 0 here)
                grad_final = g if g is not None and diag is None else \
                    matvec(B, np.asarray(r.eta, dtype=float)) + p  # eta = B^T a
            if flipped:
                F.V *= sgn[:, None]  # back to V (s_i = +-1)
            B = None
        if converged:
            break
        if m >= cap:
            converged = False
            reason = _cap_reached(cap, int(F.rank), mode, changes, estimates, compared)
            break
        history.append((int(F.rank), f))
        eta, lam = cur_eta, cur_lam
        # the next landmarks come from the support vectors: the rows the solution uses
        prefer = np.unique(used if op.index is None else np.asarray(op.index)[used])
        m = _next_rank(m, cap)
    del grow, Bmv, rung
    selection = {"ranks": ranks, "changes": changes, "estimates": estimates,
                 "compared": compared,
                 "converged": converged, "reason": reason,
                 "criterion": what, "tol": change_tol, "cap": cap, "solve_time": solve_time,
                 "_problem": (B, p, upper, A, rhs, diag), "_grad": grad_final}
    return r, F, selection


def from_params(params: dict[str, Any], options: dict[str, Any]) -> None:
    """An estimator's ``factor``: a method's name (``"nystrom"``, ...) is the ``method``
    option, a factor object itself the ``factor`` option."""
    factor = params.get("factor")
    if isinstance(factor, str):
        options["method"] = factor
    elif factor is not None:
        options["factor"] = factor


def solve(problem: Any, *, rank: int | str | None = None, rank_tol: float | None = None,
          method: str = "nystrom", tol: float = 1e-8, max_iter: int = 100,
          verbose: bool = False, random_state: int = 0, factor: Any = None,
          qp_method: str = "auto", rank_max: int | None = None,
          rank_change_tol: float | None = None, **_: Any) -> Solution:
    """Factor the kernel (``method``), solve the eta-problem with ``lowrank_qp_solve``
    (``qp_method``: ``"auto"`` = smoothing Newton + working-set IPM where every bound is finite
    and there is no diagonal term, else the interior-point method), map the solution back to
    the Problem's names.

    ``rank="auto"`` (also what ``rank=None`` with ``rank_tol=None`` and the Nystrom factor
    means): ranks ``AUTO_RANK_START``, doubling, then times ``AUTO_RANK_RATIO``
    (:func:`_next_rank`), up to ``rank_max`` (default ``AUTO_RANK_MAX``), new landmarks
    drawn from the support vectors, each solve warm-started from the previous one, until the
    model stops moving (labels of the training rows for a classifier, else decision values;
    ``rank_change_tol``, see :func:`_auto_rank`); the record
    is ``info["rank_selection"]``; hitting the cap first warns (``RankNotConvergedWarning``).
    """
    from ...kernels import low_rank_factor
    from ...kernels.gram import one_blas_thread

    box = _box(problem)
    if box is None or not accepts(problem):
        raise ValueError(f"backend 'lowrank' needs a kernel-defined box-constrained dual "
                         f"(problem {problem.name!r} has none)")
    box = _rows_form(box)
    if isinstance(rank, str) and rank != "auto":
        raise ValueError(f"rank must be a positive integer or 'auto', got {rank!r}")
    t0 = time.perf_counter()
    op = box.Q
    warn_indefinite_kernel(op.kernel, "lowrank")
    X = np.asarray(op.X, dtype=float)
    selection = None
    grad_auto = None
    auto = factor is None and rank_tol is None and rank in (None, "auto")
    if auto and rank is None and getattr(op.kernel, "name", "") == "precomputed":
        auto, rank = False, min(X.shape[0], 200)  # a Gram matrix: the fixed default rank
    if auto and method != "nystrom":
        if rank == "auto":
            raise ValueError(f"rank='auto' grows a Nystrom factor; factor={method!r} needs an "
                             "integer rank or rank_tol")
        auto, rank = False, min(X.shape[0], 200)
    if auto:
        with one_blas_thread():  # N x M products, M x M factorisations: as the eta solve
            r, factor, selection = _auto_rank(
                box, X, tol=tol, max_iter=max_iter, verbose=verbose,
                random_state=random_state, qp_method=qp_method, start=AUTO_RANK_START,
                cap=AUTO_RANK_MAX if rank_max is None else int(rank_max),
                change_tol=None if rank_change_tol is None else float(rank_change_tol))
        B, p, upper, A, rhs, diag = selection.pop("_problem")
        grad_auto = selection.pop("_grad")
        t1 = t0 + (time.perf_counter() - t0 - selection["solve_time"])
    else:
        if factor is None:
            if method == "nystrom" and rank_tol is not None:
                method = "rpcholesky"  # a trace tolerance needs an adaptive (pivoted) factor
            with one_blas_thread():
                factor = low_rank_factor(op.kernel, X, rank=rank, tol=rank_tol, method=method,
                                         random_state=random_state)
        if factor.relative_error > 0.5:
            warnings.warn(
                f"the rank-{factor.rank} {factor.method} factor leaves "
                f"{100 * factor.relative_error:.0f}% of trace(K) unexplained: the low-rank fit "
                "solves a different problem; use a larger rank (or rank_tol) or an exact "
                "backend ('smo', 'cvxpy')", LowRankApproximationWarning, stacklevel=3)
        B, p, upper, A, rhs, diag = _eta_problem(box, factor)
        t1 = time.perf_counter()
        r = lowrank_qp_solve(B, p, upper, sign=A, delta=rhs, diag=diag, tol=tol,
                             max_iter=max_iter, verbose=verbose, method=qp_method)
    Bw = getattr(r, "_Bw", None)
    if selection is not None and Bw is not None and hasattr(factor, "remember") and \
            op.index is None and np.all(np.abs(np.asarray(op.sign, dtype=float)) == 1.0):
        # B = D_s V (s = +-1): the certificate's passes B^T a = V^T (s a) = eta and
        # B eta = s (V eta) are the recovery's and the training decision's products
        sgn = np.asarray(op.sign, dtype=float)
        factor.remember(np.asarray(r.eta, dtype=float), Vw=sgn * Bw,
                        z=sgn * np.asarray(r.alpha, dtype=float))
    info = {"lowrank": r, "factor": factor, "eta": r.eta, "rank": factor.rank,
            "factor_time": t1 - t0, "solve_time": time.perf_counter() - t1}
    if getattr(factor, "formed", True):  # a FactoredNystrom: computed on access, O(N B M)
        info.update(trace_error=factor.trace_error, relative_error=factor.relative_error)
    if selection is not None:
        info["rank_selection"] = selection
    status = {"optimal": "optimal", "max_iter": "max_iter",
              "infeasible": "infeasible"}.get(r.status, "solver_error")
    if status not in ("optimal", "max_iter"):
        return Solution(problem, status, backend="lowrank", solver="ipm-smw", n_iter=r.n_iter,
                        info=info)
    a = np.asarray(r.alpha, dtype=float)
    if selection is not None and grad_auto is not None:
        grad = grad_auto + (0 if diag is None else diag * a)
    else:
        grad = matvec(B, rmatvec(B, a)) + (0 if diag is None else diag * a) + p
    lam = np.atleast_1d(r.multipliers)
    nu_eq = float(lam[0]) if lam.size else 0.0
    nu_sum = float(lam[1]) if lam.size > 1 else 0.0
    return Solution(problem, status, box.split_values(a),
                    box.multipliers_from_gradient(a, grad, nu_eq, nu_sum), backend="lowrank",
                    solver="ipm-smw", n_iter=r.n_iter, solve_time=time.perf_counter() - t0,
                    info=info)
