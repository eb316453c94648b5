"""Nested Nystrom factors of growing rank on the same data (:class:`NystromGrowth`, what
``rank="auto"`` of the low-rank backend grows), and the large buffers it keeps (private
anonymous maps without transparent huge pages, prefaulted in one call)."""

from __future__ import annotations

import ctypes
import mmap
import numbers
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import scipy.linalg

from .factors import FactoredNystrom, LowRankFactor, _check_factor_args, _finish
from .functions import _GEMM_DIST_ERR, _PROFILE_TOL, RBF, Kernel, Precomputed, _sq_norms
from .gram import _n_threads, free_cpus

__all__ = ["NystromGrowth"]

#: Elements of one row block of :class:`NystromGrowth`'s fused growth pass (8 MB).
_GROW_CHUNK: int = 2**20
#: :class:`NystromGrowth` (``form_V=False``) computes the built-in RBF's new columns with
#: one GEMM and one compiled pass (:func:`primaldual.kernels.compiled.rbf_finish`: the
#: exponentials and the float32 copy in the same sweep) from this many entries ``N b`` on;
#: smaller blocks keep the numpy passes (no numba import for a small fit)
_FUSED_RBF_MIN: int = 2**20


#: buffers of at least this many bytes (:class:`NystromGrowth`) are private anonymous maps advised
#: against transparent huge pages: numpy advises its large arrays *for* huge pages, and where the
#: kernel compacts memory to find them (this project's VM) first touching the 2.56 GB of
#: ``N = 200,000 x 1600`` doubles took 7.2-7.7 s, against 1.1 s for 4 KiB pages
_SMALL_PAGES_MIN: int = 2**26


def _empty(shape: tuple[int, int], dtype: Any = np.float64, order: str = "C") -> np.ndarray:
    """``np.empty(shape, dtype, order)``; large arrays on a private anonymous map advised
    against transparent huge pages (``MADV_NOHUGEPAGE``: no compaction stalls on first touch;
    freed with the array)."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if nbytes < _SMALL_PAGES_MIN or not hasattr(mmap, "MAP_PRIVATE"):
        return np.empty(shape, dtype=dtype, order=order)  # type: ignore[call-overload]
    try:
        buf = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if hasattr(mmap, "MADV_NOHUGEPAGE"):
            buf.madvise(mmap.MADV_NOHUGEPAGE)
    except (OSError, ValueError, AttributeError):
        return np.empty(shape, dtype=dtype, order=order)  # type: ignore[call-overload]
    return np.frombuffer(buf, dtype=dtype).reshape(shape, order=order)  # type: ignore[call-overload]


#: ``madvise`` advice (Linux >= 5.14): populate the range's pages as for a write, in one call
_MADV_POPULATE_WRITE: int = 23
_LIBC: list = []  # [libc] once loaded (or [None] where it cannot be)


def _prefault(a: np.ndarray) -> None:
    """Populate the pages of the contiguous array ``a`` before it is written: one
    ``madvise(MADV_POPULATE_WRITE)`` call instead of one page fault per 4 KiB page on first
    touch (measured on this VM: 2.56 GB in 0.63 s against 1.05 s). Small arrays, other
    platforms and kernels without the advice: nothing (the first write faults them in as
    before); the values are never read."""
    if a.nbytes < _SMALL_PAGES_MIN or not sys.platform.startswith("linux") or not \
            (a.flags.c_contiguous or a.flags.f_contiguous):
        return
    if not _LIBC:
        try:
            lib = ctypes.CDLL(None, use_errno=True)
            lib.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            lib.madvise.restype = ctypes.c_int
            _LIBC.append(lib)
        except (OSError, AttributeError):  # pragma: no cover - no libc symbols
            _LIBC.append(None)
    lib = _LIBC[0]
    if lib is None:  # pragma: no cover
        return
    start = a.ctypes.data // mmap.PAGESIZE * mmap.PAGESIZE
    lib.madvise(start, a.ctypes.data + a.nbytes - start, _MADV_POPULATE_WRITE)  # -1: ignored


class NystromGrowth:
    """Nested Nystrom factors of growing rank on the same data (``rank="auto"``).

    Landmarks are added in blocks; the factor of the first ``m`` landmarks ``L`` is the uniform
    Nystrom factor ``K ~= K_NL K_LL^+ K_LN = V V^T`` built block by block (a block Cholesky
    with eigen-truncated pivots): for new landmarks ``A`` the residual columns
    ``R = K_NA - V V_A^T`` and the Schur complement ``S = K_AA - V_A V_A^T = Q D Q^T`` give
    ``V <- [V, R Q_+ D_+^{-1/2}]`` (eigenvalues ``<= m eps max(D)`` dropped), so the old columns
    are kept, a model ``f(x) = v(x)^T eta`` of the smaller rank is reproduced exactly by
    ``[eta; 0]``, and growing costs ``O(N m b)`` for a block of ``b``, not ``O(N m^2)``.
    The feature map ``v(z) = proj^T k(X_L, z)`` (``proj`` block upper triangular) gives
    ``v(x_i) = V[i]`` on training rows, as :func:`nystrom_factor`.

    ``K - V V^T`` is positive semi-definite for a PSD kernel (each block removes the
    orthogonal projection of the residual onto the kept directions), so ``trace_error`` is the
    nuclear norm of the approximation error, as for the other factors.
    """

    def __init__(self, kernel: Kernel, X: Any,
                 random_state: int | np.random.Generator | None = None,
                 capacity: int | None = None, form_V: bool = True,
                 float32_copy: bool = False) -> None:
        kernel, X, N = _check_factor_args(kernel, X, None)
        if isinstance(kernel, Precomputed):
            raise ValueError("NystromGrowth needs a kernel on feature vectors, not a Gram matrix")
        self.kernel, self.X, self.N = kernel, X, N
        self._rng = np.random.default_rng(random_state)
        self.order = self._rng.permutation(N)
        self.n_landmarks = 0
        #: ``form_V=False``: keep the kernel columns ``C = k(X, X_L)`` instead of ``V = C P``
        #: (:class:`FactoredNystrom`); growing then costs ``O(N b d)`` kernel evaluations and
        #: ``O(b B M)`` for ``P``, no ``O(N M b)`` product with the old factor
        self.form_V = bool(form_V)
        width = max(1, min(N, capacity or 64))
        # V (or C) lives in a column-major buffer of ``capacity`` columns: growing writes new
        # columns only (no copy; untouched columns cost no memory), V is a contiguous view
        self._buf = _empty((N, width), order="F")
        self.V = self._buf[:, :0]
        #: ``float32_copy`` (with ``form_V=False``): a row-major float32 copy of ``C``
        #: (:attr:`C32`), written block by block with ``C``
        self.C32: np.ndarray | None = (_empty((N, width), dtype=np.float32)
                                       if float32_copy and not self.form_V else None)
        self.proj = np.zeros((0, 0))
        self.trace_K = float(np.sum(kernel.diag(X)))
        self._scale = float(np.max(kernel.diag(X))) if N else 1.0
        self._sq = 0.0  # sum of V**2 (trace(V V^T)), accumulated as columns are added
        #: the residual diagonal ``diag(K - V V^T)`` (>= 0 up to rounding), updated per block
        #: (``None`` with ``form_V=False``: it would need ``V``)
        self.resid = np.array(kernel.diag(X), dtype=float) if self.form_V else None
        self._xsq: np.ndarray | None = None  # |x_i|^2, computed once for the fused RBF pass

    @property
    def C(self) -> np.ndarray:
        """``k(X, X_L)`` of the current landmarks (``form_V=False`` only)."""
        if self.form_V:
            raise AttributeError("C is kept with form_V=False only")
        return self._buf[:, :self.n_landmarks]

    def factor(self, rank: int, prefer: Any = None, sampling: str = "uniform") -> LowRankFactor:
        """The factor of the first ``rank`` landmarks (grown from the current one; a smaller
        ``rank`` than the current raises ``ValueError``: the factor only grows).

        ``prefer`` (row indices): the new landmarks are drawn uniformly from these rows first
        (e.g. the current support vectors, where the solution needs the kernel approximated),
        then from the rest of the random order. ``V`` may have fewer columns than ``rank``
        (directions the landmarks do not add are dropped).
        """
        if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or not \
                self.n_landmarks <= rank <= self.N or rank < 1:
            raise ValueError(f"rank must be an integer in [max(1, {self.n_landmarks}), "
                             f"{self.N}], got {rank!r}")
        have = self.n_landmarks
        if sampling not in ("uniform", "residual"):
            raise ValueError(f"sampling must be 'uniform' or 'residual', got {sampling!r}")
        if sampling == "residual" and not self.form_V:
            raise ValueError("sampling='residual' needs the residual diagonal (form_V=True)")
        if rank > have:
            if prefer is not None:
                rest = self.order[have:]
                want = np.zeros(self.N, dtype=bool)
                want[np.asarray(prefer, dtype=np.intp)] = True
                first = want[rest]
                head, tail = rest[first], rest[~first]
                if sampling == "residual" and head.size:
                    # without replacement, with probability proportional to the residual
                    # diagonal (block randomly pivoted Cholesky): Gumbel top-k of log(resid)
                    w = np.maximum(self.resid[head], 0.0)
                    pos = np.flatnonzero(w > 0)
                    need = min(rank - have, pos.size)
                    if need:
                        g = np.log(w[pos]) + self._rng.gumbel(size=pos.size)
                        top = pos[np.argpartition(-g, need - 1)[:need]] if need < pos.size \
                            else pos
                        pick = np.zeros(head.size, dtype=bool)
                        pick[top] = True
                        head = np.concatenate([head[pick], head[~pick]])
                self.order[have:] = np.concatenate([head, tail])
            self._add(self.order[have:rank])
        L = self.order[:rank]
        if not self.form_V:
            return FactoredNystrom(self.C, self.kernel, self.trace_K, L, self.X[L], self.proj)
        return _finish(self.V, self.kernel, self.trace_K, "nystrom",
                       L, self.X, self.proj, approx=self._sq)

    def _add_columns(self, A: np.ndarray) -> None:
        """``form_V=False``: the kernel columns ``k(X, X_A)`` of the new landmarks (and their
        float32 copy), then ``P``'s new block from the Schur complement
        ``S = K_AA - V_A V_A^T`` with ``V_A = C_A P`` (``b x B`` times ``B x M``)."""
        n_old, b = self.n_landmarks, A.size
        if n_old + b > self._buf.shape[1]:  # grow the buffers (doubling)
            width = min(self.N, max(2 * self._buf.shape[1], n_old + b))
            buf = _empty((self.N, width), order="F")
            buf[:, :n_old] = self._buf[:, :n_old]
            self._buf = buf
            if self.C32 is not None:
                c32 = _empty((self.N, width), dtype=np.float32)
                c32[:, :n_old] = self.C32[:, :n_old]
                self.C32 = c32
        XA = self.X[A]
        m = self.proj.shape[1]
        VA = self._buf[A, :n_old] @ self.proj if m else np.zeros((b, 0))
        Qd = self._schur_root(XA, VA)
        out = self._buf[:, n_old:n_old + b]
        _prefault(out)  # the new columns: one contiguous block of the column-major buffer
        if n_old == 0 and self.C32 is not None:
            _prefault(self.C32)  # row-major: the first block already touches nearly every page
        o32 = None if self.C32 is None else self.C32[:, n_old:n_old + b]
        writes = bool(getattr(self.kernel, "_writes_out", False))
        threads = (min(_n_threads(self.N * b * max(1, self.X.shape[1]), _GROW_CHUNK),
                       free_cpus()) if writes else 1)
        # column slices of at most 256 landmarks, their number set by b alone (the values do
        # not depend on how many CPUs were free)
        edges = np.linspace(0, b, -(-b // 256) + 1).astype(int)
        cols = list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))
        fused = writes and self._fused_rbf(XA, b)
        if fused:
            # the built-in RBF: per slice of landmarks, the cross products z_j . x_i (one
            # GEMM, written in place as above), then one compiled sweep computes the kernel
            # values from them and writes their float32 copy (row-major) from cache: no
            # elementwise numpy passes, no second sweep over the 8 N b bytes for the copy
            from .compiled import rbf_finish

            a2 = _sq_norms(XA)
            xsq = self._xsq
            assert xsq is not None  # set by _fused_rbf
            gamma = float(self.kernel.gamma)  # type: ignore[attr-defined]
            none32 = np.empty((0, 0), dtype=np.float32)

            def fill_fused(t: int) -> None:
                for j0, j1 in cols[t::threads]:
                    G = out[:, j0:j1].T
                    np.dot(XA[j0:j1], self.X.T, out=G)
                    rbf_finish(G, a2[j0:j1], xsq, gamma,
                               none32 if o32 is None else o32[:, j0:j1], o32 is not None)

            if threads == 1:
                fill_fused(0)
            else:
                with ThreadPoolExecutor(threads) as ex:
                    list(ex.map(fill_fused, range(threads)))
        elif writes:
            # the new columns are one column-major block: its transpose, k(X_A, X), is
            # C-contiguous and the kernel writes it in place (no row-block temporaries; at
            # N = 200,000 the copies and their page faults cost twice the kernel itself); the
            # threads take column slices (each C-contiguous too), then row blocks of the copy
            # slices of at most 256 landmarks, their number set by b alone: the values (GEMM
            # shapes) do not depend on how many CPUs were free (narrower slices were slower:
            # 64 columns 4.5-5.0 s against 3.2-3.6 s for the 1600 columns at N = 200,000)

            def fill(t: int) -> None:
                for j0, j1 in cols[t::threads]:
                    self.kernel._fill(XA[j0:j1], self.X, out[:, j0:j1].T)

            # the float32 copy transposes column-major into row-major: blocks of 256 rows stay
            # in cache (measured at N = 200,000: 1.3 s against 2.3 s with 8 MB blocks)
            step = 256
            starts = list(range(0, self.N, step))

            def copy32(t: int) -> None:
                for i0 in starts[t::threads]:
                    o32[i0:i0 + step] = out[i0:i0 + step]  # type: ignore[index]

            if threads == 1:
                fill(0)
                if o32 is not None:
                    copy32(0)
            else:
                with ThreadPoolExecutor(threads) as ex:
                    list(ex.map(fill, range(threads)))
                    if o32 is not None:
                        list(ex.map(copy32, range(threads)))
        else:  # a user's callable kernel: row blocks, one thread
            step = max(1, _GROW_CHUNK // max(1, b))
            for i0 in range(0, self.N, step):
                i1 = min(self.N, i0 + step)
                R = self.kernel(self.X[i0:i1], XA)  # rows x b
                out[i0:i1] = R
                if o32 is not None:
                    o32[i0:i1] = R
        self._update_proj(VA, Qd, b)

    def _fused_rbf(self, XA: np.ndarray, b: int) -> bool:
        """Whether :meth:`_add_columns` takes the compiled RBF pass: the built-in
        :class:`~primaldual.kernels.RBF` (not a subclass) on dense float64 rows, a block of at
        least :data:`_FUSED_RBF_MIN` entries, and the GEMM form of ``||x - z||^2`` accurate
        enough (the test of :meth:`RBF._block`; otherwise its exact differences are used).
        Decided by the data and ``b`` alone (never by the load)."""
        X = self.X
        if type(self.kernel) is not RBF or not isinstance(X, np.ndarray) or \
                X.dtype != np.float64 or not X.flags.c_contiguous or X.ndim != 2 or \
                self.N * b < _FUSED_RBF_MIN:
            return False
        if self._xsq is None:
            self._xsq = _sq_norms(X)
        a2 = _sq_norms(XA)
        if not (self._xsq.size and a2.size):
            return False
        err = _GEMM_DIST_ERR * self.kernel.gamma * (float(a2.max()) + float(self._xsq.max()))
        return bool(err <= _PROFILE_TOL)

    def _schur_root(self, XA: np.ndarray, VA: np.ndarray) -> np.ndarray:
        """``Qd`` with ``S = K_AA - V_A V_A^T ~= Qd^-T Qd^-1`` on the kept directions (``b x k``;
        eigenvalues ``<= 10 b eps max`` dropped)."""
        b = XA.shape[0]
        S = self.kernel(XA, XA)
        if VA.shape[1]:
            S -= VA @ VA.T
        S = 0.5 * (S + S.T)
        d, Q = scipy.linalg.eigh(S)
        floor = max(b, 1) * np.finfo(float).eps * max(float(d.max(initial=0.0)), self._scale)
        keep = d > 10 * floor
        Qd = None
        if keep.all():
            # no direction dropped: S = U^T U and Qd = U^{-1} (the same V V^T as any square
            # root of S; every eigenvalue of S is above the truncation floor)
            try:
                Ut = scipy.linalg.cholesky(S, lower=False, check_finite=False)
                Qd = scipy.linalg.solve_triangular(Ut, np.eye(b), lower=False,
                                                   check_finite=False)
            except np.linalg.LinAlgError:
                Qd = None
        if Qd is None:  # eigen-truncated pivots: V_A = R Q_+ D_+^{-1/2}
            Qd = Q[:, keep] / np.sqrt(d[keep])  # b x k
        return Qd

    def _update_proj(self, VA: np.ndarray, Qd: np.ndarray, b: int) -> None:
        # v_new(z) = Qd^T (k(A, z) - VA v_old(z)),  v_old(z) = proj_old^T k(L_old, z)
        m, k = self.proj.shape[1], Qd.shape[1]
        n_old = self.proj.shape[0]
        P = np.zeros((n_old + b, m + k))
        P[:n_old, :m] = self.proj
        P[n_old:, m:] = Qd
        if m:
            P[:n_old, m:] = -self.proj @ (VA.T @ Qd)
        self.proj = P
        self.n_landmarks += b

    def _add(self, A: np.ndarray) -> None:
        if not self.form_V:
            self._add_columns(A)
            return
        m, b = self.proj.shape[1], A.size
        if m + b > self._buf.shape[1]:  # grow the buffer (doubling)
            buf = _empty((self.N, min(self.N, max(2 * self._buf.shape[1], m + b))), order="F")
            buf[:, :m] = self.V
            self._buf = buf
        XA = self.X[A]
        VA = np.ascontiguousarray(self.V[A])  # b x m
        # the Schur complement S = K_AA - V_A V_A^T first (b x b), then its inverse square
        # root Qd (S = Qd^-T Qd^-1 on the kept directions): the new columns are R Qd with the
        # residual columns R = K_NA - V V_A^T, formed row block by row block in one fused pass
        # (kernel block, one GEMM against the old factor, one GEMM by Qd) -- BLAS-3 only, the
        # N x b residual never exists in full
        Qd = self._schur_root(XA, VA)
        k = Qd.shape[1]
        out = self._buf[:, m:m + k]
        step = max(1, _GROW_CHUNK // max(1, b, m))
        starts = list(range(0, self.N, step))
        # built-in kernels evaluate a block with numpy calls that release the GIL (as the
        # GEMMs do), so row blocks run in parallel threads (each BLAS call on one thread);
        # a user's callable kernel is never called from two threads at once
        # (only on CPUs that other processes leave free: free_cpus)
        threads = (min(_n_threads(self.N * max(b, m), _GROW_CHUNK), free_cpus())
                   if getattr(self.kernel, "_writes_out", False) else 1)
        VAt = VA.T

        def part(t: int) -> float:
            acc = 0.0
            for i0 in starts[t::threads]:
                i1 = min(self.N, i0 + step)
                R = self.kernel(self.X[i0:i1], XA)  # rows x b
                if m:
                    R -= self.V[i0:i1] @ VAt
                Vn = R @ Qd
                rs = np.einsum("ij,ij->i", Vn, Vn)
                acc += float(rs.sum())
                self.resid[i0:i1] -= rs  # type: ignore[index]
                out[i0:i1] = Vn
            return acc

        if threads == 1:
            sq = part(0)
        else:
            with ThreadPoolExecutor(threads) as ex:
                sq = sum(ex.map(part, range(threads)))  # fixed order of the partial sums
        self._sq += sq
        self.V = self._buf[:, :m + k]
        self._update_proj(VA, Qd, b)
