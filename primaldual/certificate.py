"""Certificates: primal value, dual value, gap and KKT residuals, recomputed from the point.

Nothing here reads a solver's own report. For a method (primal problem P, dual problem D):

* ``primal_objective = P.objective(x)`` at the recovered primal point ``x``;
* ``dual_objective = D.objective(alpha)`` at the dual point;
* ``duality_gap = primal_objective - dual_objective`` (``>= 0`` up to round-off when both points
  are feasible: weak duality), ``relative_gap = gap / max(u, |primal_objective|)`` with ``u``
  the problem's unit of objective (:func:`objective_unit`: ``1``, or ``C_max^2`` for a
  box-constrained dual whose largest finite bound ``C_max`` is below 1, e.g. nu-SVC's
  ``1/N`` box, whose objective is ``O(1/N^2)``: a floor of 1 would certify any gap there);
* ``kkt``: every KKT residual of ``P`` at ``(x, multipliers)`` as max-abs (``kkt``) and per
  sample (``kkt_per_sample``), plus ``dual_feasibility_of_dual``: the largest constraint
  violation of the dual point in ``D``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

import numpy as np

from .validation import audit_certificate


@dataclass
class Certificate:
    """How optimal a returned point is, recomputed from the point and the data."""

    primal_objective: float
    dual_objective: float
    duality_gap: float
    relative_gap: float
    kkt: dict[str, float] = field(default_factory=dict)
    kkt_per_sample: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    status: str = "optimal"
    extra: dict[str, float] = field(default_factory=dict)
    #: For an estimator's fit: the decision values ``f_i = sum_j beta_j k(x_i, x_j) + b`` on
    #: the training rows, from exactly the coefficients, support and intercept that
    #: ``decision_function`` uses (``None`` for a bare problem).
    f: np.ndarray | None = field(default=None, repr=False)

    @property
    def max_kkt_residual(self) -> float:
        """Largest KKT residual; ``nan`` if any residual is NaN (never skipped)."""
        vals = [float(v) for v in self.kkt.values()]
        if any(np.isnan(v) for v in vals):
            return float("nan")
        return max(vals, default=0.0)

    def is_optimal(self, gap_tol: float = 1e-6, kkt_tol: float = 1e-6) -> bool:
        """``True`` when the status carries a point, ``|relative gap| <= gap_tol`` and every KKT
        residual is ``<= kkt_tol``; any NaN (gap, objective or residual) gives ``False``."""
        finite = all(np.isfinite(v) for v in (self.primal_objective, self.dual_objective,
                                              self.relative_gap))
        return bool(self.status in ("optimal", "inaccurate") and finite
                    and abs(self.relative_gap) <= gap_tol
                    and all(float(v) <= kkt_tol for v in self.kkt.values()))

    def rows(self) -> list[tuple[str, str]]:
        r = [("status", self.status),
             ("primal objective", f"{self.primal_objective:.10g}"),
             ("dual objective", f"{self.dual_objective:.10g}"),
             ("duality gap", f"{self.duality_gap:.3e}"),
             ("relative gap", f"{self.relative_gap:.3e}")]
        r += [(f"KKT {k}", f"{v + 0.0:.3e}") for k, v in self.kkt.items()]  # no "-0.000e+00"
        r += [(k, f"{v:.6g}" if isinstance(v, float) else str(v)) for k, v in self.extra.items()]
        return r

    def table(self) -> str:
        rows = self.rows()
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)

    def __str__(self) -> str:
        return self.table()

    def to_dict(self) -> dict:
        return {"primal_objective": self.primal_objective, "dual_objective": self.dual_objective,
                "duality_gap": self.duality_gap, "relative_gap": self.relative_gap,
                "kkt": dict(self.kkt), "status": self.status, "extra": dict(self.extra)}


def certify(primal, point: dict, multipliers: dict, dual=None, dual_point: dict | None = None,
            status: str = "optimal", unit: float = 1.0) -> Certificate:
    """Certificate of a primal point and multipliers against the primal problem, and of a dual
    point against the dual problem (if given; otherwise the dual value is the Lagrangian
    ``L(x, lambda)``, which equals the dual function when stationarity holds). ``unit``: the
    floor of the relative gap's denominator (:func:`objective_unit`).

    Runs in one :func:`~primaldual.kernels.matvec_cache` context: the objectives, constraint
    values and KKT residuals share each kernel product ``K[:, S] beta_S``."""
    from .kernels import matvec_cache

    with matvec_cache():
        return _certify(primal, point, multipliers, dual, dual_point, status, unit)


def objective_unit(upper: np.ndarray | None) -> float:
    """The unit ``u`` of :attr:`Certificate.relative_gap` for a dual with per-variable bounds
    ``upper``: ``min(1, C_max^2)`` (``C_max`` the largest finite bound; ``1`` without one).

    The objective of a box-constrained dual scales like ``C_max^2`` when ``C_max < 1``; SMO
    solves it rescaled to ``C_max = 1`` (LIBSVM's units) and stops on the same ratio."""
    if upper is None:
        return 1.0
    up = np.asarray(upper, dtype=float)
    if up.size and float(up.min()) >= 0.0:   # (bounds are >= 0: no |.| copy needed)
        top = float(up.max())
        if top < math.inf:
            return min(1.0, top * top) if top > 0.0 else 1.0
    up = np.abs(up)
    top = float(up.max()) if up.size else 0.0
    if 0.0 < top < math.inf:  # every bound finite (the usual case)
        return min(1.0, top * top)
    fin = up[np.isfinite(up) & (up > 0)]
    return min(1.0, float(np.max(fin)) ** 2) if fin.size else 1.0


def certificate_unit(upper: np.ndarray | None, weights: np.ndarray | None = None) -> float:
    """The one unit of every estimator's relative gap (closed-form, modelling-layer, low-rank,
    ball and PCA routes alike): :func:`objective_unit` of the dual's finite bounds ``upper``,
    or, where the dual has no finite bound (least squares, L2-SVC), of the error weights
    ``weights`` (``C_i``), whose size sets the objective's the same way."""
    if upper is not None:
        up = np.asarray(upper, dtype=float)
        if up.size:
            lo, top = float(up.min()), float(up.max())
            if lo >= 0.0 and 0.0 < top < math.inf:  # the usual case: finite bounds >= 0
                return min(1.0, top * top)
        up = np.abs(up)
        if up.size and np.any(np.isfinite(up) & (up > 0)):
            return objective_unit(up)
    return objective_unit(weights)


def relative_gap(gap: float, primal: float, unit: float) -> float:
    """``gap / max(unit, |primal|)`` (``nan`` when either is not finite): the relative duality
    gap of :class:`Certificate` (``unit`` from :func:`certificate_unit`)."""
    den = max(float(unit), abs(float(primal)))
    if not (np.isfinite(gap) and np.isfinite(den)) or den <= 0:
        return float("nan")
    return float(gap) / den


#: The bounds of :func:`audit_tolerance`: below ``AUDIT_TOL_MIN`` float32 kernel caches and
#: the float64 recomputation disagree by rounding; above ``AUDIT_TOL_MAX`` a point is no
#: longer near enough to its optimum to be called optimal, whatever ``tol`` a user sets.
AUDIT_TOL_MIN = 1e-6
AUDIT_TOL_MAX = 1e-2


def audit_tolerance(tol: object = 1e-3) -> float:
    """The one tolerance rule every fit is audited with: an estimator's ``tol`` clipped to
    ``[AUDIT_TOL_MIN, AUDIT_TOL_MAX] = [1e-6, 1e-2]``; ``1e-3`` for ``None``, a non-number, a
    non-finite or a non-positive value.

    "optimal" means ``|relative gap| <= audit_tolerance(tol)`` and every KKT residual
    ``<= audit_tolerance(tol) * max(1, |primal|)``: the lower clip because SMO's float32
    kernel cache and the float64 certificate agree to about 1e-7 relative only; the upper
    because ``tol=10`` lets a solver stop at once, and such a point must be reported
    ``"inaccurate"``, never ``"optimal"``. The catalogue's binary fits, the one-vs-one pairs
    and ``Variant`` all read their bound here."""
    try:
        t = float(tol)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1e-3
    if not (math.isfinite(t) and t > 0):
        return 1e-3
    return min(max(t, AUDIT_TOL_MIN), AUDIT_TOL_MAX)


def audit(cert: Certificate, tol: float) -> str:
    """Downgrade ``cert.status`` from ``"optimal"`` to ``"inaccurate"`` (with an
    :class:`~primaldual.solution.InaccurateSolutionWarning`) when its recomputed gap or KKT
    residuals exceed ``tol`` (already the :func:`audit_tolerance` of the estimator); returns
    the status. The check itself is :func:`primaldual.validation.audit_certificate`."""
    return audit_certificate(cert, gap_tol=tol, kkt_tol=tol)


#: Below this relative size a negative duality gap is taken for the rounding of ``P`` and
#: ``D`` (each recomputed in float64 from a few sums); beyond it, with a point infeasible, the
#: gap is a primal value below a dual value: weak duality says a point is infeasible.
NEGATIVE_GAP_ROUNDOFF = 1e-9


def audit_negative_gap(cert: Certificate, floor: float = NEGATIVE_GAP_ROUNDOFF) -> str:
    """Downgrade an ``"optimal"`` ``cert`` to ``"inaccurate"`` (with an
    :class:`~primaldual.exceptions.InaccurateSolutionWarning`) when its relative gap is below
    ``-floor`` while a primal or dual feasibility residual is nonzero: by weak duality
    ``P(x) >= D(alpha)`` for feasible points, so such a gap says the primal point (e.g.
    slacks that do not cover the margins) or the dual point is infeasible, and the gap bounds
    nothing, however small. A negative gap between feasible points is rounding and stays.
    Returns the status."""
    if cert.status != "optimal":
        return cert.status
    gap = float(cert.relative_gap)
    if not gap < -float(floor):
        return cert.status
    scale = max(1.0, abs(float(cert.primal_objective)))
    feas = {k: float(v) for k, v in cert.kkt.items()
            if k.startswith("primal_feasibility") or k == "dual_feasibility_of_dual"}
    worst = max(feas, key=lambda k: feas[k], default=None)
    if worst is None or not feas[worst] > 1e-12 * scale:
        return cert.status
    import warnings

    from .exceptions import InaccurateSolutionWarning
    cert.status = "inaccurate"
    warnings.warn(f"the recomputed certificate has a negative duality gap ({gap:.3e} relative) "
                  f"and {worst} = {feas[worst]:.3e}: a point is infeasible, so the gap certifies "
                  "nothing: status set to 'inaccurate'", InaccurateSolutionWarning, stacklevel=3)
    return cert.status


def _certify(primal, point: dict, multipliers: dict, dual, dual_point: dict | None,
             status: str, unit: float = 1.0) -> Certificate:
    P = float(primal.evaluate(point))
    kkt = primal.kkt()
    per = kkt.residuals(point, multipliers)
    if dual is not None and dual_point is not None:
        D = float(dual.evaluate(dual_point))
        per["dual_feasibility_of_dual"] = np.array([dual.infeasibility(dual_point)])
    else:
        D = float(primal.lagrangian().value(point, multipliers))
    if primal.sense == "max":
        gap = D - P
    else:
        gap = P - D
    mx = {k: (float(np.max(v)) if v.size else 0.0) for k, v in per.items()}
    return Certificate(P, D, gap, gap / max(unit, abs(P)), mx, per, status)


def certify_problem(solution) -> Certificate:
    """Certificate of a single problem's solution (gap through the Lagrangian)."""
    if not solution.has_point:
        nan = float("nan")
        return Certificate(nan, nan, nan, nan, {}, {}, solution.status)
    return certify(solution._problem(), solution.values, solution.multipliers,
                   status=solution.status)


class _Layout(tuple):
    """The residual names of one kind of box-QP record, in the certificate's order: entries
    ``(key, t, k)`` with ``t >= 0`` the per-sample array (0 primal feasibility, 1 ``a >= 0``,
    2 ``a <= u``, 3 and 4 the complementarity of each) of block ``k``, ``t < 0`` the scalar
    ``-t - 1`` (stationarity of ``w``, the equality row, the sum row, the sign of ``rho``, the
    sum row's complementarity); ``uppers`` the names of the blocks' upper-bound multipliers."""

    uppers: tuple[str, ...] = ()
    #: the keys of ``a >= 0`` per block and of ``a <= u`` per block (the box violation's)
    lower_keys: tuple[str, ...] = ()
    upper_keys: tuple[str, ...] = ()


#: layouts by record kind (variable names, equality, multiplier names): a few entries
_LAYOUTS: dict[tuple, _Layout] = {}


def layout(box, blocks: tuple, m: dict, two: bool) -> _Layout:
    """The residual rows of a box QP's certificate record, cached by record kind.

    Parameters
    ----------
    box : BoxQP
        The record's box QP (its equality and sum constraint).
    blocks : tuple of str
        The names of the variable blocks (one, or two for ``a`` and ``a_star``).
    m : dict
        The record's multiplier names (``"upper"``, ``"eq"``, ``"sum"``, ...).
    two : bool
        Whether the record has an equality multiplier, i.e. a stationarity row for it.

    Returns
    -------
    _Layout
        The rows' names and positions and the blocks' multiplier names.
    """
    key = (blocks, box.equality, box.sum_sense, tuple(m.items()))
    hit = _LAYOUTS.get(key)
    if hit is not None:
        return hit
    uppers = tuple(m.get("upper" + ("" if k == 0 else "_star"), f"upper[{v}]")
                   for k, v in enumerate(blocks))
    eq_name = m.get("eq", "eq")
    eq_name = eq_name[6:] if eq_name.startswith("minus_") else eq_name
    rows: list[tuple[str, int, int]] = [("stationarity[w]", -1, 0)]
    if two:
        rows.append((f"stationarity[{eq_name}]", -2, 0))
    if box.equality == "nu":
        sn = m.get("sum", "sum")
        rows += [(f"stationarity[{sn}]", -3, 0), (f"primal_feasibility[{sn}]", -4, 0)]
    for t, kind, names in ((0, "primal_feasibility", blocks), (1, "dual_feasibility", blocks),
                           (2, "dual_feasibility", uppers), (3, "complementarity", blocks),
                           (4, "complementarity", uppers)):
        rows += [(f"{kind}[{v}]", t, k) for k, v in enumerate(names)]
    if box.equality == "nu":
        rows.append((f"complementarity[{m.get('sum', 'sum')}]", -5, 0))
    lay = _Layout(rows)
    lay.uppers = uppers
    lay.lower_keys = tuple(f"dual_feasibility[{v}]" for v in blocks)
    lay.upper_keys = tuple(f"dual_feasibility[{v}]" for v in uppers)
    if len(_LAYOUTS) < 64:
        _LAYOUTS[key] = lay
    return lay


_COMPILED: list = []   # [box_terms] once imported (numba at hand)


def _terms_compiled(a: np.ndarray, u: np.ndarray, p: np.ndarray, s: np.ndarray,
                    qs: np.ndarray, Kr: np.ndarray, d: np.ndarray, has_d: bool, nu_eq: float,
                    nu_sum: float, cut: int) -> tuple | None:
    """:func:`primaldual.kernels.compiled.box_terms` on these arrays, or ``None`` when numba
    is not at hand (:func:`~primaldual.kernels.compiled.available`), an array is not a plain
    vector of ``n`` entries, or an entry is not finite (the numpy route then keeps every
    NaN where it appears)."""
    n = a.shape[0]
    if n < 2 or "numba" not in sys.modules:
        return None
    shape = (n,)
    if u.shape != shape or p.shape != shape or s.shape != shape or qs.shape != shape \
            or Kr.shape != shape or (has_d and d.shape != shape):
        return None
    if not _COMPILED:
        from .kernels.compiled import box_terms
        _COMPILED.append(box_terms)
    terms, mx, ok = _COMPILED[0](a, u, p, s, qs, Kr, d if has_d else a, has_d, float(nu_eq),
                                 float(nu_sum), int(cut))
    return (terms, mx) if ok else None


def box_qp_certificate(box, a: np.ndarray, beta: np.ndarray, Kbeta: np.ndarray, intercept: float,
                       threshold: float | None = None, *, stat_w: float = 0.0,
                       Kbeta_dual: np.ndarray | None = None, status: str = "optimal",
                       unit: float = 1.0) -> Certificate:
    r"""The certificate of a box QP with finite bounds, from its bidual at the predictor (the
    fast path of every estimator whose dual is such a record).

    The record (:class:`~primaldual.model.records.BoxQP`) is the dual
    ``max_a -(1/2 a^T Q a + p^T a)`` s.t. ``0 <= a <= u`` (every ``u_j`` finite),
    ``s^T a = delta`` and, for ``equality="nu"``, ``1^T a >= T`` (``sum_sense=">="``) or
    ``<= T``, with ``Q = D_s K[idx, idx] D_s + diag(d)`` a kernel operator whose signs ``s`` are
    the equality's. Its Lagrangian dual (the primal whose slacks are penalised linearly by
    ``u``) evaluated at the predictor ``f = K beta + b`` -- ``w = sum_i beta_i phi(x_i)``, the
    equality multiplier ``nu_eq = -b`` and the sum multiplier ``nu_sum`` (``threshold``:
    nu-SVC's ``rho``, ``nu_sum = rho``; nu-SVR's ``eps``, ``nu_sum = -eps``) -- with the
    optimal slacks is::

        r_j  = s_j (K beta)[idx_j] + d_j a_j + p_j - nu_eq s_j - nu_sum     (the margin)
        xi_j = max(0, -r_j)
        P    = 1/2 beta^T K beta + 1/2 sum_j d_j a_j^2 + sum_j u_j xi_j - nu_eq delta - nu_sum T
        D    = -(1/2 a^T Q a + p^T a)

    (C-SVC: ``P = 1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i f_i)``). For any feasible ``a'``,
    convexity gives ``-(1/2 a'^T Q a' + p^T a') <= P`` when ``nu_sum`` has the sign of its
    inequality, so ``P - D`` bounds the dual point's suboptimality whatever the solver did.

    Parameters
    ----------
    box : BoxQP
    a : ndarray
        The dual point (stacked blocks, as the record).
    beta, Kbeta : ndarray
        The coefficients predict uses and ``K beta`` on the training rows; ``Kbeta_dual``:
        ``K beta_a`` of the dual point's own expansion ``beta_a[i] = sum_{idx_j = i} s_j a_j``
        when it differs from ``beta`` (``None``: ``beta`` is that expansion, and ``Kbeta``
        serves both).
    intercept : float
        The predictor's ``b``.
    threshold : float, optional
        ``rho`` / ``eps`` of the nu variants (``equality="nu"``).
    stat_w : float
        ``||beta - beta_a||_K`` (reported as ``stationarity[w]``).
    status, unit : the status to carry and the relative gap's unit (:func:`objective_unit`).

    Returns
    -------
    Certificate
        Residuals, per sample and in the record's names (``v`` each variable block, ``x`` the
        multiplier of its upper bound, ``b``/``rho``/``eps`` the equality rows'):
        ``stationarity[w]``; ``stationarity[b]`` ``= |s^T a - delta|``; ``stationarity[rho]``
        the sum row's violation; ``primal_feasibility[rho]`` ``= max(0, -rho)``;
        ``primal_feasibility[v]`` ``= max(0, -(r_j + xi_j))`` (the margins; 0 but for
        round-off, the slacks being the predictor's optimal ones);
        ``dual_feasibility[v]`` ``= max(0, -a)``; ``dual_feasibility[x]`` ``= max(0, a - u)``;
        ``complementarity[v]`` ``= a_j max(0, r_j)``; ``complementarity[x]``
        ``= (u_j - a_j) xi_j``; ``complementarity[rho]`` ``= |rho| |1^T a - T|``;
        ``dual_feasibility_of_dual`` the largest violation of the dual's constraints.
    """
    op = box.Q
    a = np.asarray(a, dtype=float)
    n = a.shape[0]
    u = np.asarray(box.C, dtype=float)
    p = np.asarray(box.p, dtype=float)
    s = np.ones(n) if box.sign is None else np.asarray(box.sign, dtype=float)
    d = np.asarray(op.diag, dtype=float)
    has_d = bool(np.count_nonzero(d))    # (d.any(), without its wrapper)
    qs = np.asarray(op.sign, dtype=float)
    two = box.equality in ("one", "nu")
    nu_eq = -float(intercept) if two else 0.0
    rho = 0.0 if threshold is None else float(threshold)
    nu_sum = (rho if box.sum_sense == ">=" else -rho) if box.equality == "nu" else 0.0
    Kb = np.asarray(Kbeta, dtype=float)
    Kd = Kb if Kbeta_dual is None else np.asarray(Kbeta_dual, dtype=float)
    qa = qs * a
    if op.index is None:
        beta_a, Kr = qa, Kb
    else:
        idx = np.asarray(op.index)
        beta_a, Kr = np.bincount(idx, weights=qa, minlength=Kb.shape[0]), Kb[idx]
    wKw = float(np.asarray(beta, dtype=float) @ Kb)
    # (Kbeta_dual None: beta is the dual point's own expansion, so beta_a^T K beta_a = wKw)
    aKa = wKw if Kbeta_dual is None else float(beta_a @ Kd)
    T = float(box.nu_total) if box.equality == "nu" else 0.0
    delta = float(box.delta) if box.equality == "one" else 0.0
    m = box.multipliers
    blocks = (box.variable,) if box.variables is None else tuple(box.variables)
    cuts = [0, n] if box.variables is None else [0, box.n_first, n]
    fast = _terms_compiled(a, u, p, s, qs, Kr, d, has_d, nu_eq, nu_sum, cuts[1])
    if fast is not None:
        # one compiled pass: the same terms, bit for bit
        terms, mxs = fast
        dfa, dfu, ca, cu, xi = terms
        daa = float(d @ (a * a)) if has_d else 0.0
    else:
        r = qs * Kr                       # the margins r_j (min-form reduced gradient)
        r += p
        if nu_eq:
            r -= nu_eq * s
        if nu_sum:
            r -= nu_sum
        daa = 0.0
        if has_d:
            r += d * a
            daa = float(d @ (a * a))
        xi = np.maximum(-r, 0.0)
        # the margins with the optimal slacks: r + max(-r, 0) = max(r, 0) >= 0, exactly in
        # floating point too (r + (-r) is 0); a NaN in r shows in the complementarity residuals
        dfa = np.maximum(-a, 0.0)
        ua = u - a
        dfu = np.maximum(-ua, 0.0)
        ca = np.abs(a * np.maximum(r, 0.0))
        cu = np.abs(ua * xi)
        mxs = None
    uxi, pa = float(u @ xi), float(p @ a)
    sa = float(s @ a) if two else 0.0
    tot = float(a.sum()) if box.equality == "nu" else 0.0   # (the sum row's only)
    D = -(0.5 * (aKa + daa) + pa)
    P = 0.5 * wKw + 0.5 * daa + uxi \
        - nu_eq * delta - nu_sum * T
    eq = abs(sa - delta) if two else 0.0
    sum_viol = (max(0.0, T - tot) if box.sum_sense == ">=" else max(0.0, tot - T)) \
        if box.equality == "nu" else 0.0
    lay = layout(box, blocks, m, two)
    pf = np.zeros(n)
    arrs = (pf, dfa, dfu, ca, cu)
    scal = (float(stat_w), eq, sum_viol, max(0.0, -rho), abs(rho) * abs(tot - T))
    per: dict[str, np.ndarray] = {}
    mx: dict[str, float] = {}
    one = len(blocks) == 1
    # (the compiled maxima as Python floats at once: the same values as float(mxs[t, k]))
    mxl = mxs.tolist() if mxs is not None else None
    for key, t, k in lay:
        if t < 0:                      # a scalar residual
            v = scal[-t - 1]
            per[key] = np.array([v])
            mx[key] = v
            continue
        arr = arrs[t] if one else arrs[t][cuts[k]:cuts[k + 1]]
        per[key] = arr
        # (pf is zero by construction: its maximum needs no pass over it)
        mx[key] = (0.0 if t == 0 else mxl[t - 1][k] if mxl is not None
                   else float(arr.max()) if arr.size else 0.0)
    box_viol = max(max([mx[key] for key in lay.lower_keys]),
                   max([mx[key] for key in lay.upper_keys]))
    worst = max(eq, sum_viol, box_viol)
    per["dual_feasibility_of_dual"] = np.array([worst])
    mx["dual_feasibility_of_dual"] = worst
    gap = P - D
    return Certificate(P, D, gap, gap / max(unit, abs(P)), mx, per, status)


def least_squares_certificate(alpha: np.ndarray, beta: np.ndarray, Kbeta: np.ndarray,
                              intercept: float, error: np.ndarray, sign: np.ndarray | None,
                              targets: np.ndarray, C: np.ndarray, bias: str = "free",
                              error_key: str = "e", status: str = "optimal") -> Certificate:
    r"""The certificate of an LS-SVM-type fit, computed from numbers only (no expression
    objects): the primal at the predictor ``f = K beta + b``, the dual at ``alpha``.

    The problem family (LS-SVC, LS-SVR, kernel ridge, proximal SVC)::

        primal  min  1/2 ||w||^2 [+ 1/2 b^2] + 1/2 sum_i C_i e_i^2
                s.t. s_i (<w, phi(x_i)> + b) = t_i - e_i          [alpha_i, free]
        dual    max  t^T alpha - 1/2 alpha^T (D K D + diag(1/C)) alpha [- 1/2 (s^T alpha)^2]
                s.t. s^T alpha = 0                                 (free bias only)

    with ``s = y`` for a classifier and ``s = 1`` otherwise (``sign=None``), ``D = diag(s)``
    and ``w = sum_i beta_i phi(x_i)``, so ``||w||^2 = beta^T K beta`` and, at the recovered
    ``beta = D alpha``, ``alpha^T D K D alpha = beta^T K beta``. ``bias`` is ``"free"``
    (``b`` unpenalised: the equality above), ``"none"`` (``b = 0``, kernel ridge) or
    ``"penalised"`` (the ``1/2 b^2`` term: proximal SVC, ``b = s^T alpha`` at the optimum).

    Residuals, each per sample: ``stationarity[w] = |beta - D alpha|`` (coefficients of
    ``w - sum_i alpha_i s_i phi(x_i)``), ``stationarity[b] = |s^T alpha|`` (free) or
    ``|b - s^T alpha|`` (penalised), ``stationarity[<error_key>] = |e_i - alpha_i / C_i|``
    (``C_i e_i = alpha_i`` in the units of the residuals ``e``), ``primal_feasibility[alpha]
    = |s_i f_i - t_i + e_i|``, ``dual_feasibility_of_dual = |s^T alpha|`` (free bias).
    The relative gap is ``(P - D) / max(1, |P|)``; an estimator rescales it to its unit."""
    a = np.asarray(alpha, dtype=float)
    s = np.ones_like(a) if sign is None else np.asarray(sign, dtype=float)
    C = np.broadcast_to(np.asarray(C, dtype=float), a.shape)
    t = np.asarray(targets, dtype=float)
    e = np.asarray(error, dtype=float)
    b = float(intercept)
    wKw = float(beta @ Kbeta)
    inv_c = np.where(np.isfinite(C) & (C > 0), 1.0 / np.where(C > 0, C, 1.0), 0.0)
    sa = float(s @ a)
    P = 0.5 * wKw + 0.5 * float(np.sum(C * e * e))
    D = float(t @ a) - 0.5 * (wKw + float(np.sum(a * a * inv_c)))
    per: dict[str, np.ndarray] = {"stationarity[w]": np.abs(beta - s * a)}
    if bias == "penalised":
        P += 0.5 * b * b
        D -= 0.5 * sa * sa
        per["stationarity[b]"] = np.array([abs(b - sa)])
    elif bias == "free":
        per["stationarity[b]"] = np.array([abs(sa)])
    per[f"stationarity[{error_key}]"] = np.where(inv_c > 0, np.abs(e - a * inv_c), np.abs(a))
    per["primal_feasibility[alpha]"] = np.abs(s * (Kbeta + b) - t + e)
    per["dual_feasibility_of_dual"] = np.array([abs(sa) if bias == "free" else 0.0])
    mx = {k: (float(np.max(v)) if v.size else 0.0) for k, v in per.items()}
    gap = P - D
    return Certificate(P, D, gap, gap / max(1.0, abs(P)), mx, per, status)
