"""What a fitted :class:`~primaldual.methods.variant.Variant` predicts with: the bound dual's
BoxQP through the spec's shape template, the certificate's objective unit, and the expansion
``f(x) = sum_{j in S} B_j k(x, x_j) + x^T L + c + q k(x, x)`` read off the decision
expressions at the recovered point (and checked against them on training rows). The last term
is SVDD's ``R^2 - ||phi(x) - a||^2`` on a kernel whose ``k(x, x)`` varies with ``x`` (linear,
polynomial); on RBF-like kernels it is a constant and stays in ``c``.

The expression is affine in the point and in ``x``, so evaluating it at a few points gives the
coefficients exactly; these functions only evaluate expressions and never touch the estimator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..certificate import objective_unit
from ..kernels import Kernel, kernel_matvec
from ..kernels.gram import kernel_diag
from ._variant_spec import _is_deferred, _spec_uses
from ._variant_template import bind_spec

__all__: list[str] = []

#: relative distance (64 roundings) within which a least-squares coefficient of the kernel
#: part is taken as the nearest nonzero integer
_SNAP = 64 * float(np.finfo(float).eps)


# ----------------------------------------------------------------------------- the structure
def _spec_box_qp(der: Any, bd: Any, X: np.ndarray, y: np.ndarray | None, kernel: Kernel,
                 hyper: dict[str, float]) -> Any:
    """The bound dual's BoxQP through the shape template of the spec (the catalogue's road,
    :func:`primaldual.methods._structure.spec_structure`): detected on the first fit of a
    shape, bound to later fits in ``O(N)``; stored in ``bd.dual.structure`` for the backend's
    choice and the solve. ``None``: not a box QP (the backend reads the Problem)."""
    from ._structure import spec_structure

    uses_y = _spec_uses(der._spec, "y") is not False
    yv = y if uses_y else None

    def build(Xp: np.ndarray, yp: np.ndarray | None, pp: dict[str, float]) -> Any:
        return bind_spec(der, Xp, yp, kernel, pp, learn_now=False).dual

    return spec_structure(der, bd.dual, build, X, yv, hyper, kernel)


# ----------------------------------------------------------------------------- the expansion
def _unit(D: Any) -> float:
    """The certificate's objective unit from the dual's box (``objective_unit``), when the
    dual carries a BoxQP record; 1 otherwise."""
    from ..model.structure import box_qp_of
    box = box_qp_of(D)
    return objective_unit(None if box is None else np.asarray(box.C, dtype=float))


def _evaluate(bd: Any, dec: Any, point: dict, Xq: np.ndarray, memo: dict | None = None
              ) -> np.ndarray:
    """The decision expression ``dec`` at ``point`` on the rows ``Xq``: a placeholder
    expression bound to ``Xq`` by the derivation (``bd.at_rows``; kept in ``memo``, keyed by
    the expression and the rows' identity, for the next point on the same rows), a
    factory's expression on the training rows through :func:`_evaluate_rows`."""
    if not _is_deferred(dec):
        return _evaluate_rows(bd, dec, point, Xq, memo)
    key = (id(dec), id(Xq))
    hit = None if memo is None else memo.get(key)
    if hit is None:
        hit = (bd.at_rows(dec, Xq), dec, Xq)    # (dec and Xq held: their ids stay theirs)
        if memo is not None:
            memo[key] = hit
    e = hit[0]
    out = np.asarray(e.value(point), dtype=float).reshape(Xq.shape[0])
    at = None if memo is None else memo.get("point")
    for v, q in getattr(e, "rq", {}).items():
        # q_i ||v||^2 (SVDD's R^2 - ||phi(x) - a||^2 = R^2 - ||a||^2 + 2 <a, phi(x)> - k(x, x)):
        # a constant of the fitted point, not a term in the variables; read at that point,
        # so the decision is affine in what the probes vary
        if at is not None and v.name in at and v.name in point:
            sq = [float(b @ v.gram_matvec(b)) for b in
                  (np.asarray(at[v.name], dtype=float).ravel(),
                   np.asarray(point[v.name], dtype=float).ravel())]
            out = out + np.broadcast_to(np.asarray(q, dtype=float), out.shape) * (sq[0] - sq[1])
    return out


def _evaluate_rows(bd: Any, dec: Any, point: dict, Xq: np.ndarray, memo: dict | None = None
                   ) -> np.ndarray:
    """A factory's decision, written on the training rows (``w @ phi(X) + b``,
    ``Data("X", X) @ w + b``), at new rows ``Xq``: row ``i`` of each term is read as a
    function of ``x_i`` -- ``<w, phi(x_i)>`` (the feature map of all training rows, in
    order) becomes ``k(x, .) beta``, ``x_i^T w`` (the training matrix itself) becomes
    ``x^T w``, ``(K u)_i`` (the training rows' kernel matrix) becomes ``k(x, X) u``, a term
    equal on every row (``b``) stays; anything else is refused. ``memo``: the coefficient
    matrices already found to be the kernel matrix (the next point on the same decision)."""
    import scipy.sparse as sp
    n = None
    out = np.zeros(Xq.shape[0])
    const = np.atleast_1d(np.asarray(dec.const, dtype=float))
    if np.ptp(const) != 0 or getattr(dec, "rq", None) or getattr(dec, "terms", None):
        raise ValueError("decision: a term of the training-row decision varies with the row "
                         "but is not <w, phi(x_i)> or x_i^T w")
    out += const[0]
    for v, M in dec.lin.items():
        val = np.asarray(point[v.name], dtype=float).ravel()
        if getattr(v, "feature", False):
            n = v.basis.shape[0]
            M = sp.csr_matrix(M)
            # the rows are the training rows, in order, first among w's basis points (a
            # universum's or another set's points may follow them)
            rows_n = M.shape[0]
            if M.shape[1] != n or rows_n > n or \
                    (M - sp.identity(n, format="csr")[:rows_n]).count_nonzero():
                raise ValueError(f"decision: write <{v.name}, phi(x)> over all training rows "
                                 f"({v.name} @ phi(X)), the training rows first in "
                                 f"{v.name}'s basis")
            S = np.flatnonzero(val)
            if S.size:
                out += kernel_matvec(v.kernel, Xq, val[S], Z=v.basis[S])
            continue
        Md = M.toarray() if sp.issparse(M) else np.asarray(M, dtype=float)
        Md = np.atleast_2d(Md)
        if Md.shape[0] == 1 or (np.array_equal(Md[1], Md[0]) and np.all(Md == Md[0])):
            out += float(Md[0] @ val)
            continue
        Xtr = _training_rows(bd)
        if Xtr is not None and Md.shape == Xtr.shape and np.array_equal(Md, Xtr):
            out += Xq @ val
            continue
        kern = getattr(bd, "_variant_kernel", None)
        if Xtr is not None and kern is not None and Md.shape == (Xtr.shape[0],) * 2 and \
                _is_gram(Md, kern, Xtr, memo):
            S = np.flatnonzero(val)   # K u: the kernel expansion sum_j u_j k(x, x_j)
            if S.size:
                out += kernel_matvec(kern, Xq, val[S], Z=Xtr[S])
            continue
        raise ValueError(f"decision: the term in {v.name!r} is not the same on every row, "
                         f"nor x_i^T {v.name} (Data('X', X) @ {v.name}), nor the kernel "
                         f"expansion K {v.name} (Data('K', K) @ {v.name})")
    return out


#: rows of the kernel matrix compared at a time (a 1,024 x N block, not a second N x N array)
_GRAM_CHUNK = 1024


def _is_gram(M: np.ndarray, kern: Any, X: np.ndarray, memo: dict | None) -> bool:
    """Whether ``M`` is the kernel matrix ``k(X, X)`` (entry by entry within ``1e-12``
    relatively), compared row block by row block; a match is kept in ``memo`` (with ``M``,
    so that its id stays its own) and not compared again."""
    key = ("gram", id(M))
    if memo is not None and key in memo:
        return True
    for i in range(0, X.shape[0], _GRAM_CHUNK):
        blk = np.array(kern(X[i:i + _GRAM_CHUNK], X), dtype=float)
        Mi = M[i:i + _GRAM_CHUNK]
        tol = 1e-12 * np.abs(blk)
        np.subtract(blk, Mi, out=blk)       # |M - K| <= 1e-12 |K| (NaN: no match)
        if not np.all(np.abs(blk, out=blk) <= tol):
            return False
    if memo is not None:
        memo[key] = M
    return True


def _training_rows(bd: Any) -> np.ndarray | None:
    for v in bd.primal.variables:
        if getattr(v, "feature", False):
            return v.basis
    return getattr(bd, "_variant_X", None)


def _expansion_points(bd: Any, X: np.ndarray) -> np.ndarray:
    """The points the kernel part of a decision expands over: the training rows, or the basis
    of a feature-space variable that a factory spans over the training rows and more points
    after them (the universum SVM's ``np.vstack([X, U])``). Variables on other points of the
    same rows (SVM+'s correcting space on ``X_star``) leave it at the training rows."""
    n = X.shape[0]
    for v in bd.primal.variables:
        B = getattr(v, "basis", None) if getattr(v, "feature", False) else None
        if B is not None and B.ndim == 2 and B.shape[0] > n and B.shape[1] == X.shape[1] \
                and np.array_equal(B[:n], X):
            return np.asarray(B, dtype=float)
    return X


def _diag_coef(bd: Any, dec: Any, point: dict, kernel: Kernel, d: int) -> float:
    """``q`` of a decision's ``q k(x, x)`` term (0 when there is none, or when ``k(x, x)`` is
    constant, as for RBF, where it is part of ``c``).

    With every variable at 0 the decision is ``c0 + x^T l0 + q k(x, x)``: its values on
    ``d + 8`` random rows are fitted by least squares on ``[1, x, k(x, x)]`` and on ``[1, x]``;
    ``q`` is taken only when the first fit is exact and the second is not (a term that is
    not affine in ``x`` and is a multiple of ``k(x, x)``)."""
    Zq = np.random.default_rng(2).standard_normal((d + 8, d))
    kd = kernel_diag(kernel, Zq)
    if np.ptp(kd) <= 1e-12 * max(1.0, float(np.max(np.abs(kd)))):
        return 0.0
    pz = {k: np.zeros(np.shape(v)) for k, v in point.items()}
    fz = _evaluate(bd, dec, pz, Zq, {"point": point})
    scale = max(1.0, float(np.max(np.abs(fz))))
    A = np.column_stack([np.ones(d + 8), Zq])
    r_aff = fz - A @ np.linalg.lstsq(A, fz, rcond=None)[0]
    if np.max(np.abs(r_aff)) <= 1e-10 * scale:
        return 0.0
    A = np.column_stack([A, kd])
    sol = np.linalg.lstsq(A, fz, rcond=None)[0]
    if np.max(np.abs(fz - A @ sol)) > 1e-10 * scale:
        return 0.0                                 # not of this form: _check_expansion says so
    q = float(sol[-1])
    r = round(q)
    return float(r) if r and abs(q - r) <= 1e-9 * abs(r) else q


def _expansion(bd: Any, decisions: list[Any], point: dict, X: np.ndarray, kernel: Kernel
               ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray, np.ndarray,
                          tuple[np.ndarray, np.ndarray], np.ndarray | None]:
    """``(B, L, c, S, P, checks, q)``: the decision expressions at ``point`` as
    ``f_k(x) = sum_{j in S} B_jk k(x, p_j) + x^T L_k + c_k + q_k k(x, x)`` over the expansion
    points ``P`` (:func:`_expansion_points`: the training rows, or the feature-space
    variables' basis); ``q`` is ``None`` when no decision has a ``k(x, x)`` term
    (:func:`_diag_coef`), and that term is taken off every value read below.

    Read off the expressions (affine in the point and in ``x``) by evaluating them. The
    candidates for the kernel part are the feature-space variables and the vectors of one
    entry per training row (LP-SVR's expansion coefficients ``u`` in ``K u``): the
    contribution ``h`` of all of them, on a few training rows, is fitted by least squares as
    ``sum_v s_v k(x, X) v`` (exactly, or else each alone is compared with ``k(x, X) v``); a
    variable with ``s_v != 0`` adds ``s_v v`` to ``B``. With those at 0, ``c`` is the value at
    ``x = 0`` and ``L`` the change along each unit vector (read only when the value depends
    on ``x`` at all). ``checks = (rows, values)``: the expressions at ``point`` on up to 256
    training rows, which :func:`_check_expansion` compares with the whole expansion. Each
    expression is bound once to one stack of rows (probed rows, 0, probes, checked rows) and
    evaluated there at each point.
    """
    n, d = X.shape
    P = _expansion_points(bd, X)
    cands = [v for v in bd.primal.variables
             if (getattr(v, "feature", False) and (P is X or v.basis.shape == P.shape))
             or (P is X and not v.scalar and v.size == n)]
    k = len(decisions)
    p0 = dict(point)
    for v in cands:
        p0[v.name] = np.zeros(np.shape(point[v.name]))
    B = np.zeros((P.shape[0], k))
    c = np.zeros(k)
    L = np.zeros((d, k))
    nz = sorted({int(j) for v in cands for j in np.flatnonzero(point[v.name]) if j < n})
    rows = np.asarray(nz[:24] if len(nz) >= 4 else list(range(min(n, 24))), dtype=np.intp)
    probe_x = np.random.default_rng(0).standard_normal((3, d))
    nr = rows.size
    checked = np.arange(n) if n <= 256 else \
        np.random.default_rng(1).choice(n, 256, replace=False)
    e0 = nr + 1 + probe_x.shape[0]               # where the checked rows start in Z
    Z = np.vstack([X[rows], np.zeros((1, d)), probe_x, X[checked]])
    ref = np.zeros((checked.size, k))
    active = []
    for v in cands:
        val = np.asarray(point[v.name], dtype=float).ravel()
        S = np.flatnonzero(val)
        if S.size:
            active.append((v, val, kernel_matvec(kernel, X[rows], val[S], Z=P[S])))
    q = np.zeros(k)
    kdZ = kdE = None
    for j, dec in enumerate(decisions):
        memo: dict = {"point": point}              # dec bound to Z once, evaluated at each point
        q[j] = _diag_coef(bd, dec, point, kernel, d) if _is_deferred(dec) else 0.0
        if q[j] and kdZ is None:
            kdZ, kdE = kernel_diag(kernel, Z), kernel_diag(kernel, np.eye(d))
        dZ = q[j] * kdZ if q[j] else 0.0            # the k(x, x) term, off every value read
        F0 = _evaluate(bd, dec, p0, Z, memo) - dZ  # kernel-part candidates at 0: rows, 0, probes
        f0, p_lin = F0[:nr], p0
        F = _evaluate(bd, dec, point, Z, memo)
        ref[:, j] = F[e0:]                         # with the term: predict adds it back
        F = F - dZ
        h_all = F[:nr] - f0
        done = not np.any(h_all)
        if not done and active:
            # one least-squares fit h = sum_v s_v k(x, X) v over the candidates together
            G = np.column_stack([g for _, _, g in active])
            sv = np.linalg.lstsq(G, h_all, rcond=None)[0]
            sv[np.abs(sv) <= 1e-10 * float(np.max(np.abs(sv)))] = 0.0
            # a coefficient of the expression (w @ phi(x): 1) read back within a few
            # roundings is that integer: B is then v itself (bit for bit), and the training
            # decision's product K[:, S] B is the one the certificate evaluated
            r = np.round(sv)
            sv = np.where(np.abs(sv - r) <= _SNAP * np.abs(r), r, sv)
            if np.linalg.matrix_rank(G) == G.shape[1] and \
                    np.linalg.norm(G @ sv - h_all) <= 1e-9 * np.linalg.norm(h_all):
                for (_, val, _), s_ in zip(active, sv, strict=True):
                    if s_:
                        B[:, j] += s_ * val
                done = True
        if done:
            c[j], g = F0[nr], F0[nr + 1:e0]
        else:                                      # one candidate at a time (the general case)
            p1 = dict(point)                       # the point with the kernel part at 0
            for v, val, gk in active:
                pv = dict(p0)
                pv[v.name] = point[v.name]
                h = (_evaluate(bd, dec, pv, Z, memo) - dZ)[:nr] - f0
                den = float(gk @ gk)
                s_ = float(gk @ h) / den if den > 0 and np.any(h) else 0.0
                if s_ and np.linalg.norm(h - s_ * gk) <= 1e-9 * np.linalg.norm(h):
                    B[:, j] += s_ * val
                    p1[v.name] = np.zeros(np.shape(point[v.name]))
            G1 = (_evaluate(bd, dec, p1, Z, memo) - dZ)[nr:e0]
            c[j], g, p_lin = G1[0], G1[1:], p1
        if not np.allclose(g, c[j], rtol=1e-12, atol=1e-12 * max(1.0, abs(c[j]))):
            L[:, j] = _evaluate(bd, dec, p_lin, np.eye(d), {"point": point}) - c[j] \
                - (q[j] * kdE if q[j] else 0.0)
    S = np.flatnonzero(np.any(B != 0, axis=1))
    return B[S], (L if np.any(L) else None), c, S, P, (checked, ref), (q if np.any(q) else None)


def _check_expansion(checks: tuple[np.ndarray, np.ndarray], f: np.ndarray) -> None:
    """The expansion's decision values ``f`` (on the training rows) must reproduce the
    decision expressions at the point, ``checks = (rows, values)`` of :func:`_expansion`;
    otherwise the decision is not of the form the estimator predicts with, and no model is
    returned."""
    rows, refs = checks
    for j in range(refs.shape[1]):
        ref = refs[:, j]
        err = float(np.max(np.abs(ref - f[rows, j]), initial=0.0))
        if err > 1e-8 * max(1.0, float(np.max(np.abs(ref), initial=0.0))):
            raise ValueError(f"decision: expression {j} is not of the form sum_j B_j k(x, x_j) "
                             f"+ x^T L + c + q k(x, x) in the primal variables "
                             f"(deviation {err:.3g} on the training rows); write it affine in the "
                             "variables and in x, e.g. w @ phi(x) + b")
