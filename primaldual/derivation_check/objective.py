"""Two objectives compared on an affine hull: their quadratic, linear and constant parts, a
witness point and a reading of the difference (a factor, a sign, the differing entries)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .coords import _num, _Space
from .report import Piece


def _compare_objectives(space: _Space, F_U: Callable, F_M: Callable, z0: np.ndarray,
                        B: np.ndarray, cands: list[np.ndarray], tol: float,
                        rng: np.random.Generator, syms: dict[str, str], line_u: str,
                        line_m: str) -> list[Piece]:
    d = B.shape[1]
    T = [rng.standard_normal(d) / max(1.0, np.sqrt(d)) for _ in range(5)]
    c_u, c_m = F_U(z0), F_M(z0)

    def parts(F: Callable, c: float, t: np.ndarray) -> tuple[float, float, float]:
        p, m, p2 = F(z0 + B @ t), F(z0 - B @ t), F(z0 + 2 * B @ t)
        q, lin = 0.5 * (p + m) - c, 0.5 * (p - m)
        return q, lin, p2 - (c + 2 * lin + 4 * q)
    PU = [parts(F_U, c_u, t) for t in T]
    PM = [parts(F_M, c_m, t) for t in T]
    scale = max(1.0, abs(c_u), abs(c_m), *(abs(x) for P_ in PU + PM for x in P_[:2]))
    quadratic = all(abs(p[2]) <= 1e-7 * scale for p in PU + PM)
    pieces = []

    def witness(diff: Callable[[np.ndarray], float]) -> tuple[str, np.ndarray]:
        best = None
        for z in cands:
            dz = diff(z)
            if abs(dz) > tol * max(1.0, abs(F_U(z)), abs(F_M(z))):
                nnz = int(np.sum(z != 0))
                if best is None or nnz < best[0] or (nnz == best[0] and abs(dz) > best[1]):
                    best = (nnz, abs(dz), z, "")
        if best is None:
            z = z0 + B @ T[0]
            best = (0, abs(diff(z)), z, " (a point of the equalities' affine hull, "
                    "outside the inequalities)")
        z = best[2]
        fu, fm = F_U(z), F_M(z)
        txt = (f"at {space.fmt(z, syms)}{best[3]}: your objective {_num(fu)}, derived "
               f"{_num(fm)}, difference {fu - fm:.4g}")
        return txt, z

    def even(F: Callable, z: np.ndarray) -> float:
        return 0.5 * (F(z) + F(-z)) - F(np.zeros_like(z))

    if not quadratic:
        ok = all(abs(F_U(z) - F_M(z)) <= tol * max(1.0, abs(F_U(z)), abs(F_M(z)))
                 for z in cands)
        w = "" if ok else witness(lambda z: F_U(z) - F_M(z))[0]
        hint = ""
        if not ok:
            d = np.array([F_U(z) - F_M(z) for z in cands])
            if d.size > 1 and np.allclose(d, d[0], rtol=1e-7, atol=tol):
                hint = (f"the difference is the constant {d[0]:.6g} at every point compared: a "
                        "constant term")
        pieces.append(Piece("dual", "objective" + ("" if ok else " values differ"), ok,
                            line_u, line_m, w, hint))
        if not ok:
            z = witness(lambda z: F_U(z) - F_M(z))[1]
            pieces[-1].point, pieces[-1].amount = space.split(z), F_U(z) - F_M(z)
        return pieces
    specs = [("quadratic part", 0), ("linear part", 1)]
    for name, i in specs:
        du = np.array([p[i] for p in PU])
        dm = np.array([p[i] for p in PM])
        ok = bool(np.all(np.abs(du - dm) <= tol * scale))
        if ok:
            pieces.append(Piece("dual", f"objective, {name}", True, line_u, line_m))
            continue
        hint = _ratio_hint(du, dm, name)
        if hint.startswith("not a multiple") and space.n <= 60:
            hint = (_quad_entries_hint if i == 0 else _lin_entries_hint)(
                space, F_U, F_M, tol * scale, syms) or hint
        if i == 0:
            w, zq = witness(lambda z: even(F_U, z) - even(F_M, z))
            w += (f"; the quadratic parts there: yours {_num(even(F_U, zq))}, derived "
                  f"{_num(even(F_M, zq))}")
        else:
            w, zq = witness(lambda z: F_U(z) - F_M(z))
        pieces.append(Piece("dual", f"objective, {name} differs", False, line_u, line_m, w,
                            hint, space.split(zq), F_U(zq) - F_M(zq)))
        return pieces
    ok = abs(c_u - c_m) <= tol * scale
    pieces.append(Piece("dual", "objective, constant part" + ("" if ok else " differs"), ok,
                        line_u, line_m,
                        "" if ok else f"at {space.fmt(z0, syms)}: your objective {_num(c_u)}, "
                        f"derived {_num(c_m)}, difference {c_u - c_m:.4g} (the same at every "
                        "point of the equalities)", "", None if ok else space.split(z0),
                        None if ok else c_u - c_m))
    return pieces


def _quad_entries_hint(space: _Space, F_U: Callable, F_M: Callable, tol: float,
                       syms: dict[str, str]) -> str:
    """Which coefficients of the quadratic form differ (``z_i z_j``), and whether by sign."""
    n = space.n
    zero = np.zeros(n)

    def even(F: Callable, z: np.ndarray, f0: float) -> float:
        return 0.5 * (F(z) + F(-z)) - f0
    H = []
    for F in (F_U, F_M):
        f0 = F(zero)
        d = np.array([even(F, np.eye(n)[k], f0) for k in range(n)])
        M = np.diag(d)
        for i in range(n):
            for j in range(i + 1, n):
                M[i, j] = M[j, i] = even(F, np.eye(n)[i] + np.eye(n)[j], f0) - d[i] - d[j]
        H.append(M)
    Hu, Hm = H
    diff = np.abs(Hu - Hm) > tol
    if not np.any(diff):
        return ""
    iu = np.argwhere(np.triu(diff))
    flip = np.abs(Hu + Hm) <= tol
    i, j = iu[0]
    name = (f"{space.coord(i, syms)}²" if i == j else
            f"{space.coord(i, syms)} {space.coord(j, syms)}")
    both = f"the coefficient of {name}: yours {_num(Hu[i, j])}, derived {_num(Hm[i, j])}"
    n_diff = int(np.sum(np.triu(diff)))
    total = n * (n + 1) // 2
    if np.all(flip[diff]):
        return (f"{n_diff} of the {total} coefficients of the quadratic form have the "
                f"opposite sign, e.g. {both}: a sign error in Q?")
    return f"{n_diff} of the {total} coefficients of the quadratic form differ, e.g. {both}"


def _lin_entries_hint(space: _Space, F_U: Callable, F_M: Callable, tol: float,
                      syms: dict[str, str]) -> str:
    """Which linear coefficients differ, block by block."""
    n = space.n
    gu = np.array([0.5 * (F_U(np.eye(n)[k]) - F_U(-np.eye(n)[k])) for k in range(n)])
    gm = np.array([0.5 * (F_M(np.eye(n)[k]) - F_M(-np.eye(n)[k])) for k in range(n)])
    out, agree = [], []
    for b in space.blocks:
        sl = slice(b.offset, b.offset + b.size)
        d = np.abs(gu[sl] - gm[sl]) > tol
        sym = syms.get(b.name, b.sym)
        if not np.any(d):
            agree.append(sym)
            continue
        k = b.offset + int(np.flatnonzero(d)[0])
        out.append(f"{int(d.sum())} of the {b.size} coefficients of {sym} (e.g. of "
                   f"{space.coord(k, syms)}: yours {_num(gu[k])}, derived {_num(gm[k])})")
    if not out:
        return ""
    return "the linear coefficients differ: " + "; ".join(out) + (
        f"; those of {', '.join(agree)} agree" if agree else "")


def _ratio_hint(du: np.ndarray, dm: np.ndarray, name: str) -> str:
    big = np.abs(dm) > 1e-9 * max(1.0, float(np.max(np.abs(dm))))
    if not np.any(big):
        return f"the derived objective has no {name} on the feasible directions; yours has"
    r = du[big] / dm[big]
    if np.allclose(r, r[0], rtol=1e-6, atol=0) and np.allclose(du[~big], 0, atol=1e-9):
        k = float(r[0])
        extra = {2.0: ": a missing 1/2?", 0.5: ": an extra 1/2?",
                 -1.0: ": the opposite sign"}.get(round(k, 9), "")
        return f"your {name} is {_num(k)} × the derived one{extra}"
    return (f"not a multiple of the derived {name}: some entries differ (a sign, a factor "
            "or a missing term)")
