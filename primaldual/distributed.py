r"""Scaling out on Dask: the fixed-size LS-SVM on a ``dask.array`` X.

Everything parallel in primaldual (grid searches, CV folds, multiclass sub-problems) goes
through joblib, so ``with joblib.parallel_config(backend="dask"):`` runs it on a
``dask.distributed`` cluster without any code here. This module adds the one algorithm whose
*data* must stay distributed: the fixed-size LS-SVM (Suykens 6.4; docs/formulations.md 14) with a
Nystrom feature map ``v(x) = S^{-1/2} U^T k(X_L, x)`` built from ``M`` landmark rows.

``V = v(X)`` is computed chunk-wise with ``map_blocks`` (rows never leave their worker); the
bordered KKT system in the low-rank form needs only ``V^T V`` (M x M) and ``V^T R`` (M x k),
chunked reductions
(:func:`primaldual.backends.linsys.iterative.solve_lowrank`); the ``N``-vectors ``a`` are
returned as numpy arrays (``O(N)`` memory, not ``O(N M)``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .backends.linsys.iterative import solve_lowrank
from .kernels import LowRankFactor, make_kernel, nystrom_factor

__all__ = ["FixedSizeLSSVM", "fixed_size_lssvm", "nystrom_map"]


def _is_dask(X: Any) -> bool:
    return type(X).__module__.startswith("dask")


def nystrom_map(X: Any, factor: LowRankFactor) -> Any:
    """``V = v(X)`` row-block by row-block (``map_blocks``) for a dask X; plain for numpy."""
    if not _is_dask(X):
        return factor.transform(np.asarray(X, dtype=float))
    M = factor.transform(np.zeros((1, X.shape[1]))).shape[1]
    Xr = X.rechunk({1: -1}).astype(np.float64)
    return Xr.map_blocks(lambda B: factor.transform(B), dtype=np.float64,
                         chunks=(Xr.chunks[0], (M,)))


@dataclass
class FixedSizeLSSVM:
    """A fitted fixed-size LS-SVM: ``f(x) = v(x)^T w + b`` with ``w = V^T beta``.

    Attributes
    ----------
    factor : LowRankFactor (Nystrom on the landmark rows)
    w : ndarray (M,)
    b : float
    alpha : ndarray (N,)  multipliers of the (low-rank) KKT system
    landmarks : ndarray (M,) row indices of the landmarks in X
    classes : ndarray or None (classifier labels; ``classes[1]`` is +1)
    """

    factor: LowRankFactor
    w: np.ndarray
    b: float
    alpha: np.ndarray
    landmarks: np.ndarray
    classes: np.ndarray | None

    def decision_function(self, X: Any) -> Any:
        """``f(x) = v(x)^T w + b`` (dask in, dask out)."""
        return nystrom_map(X, self.factor) @ self.w + self.b

    def predict(self, X: Any) -> Any:
        f = self.decision_function(X)
        if self.classes is None:
            return f
        f = np.asarray(f.compute() if _is_dask(f) else f)
        return self.classes[(f > 0).astype(int)]


def fixed_size_lssvm(X: Any, y: Any, *, C: float = 1.0, kernel: Any = "rbf",
                     gamma: Any = 1.0, rank: int = 100, classifier: bool = True,
                     random_state: int | None = 0, landmarks: Any = None) -> FixedSizeLSSVM:
    r"""Fit the fixed-size LS-SVM on a numpy or ``dask.array`` X (rows chunked).

    LS-SVM classifier (``d = 1``, ``s = y`` in ``{-1, +1}``) or regression (``d = y``) with
    ``K ~= V V^T``: ``[[0, s^T], [s, D_s (V V^T + I/C) D_s]] [b; a] = [0; d]``, solved by
    Sherman-Morrison-Woodbury from ``V^T V`` and ``V^T R`` (chunked reductions for dask).

    Parameters
    ----------
    X : ndarray or dask.array (N, n)
    y : array (N,)  labels (two classes) or real targets; held in memory (O(N))
    C : float  error weight (finite)
    kernel, gamma : kernel specification (as the estimators)
    rank : int  number of Nystrom landmarks ``M``
    landmarks : array of int, optional  explicit landmark rows (default: uniform sample)
    """
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 1:
        raise ValueError(f"rank must be a positive integer, got {rank!r}")
    N = X.shape[0]
    y = np.asarray(y.compute() if _is_dask(y) else y)
    if y.shape != (N,):
        raise ValueError(f"y must have shape ({N},), got {y.shape}")
    if landmarks is None:
        rng = np.random.default_rng(random_state)
        L = np.sort(rng.choice(N, size=min(rank, N), replace=False))
    else:
        L = np.asarray(landmarks, dtype=np.intp).ravel()
        if L.size == 0 or L.min() < 0 or L.max() >= N:
            raise ValueError("landmarks must be row indices in [0, N)")
    XL = X[L]
    XL = np.asarray(XL.compute() if _is_dask(XL) else XL, dtype=np.float64)
    k = make_kernel(kernel, gamma, 3, 0.0, XL)
    factor = nystrom_factor(k, XL, XL.shape[0], landmarks=np.arange(XL.shape[0]))
    V = nystrom_map(X, factor)
    classes = None
    if classifier:
        classes = np.unique(y)
        if classes.shape[0] != 2:
            raise ValueError(f"a classifier needs exactly 2 classes in y, got {classes.shape[0]}")
        s = np.where(y == classes[1], 1.0, -1.0)
        b, a, w = solve_lowrank(V, C, np.ones(N), sign=s, bias=True)
    else:
        b, a, w = solve_lowrank(V, C, y.astype(np.float64), bias=True)
    return FixedSizeLSSVM(factor, np.asarray(w), float(b), np.asarray(a), L, classes)


# ----------------------------------------------------------------------------- hinge-loss SVMs
#
# C-SVC and epsilon-SVR on a dask.array X: the low-rank eta-problem of
# docs/formulations.md 14 with V = v(X) kept in row chunks. Every step of the smoothing Newton
# method (primaldual.backends.lowrank.newton) needs only chunked products with V -- V w,
# V^T z, V^T diag(q) V -- and the working set's rows V[W] (|W| x M, small); the N-vectors of the
# dual (O(N), not O(N M)) stay on the client. The working-set sub-QP is solved locally by the
# same interior-point method, and the certificate is recomputed from the returned point with
# the two chunked products eta = B^T a and B eta.


class _ChunkedV:
    """Products with ``V = v(X) = C P`` over the row chunks of X, never gathered.

    ``C = k(X, X_L)`` is the kernel block against the landmarks and ``P`` the factor's
    projection (``nystrom``: ``P = U S^{-1/2}`` with ``K_LL = U S U^T``; rows ``v(x)^T``),
    so every product with ``V`` is a product with
    ``C`` followed by an M x M one on the client: ``V w = C (P w)``, ``V^T z = P^T (C^T z)``,
    ``V^T diag(q) V = P^T (C^T diag(q) C) P``.

    ``persist=True`` forms the blocks of ``V`` once (``map_blocks``) and keeps them in the
    cluster's memory. ``persist=False`` keeps only X there and recomputes, at every pass and in
    every chunk, the rows of ``C`` that the pass needs: all of them for ``V w``, only the rows
    with a nonzero weight for ``V^T z`` and ``V^T diag(q) V`` (the margin violators and the
    smoothing band, a fraction of N). The N x M product ``C P`` is never formed then.
    """

    def __init__(self, X: Any, factor: LowRankFactor, persist: bool) -> None:
        import dask

        self._dask = dask
        self.N = int(X.shape[0])
        self.M = int(factor.proj.shape[1])
        self.persist = bool(persist)
        if self.persist:
            V = nystrom_map(X, factor).persist()
            self.V = V  # holds the persisted chunks (their futures) for the fit's lifetime
            self.blocks = list(V.to_delayed().ravel())
            self.ctx: tuple | None = None  # blocks are V itself
            self.proj = None
            chunks = V.chunks[0]
        else:
            self.V = None
            self.blocks = list(X.to_delayed().ravel())
            self.ctx = (factor.kernel, factor.basis)
            self.proj = factor.proj
            chunks = X.chunks[0]
        self.bounds = np.concatenate([[0], np.cumsum(chunks)]).astype(np.intp)
        self.passes = 0

    def _run(self, fn, *vecs, extra=()):
        from dask import delayed

        d = delayed(fn, pure=True)
        tasks = [d(blk, self.ctx, *[v[..., b0:b1] for v in vecs], *extra)
                 for blk, b0, b1 in zip(self.blocks, self.bounds[:-1], self.bounds[1:],
                                        strict=True)]
        self.passes += 1
        return self._dask.compute(*tasks)

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """``V w`` (N,)."""
        if not np.any(w):
            return np.zeros(self.N)
        u = w if self.proj is None else self.proj @ w
        return np.concatenate(self._run(_blk_matvec, extra=(u,)))

    def stats(self, Z: np.ndarray, q: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """One pass: ``V^T Z^T`` (M x k, ``Z`` k x N) and ``V^T diag(q) V`` (M x M, or ``None``
        when ``q`` is ``None``), from the rows where ``Z`` or ``q`` is nonzero only."""
        Z = np.atleast_2d(Z)
        qq = np.zeros(self.N) if q is None else q
        parts = self._run(_blk_stats, Z, qq)
        R = np.sum([p[0] for p in parts], axis=0)
        G = np.sum([p[1] for p in parts], axis=0) if q is not None else None
        if self.proj is not None:
            R = self.proj.T @ R
            G = None if G is None else self.proj.T @ G @ self.proj
        return R, G

    def rmatvec(self, z: np.ndarray) -> np.ndarray:
        """``V^T z`` (M,)."""
        return self.stats(z[None, :], None)[0][:, 0]

    def gram(self, q: np.ndarray) -> np.ndarray:
        """``V^T diag(q) V`` (M x M), over the rows with ``q != 0`` only."""
        G = self.stats(np.zeros((1, self.N)), q)[1]
        assert G is not None
        return G

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """``V[idx]`` (|idx| x M), gathered block by block."""
        mask = np.zeros(self.N, dtype=bool)
        mask[idx] = True
        parts = np.concatenate(self._run(_blk_rows, mask))
        if self.proj is not None:
            parts = parts @ self.proj
        order = np.argsort(np.argsort(idx))  # parts are in increasing row order
        return parts[order]


def _blk_rows_of(blk, ctx, sel=None):
    """The rows ``sel`` (all if ``None``) of the block's ``V`` (``ctx`` None) or of its kernel
    block ``C = k(X_blk, X_L)`` (``ctx = (kernel, landmarks)``)."""
    B = np.asarray(blk)
    if sel is not None:
        B = B[sel]
    if ctx is None:
        return B
    kern, basis = ctx
    if B.shape[0] == 0:
        return np.zeros((0, basis.shape[0]))
    return kern(B, basis)


def _blk_matvec(blk, ctx, u):
    return _blk_rows_of(blk, ctx) @ u


def _blk_stats(blk, ctx, Z, q):
    nz = np.flatnonzero(np.any(Z != 0, axis=0) | (q != 0))
    U = _blk_rows_of(blk, ctx, nz)
    R = U.T @ Z[:, nz].T
    qn = q[nz]
    on = np.flatnonzero(qn)
    Uq = U[on]
    return R, Uq.T @ (Uq * qn[on, None])


def _blk_rows(blk, ctx, mask):
    return _blk_rows_of(blk, ctx, mask)


class _SignedB:
    """``B = [s_1 V; ...; s_c V]`` (C-SVC: one copy with ``s = y``; epsilon-SVR: ``+V, -V``)
    in terms of the row products of :class:`_ChunkedV`: the copies share ``V``'s rows, so
    ``B^T a = V^T sum_c s_c a_c`` and ``sum_i q_i B_i B_i^T = V^T diag(sum_c q_c) V``."""

    def __init__(self, cv: _ChunkedV, signs: list[np.ndarray]) -> None:
        self.cv, self.signs, self.N = cv, signs, cv.N
        self.shape = (cv.N * len(signs), cv.M)

    def matvec(self, w):
        u = self.cv.matvec(w)
        return np.concatenate([s * u for s in self.signs])

    def rmatvec(self, a):
        a2 = a.reshape(len(self.signs), self.N)
        return self.cv.rmatvec(sum(s * ac for s, ac in zip(self.signs, a2, strict=True)))

    def gram(self, q):
        return self.cv.gram(q.reshape(len(self.signs), self.N).sum(axis=0))

    def _fold(self, a):
        a2 = a.reshape(len(self.signs), self.N)
        return sum(s * ac for s, ac in zip(self.signs, a2, strict=True))

    def stats(self, Z, q):
        """One pass over V: ``B^T Z^T`` (M x k, the rows of ``Z`` are n-vectors) and
        ``B^T diag(q) B``."""
        Zf = np.stack([self._fold(z) for z in np.atleast_2d(Z)])
        qf = q.reshape(len(self.signs), self.N).sum(axis=0)
        return self.cv.stats(Zf, qf)

    def rows(self, idx):
        rows = idx % self.N
        uniq, inv = np.unique(rows, return_inverse=True)
        R = self.cv.rows(uniq)[inv]
        sgn = np.concatenate(self.signs)[idx]
        return R * sgn[:, None]


def _chunked_newton(B: _SignedB, p, upper, lower, A, rhs, tol, max_iter, verbose):
    """The smoothing-Newton + working-set method of
    :func:`primaldual.backends.lowrank.solver._smooth_newton` with every product of ``B`` a
    chunked reduction (module comment above). Returns ``(a, lam, n_iter, status, info)``."""
    from .backends.lowrank.newton import exact_line_search
    from .backends.lowrank.solver import (
        IPM_WARM_MU,
        IPM_WARM_START,
        central_start,
        lowrank_qp_solve_in_context,
    )
    from .kernels.gram import one_blas_thread

    t_start = time.perf_counter()
    n, m = B.shape
    k = A.shape[0]
    c = upper - lower
    scale = float(np.max(np.abs(p), initial=0.0)) or 1.0
    w, lam = np.zeros(m), np.zeros(k)
    levels = [3.0 * scale * 0.1**j for j in range(3)]
    n_newton = 0
    r = p + B.matvec(w) - A.T @ lam
    for h in levels:
        g0 = None
        for _ in range(50):
            t = -r
            a = lower + c * np.clip(t / h, 0.0, 1.0)
            Jm = (t > 0) & (t < h)
            q = np.where(Jm, c / h, 0.0)
            AJ = A * q  # k x n, zero outside J
            # one pass over V: B^T a, B^T diag(q) B and B^T AJ^T (the step's products)
            R, G = B.stats(np.vstack([a[None, :], AJ]), q)
            gw = w - R[:, 0]
            gl = A @ a - rhs
            gn = max(float(np.max(np.abs(gw), initial=0.0)),
                     float(np.max(np.abs(gl), initial=0.0)))
            g0 = gn if g0 is None else g0
            if gn <= 1e-3 * max(g0, 1.0) or gn <= 1e-12 * (1.0 + float(np.max(np.abs(w)))):
                break
            H = np.empty((m + k, m + k))
            H[:m, :m] = G
            H[np.diag_indices(m)] += 1.0
            if k:
                X = -R[:, 1:]
                H[:m, m:] = X
                H[m:, :m] = X.T
                H[m:, m:] = AJ @ A.T
                H[m:, m:][np.diag_indices(k)] += 1e-12 * max(1.0, float(np.trace(H[:m, :m])) / m)
            step = -np.linalg.solve(H, np.concatenate([gw, gl]))
            dw, dl = step[:m], step[m:]
            dr = B.matvec(dw) - A.T @ dl
            s = exact_line_search(w, dw, rhs, dl, r, dr, lower, c, h)
            w, lam, r = w + s * dw, lam + s * dl, r + s * dr
            n_newton += 1
            if verbose:
                print(f"dask newton step {n_newton} (h {h:.1e}): gradient {gn:.2e}, step "
                      f"{s:.2f}, {int(Jm.sum())} rows in the band, {B.cv.passes} passes, "
                      f"{time.perf_counter() - t_start:.0f} s", flush=True)
        if verbose:
            print(f"dask newton h {h:.1e}: {n_newton} steps so far")
    W = np.abs(r) <= 1.5 * levels[-1]
    if k and W.sum() < m + k:
        W[np.argsort(np.abs(r))[: min(n, 2 * (m + k))]] = True
    at_hi = r < 0
    a_s = lower + c * np.clip(-r / levels[-1], 0.0, 1.0)
    eta_s = B.rmatvec(a_s)
    q_est = 0.5 * float(eta_s @ eta_s) + float(p @ a_s)
    thr = tol * max(1.0, scale)
    status, n_ipm, rounds, a = "max_iter", 0, 0, None
    while rounds < 10:
        rounds += 1
        Wi = np.flatnonzero(W)
        a = np.where(at_hi, upper, lower)
        a[Wi] = 0.0
        eta_fix = B.rmatvec(a)
        const = 0.5 * float(eta_fix @ eta_fix) + float(p @ a)
        tol_sub = max(1e-13, tol * min(1.0, max(1.0, abs(q_est)) / max(1.0, abs(q_est - const))))
        BW = B.rows(Wi)
        # the IPM's start from the smoothed point, as in the in-memory route (the same path)
        start = (central_start(r[Wi], lam, lower[Wi], upper[Wi], IPM_WARM_MU * levels[-1],
                                A[:, Wi], rhs - A @ a) if IPM_WARM_START else None)
        with one_blas_thread():
            sub = lowrank_qp_solve_in_context(BW, p[Wi] + BW @ eta_fix, upper[Wi], lower=lower[Wi],
                                    sign=A[:, Wi] if k else None,
                                    delta=rhs - A @ a if k else 0.0, diag=None, tol=tol_sub,
                                    max_iter=max_iter, verbose=False, method="ipm",
                                    ipm_start=start)
        n_ipm += sub.n_iter
        if sub.status == "infeasible":
            W[np.argsort(np.abs(r))[: min(n, max(4 * int(W.sum()), 4 * (m + k) + 16))]] = True
            continue
        if sub.status != "optimal":
            status = sub.status
            break
        a[Wi] = sub.alpha
        lam = sub.multipliers if k else lam
        eta_a = B.rmatvec(a)
        r = p + B.matvec(eta_a) - A.T @ lam
        q_a = 0.5 * float(eta_a @ eta_a) + float(p @ a)
        contrib = np.where(~W & (a <= lower), c * np.maximum(-r, 0.0), 0.0)
        contrib += np.where(~W & (a >= upper), c * np.maximum(r, 0.0), 0.0)
        budget = 0.1 * tol * max(1.0, abs(q_a))
        viol = contrib > thr * np.maximum(c, 1e-300)
        if contrib.sum() > budget:
            order = np.argsort(contrib)[::-1]
            rest = contrib.sum() - np.cumsum(contrib[order])
            viol[order[: int(np.searchsorted(-rest, -budget)) + 1]] = True
        if verbose:
            print(f"dask working set round {rounds}: |W| = {Wi.size}, violators {viol.sum()}")
        if not viol.any():
            status = "optimal"
            break
        W |= viol
    info = {"method": "newton (chunked)", "newton_steps": n_newton, "ipm_iterations": n_ipm,
            "working_set": int(W.sum()), "working_set_rounds": rounds}
    return a, lam, n_newton + n_ipm, status, info


def _fits_in_memory(nbytes: float) -> bool:
    """``persist='auto'``: keep ``V`` (``nbytes``) in memory when it takes at most 40% of the
    workers' summed memory limits (dask starts spilling at 60%), or, without a distributed
    client, at most 25% of this machine's available memory."""
    try:
        from dask.distributed import default_client

        workers = default_client().scheduler_info()["workers"].values()
        limits = [float(w.get("memory_limit") or 0.0) for w in workers]
        if limits and all(lim > 0 for lim in limits):
            return nbytes <= 0.4 * sum(limits)
    except (ImportError, ValueError, KeyError):
        pass
    try:
        import psutil
    except ImportError:  # dask without distributed (which brings psutil): no reading, keep V
        return True
    return nbytes <= 0.25 * float(psutil.virtual_memory().available)


@dataclass
class DaskLowRankFit:
    """What :func:`lowrank_svm_dask` returns: the model ``f(x) = v(x)^T eta + b`` and the
    certificate of the eta-problem it solved (recomputed with chunked products).

    Attributes
    ----------
    factor : LowRankFactor (Nystrom on the landmark rows; ``V`` holds only the landmarks' rows)
    eta : ndarray (M,)
    b : float
    alpha : ndarray (N,) or (2N,)  the dual variables (client memory, O(N))
    landmarks : ndarray (M,)  row indices of the landmarks
    result : LowRankResult  status, objectives, gap, KKT residuals of the eta-problem
    passes : int  chunked passes over V
    persisted : bool  whether V was kept in the cluster's memory (else recomputed per pass)
    """

    factor: LowRankFactor
    eta: np.ndarray
    b: float
    alpha: np.ndarray
    landmarks: np.ndarray
    result: Any
    passes: int
    persisted: bool = True


def lowrank_svm_dask(X: Any, y: Any, *, task: str = "classification", C: float = 1.0,
                     epsilon: float = 0.1, kernel: Any = "rbf", gamma: Any = "scale",
                     degree: int = 3, coef0: float = 0.0, rank: int = 200,
                     random_state: int | None = 0, tol: float = 1e-8, max_iter: int = 100,
                     persist: bool | str = "auto", verbose: bool = False) -> DaskLowRankFit:
    r"""Fit the low-rank C-SVC (``task="classification"``, ``y`` in {-1, +1}) or epsilon-SVR on a
    row-chunked ``dask.array`` X without gathering it.

    Landmarks: ``rank`` rows drawn uniformly (``np.random.default_rng(random_state)``, the draw
    of :func:`~primaldual.kernels.nystrom_factor`, so a numpy fit with the same seed uses the
    same rows) and fetched from their chunks; ``V = v(X)`` is formed chunk by chunk
    (``map_blocks``; ``persist=True`` keeps it in the cluster's memory; ``False`` keeps only X
    there and recomputes, at every pass, the kernel rows against the landmarks that the pass
    needs; ``"auto"``, the default, persists ``V`` when it takes at most 40% of the workers'
    summed memory limits). Each smoothing-Newton step makes two passes over the chunks: one
    for ``B dw`` and one for ``B^T a``, ``B^T diag(q) B`` and ``B^T A_J^T`` together. The
    eta-problem (docs/formulations.md 14)

    ``min_a 1/2 ||B^T a||^2 + p^T a  s.t.  A a = 0, 0 <= a <= C``

    (C-SVC: ``B = D_y V``, ``p = -1``, ``A = y^T``; epsilon-SVR: ``B = [V; -V]``,
    ``p = [eps - y; eps + y]``, ``A = [1^T, -1^T]``) is solved by smoothing Newton steps whose
    products are chunked reductions (``V w``, ``V^T z``, ``V^T diag(q) V``) and a working-set
    interior-point finish on the gathered rows ``V[W]``; the certificate (primal
    ``1/2||w||^2 + sum_i C hinge_i``, dual, gap, KKT residuals) is recomputed from the returned
    point with ``eta = B^T a`` and ``B eta``, chunked. ``f(x) = v(x)^T eta + b``, ``b = -lambda``.
    """
    import dask.array as da

    from .backends.lowrank.certify import certificate_from_products
    from .backends.lowrank.solver import LowRankResult
    from .kernels.factory import resolve_gamma

    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 1:
        raise ValueError(f"rank must be a positive integer, got {rank!r}")
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a positive finite float, got {C!r}")
    Xd = X if _is_dask(X) else da.from_array(np.asarray(X, dtype=float), chunks=(50_000, -1))
    if Xd.ndim != 2:
        raise ValueError(f"X must be 2-D, got {Xd.ndim} dimensions")
    Xd = Xd.rechunk({1: -1}).astype(np.float64)
    N = int(Xd.shape[0])
    yv = np.asarray(y.compute() if _is_dask(y) else y, dtype=float)
    if yv.shape != (N,):
        raise ValueError(f"y must have shape ({N},), got {yv.shape}")
    if rank > N:
        raise ValueError(f"rank must be <= N = {N}, got {rank}")
    if isinstance(gamma, str):
        if gamma == "scale":
            g = 1.0 / (Xd.shape[1] * float(Xd.var().compute()))
        else:
            g = resolve_gamma(gamma, np.zeros((1, Xd.shape[1])))
    else:
        g = gamma
    L = np.sort(np.random.default_rng(random_state).choice(N, size=rank, replace=False))
    XL = np.asarray(Xd[L].compute(), dtype=np.float64)
    kern = make_kernel(kernel, g, degree, coef0, XL)
    lf = nystrom_factor(kern, XL, XL.shape[0], landmarks=np.arange(XL.shape[0]))
    if persist == "auto":
        persist = _fits_in_memory(8.0 * N * lf.proj.shape[1])
    elif not isinstance(persist, bool):
        raise ValueError(f"persist must be True, False or 'auto', got {persist!r}")
    if verbose:
        print(f"dask low-rank fit: N = {N}, rank {lf.proj.shape[1]}, "
              f"{'V kept in the cluster' if persist else 'V recomputed from X at every pass'}")
    cv = _ChunkedV(Xd, lf, persist)
    if task == "classification":
        if not np.all(np.isin(yv, (-1.0, 1.0))):
            raise ValueError("y must contain only -1 and +1 for task='classification'")
        B = _SignedB(cv, [yv])
        p, A, nvar = -np.ones(N), yv[None, :], N
    else:
        B = _SignedB(cv, [np.ones(N), -np.ones(N)])
        p = np.concatenate([epsilon - yv, epsilon + yv])
        A, nvar = np.concatenate([np.ones(N), -np.ones(N)])[None, :], 2 * N
    upper, lower, rhs = np.full(nvar, float(C)), np.zeros(nvar), np.zeros(1)
    a, lam, n_iter, status, info = _chunked_newton(B, p, upper, lower, A, rhs, tol, max_iter,
                                                  verbose)
    eta = B.rmatvec(a)
    eta, qp, primal, dual, gap, kkt, _ = certificate_from_products(
        eta, B.matvec(eta), p, upper, lower, A, rhs, np.zeros(nvar), a, lam)
    rel = gap / max(1.0, abs(primal))
    if status == "optimal" and not (rel <= 10 * tol and kkt["primal_feasibility"] <= 1e-6):
        status = "max_iter"
    res = LowRankResult(alpha=a, eta=eta, b=float(-lam[0]), objective=qp,
                        primal_objective=primal, dual_objective=dual, gap=gap, relative_gap=rel,
                        kkt=kkt, n_iter=int(n_iter), status=status, multipliers=lam, info=info)
    # the factor's feature map on the landmarks (V holds the landmarks' rows only)
    factor = LowRankFactor(V=lf.V, rank=lf.rank, trace_error=float("nan"),
                           relative_error=float("nan"), method="nystrom", kernel=kern,
                           basis_index=L, basis=XL, proj=lf.proj)
    return DaskLowRankFit(factor, eta, float(-lam[0]), a, L, res, cv.passes, cv.persist)


# ----------------------------------------------------------------------------- estimators
def _fitted_names(d: dict) -> list[str]:
    return [k for k in d if (k.endswith("_") and not k.startswith("__"))
            or k == "_binary_classes"]


class DaskLowRankMixin:
    """``fit``/``predict`` of :class:`~primaldual.CSVC` and :class:`~primaldual.EpsilonSVR` on
    ``dask.array`` input: the low-rank route of :func:`lowrank_svm_dask` (``rank`` an integer;
    X never gathered), and ``predict``/``decision_function`` on a ``dask.array`` return a
    ``dask.array`` (chunk by chunk, for any fitted model). In-memory input goes to the usual
    fit unchanged."""

    def fit(self, X: Any, y: Any, sample_weight: Any = None, backend: str | None = None,
            form: str | None = None) -> Any:
        if not (_is_dask(X) or _is_dask(y)):
            return super().fit(X, y, sample_weight=sample_weight,  # type: ignore[misc]
                               backend=backend, form=form)
        before = dict(self.__dict__)
        for k in _fitted_names(before):  # nothing of an earlier fit survives
            del self.__dict__[k]
        try:
            self._fit_dask(X, y, sample_weight, backend, form)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.input_tags.sparse = True  # in-memory input (sparse too) goes to the shared fit
        return tags

    def _fit_dask(self, X: Any, y: Any, sample_weight: Any, backend: Any, form: Any) -> None:
        import dask.array as da

        from .certificate import Certificate

        p = self._validate_params()  # type: ignore[attr-defined]
        name = type(self).__name__
        rank = p.get("rank")
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)):
            raise ValueError(f"{name}.fit on a dask.array needs an integer rank (the number of "
                             f"landmarks M), got rank={rank!r}")
        if sample_weight is not None or p.get("class_weight") is not None:
            raise ValueError(f"{name}.fit on a dask.array: sample_weight/class_weight are not "
                             "supported (the dask route fits one C for every row)")
        if (backend or p["backend"]) not in ("auto", "lowrank") or (form or p["form"]) != "dual":
            raise ValueError(f"{name}.fit on a dask.array runs the low-rank dual "
                             "(backend 'auto' or 'lowrank', form 'dual')")
        if p.get("factor", "nystrom") != "nystrom" or p.get("rank_tol") is not None:
            raise ValueError(f"{name}.fit on a dask.array uses the uniform Nystrom factor "
                             "(factor='nystrom', rank_tol=None)")
        if not _is_dask(X):
            X = da.from_array(np.asarray(X, dtype=float), chunks=(50_000, -1))
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got {X.ndim} dimensions")
        yv = np.asarray(y.compute() if _is_dask(y) else y).ravel()
        task = getattr(self, "_task", "classification")
        kw = {"C": float(p["C"]), "kernel": p["kernel"], "gamma": p["gamma"],
              "degree": p["degree"], "coef0": p["coef0"], "rank": int(rank),
              "verbose": bool(p.get("verbose", False))}
        if task == "classification":
            classes = np.unique(yv)
            if classes.shape[0] != 2:
                raise ValueError(f"{name}.fit on a dask.array is binary: y has "
                                 f"{classes.shape[0]} classes")
            s = np.where(yv == classes[1], 1.0, -1.0)
            fit = lowrank_svm_dask(X, s, task="classification", **kw)
            self.classes_ = classes
        else:
            fit = lowrank_svm_dask(X, yv.astype(float), task="regression",
                                   epsilon=float(p["epsilon"]), **kw)
        r = fit.result
        cert = Certificate(float(r.primal_objective), float(r.dual_objective), float(r.gap),
                           float(r.relative_gap), dict(r.kkt), {}, r.status)
        cert.extra.update({"certifies": f"eta-problem (K ~= V V^T, nystrom rank "
                                        f"{fit.factor.rank}, dask: chunked products)",
                           "rank": int(fit.factor.rank), "backend": "lowrank",
                           "chunked passes over V": int(fit.passes), "b": float(fit.b),
                           "V kept in memory": bool(fit.persisted)})
        self.dask_fit_ = fit
        self.lowrank_factor_ = fit.factor
        self.eta_ = fit.eta
        self.b_ = float(fit.b)
        self.intercept_ = np.array([float(fit.b)])
        self.certificate_ = cert
        self.status_ = r.status
        self.backend_ = "lowrank"
        self.n_features_in_ = int(X.shape[1])
        if task == "regression":
            n = yv.shape[0]
            self.alpha_, self.alpha_star_ = fit.alpha[:n], fit.alpha[n:]

    def _dask_decision(self, X: Any) -> Any:
        """``f(x) = v(x)^T eta + b`` of a dask-fitted model (dask in, dask out)."""
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input")
        if _is_dask(X):
            return nystrom_map(X, self.lowrank_factor_) @ self.eta_ + self.b_
        return self.lowrank_factor_.transform(np.asarray(X, dtype=float)) @ self.eta_ + self.b_

    def _per_chunk(self, X: Any, method: str) -> Any:
        fn = getattr(super(), method)
        Xr = X.rechunk({1: -1})
        return Xr.map_blocks(lambda B: np.asarray(fn(B)), drop_axis=1,
                             dtype=np.float64 if method != "predict" else object)

    def predict(self, X: Any) -> Any:
        if getattr(self, "dask_fit_", None) is None:
            if _is_dask(X):
                out = self._per_chunk(X, "predict")
                return out.astype(self.classes_.dtype) if hasattr(self, "classes_") else \
                    out.astype(np.float64)
            return super().predict(X)  # type: ignore[misc]
        f = self._dask_decision(X)
        if getattr(self, "_task", "classification") != "classification":
            return f
        classes = self.classes_
        if _is_dask(f):
            return f.map_blocks(lambda v: classes[(v > 0).astype(int)], dtype=classes.dtype)
        return classes[(f > 0).astype(int)]


class DaskLowRankClassifierMixin(DaskLowRankMixin):
    """:class:`DaskLowRankMixin` plus ``decision_function`` on dask input / dask-fitted
    models (classifiers only: a regressor has none)."""

    def decision_function(self, X: Any) -> Any:
        if getattr(self, "dask_fit_", None) is None:
            if _is_dask(X):
                return self._per_chunk(X, "decision_function")
            return super().decision_function(X)  # type: ignore[misc]
        return self._dask_decision(X)
