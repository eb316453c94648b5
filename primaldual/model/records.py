"""The structure records that specialised backends read: :class:`BoxQP` and :class:`KKTSystem`.

The records only; :mod:`primaldual.model.detection` reads them from a Problem and
:mod:`primaldual.model.structure` (which re-exports both) caches them on the problem. The
records import nothing of the package, so the readers sit above them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class BoxQP:
    """``min 1/2 a^T Q a + p^T a`` s.t. ``0 <= a <= C`` and the equality rows.

    Attributes
    ----------
    Q : GramOperator
        ``D_s K D_s + diag`` with kernel, data rows and index map (for kernel columns on demand).
    p : ndarray
    C : ndarray
        Per-variable upper bounds ``C_j`` (LIBSVM's name and the estimators': C-SVC's
        ``C_i = C w_i``; ``np.inf`` allowed).
    equality : {"one", "none", "nu"}
    sign : ndarray
        Coefficients of the equality (``y``; ``[1, -1]`` blocks for SVR).
    delta : float
        Right-hand side of ``sign^T a = delta``.
    nu_total : float or None
        For ``equality="nu"``: ``1^T a = nu_total`` (the nu-SVC/nu-SVR sum constraint at equality).
    variable : str
        Name of the Problem's variable ``a``.
    sense_max : bool
        The Problem maximises ``-(1/2 a^T Q a + p^T a)``.
    multipliers : dict
        Role -> multiplier name in the Problem: ``"eq"``, ``"lower"``, ``"upper"``, ``"sum"``.
    variables : tuple of str or None
        If the Problem has two variables (``alpha``, ``alpha_star``) stacked into ``a``, their
        names; ``split`` is then the length of the first block (``None``: half of ``a``).
    split : int or None
    """

    Q: Any
    p: np.ndarray
    C: np.ndarray
    equality: str = "one"
    sign: np.ndarray | None = None
    delta: float = 0.0
    nu_total: float | None = None
    variable: str = "alpha"
    sense_max: bool = True
    multipliers: dict[str, str] = field(default_factory=dict)
    variables: tuple[str, ...] | None = None
    split: int | None = None
    sum_sense: str = ">="   # nu variants: 1^T a >= nu_total (nu-SVC) or <= (nu-SVR)
    #: extra Problem variables / multipliers that are functions of the solved ``a`` (e.g. the
    #: SVR dual's ``beta = alpha - alpha_star`` and its multiplier ``lambda = K beta``)
    derived: dict[str, Any] = field(default_factory=dict)
    derived_multipliers: dict[str, Any] = field(default_factory=dict)
    #: where the record comes from (e.g. ``"detected on 'C-SVC dual' (shape template)"``)
    origin: str = ""

    @functools.cached_property
    def n(self) -> int:
        """Variables (``len(p)``; a record's fields are not reassigned, so read once)."""
        return int(np.asarray(self.p).shape[0])

    def objective(self, a: np.ndarray) -> float:
        """``1/2 a^T Q a + p^T a`` (the minimisation form)."""
        return float(0.5 * a @ self.Q.matvec(a) + self.p @ a)

    @property
    def n_first(self) -> int:
        """Length of the first block when two variables are stacked."""
        return self.n // 2 if self.split is None else int(self.split)

    def split_values(self, a: np.ndarray) -> dict[str, np.ndarray]:
        """The Problem's variables (and the ``derived`` ones) from the stacked ``a``."""
        if self.variables is None:
            out = {self.variable: a}
        else:
            n1 = self.n_first
            out = {self.variables[0]: a[:n1], self.variables[1]: a[n1:]}
        for name, fn in self.derived.items():
            out[name] = fn(out)
        return out

    def multipliers_from_gradient(self, a: np.ndarray, grad: np.ndarray, nu_eq: float,
                                  nu_sum: float = 0.0) -> dict[str, np.ndarray]:
        """Multipliers in the Problem's names from the min-form stationarity
        ``Q a + p - nu_eq sign - nu_sum 1 - s + t = 0`` (``s`` for ``a >= 0``, ``t`` for
        ``a <= C``): ``s = max(0, r)``, ``t = max(0, -r)`` with ``r = grad - nu_eq sign -
        nu_sum``."""
        sign = np.ones(self.n) if self.sign is None else self.sign
        r = grad - nu_eq * sign - nu_sum
        out: dict[str, np.ndarray] = {}
        m = self.multipliers
        if "eq" in m:
            out[m["eq"]] = np.array([nu_eq])
        if "sum" in m:
            out[m["sum"]] = np.array([nu_sum if self.sum_sense == ">=" else -nu_sum])
        for name, fn in self.derived_multipliers.items():
            out[name] = fn(self.split_values(a))
        lower = np.maximum(0.0, r)
        upper = np.where(np.isfinite(self.C), np.maximum(0.0, -r), 0.0)
        if self.variables is None:
            if "lower" in m:
                out[m["lower"]] = lower
            if "upper" in m:
                out[m["upper"]] = upper
        else:
            n1 = self.n_first
            for role, arr in (("lower", lower), ("upper", upper)):
                if role in m:
                    out[m[role]] = arr[:n1]
                if role + "_star" in m:
                    out[m[role + "_star"]] = arr[n1:]
        return out


@dataclass
class KKTSystem:
    """The LS-SVM family's linear KKT system (docs/formulations.md 7-12).

    ``[[0, u^T], [u, H]] [b; a] = [0; d]`` with ``H = D_s (K + I/C) D_s + extra``, where
    ``u = s`` (classifier: ``y``; regression: ``1``), ``d`` the right-hand side (``1``, Fisher
    targets, or ``y``). ``bias=False`` drops the border (kernel ridge, PSVM with ``extra = s s^T``
    folded in by ``rank_one``).
    """

    kernel: Any
    X: np.ndarray
    C: float
    d: np.ndarray
    sign: np.ndarray | None = None
    bias: bool = True
    rank_one: bool = False     # PSVM: H = Q + y y^T + I/C
    variable: str = "alpha"
    multipliers: dict[str, str] = field(default_factory=dict)

    # ----- helpers (dense forms, for tests, small N and the KKT backend's adapter)
    @property
    def n(self) -> int:
        return int(np.asarray(self.d).shape[0])

    @property
    def signs(self) -> np.ndarray:
        """``s`` (all ones when ``sign`` is None)."""
        return np.ones(self.n) if self.sign is None else np.asarray(self.sign, dtype=float)

    def gram(self) -> np.ndarray:
        """``K`` (``X`` itself when ``kernel`` is None: a precomputed matrix)."""
        if self.kernel is None:
            return np.asarray(self.X, dtype=float)
        return np.asarray(self.kernel(self.X), dtype=float)

    def inv_C(self) -> np.ndarray:
        """``1/C_i`` per row (``C`` may be a scalar or a per-sample array; ``inf`` gives 0)."""
        C = np.broadcast_to(np.asarray(self.C, dtype=float), (self.n,))
        with np.errstate(divide="ignore"):
            return np.where(np.isinf(C), 0.0, 1.0 / C)

    def unsigned_matrix(self) -> np.ndarray:
        """``A = K (+ 1 1^T if rank_one) + diag(1/C)``, so that ``H = D_s A D_s``."""
        A = self.gram().copy()
        if self.rank_one:
            A += 1.0
        A[np.diag_indices_from(A)] += self.inv_C()
        return A

    def H(self) -> np.ndarray:
        """``H = D_s (K + I/C) D_s`` (plus ``s s^T`` for PSVM)."""
        s = self.signs
        return self.unsigned_matrix() * np.outer(s, s)

    def matrix(self) -> np.ndarray:
        """The dense KKT matrix: ``[[0, u^T], [u, H]]`` (``u = s``), or ``H`` without bias."""
        H = self.H()
        if not self.bias:
            return H
        n = self.n
        M = np.zeros((n + 1, n + 1))
        M[0, 1:] = self.signs
        M[1:, 0] = self.signs
        M[1:, 1:] = H
        return M

    def rhs(self) -> np.ndarray:
        """Right-hand side ``[0; d]`` (``d`` without bias)."""
        d = np.asarray(self.d, dtype=float)
        return np.concatenate([[0.0], d]) if self.bias else d.copy()

    def solve_dense(self) -> tuple[float, np.ndarray]:
        """Reference solve with a dense LU (small N only): returns ``(b, a)``, ``b = 0`` without
        bias."""
        z = np.linalg.solve(self.matrix(), self.rhs())
        return (float(z[0]), z[1:]) if self.bias else (0.0, z)

    def residual(self, b: float, a: np.ndarray) -> float:
        """Relative residual ``||M z - r|| / max(1, ||r||)`` of the dense system at ``(b, a)``."""
        z = np.concatenate([[b], a]) if self.bias else np.asarray(a, dtype=float)
        r = self.rhs()
        return float(np.linalg.norm(self.matrix() @ z - r) / max(1.0, np.linalg.norm(r)))
