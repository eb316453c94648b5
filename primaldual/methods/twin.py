"""The twin SVM (Jayadeva, Khemchandani & Chandra, "Twin support vector machines for pattern
classification", IEEE TPAMI 29(5), 2007) as one estimator: :class:`TwinSVC`.

Two non-parallel planes, each close to one class and at distance at least 1 from the other:
with ``A`` the rows of class ``+1`` and ``B`` those of class ``-1``,

    plane +1:  min 1/2 ||A w + b||² + ε/2 (||w||² + b²) + c1 Σ ξ   s.t.  -(B w + b) + ξ ≥ 1, ξ ≥ 0
    plane -1:  min 1/2 ||B w + b||² + ε/2 (||w||² + b²) + c2 Σ ξ   s.t.   (A w + b) + ξ ≥ 1, ξ ≥ 0

(the ``ε`` term only when ``eps > 0``, the paper's regulariser). A new point goes to the class
of the nearer plane, ``|xᵀw_k + b_k| / ||w_k||``. With a kernel the planes are the paper's
kernel-generated surfaces ``K(x, Cᵀ) u_k + b_k = 0`` over all training rows ``C``, at distance
``|K(x, Cᵀ) u_k + b_k| / sqrt(u_kᵀ K(C, Cᵀ) u_k)`` (the norm of the surface's normal
``Σ_j u_j φ(c_j)`` in feature space); their ``HᵀH`` is singular (``|C| + 1`` unknowns, fewer
rows), so ``eps > 0`` is needed there.

Each plane is a :class:`~primaldual.methods.variant.Variant` of a factory spec: the primal
above, derived by :func:`~primaldual.model.dualize.dualize` (``w`` and ``b`` eliminated jointly,
``Q = G (HᵀH + ε I)⁻¹ Gᵀ`` as the linear kernel on the columns of ``L⁻¹ Gᵀ``), solved by the
backend its structure selects (SMO, or the linear route from 2,000 rows), recovered and
certified as every Variant is. ``planes_`` holds the two fitted Variants, ``certificates_``
their certificates.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..exceptions import DualizationError
from ..kernels import kernel_matvec
from ..kernels.functions import Linear
from ..model import Data, Problem, Variable, sum_squares, vsum
from ..model.atoms import norm2
from .variant import Variant

__all__ = ["TwinPlane", "TwinSVC", "twin_plane_spec"]


def twin_plane_spec(label: float) -> TwinPlane:
    """The factory spec ``spec(X, y, kernel, c, eps)`` of the plane close to class ``label``
    (``y`` in ``{-1, +1}``): its data-embedded primal and its decision on the training rows
    (``x_iᵀw + b``, or ``K(x_i, Cᵀ) u + b`` with a kernel)."""
    return TwinPlane(float(label))


class _SharedGram:
    """The training rows' kernel matrix and its two class blocks, computed by the first plane
    and taken by the second (``K(C, Cᵀ)`` is the same for both: at N = 10,000 each is 0.8 GB
    and two passes of ``exp``); :meth:`clear` after the fit (a fitted plane pickles without
    them)."""

    def __init__(self) -> None:
        self.key: tuple | None = None
        self.K: np.ndarray | None = None
        self.rows: dict[float, np.ndarray] = {}

    def get(self, X: np.ndarray, y: np.ndarray, kernel: Any) -> tuple[np.ndarray, dict]:
        """``(K, {label: K[y == label]})`` for these rows, labels and kernel."""
        k = self.key
        if not (k is not None and k[2] == kernel and k[0].shape == X.shape
                and k[1].shape == y.shape and np.array_equal(k[0], X)
                and np.array_equal(k[1], y)):
            self.clear()
            self.K = kernel(X)
            self.key = (X, y, kernel)
        assert self.K is not None
        return self.K, self.rows

    def clear(self) -> None:
        self.key, self.K, self.rows = None, None, {}

    def __getstate__(self) -> dict:
        return {"key": None, "K": None, "rows": {}}


class TwinPlane:
    """One plane of the twin SVM as a factory spec (a class, so that a fitted plane pickles).
    ``gram``: the kernel matrix shared with the other plane of the same fit."""

    def __init__(self, label: float, gram: _SharedGram | None = None) -> None:
        self.label = label
        self.gram = _SharedGram() if gram is None else gram

    def __repr__(self) -> str:
        return f"TwinPlane({self.label:+.0f})"

    def __call__(self, X: np.ndarray, y: np.ndarray, kernel: Any, c: float, eps: float
                 ) -> tuple[Problem, Any]:
        label = self.label
        near, far = X[y == label], X[y != label]
        d = X.shape[1]
        linear = isinstance(kernel, Linear)
        if linear:
            Dn, Df, Dx = near, far, X
            w = Variable("w", d, index="d")
        else:      # the kernel-generated surface over all training rows C = X
            # K(C, Cᵀ) once for both planes: the rows of each class are its rows
            K, rows = self.gram.get(X, y, kernel)
            for lab in (label, -label):
                if lab not in rows:
                    rows[lab] = K[y == lab]
            Dn, Df, Dx = rows[label], rows[-label], K
            # its own letter: j runs over B's rows
            w = Variable("u", X.shape[0], index="M", letter="k")
        nm, fm = ("A", "B") if label > 0 else ("B", "A")
        # each class's rows their own index set and letter (A's rows i = 1..N_A, B's rows
        # j = 1..N_B): the objective's sum and the constraints' rows are different rows
        letter = {"A": "i", "B": "j"}
        b = Variable("b")
        xi = Variable("xi", far.shape[0], index=f"N_{fm}", letter=letter[fm])
        dn, df = (nm, fm) if linear else (f"K_{nm}", f"K_{fm}")
        own = Data(dn, Dn, index=f"N_{nm}", letter=letter[nm]) @ w + b
        other = Data(df, Df, index=f"N_{fm}", letter=letter[fm]) @ w + b
        obj = 0.5 * sum_squares(own) + Data("c_1" if label > 0 else "c_2", c) * vsum(xi)
        if eps > 0:
            obj = obj + 0.5 * Data("eps", eps, txt="ε", tex=r"\varepsilon") * (norm2(w)
                                                                             + norm2(b))
        # the other class at distance >= 1 on its side: -(B w + b) >= 1 - ξ for plane +1
        margin = -other if label > 0 else other
        P = Problem(obj, [(margin + xi >= 1).named("alpha"), (xi >= 0).named("mu")], "min",
                    f"twin SVM plane {'+1' if label > 0 else '-1'} primal")
        return P, Data("X" if linear else "K", Dx) @ w + b


class TwinSVC(ClassifierMixin, BaseEstimator):
    """The twin SVM classifier: two planes, each fitted as a derived
    :class:`~primaldual.methods.variant.Variant`, and the nearest-plane rule.

    Parameters
    ----------
    c1, c2 : float
        The weights of the slacks of plane ``+1`` (``classes_[1]``'s plane, the slacks of the
        other class's rows) and of plane ``-1``.
    kernel, gamma, degree, coef0 : as scikit-learn's ``SVC`` (default ``"linear"``: the
        paper's planes); any other kernel fits kernel-generated surfaces and needs ``eps > 0``.
    eps : float
        The regulariser ``ε/2 (||w||² + b²)`` of both planes (the paper's ``ε I``); ``0``
        leaves the primal as printed, which a singular ``HᵀH`` refuses.
    backend, tol, max_iter : as :class:`~primaldual.methods.variant.Variant` (per plane).

    Attributes
    ----------
    classes_ : the two labels (``classes_[1]`` is the ``+1`` class).
    planes_ : tuple of two fitted Variants (plane ``+1``, plane ``-1``); each has its
        ``derivation_``, ``certificate_``, ``point_``, ``backend_``.
    certificates_ : their certificates.
    n_iter_ : ndarray (2,), the solver iterations of each plane.
    coef_, intercept_ : ``(2, d)`` and ``(2,)``, the planes ``w_k, b_k`` (linear kernel only
        for ``coef_``).
    """

    def __init__(self, c1: float = 1.0, c2: float = 1.0, *, kernel: Any = "linear",
                 gamma: Any = "scale", degree: int = 3, coef0: float = 0.0, eps: float = 0.0,
                 backend: str = "auto", tol: float = 1e-3, max_iter: int = -1) -> None:
        self.c1 = c1
        self.c2 = c2
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.eps = eps
        self.backend = backend
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False      # two planes: two classes
        tags.input_tags.sparse = False
        return tags

    def _plane(self, label: float, c: float, gram: _SharedGram) -> Variant:
        return Variant(TwinPlane(label, gram), task="regression", kernel=self.kernel,
                       gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                       backend=self.backend, tol=self.tol, max_iter=self.max_iter,
                       c=c, eps=self.eps)

    def fit(self, X: Any, y: Any) -> TwinSVC:
        """Fit both planes (each: derive, solve the derived dual, recover, certify)."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        r = self.classes_.shape[0]
        if r > 2:
            raise ValueError(f"Only binary classification is supported by TwinSVC (two "
                             f"planes); y has {r} classes")
        if r < 2:
            raise ValueError(f"TwinSVC needs 2 classes in y, got {r} class")
        if isinstance(self.eps, (bool, np.bool_)) or not np.isfinite(float(self.eps)) \
                or float(self.eps) < 0:
            raise ValueError(f"eps must be a finite number >= 0, got {self.eps!r}")
        y_enc = np.where(y == self.classes_[1], 1.0, -1.0)
        planes = []
        gram = _SharedGram()
        try:
            for label, c in ((1.0, self.c1), (-1.0, self.c2)):
                try:
                    planes.append(self._plane(label, c, gram).fit(X, y_enc))
                except DualizationError as exc:
                    raise DualizationError(f"TwinSVC, plane {label:+.0f}: {exc}; pass eps > 0 "
                                           "(TwinSVC(eps=1e-4, ...))") from exc
            self._set_planes(planes, X, gram.K)
        finally:
            gram.clear()
        return self

    def _set_planes(self, planes: list[Variant], X: np.ndarray, K: np.ndarray | None) -> None:
        """The fitted attributes from the two planes; ``K``: the training rows' kernel
        matrix the planes were derived on (``None`` for the linear planes)."""
        self.planes_ = tuple(planes)
        self.certificates_ = tuple(p.certificate_ for p in planes)
        self.n_iter_ = np.array([p.n_iter_ for p in planes])
        self.intercept_ = np.array([float(p.point_["b"][0]) for p in planes])
        name = "w" if isinstance(planes[0].kernel_, Linear) else "u"
        if name == "w":
            self.coef_ = np.vstack([p.point_["w"] for p in planes])
            self._norms = np.linalg.norm(self.coef_, axis=1)
        else:
            # ||Σ_j u_j φ(c_j)|| = sqrt(uᵀ K(C, Cᵀ) u): with the planes' kernel matrix one
            # product per plane, else one chunked kernel product
            us = [np.asarray(p.point_["u"], dtype=float) for p in planes]
            self._norms = np.array([np.sqrt(max(0.0, float(u @ (
                K @ u if K is not None else kernel_matvec(planes[0].kernel_, X, u, Z=X)))))
                for u in us])
        if not np.all(self._norms > 0):
            raise ValueError("TwinSVC: a fitted plane has w = 0 (no direction); the classes "
                             "may not be separable by these planes at these c1, c2")

    def distances(self, X: Any) -> np.ndarray:
        """``|f_k(x)| / ||w_k||`` to each plane, shape ``(n, 2)`` (column 0: plane ``+1``)."""
        check_is_fitted(self, "planes_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        F = np.column_stack([p.predict(X) for p in self.planes_])
        return np.abs(F) / self._norms

    def decision_function(self, X: Any) -> np.ndarray:
        """Distance to plane ``-1`` minus distance to plane ``+1``: positive on
        ``classes_[1]``'s side."""
        D = self.distances(X)
        return D[:, 1] - D[:, 0]

    def predict(self, X: Any) -> np.ndarray:
        """The class of the nearer plane (ties go to ``classes_[1]``)."""
        side = self.decision_function(X) >= 0
        return self.classes_[side.astype(int)]
