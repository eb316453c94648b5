"""The ``Variant`` shapes of the oracle fuzz (benchmarks/fuzz_oracle.py, docs/reliability.md).

Each shape is a factory spec ``spec(X, y, kernel, **params) -> (Problem, decision)`` whose
``oracle_shape`` attribute names its primal for the independent oracle
(:mod:`primaldual._oracle.variant`: the predictor's primal with optimal slacks against a CVXPY
solve of the same primal): C-SVC with uneven margins and class costs, L2 (squared) slacks,
the one-class SVM, SVDD's ball, a universum (extra rows held near the decision boundary),
RankSVM over preference pairs and the epsilon-SVR. Together they cover the dual shapes the
library routes a ``Variant`` to: a box QP with one equality (SMO), a box QP without one
(RankSVM), a box QP with its sum fixed (one-class, SVDD), unbounded multipliers with a diagonal
(L2 slacks), two blocks (SVR, universum).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .model import Data, FeatureVariable, Problem, Variable, norm2, phi, sum_squares, vsum

__all__ = ["VARIANT_SHAPES", "variant_case"]


def _shape(name: str):
    def mark(fn):
        fn.oracle_shape = name
        return fn
    return mark


@_shape("uneven")
def uneven_svc(X, y, kernel, C, tau, c_neg):
    """C-SVC with uneven margins ``tau`` for the negative class and class costs ``C``,
    ``c_neg C``: ``y_i f_i >= m_i - xi_i``."""
    n = X.shape[0]
    w, b, xi = FeatureVariable("w", kernel, X), Variable("b"), Variable("xi", n)
    m = np.where(y > 0, 1.0, tau)
    Ci = np.where(y > 0, C, c_neg * C)
    f = w @ phi(X) + b
    P = Problem(0.5 * norm2(w) + vsum(Data("Ci", Ci) * xi),
                [(Data("y", y) * f >= Data("m", m) - xi).named("alpha"),
                 (xi >= 0).named("mu")], "min", "uneven-margin SVC")
    return P, f


@_shape("l2")
def l2_slack_svc(X, y, kernel, C):
    """The squared hinge: ``1/2 ||w||^2 + C/2 sum xi_i^2``, ``y_i f_i >= 1 - xi_i``."""
    n = X.shape[0]
    w, b, xi = FeatureVariable("w", kernel, X), Variable("b"), Variable("xi", n)
    f = w @ phi(X) + b
    P = Problem(0.5 * norm2(w) + Data("C2", 0.5 * C) * sum_squares(xi),
                [(Data("y", y) * f >= 1 - xi).named("alpha")], "min", "L2-slack SVC")
    return P, f


@_shape("one_class")
def one_class(X, y, kernel, nu):
    """Schoelkopf's one-class SVM: ``1/2 ||w||^2 + 1/(nu N) sum xi - rho``."""
    n = X.shape[0]
    w, rho, xi = FeatureVariable("w", kernel, X), Variable("rho"), Variable("xi", n)
    P = Problem(0.5 * norm2(w) + Data("c", 1.0 / (nu * n)) * vsum(xi) - rho,
                [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                "one-class SVM")
    return P, w @ phi(X) - rho


@_shape("svdd")
def svdd(X, y, kernel, C):
    """Tax & Duin's SVDD ``min R^2 + C sum xi``, ``||phi(x_i) - a||^2 <= R^2 + xi_i``; the
    decision ``<a, phi(x)> + R^2 / 2`` carries the centre and the radius (the oracle reads
    both)."""
    n = X.shape[0]
    a, R2, xi = FeatureVariable("a", kernel, X), Variable("R2"), Variable("xi", n)
    P = Problem(R2 + Data("C", C) * vsum(xi),
                [(norm2(phi(X) - a) <= R2 + xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "SVDD")
    return P, a @ phi(X) + 0.5 * R2


@_shape("universum")
def universum(X, y, kernel, C, C_u, eps):
    """Weston et al.'s universum SVM: labelled rows (``y = +-1``) with the hinge, universum
    rows (``y = 0``) held in the tube ``|f| <= eps`` with cost ``C_u``."""
    L, U = np.flatnonzero(y != 0), np.flatnonzero(y == 0)
    w, b = FeatureVariable("w", kernel, X), Variable("b")
    xi, z1, z2 = Variable("xi", L.size), Variable("z1", U.size), Variable("z2", U.size)
    f = w @ phi(X) + b
    fL, fU = f[L], f[U]
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi) + Data("C_u", C_u) * vsum(z1 + z2),
                [(Data("yL", y[L]) * fL >= 1 - xi).named("alpha"),
                 (fU <= Data("eps", eps) + z1).named("gamma_p"),
                 (-1.0 * fU <= Data("eps", eps) + z2).named("gamma_m"),
                 (xi >= 0).named("mu"), (z1 >= 0).named("nu_p"), (z2 >= 0).named("nu_m")],
                "min", "universum SVM")
    return P, f


def rank_pairs(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The preference pairs ``(i, j)`` with ``y_i > y_j``."""
    I, J = np.nonzero(y[:, None] > y[None, :])
    return I, J


@_shape("ranking")
def rank_svm(X, y, kernel, C):
    """Joachims's RankSVM: ``<w, phi(x_i) - phi(x_j)> >= 1 - xi_p`` for the pairs
    ``y_i > y_j``."""
    I, J = rank_pairs(y)
    w, xi = FeatureVariable("w", kernel, X), Variable("xi", I.size, index="P")
    diff = phi(X).at(I, "i_p") - phi(X).at(J, "j_p")
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi),
                [(w @ diff >= 1 - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                "RankSVM")
    return P, w @ phi(X)


@_shape("svr")
def eps_svr(X, y, kernel, C, epsilon):
    """The epsilon-SVR: two slack blocks."""
    n = X.shape[0]
    w, b = FeatureVariable("w", kernel, X), Variable("b")
    xi, xs = Variable("xi", n), Variable("xi_star", n)
    f = w @ phi(X) + b
    Y, e = Data("y", y), Data("epsilon", epsilon)
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi + xs),
                [(Y - f <= e + xi).named("alpha"), (f - Y <= e + xs).named("alpha_star"),
                 (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min", "epsilon-SVR")
    return P, f


#: shape name -> (factory, task)
VARIANT_SHAPES = {
    "uneven": (uneven_svc, "classification"), "l2": (l2_slack_svc, "classification"),
    "one_class": (one_class, "novelty"), "svdd": (svdd, "novelty"),
    "universum": (universum, "regression"), "ranking": (rank_svm, "regression"),
    "svr": (eps_svr, "regression"),
}


def variant_case(rng: np.random.Generator, shape: str, backend: str, n: int, kernel: str,
                 tol: float | None) -> dict[str, Any]:
    """A seeded ``Variant`` case of ``shape``: moderate scales (features ``10^[-2, 2]``, costs
    ``10^[-2, 3]``, RBF width ``10^[-2, 1]``; the CVXPY reference must be reliable), ``N``
    rows. Returns ``{"estimator", "X", "y"}`` (``y`` is ``None`` for a novelty shape)."""
    from .methods.variant import Variant

    fn, task = VARIANT_SHAPES[shape]
    sx = 10.0 ** rng.uniform(-2, 2)
    C = float(10.0 ** rng.uniform(-2, 3))
    X = rng.normal(size=(n, 2))
    kw: dict[str, Any] = {"kernel": kernel, "backend": backend, "max_iter": 100_000}
    if kernel == "rbf":
        kw["gamma"] = float(10.0 ** rng.uniform(-2, 1)) / sx ** 2
    elif kernel == "poly":
        kw.update(degree=2, coef0=1.0, gamma=1.0 / sx ** 2)
    if tol is not None:
        kw["tol"] = tol
    y: np.ndarray | None
    yc = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    yc[:2] = [1.0, -1.0]
    if shape == "uneven":
        hyper = {"C": C, "tau": float(rng.uniform(0.1, 1.0)),
                 "c_neg": float(10.0 ** rng.uniform(-1, 1))}
        y = yc
    elif shape == "l2":
        hyper, y = {"C": C}, yc
    elif shape == "one_class":
        hyper, y = {"nu": float(rng.uniform(0.05, 0.9))}, None
    elif shape == "svdd":
        hyper, y = {"C": float(rng.uniform(1.0 / n, 1.0))}, None
    elif shape == "universum":
        y = yc.copy()
        y[2:][rng.random(n - 2) < 0.3] = 0.0
        hyper = {"C": C, "C_u": float(C * 10.0 ** rng.uniform(-1, 0)),
                 "eps": float(rng.uniform(0.0, 0.5))}
    elif shape == "ranking":
        y = np.round(X @ [1.0, -0.5] + 0.5 * rng.normal(size=n))
        y[:2] = [1.0, 0.0] if y[0] == y[1] else y[:2]
        hyper = {"C": C}
    else:
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
        hyper = {"C": C, "epsilon": float(rng.uniform(0.0, 0.3))}
    if shape == "ranking" and np.all(y == y[0]):
        y[0] += 1.0
    est = Variant(fn, task=task, **kw, **hyper)
    return {"estimator": est, "X": X * sx, "y": y}
