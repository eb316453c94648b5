r"""Kernel PCA and kernel PLS as primal-dual problems (Zhang 8.2.1 and 8.2.4; Suykens' LS-SVM
view of PCA).

Kernel PCA, the LS-SVM form (``phi_c(x) = phi(x) - mean_j phi(x_j)``, the centred feature map)::

    max_{w, e}  C/2 sum_i e_i^2 - 1/2 ||w||^2
    s.t.        e_i = <w, phi_c(x_i)>                 [alpha_i free]

Lagrangian ``L = C/2 sum e_i^2 - 1/2 ||w||^2 + sum_i alpha_i (<w, phi_c(x_i)> - e_i)``
(a maximisation: ``f + sum multiplier * h``, docs/formulations.md conventions). Stationarity::

    dL/de_i = C e_i - alpha_i = 0          =>  alpha_i = C e_i
    dL/dw   = -w + sum_i alpha_i phi_c(x_i) = 0  =>  w = sum_i alpha_i phi_c(x_i)

and eliminating ``w`` and ``e`` (``e = Omega_c alpha`` with the centred kernel matrix
``Omega_c = H K H``, ``H = I - 1 1^T / N``) leaves the eigenproblem::

    Omega_c alpha = lambda alpha,      lambda = 1 / C.

Every eigen-pair is a stationary point (the primal is not concave: a saddle, not a maximum, is
what the texts call the solution); the primal objective there is ``(lambda/2)||alpha||^2 (C lambda
- 1) = 0`` and the variance of the scores is ``||e||^2 = lambda^2 ||alpha||^2``. With
``||w||^2 = alpha^T Omega_c alpha = 1`` (``alpha = u / sqrt(lambda)``, ``u`` a unit eigenvector,
scikit-learn's normalisation) the scores ``e_i = <w, phi_c(x_i)> = sqrt(lambda) u_i`` have
``||e||^2 = lambda``. The certificate is the eigen-residual ``||Omega_c u - lambda u||`` and the
explained variance ``lambda_k / trace(Omega_c)``.

Kernel PLS: :mod:`primaldual.decomposition.kpls`.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..certificate import Certificate
from ..engine import atomic_fit
from ..exceptions import NumericalTroubleError
from ..kernels import Kernel, make_kernel, nystrom_factor
from ..model import Data, FeatureVariable, Problem, Variable, norm2, phi, sum_squares

__all__ = ["KernelPCA", "KernelPCADerivation", "CenteredKernel", "center_gram"]

#: largest N for which ``eigen_solver="auto"`` uses a dense ``eigh`` of the N x N matrix
DENSE_LIMIT = 3000


# ----------------------------------------------------------------------------- centring
def center_gram(K: np.ndarray, K_fit: np.ndarray | None = None) -> np.ndarray:
    """Centre a kernel block in feature space (scikit-learn's ``KernelCenterer``).

    ``K`` is ``k(A, X)`` (n_A x N) for training rows ``X``; ``K_fit`` the training Gram
    ``k(X, X)`` (``None``: ``K`` is the training Gram itself). Returns
    ``<phi(a) - m, phi(x_j) - m>`` with ``m = mean_j phi(x_j)``::

        K_c = K - 1_A m_fit^T - m_A 1^T + mean(K_fit)
    """
    K = np.asarray(K, dtype=float)
    Kf = K if K_fit is None else np.asarray(K_fit, dtype=float)
    col = Kf.mean(axis=0)
    row = K.mean(axis=1)
    return K - col[None, :] - row[:, None] + col.mean()


class CenteredKernel:
    """The centred kernel ``k_c(a, b) = <phi(a) - m, phi(b) - m>`` of ``kernel`` with respect to
    the training rows ``X`` (``m = mean_j phi(x_j)``); used as the metric of the kernel-PCA
    primal's feature-space variable."""

    def __init__(self, kernel: Kernel, X: np.ndarray) -> None:
        self.kernel, self.X = kernel, np.asarray(X, dtype=float)
        self._K = np.asarray(kernel(self.X), dtype=float)
        self._col = self._K.mean(axis=0)
        self._mean = float(self._col.mean())

    def __call__(self, A: Any, B: Any = None) -> np.ndarray:
        A = np.asarray(A, dtype=float)
        B = A if B is None else np.asarray(B, dtype=float)
        mA = A is self.X or (A.shape == self.X.shape and np.array_equal(A, self.X))
        mB = B is self.X or (B.shape == self.X.shape and np.array_equal(B, self.X))
        if mA and mB:
            return self._K - self._col[None, :] - self._col[:, None] + self._mean
        rA = self._col if mA else np.asarray(self.kernel(A, self.X)).mean(axis=1)
        rB = self._col if mB else np.asarray(self.kernel(B, self.X)).mean(axis=1)
        return np.asarray(self.kernel(A, B)) - rA[:, None] - rB[None, :] + self._mean

    def _fill(self, A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:
        """Block filler used by :func:`primaldual.kernels.kernel_matvec`."""
        out[...] = self(A, B)

    def diag(self, A: Any) -> np.ndarray:
        A = np.asarray(A, dtype=float)
        return np.array([self(A[i:i + 1])[0, 0] for i in range(A.shape[0])])

    def __repr__(self) -> str:
        return f"centred {self.kernel!r}"


def _kernel_from(est: Any, X: np.ndarray, default_gamma: Any = "auto") -> Kernel:
    gamma = getattr(est, "gamma", None)
    return make_kernel(est.kernel, default_gamma if gamma is None else gamma,
                       getattr(est, "degree", 3), getattr(est, "coef0", 1.0), X)


def _check_n_components(n: Any, name: str = "n_components") -> None:
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1):
        raise ValueError(f"{name} must be a positive integer or None, got {n!r}")


def _svd_flip_columns(U: np.ndarray) -> np.ndarray:
    """Deterministic signs: the largest-magnitude entry of every column positive (as
    scikit-learn's ``svd_flip``)."""
    if U.size == 0:
        return U
    idx = np.argmax(np.abs(U), axis=0)
    signs = np.sign(U[idx, np.arange(U.shape[1])])
    signs[signs == 0] = 1.0
    return U * signs


# ----------------------------------------------------------------------------- derivation
@dataclass
class KernelPCADerivation:
    """The kernel-PCA dual: the derivation from the LS-SVM primal to ``Omega_c alpha = lambda
    alpha``, printable (``str``), as LaTeX (``to_latex``, ``_repr_latex_``) and solvable.

    Attributes
    ----------
    primal : Problem
        The LS-SVM primal (``C = 1/lambda`` of the component it was built for).
    omega : ndarray (N, N)
        The centred kernel matrix ``Omega_c = H K H``.
    """

    primal: Problem
    omega: np.ndarray
    steps: list[tuple[str, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        L = self.primal.lagrangian()
        kkt = self.primal.kkt()
        stat = [c for c in kkt.conditions if c.kind == "stationarity"]
        self.steps = [
            ("primal (LS-SVM form of PCA)", str(self.primal), self.primal.to_latex()),
            ("Lagrangian", str(L), L.to_latex()),
            ("stationarity", "\n".join(c.txt for c in stat),
             r" \\ ".join(c.tex for c in stat)),
            ("eliminate w and e",
             "w = Σ_j α_j φ_c(x_j)  ⇒  e_i = ⟨w, φ_c(x_i)⟩ = Σ_j Ω_c,ij α_j;   α = C e\n"
             "⇒  Ω_c α = (1/C) α",
             r"w = \sum_j \alpha_j \phi_c(x_j) \;\Rightarrow\; e = \Omega_c \alpha,\quad "
             r"\alpha = C e \;\Rightarrow\; \Omega_c \alpha = \tfrac{1}{C} \alpha"),
            ("dual: the eigenproblem",
             "Ω_c α = λ α,   λ = 1/C,   Ω_c = H K H,  H = I - 1 1ᵀ/N\n"
             "normalisation ‖w‖² = αᵀ Ω_c α = 1 (α = u/√λ); scores e_i = √λ u_i, ‖e‖² = λ",
             r"\Omega_c \alpha = \lambda \alpha,\quad \lambda = \tfrac{1}{C},\quad "
             r"\Omega_c = H K H,\ H = I - \tfrac{1}{N} \mathbf{1}\mathbf{1}^T;\quad "
             r"\|w\|^2 = \alpha^T \Omega_c \alpha = 1"),
        ]

    def __str__(self) -> str:
        return "\n\n".join(f"({k}) {t}:\n    " + txt.replace("\n", "\n    ")
                           for k, (t, txt, _) in enumerate(self.steps, 1))

    def to_latex(self) -> str:
        return "\n\n".join(rf"\textbf{{({k}) {t}}}" + "\n\\[\n" + tex + "\n\\]"
                           for k, (t, _, tex) in enumerate(self.steps, 1))

    def _repr_latex_(self) -> str:
        return "\n\n".join(f"**({k}) {t}**\n\n$$\n{tex}\n$$"
                           for k, (t, _, tex) in enumerate(self.steps, 1))

    def solve(self, n_components: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The leading eigen-pairs ``(lambda, U)`` of ``Omega_c`` (dense, descending)."""
        lam, U = np.linalg.eigh(0.5 * (self.omega + self.omega.T))
        lam, U = lam[::-1], U[:, ::-1]
        k = lam.shape[0] if n_components is None else n_components
        return lam[:k], U[:, :k]

    def residual(self, lam: float, alpha: np.ndarray) -> float:
        """``||Omega_c alpha - lambda alpha|| / (|lambda| ||alpha||)``."""
        a = np.asarray(alpha, dtype=float)
        den = max(abs(lam), 1e-300) * max(float(np.linalg.norm(a)), 1e-300)
        return float(np.linalg.norm(self.omega @ a - lam * a) / den)


# ----------------------------------------------------------------------------- kernel PCA
def zero_eigenvalue_threshold(top: float, n: int) -> float:
    """Eigenvalues ``<= max(n eps, 1e-12) top`` of an ``n x n`` PSD matrix are zero: numpy's
    ``matrix_rank`` rule, and at least scikit-learn's (``_check_psd_eigenvalues``: positive
    eigenvalues below ``1e-12`` times the largest are set to 0)."""
    return max(float(n) * float(np.finfo(float).eps), 1e-12) * max(float(top), 0.0)


def _deflated_top(A: np.ndarray, U: np.ndarray, lam: np.ndarray) -> float:
    """``lambda_max(A - U diag(lam) U^T)``: the largest eigenvalue the returned pairs omit
    (``-inf`` when they span the whole space). Dense ``eigvalsh`` up to 400 rows, else
    Lanczos (``eigsh``) on the deflated operator."""
    n, k = A.shape[0], U.shape[1]
    if k >= n:
        return -np.inf
    if n <= 400:
        D = A - (U * lam) @ U.T
        return float(np.linalg.eigvalsh(0.5 * (D + D.T))[-1])
    op = LinearOperator((n, n), matvec=lambda v: A @ v - U @ (lam * (U.T @ v)), dtype=float)
    try:
        v0 = np.random.RandomState(0).uniform(-1, 1, n)
        return float(eigsh(op, 1, which="LA", tol=1e-10, v0=v0,
                           return_eigenvectors=False)[0])
    except (ArpackError, ArpackNoConvergence):
        return float("inf")


class KernelPCA(TransformerMixin, BaseEstimator):
    r"""Kernel PCA as the LS-SVM primal-dual problem (Zhang 8.2.1; module docstring).

    The components are the leading eigenvectors of the centred kernel matrix
    ``Omega_c alpha = lambda alpha``; scikit-learn's :class:`~sklearn.decomposition.KernelPCA`
    conventions (eigenvalues of ``Omega_c`` itself, not divided by N; unit eigenvectors;
    ``transform(X) = Omega_c(X, X_fit) U Lambda^{-1/2}``; ``svd_flip`` signs).

    Parameters
    ----------
    n_components : int or None
        Number of components (``None``: every component with a positive eigenvalue).
    kernel : str, Kernel or callable, default "linear"
    gamma : float, "scale", "auto" or None
        Kernel width; ``None`` is ``1/n_features`` (scikit-learn's KernelPCA default).
    degree : int, default 3
    coef0 : float, default 1.0
    alpha : float, default 1.0
        Ridge of the pre-image map (``fit_inverse_transform``).
    fit_inverse_transform : bool, default False
        Learn the pre-image map by kernel ridge regression from the scores back to ``X``
        (as scikit-learn: the same kernel on the score space; ``O(N^3)``).
    eigen_solver : {"auto", "dense", "arpack", "randomized"}
        ``"auto"``: exact kernel: dense ``eigh`` for ``N <= 3000``, Lanczos
        (``scipy.sparse.linalg.eigsh``) above; with ``rank``: Lanczos on the ``M x M`` factor
        covariance when ``n_components < M/2``, else its dense ``eigh``.
    tol : float, default 0 (ARPACK's machine precision)
    max_iter : int or None
        ARPACK iterations.
    rank : int or None
        Nystrom factor ``K ~= V V^T`` with ``rank`` landmarks (large N): kernel PCA becomes the
        PCA of the centred features ``V - mean(V)``, never forming the N x N matrix.
    landmarks : {"uniform", "kmeans++"} or indices
    random_state : int or None
        Seeds ARPACK's start vector, the randomized solver and the landmarks.

    Attributes
    ----------
    eigenvalues_ : ndarray (n_components,)
        ``lambda_k`` (descending).
    eigenvectors_ : ndarray (N, n_components)
        Unit eigenvectors ``u_k`` of ``Omega_c`` (scikit-learn's name).
    dual_coef_ : ndarray (N, n_components)
        ``alpha_k = u_k / sqrt(lambda_k)``, so ``w_k = sum_i alpha_ik phi_c(x_i)`` has unit norm.
    explained_variance_ratio_ : ndarray
        ``lambda_k / trace(Omega_c)``.
    certificate_ : Certificate
        ``primal_objective = sum_k u_k^T Omega_c u_k`` (the variance the returned vectors
        capture, recomputed from them), ``dual_objective = sum_k lambda_k`` (the claimed
        eigenvalues); ``kkt``: ``eigen_residual`` (largest ``||Omega_c u - lambda u|| /
        lambda_1``), ``orthonormality`` (``max|U^T U - I|``) and ``spectrum_order`` (how far
        the largest omitted eigenvalue, by Lanczos on the deflated matrix, exceeds the
        smallest kept, over ``lambda_1``): "optimal" means the leading eigenpairs.
    """

    def __init__(self, n_components: int | None = None, kernel: Any = "linear",
                 gamma: Any = None, degree: int = 3, coef0: float = 1.0, alpha: float = 1.0,
                 fit_inverse_transform: bool = False, eigen_solver: str = "auto",
                 tol: float = 0.0, max_iter: int | None = None, rank: int | None = None,
                 landmarks: Any = "uniform", random_state: Any = None) -> None:
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.alpha = alpha
        self.fit_inverse_transform = fit_inverse_transform
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.rank = rank
        self.landmarks = landmarks
        self.random_state = random_state

    # ----- problem objects
    def primal(self, X: Any, y: Any = None, C: float | None = None) -> Problem:
        """The LS-SVM primal ``max C/2 sum e_i^2 - 1/2 ||w||^2  s.t.  e_i = <w, phi_c(x_i)>``.

        ``C`` defaults to ``1/lambda_1`` (the leading component's stationary point).
        """
        X = validate_data(self, X, dtype=np.float64, reset=False) if hasattr(
            self, "n_features_in_") else np.asarray(X, dtype=float)
        kernel = _kernel_from(self, X)
        ck = CenteredKernel(kernel, X)
        if C is None:
            lam = float(scipy.linalg.eigvalsh(ck(X), subset_by_index=[X.shape[0] - 1,
                                                                      X.shape[0] - 1])[0])
            C = 1.0 / lam if lam > 0 else 1.0
        w = FeatureVariable("w", ck, X)
        e = Variable("e", X.shape[0])
        return Problem(0.5 * (Data("C", float(C)) * sum_squares(e)) - 0.5 * norm2(w),
                       [(w @ phi(X) == e).named("alpha")], "max",
                       "kernel PCA primal (LS-SVM form; φ(x_i) centred)", variables=[e, w])

    def dual(self, X: Any, y: Any = None) -> KernelPCADerivation:
        """The derivation ending in ``Omega_c alpha = lambda alpha`` (a
        :class:`KernelPCADerivation`: ``str``, ``to_latex``, ``solve``, ``residual``)."""
        P = self.primal(X)
        X = np.asarray(X, dtype=float)
        return KernelPCADerivation(P, CenteredKernel(_kernel_from(self, X), X)(X))

    def lagrangian(self, X: Any, y: Any = None):
        """The Lagrangian of :meth:`primal`."""
        return self.primal(X).lagrangian()

    def kkt(self, X: Any, y: Any = None):
        """The KKT (stationarity) conditions of :meth:`primal`."""
        return self.primal(X).kkt()

    def check(self, X: Any, n_components: int = 3, tol: float = 1e-8) -> Certificate:
        """Verify the derivation numerically on ``X``: for each of the leading components the
        eigen-pair ``(lambda, alpha = u/sqrt(lambda))`` with ``C = 1/lambda`` must satisfy every
        KKT condition of :meth:`primal` (residuals from the project's KKT objects) and the
        primal value must be 0. Returns a :class:`Certificate` whose ``status`` is
        ``"optimal"`` when every residual is below ``tol`` (relative), ``"failed"`` otherwise.
        """
        X = np.asarray(X, dtype=float)
        D = self.dual(X)
        lam, U = D.solve(n_components)
        kkt_max: dict[str, float] = {}
        pvals, dvals = [], []
        for k in range(lam.shape[0]):
            if lam[k] <= 0:
                continue
            a = U[:, k] / np.sqrt(lam[k])
            P = self.primal(X, C=1.0 / lam[k])
            point = {"w": a, "e": D.omega @ a}
            res = P.kkt().max_residuals(point, {"alpha": a})
            res["eigen_residual"] = D.residual(lam[k], a)
            scale = max(1.0, float(np.max(np.abs(a))))
            for key, v in res.items():
                v = v if key == "eigen_residual" else v / scale
                kkt_max[key] = max(kkt_max.get(key, 0.0), v)
            pvals.append(P.evaluate(point))
            dvals.append(float(point["e"] @ point["e"]) - lam[k])
        P_sum, D_sum = float(np.sum(np.abs(pvals))), float(np.sum(np.abs(dvals)))
        ok = max(kkt_max.values(), default=0.0) <= tol and P_sum <= tol * max(1.0, lam[0])
        cert = Certificate(P_sum, 0.0, P_sum, P_sum / max(1.0, float(lam[0])), kkt_max, {},
                           "optimal" if ok else "failed")
        cert.extra.update({"components": int(len(pvals)), "|‖e‖² - λ| (sum)": D_sum})
        return cert

    # ----- fitting
    def _check_params(self) -> None:
        _check_n_components(self.n_components)
        if self.eigen_solver not in ("auto", "dense", "arpack", "randomized"):
            raise ValueError("eigen_solver must be one of 'auto', 'dense', 'arpack', "
                             f"'randomized', got {self.eigen_solver!r}")
        if self.rank is not None and (isinstance(self.rank, bool) or not isinstance(
                self.rank, (int, np.integer)) or self.rank < 1):
            raise ValueError(f"rank must be a positive integer or None, got {self.rank!r}")
        if not (isinstance(self.alpha, (int, float)) and self.alpha >= 0):
            raise ValueError(f"alpha must be a number >= 0, got {self.alpha!r}")
        if self.fit_inverse_transform and self.kernel == "precomputed":
            raise ValueError("fit_inverse_transform: cannot learn pre-images with a "
                             "precomputed kernel")

    def _eig(self, A: Any, n: int, N: int, solver: str) -> tuple[np.ndarray, np.ndarray]:
        """Leading ``n`` eigen-pairs of the symmetric PSD ``A`` (matrix or operator)."""
        if solver == "dense":
            lam, U = scipy.linalg.eigh(A, subset_by_index=(N - n, N - 1))
        elif solver == "arpack":
            rng = np.random.RandomState(self.random_state)
            v0 = rng.uniform(-1, 1, N)
            try:
                lam, U = eigsh(A, n, which="LA", tol=self.tol, maxiter=self.max_iter, v0=v0)
            except (ArpackError, ArpackNoConvergence) as exc:
                # e.g. constant data (a zero centred kernel): ARPACK cannot build its Krylov
                # basis; the dense solver is exact there (or the error says what to do)
                if N > 4 * DENSE_LIMIT or not isinstance(A, np.ndarray):
                    raise NumericalTroubleError(
                        f"kernel PCA: ARPACK failed ({type(exc).__name__}: {exc}); the centred "
                        "kernel matrix may be (nearly) zero (constant data) or its leading "
                        "eigenvalues clustered; try eigen_solver='dense' or 'randomized'"
                    ) from exc
                lam, U = scipy.linalg.eigh(A, subset_by_index=(N - n, N - 1))
        else:
            from sklearn.utils.extmath import randomized_svd
            _, s, Vt = randomized_svd(A, n, n_iter=7, random_state=self.random_state)
            U = Vt.T
            lam = np.einsum("ij,ij->j", U, A @ U)  # Rayleigh quotients (signs kept)
        return np.asarray(lam, dtype=float), np.asarray(U, dtype=float)

    @atomic_fit
    def fit(self, X: Any, y: Any = None) -> KernelPCA:
        """Solve ``Omega_c alpha = lambda alpha`` for the leading components and certify."""
        self._check_params()
        t0 = time.perf_counter()
        X = validate_data(self, X, dtype=np.float64)
        N = X.shape[0]
        self.kernel_ = _kernel_from(self, X)
        self.X_fit_ = X
        n = N if self.n_components is None else min(N, int(self.n_components))
        if self.rank is not None:
            self._fit_factor(X, n)
        else:
            self._fit_exact(X, n)
        lam = self.eigenvalues_
        pos = lam > 0
        self.dual_coef_ = np.zeros_like(self.eigenvectors_)
        self.dual_coef_[:, pos] = self.eigenvectors_[:, pos] / np.sqrt(lam[pos])
        self.explained_variance_ratio_ = lam / self.trace_ if self.trace_ > 0 else lam * 0.0
        self.certificate_.extra.update({"time [s]": time.perf_counter() - t0})
        if self.fit_inverse_transform:
            Z = self.eigenvectors_ * np.sqrt(np.maximum(lam, 0.0))
            Kz = np.asarray(self.kernel_(Z), dtype=float)
            Kz.flat[:: Z.shape[0] + 1] += self.alpha
            self.inverse_dual_coef_ = scipy.linalg.solve(Kz, X, assume_a="pos")
            self.X_transformed_fit_ = Z
        return self

    def _finish_eig(self, lam: np.ndarray, U: np.ndarray) -> None:
        top = float(np.max(np.abs(lam), initial=0.0))
        if np.any(lam < -1e-5 * max(top, 1e-300)):
            warnings.warn("kernel PCA: the centred kernel matrix has clearly negative "
                          f"eigenvalues (smallest {lam.min():.3g}); set to 0 (indefinite kernel)",
                          UserWarning, stacklevel=3)
        # eigenvalues at the level of rounding (duplicated rows: 7e-32) are zero, as
        # scikit-learn's: a component of a numerically zero eigenvalue is noise, and its
        # 1/sqrt(lambda) would blow transform up
        lam = np.where(lam <= zero_eigenvalue_threshold(top, U.shape[0]), 0.0, lam)
        U = _svd_flip_columns(U)
        order = np.argsort(lam, kind="stable")[::-1]
        lam, U = lam[order], U[:, order]
        if self.n_components is None:
            keep = lam > 0
            lam, U = lam[keep], U[:, keep]
        self.eigenvalues_, self.eigenvectors_ = lam, U

    def _fit_exact(self, X: np.ndarray, n: int) -> None:
        N = X.shape[0]
        K = np.asarray(self.kernel_(X), dtype=float)
        self._fit_col_mean = K.mean(axis=0)
        Kc = center_gram(K)
        del K
        solver = self.eigen_solver
        if solver == "auto":
            solver = "dense" if (N <= DENSE_LIMIT or n >= N - 1) else "arpack"
        if solver == "arpack" and n >= N:
            solver = "dense"
        lam, U = self._eig(Kc, n, N, solver)
        self._finish_eig(lam, U)
        self.trace_ = float(np.trace(Kc))
        self.solver_ = solver
        self.lowrank_factor_ = None
        KU = Kc @ self.eigenvectors_
        R = KU - self.eigenvectors_ * self.eigenvalues_
        self._certify(R, solver, KU, _deflated_top(Kc, self.eigenvectors_, self.eigenvalues_))

    def _fit_factor(self, X: np.ndarray, n: int) -> None:
        N = X.shape[0]
        if self.rank > N:
            raise ValueError(f"rank must be <= N = {N}, got {self.rank}")
        F = nystrom_factor(self.kernel_, X, int(self.rank), landmarks=self.landmarks,
                           random_state=self.random_state)
        V = F.V
        mean = V.mean(axis=0)
        M = V.shape[1]
        n = min(n, M)
        # Omega_c ~= V_c V_c^T with V_c = V - 1 m^T; its nonzero eigen-pairs come from the M x M
        # covariance V_c^T V_c = V^T V - N m m^T (V_c is never formed)
        Cov = V.T @ V - N * np.outer(mean, mean)
        Cov = 0.5 * (Cov + Cov.T)
        solver = self.eigen_solver
        if solver == "auto":
            solver = "arpack" if 2 * n < M else "dense"
        if solver == "arpack" and n >= M:
            solver = "dense"
        s, Q = self._eig(Cov, n, M, solver)
        s = np.where(s <= zero_eigenvalue_threshold(float(np.max(np.abs(s), initial=0.0)), M),
                     0.0, s)
        order = np.argsort(s, kind="stable")[::-1]
        s, Q = s[order], Q[:, order]
        if self.n_components is None:
            keep = s > 0
            s, Q = s[keep], Q[:, keep]
        E = V @ Q - mean @ Q  # scores e_k = V_c q_k  (w_k = q_k, unit norm in the factor space)
        with np.errstate(divide="ignore", invalid="ignore"):
            U = np.where(s > 0, E / np.sqrt(s), 0.0)
        del E
        signs = np.sign(U[np.argmax(np.abs(U), axis=0), np.arange(U.shape[1])]) \
            if U.size else np.ones(0)
        signs[signs == 0] = 1.0
        U, Q = U * signs, Q * signs
        self.eigenvalues_, self.eigenvectors_ = s, U
        self.components_factor_ = Q
        self.factor_mean_ = mean
        self.lowrank_factor_ = F
        self.trace_ = float(np.trace(Cov))
        self.solver_ = f"nystrom+{solver}"
        VtU = V.T @ U - np.outer(mean, U.sum(axis=0))  # V_c^T U
        KU = V @ VtU - np.outer(np.ones(N), mean @ VtU)  # V_c V_c^T U
        R = KU - U * s  # V_c V_c^T U - U Lambda
        self._certify(R, self.solver_, KU, _deflated_top(Cov, Q, s))
        self.certificate_.extra.update({"rank": int(M),
                                        "factor relative trace error": F.relative_error})

    def _certify(self, R: np.ndarray, solver: str, KU: np.ndarray, rest: float) -> None:
        """Primal: the variance the returned vectors capture, ``sum_k u_k^T Omega_c u_k``
        (from the point, ``KU = Omega_c U``); dual: the claimed ``sum_k lambda_k``; KKT: the
        eigen-residual, orthonormality and ``spectrum_order = max(0, lambda_max(Omega_c -
        U Lambda U^T) - min_k lambda_k) / lambda_1`` (Lanczos on the deflated matrix): the
        pairs are the *leading* ones only if no omitted eigenvalue exceeds the smallest kept
        (Ky Fan: then ``sum_k lambda_k`` is the maximum of ``trace(W^T Omega_c W)`` over
        orthonormal ``W``). The relative gap uses ``lambda_1`` as its unit."""
        lam, U = self.eigenvalues_, self.eigenvectors_
        top = max(float(lam[0]) if lam.size else 0.0, 1e-300)
        res = float(np.max(np.linalg.norm(R, axis=0), initial=0.0)) / top
        orth = float(np.max(np.abs(U.T @ U - np.eye(U.shape[1])), initial=0.0))
        e2 = float(np.sum(lam))
        captured = float(np.sum(U * KU))
        gap = e2 - captured
        low = float(np.min(lam)) if lam.size else 0.0
        order = max(0.0, rest - low) / top if np.isfinite(rest) else float("inf")
        kkt = {"eigen_residual": res, "orthonormality": orth, "spectrum_order": order}
        ok = res <= 1e-6 and orth <= 1e-6 and order <= 1e-6 and abs(gap) / top <= 1e-6
        cert = Certificate(captured, e2, gap, gap / top, kkt, {},
                           "optimal" if ok else "inaccurate")
        ratio = float(np.sum(lam) / self.trace_) if self.trace_ > 0 else 0.0
        cert.extra.update({"explained variance": ratio, "components": int(lam.shape[0]),
                           "solver": solver})
        self.certificate_ = cert

    # ----- transforms
    def _centred_cross(self, X: np.ndarray) -> np.ndarray:
        Kx = np.asarray(self.kernel_(X, self.X_fit_), dtype=float)
        if not hasattr(self, "_fit_col_mean"):
            self._fit_col_mean = np.asarray(self.kernel_(self.X_fit_), dtype=float).mean(axis=0)
        col = self._fit_col_mean
        return Kx - col[None, :] - Kx.mean(axis=1)[:, None] + col.mean()

    def transform(self, X: Any) -> np.ndarray:
        """Scores ``e_k(x) = <w_k, phi_c(x)> = Omega_c(x, X_fit) alpha_k``."""
        check_is_fitted(self, "eigenvalues_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.lowrank_factor_ is not None:
            return (self.lowrank_factor_.transform(X) - self.factor_mean_) @ \
                self.components_factor_
        return self._centred_cross(X) @ self.dual_coef_

    def fit_transform(self, X: Any, y: Any = None, **params: Any) -> np.ndarray:
        """Fit, then the training scores ``sqrt(lambda_k) u_k``."""
        self.fit(X)
        return self.eigenvectors_ * np.sqrt(self.eigenvalues_)

    def inverse_transform(self, X: Any) -> np.ndarray:
        """Pre-images by kernel ridge regression from scores to inputs (scikit-learn's route):
        ``x_hat(z) = k(z, Z_fit) (k(Z_fit, Z_fit) + alpha I)^{-1} X_fit``."""
        if not self.fit_inverse_transform:
            raise ValueError("inverse_transform needs fit_inverse_transform=True at fit time")
        check_is_fitted(self, "inverse_dual_coef_")
        Z = np.asarray(X, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != self.X_transformed_fit_.shape[1]:
            raise ValueError(f"X must have shape (n, {self.X_transformed_fit_.shape[1]}) "
                             f"(scores), got {Z.shape}")
        return np.asarray(self.kernel_(Z, self.X_transformed_fit_)) @ self.inverse_dual_coef_
