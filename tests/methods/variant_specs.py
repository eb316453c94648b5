"""Placeholder specs shared by the Variant tests (tests/methods; pytest puts this folder on
the path): the one-class SVM, C-SVC and epsilon-SVR primals written with the data symbols
``X, x, y, N`` and ``Param``s, each with its decision function."""

from __future__ import annotations

from primaldual.model import FeatureVariable, Problem, Variable, norm2, phi, vsum


def placeholder_specs():
    from primaldual.model import N, Param, X, x, y
    nu, C = Param("nu", tex=r"\nu"), Param("C")
    w = FeatureVariable("w")
    rho, b, xi = Variable("rho"), Variable("b"), Variable("xi", N)
    oc = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho,
                 [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                 "one-class SVM primal")
    svc = Problem(0.5 * norm2(w) + C * vsum(xi),
                  [(y * (w @ phi(X) + b) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                  "min", "C-SVC primal")
    return (oc, w @ phi(x) - rho), (svc, w @ phi(x) + b)


def svr_spec():
    from primaldual.model import N, Param, X, x, y
    C, eps = Param("C"), Param("epsilon", txt="ε")
    w, b = FeatureVariable("w"), Variable("b")
    xi, xs = Variable("xi", N), Variable("xi_star", N)
    f = w @ phi(X) + b
    svr = Problem(0.5 * norm2(w) + C * vsum(xi + xs),
                  [(y - f <= eps + xi).named("alpha"), (f - y <= eps + xs).named("alpha_star"),
                   (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min",
                  "epsilon-SVR primal")
    return svr, w @ phi(x) + b
