"""A variant that is not in the catalogue: the one-class SVM (Schölkopf et al., 2001).

Primal, written as a spec with the modelling core::

    min_{w, rho, xi}  1/2 ||w||^2 + 1/(nu N) sum_i xi_i - rho
    s.t.              <w, phi(x_i)> >= rho - xi_i      [alpha_i >= 0]
                      xi_i >= 0                        [mu_i >= 0]

``dualize`` derives the dual mechanically (max -1/2 alpha^T K alpha s.t. 1^T alpha = 1,
0 <= alpha <= 1/(nu N)), we solve it with CVXPY and with SMO (the derived dual carries a BoxQP
structure record), print values and gap, and compare the decision function
``f(x) = <w, phi(x)> - rho`` with scikit-learn's ``OneClassSVM`` (LIBSVM scales alpha by nu N, so
the two agree up to that positive factor).

Run: ``PYTHONPATH=. python examples/one_class_svm.py``
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.svm import OneClassSVM

from primaldual.kernels import make_kernel
from primaldual.model import Data, FeatureVariable, Problem, Variable, norm2, phi, vsum
from primaldual.model.dualize import dualize


def one_class_primal(X: np.ndarray, nu: float, kernel) -> Problem:
    """The one-class SVM primal as a :class:`Problem`."""
    N = X.shape[0]
    w = FeatureVariable("w", kernel, X)
    rho, xi = Variable("rho"), Variable("xi", N)
    c = Data("c", 1.0 / (nu * N), txt="1/(νN)", tex=r"\frac{1}{\nu N}")
    return Problem(0.5 * norm2(w) + c * vsum(xi) - rho,
                   [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "one-class SVM primal", variables=[w, rho, xi])


def solve_smo(dual: Problem):
    """SMO on the derived dual: the SMO backend accepts the detected box QP
    (``1^T alpha = 1``, ``0 <= alpha <= 1/(nu N)``)."""
    sol = dual.solve(backend="smo", tol=1e-8)
    return np.asarray(sol.values["alpha"], dtype=float), "Problem.solve(backend='smo')"


def main(seed: int = 0, N: int = 200, nu: float = 0.2, gamma: float = 0.5) -> dict:
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(N // 2, 2)) * 0.6 + [1.5, 1.5],
                   rng.normal(size=(N - N // 2, 2)) * 0.6 - [1.5, 1.5]])
    kernel = make_kernel("rbf", gamma=gamma)
    P = one_class_primal(X, nu, kernel)
    der = dualize(P)
    print(der)
    print()

    t = time.perf_counter()
    sol_dual = der.dual.solve(backend="cvxpy")
    t_cvx = time.perf_counter() - t
    point = der.recover(sol_dual)
    p_val, d_val = P.evaluate(point), sol_dual.objective_value
    sol_primal = P.solve(backend="cvxpy")
    print(f"CVXPY  dual value            {d_val:.10f}   ({t_cvx:.2f} s)")
    print(f"       primal value (recov.) {p_val:.10f}   infeasibility {P.infeasibility(point):.1e}")
    print(f"       primal value (direct) {sol_primal.objective_value:.10f}")
    print(f"       duality gap           {p_val - d_val:.3e}")
    print(f"       rho                   {point['rho'][0]:.8f}")

    t = time.perf_counter()
    alpha_smo, how = solve_smo(der.dual)
    t_smo = time.perf_counter() - t
    point_smo = der.recover({"alpha": alpha_smo})
    print(f"SMO    ({how})")
    print(f"       dual value            {der.dual.evaluate({'alpha': alpha_smo}):.10f}"
          f"   ({t_smo:.2f} s, incl. numba warm-up)")
    print(f"       primal value (recov.) {P.evaluate(point_smo):.10f}")
    print(f"       gap                   {P.evaluate(point_smo) - d_val:.3e}")
    print(f"       max |alpha_SMO - alpha_CVXPY| "
          f"{np.max(np.abs(alpha_smo - sol_dual.values['alpha'])):.2e}")

    # decision function f(x) = sum_i beta_i k(x_i, x) - rho against scikit-learn
    Xt = rng.uniform(-4, 4, size=(400, 2))
    f_ours = kernel(Xt, X) @ point["w"] - point["rho"][0]
    sk = OneClassSVM(nu=nu, kernel="rbf", gamma=gamma, tol=1e-10).fit(X)
    f_sk = sk.decision_function(Xt)
    scale = float(f_ours @ f_sk / (f_ours @ f_ours))
    dev = float(np.max(np.abs(scale * f_ours - f_sk)) / np.max(np.abs(f_sk)))
    agree = float(np.mean(np.sign(f_ours) == np.sign(f_sk)))
    print(f"sklearn OneClassSVM: fitted scale {scale:.6f} (nu N = {nu * N:g}), "
          f"max relative deviation {dev:.2e}, sign agreement {agree:.4f}")
    return {"gap": p_val - d_val, "scale": scale, "deviation": dev, "agree": agree,
            "rel_gap": abs(p_val - d_val) / max(1.0, abs(p_val))}


if __name__ == "__main__":
    main()
