"""check_derivation / assert_derivation (issue 29): hand-written duals, KKT systems and
Lagrangians of catalogue methods and textbook variants, each correct one passing and each with
one planted mistake failing at the right line with a numeric witness.

The hand-written pieces below are written here, from the formulas (docs/formulations.md and
the papers), not read from the library: the catalogue's own ``dual()`` is checked separately.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import primaldual as pd
import primaldual.model as pm
from primaldual.cli import main
from primaldual.derivation_check import assert_derivation, check_derivation
from primaldual.kernels import make_kernel

N = 8
RBF = make_kernel("rbf", gamma=0.5)
LIN = make_kernel("linear")


def _clf(seed=0, n=N):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


def _reg(seed=1, n=N):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    return X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)


def _fails_at(rep, *needles: str) -> None:
    """The report fails, its first piece names every needle, and the witness has numbers."""
    assert not rep.ok, str(rep)
    first = rep.first
    text = first.title + " | " + first.yours + " | " + first.derived
    for s in needles:
        assert s in text, f"{s!r} not in the first piece:\n{rep}"
    assert first.witness.startswith("at "), str(rep)
    assert re.search(r"\d", first.witness), str(rep)
    # the report prints both lines and the witness
    out = str(rep)
    assert "yours   :" in out and "derived :" in out and "witness :" in out


# ============================================================================ hand-written duals
def csvc_case(Cv=1.0):
    X, y = _clf()
    P = pd.CSVC(C=Cv, kernel=RBF).primal(X, y)
    a, Y, C = pm.Variable("alpha", N), pm.Data("y", y), pm.Data("C", Cv)
    Q = pm.GramOperator(RBF, X, sign=y)                  # Q_ij = y_i y_j k(x_i, x_j)

    def dual(Qm=Q, eq=True, lin=True):
        obj = (pm.vsum(a) if lin else 0) - 0.5 * pm.quad_form(a, Qm)
        cons = ([(pm.dot(Y, a) == 0).named("minus_b")] if eq else []) + [
            (a >= 0).named("s"), (a <= C).named("xi")]
        return pm.Problem(obj, cons, "max", "my C-SVC dual")
    return P, dual, X, y


def test_csvc_correct_and_equivalent_forms_pass():
    P, dual, X, y = csvc_case()
    rep = check_derivation(P, dual())
    assert rep.ok and str(rep).startswith("derivation OK") and "\n" not in str(rep)
    # min -F, constraints scaled by positive numbers, reordered, the variable renamed
    a, Y, C = pm.Variable("a", N), pm.Data("y", y), pm.Data("C", 1.0)
    Q = pm.GramOperator(RBF, X, sign=y)
    D2 = pm.Problem(0.5 * pm.quad_form(a, Q) - pm.vsum(a),
                    [(2 * a <= 2 * C).named("u"), (3 * a >= 0).named("l"),
                     (-0.5 * pm.dot(Y, a) == 0).named("e")], "min", "LIBSVM form")
    rep = check_derivation(P, D2)
    assert rep.ok, str(rep)
    assert "a ↔ α (shape)" in str(rep)
    # an explicit map
    assert check_derivation(P, D2, mapping={"a": "alpha"}).ok
    # a redundant extra constraint (Σ a_i <= N C follows from the box) passes too
    D3 = pm.Problem(D2.objective, [*D2.constraints, pm.vsum(a) <= N * 1.0], "min", "more")
    assert check_derivation(P, D3).ok


def test_csvc_lost_equality():
    P, dual, X, y = csvc_case()
    rep = check_derivation(P, dual(eq=False))
    _fails_at(rep, "Σ_i y_i α_i = 0", "missing from yours")
    assert "stationarity in b" in rep.first.hint
    # the witness, checked independently: feasible for the hand dual, y^T alpha != 0 there
    al = rep.first.point["alpha"]
    assert dual(eq=False).infeasibility({"alpha": al}) <= 1e-12
    assert abs(float(y @ al)) > 0.5 and np.isclose(abs(rep.first.amount), abs(float(y @ al)))
    # the witness is feasible for the hand dual (0 <= alpha <= C) and y^T alpha != 0
    assert re.search(r"Σ_i y_i α_i = -?1 there", rep.first.witness), rep.first.witness


def test_csvc_sign_error_in_Q():
    P, dual, X, y = csvc_case()
    rep = check_derivation(P, dual(Qm=pm.GramOperator(RBF, X)))   # y_i y_j forgotten
    _fails_at(rep, "quadratic part")
    assert "opposite sign" in rep.first.hint
    al, K = rep.first.point["alpha"], RBF(X)
    f_mine = al.sum() - 0.5 * al @ K @ al
    f_true = al.sum() - 0.5 * (y * al) @ K @ (y * al)
    assert abs(f_mine - f_true) > 1e-3 and np.isclose(rep.first.amount, f_mine - f_true)


def test_csvc_missing_sign_and_missing_box():
    P, _, X, y = csvc_case()
    a, Y, C = pm.Variable("alpha", N), pm.Data("y", y), pm.Data("C", 1.0)
    obj = pm.vsum(a) - 0.5 * pm.quad_form(a, pm.GramOperator(RBF, X, sign=y))
    rep = check_derivation(P, pm.Problem(obj, [pm.dot(Y, a) == 0, a <= C], "max", "no sign"))
    _fails_at(rep, "the derived constraint 'α_i ≥ 0'")
    assert rep.first.hint.startswith("dual feasibility") and rep.first.amount < 0
    rep = check_derivation(P, pm.Problem(obj, [pm.dot(Y, a) == 0, a >= 0], "max", "no box"))
    _fails_at(rep, "the derived constraint 'α_i ≤ C_i'")
    assert "stationarity in ξ" in rep.first.hint
    assert rep.first.point["alpha"].max() > 1.0


def test_csvc_box_scaled():
    """A box ``C/N`` (the LIBSVM scaling of nu-SVC mixed into C-SVC) against ``C``."""
    X, y = _clf()
    P = pd.CSVC(C=1.0, kernel=RBF).primal(X, y)
    a, Y = pm.Variable("alpha", N), pm.Data("y", y)
    D = pm.Problem(pm.vsum(a) - 0.5 * pm.quad_form(a, pm.GramOperator(RBF, X, sign=y)),
                   [(pm.dot(Y, a) == 0).named("minus_b"), (a >= 0).named("s"),
                    (a <= pm.Data("CN", 1.0 / N, txt="C/N")).named("xi")], "max", "box C/N")
    rep = check_derivation(P, D)
    _fails_at(rep, "α_i ≤ C/N", "does not follow from the derived")
    assert "ratio" in rep.first.hint


def hard_margin_case():
    X, y = _clf()
    X[:, 0] += 2.0 * y                                    # separable
    P = pd.HardMarginSVC(kernel=RBF).primal(X, y)
    a, Y = pm.Variable("alpha", N), pm.Data("y", y)
    Q = pm.GramOperator(RBF, X, sign=y)

    def dual(lin=True):
        return pm.Problem((pm.vsum(a) if lin else 0) - 0.5 * pm.quad_form(a, Q),
                          [(pm.dot(Y, a) == 0).named("minus_b"), (a >= 0).named("s")], "max",
                          "my hard-margin dual")
    return P, dual


def test_hard_margin():
    P, dual = hard_margin_case()
    assert check_derivation(P, dual()).ok
    _fails_at(check_derivation(P, dual(lin=False)), "linear part")


def test_l2svc_diagonal():
    X, y = _clf()
    P = pd.L2SVC(C=2.0, kernel=RBF).primal(X, y)
    a, Y = pm.Variable("alpha", N), pm.Data("y", y)

    def dual(diag):
        return pm.Problem(pm.vsum(a) - 0.5 * pm.quad_form(
            a, pm.GramOperator(RBF, X, sign=y, diag=diag)),
            [(pm.dot(Y, a) == 0).named("minus_b"), (a >= 0).named("s")], "max", "L2-SVC")
    assert check_derivation(P, dual(1 / 2.0)).ok              # Q + I/C
    rep = check_derivation(P, dual(2.0))                      # Q + C I: a classic slip
    _fails_at(rep, "quadratic part")
    assert "α_1²" in rep.first.hint                           # a diagonal entry differs


def nusvc_case(nu=0.3):
    X, y = _clf()
    P = pd.NuSVC(nu=nu, kernel=RBF).primal(X, y)
    a, Y = pm.Variable("alpha", N), pm.Data("y", y)
    Q = pm.GramOperator(RBF, X, sign=y)

    def dual(upper):
        return pm.Problem(-(0.5 * pm.quad_form(a, Q)),
                          [(pm.dot(Y, a) == 0).named("minus_b"),
                           (pm.vsum(a) >= pm.Data("nu", nu)).named("rho"),
                           (a >= 0).named("s"), (a <= upper).named("xi")], "max", "my nu-SVC")
    return P, dual


def test_nusvc_box_C_vs_C_over_N():
    P, dual = nusvc_case()
    assert check_derivation(P, dual(pm.Data("CN", 1.0 / N, txt="1/N"))).ok
    rep = check_derivation(P, dual(pm.Data("C", 1.0)))
    _fails_at(rep, "α_i ≤ 1/N", "α_i ≤ C")
    assert f"ratio {N}" in rep.first.hint
    al = rep.first.point["alpha"]
    assert dual(pm.Data("C", 1.0)).infeasibility({"alpha": al}) <= 1e-12
    assert np.isclose(rep.first.amount, 1.0 / N - al.max()) and al.max() > 1.0 / N
    assert "fails by 0.875" in rep.first.witness              # alpha_i = 1 > 1/8


def svr_case(eps=0.1, Cv=1.0):
    X, yv = _reg()
    P = pd.EpsilonSVR(C=Cv, epsilon=eps, kernel=RBF).primal(X, yv)
    a, a_s, beta = pm.Variable("alpha", N), pm.Variable("alpha_star", N), pm.Variable("beta", N)
    Y, E, C = pm.Data("y", yv), pm.Data("eps", eps), pm.Data("C", Cv)
    one = pm.Data("1", np.ones(N), txt="1", tex="1")
    K = pm.GramOperator(RBF, X)

    def dual(eps_sign=1.0):
        obj = (-0.5 * pm.quad_form(beta, K, name="K") + pm.dot(Y, a) - pm.dot(Y, a_s)
               - E * (pm.dot(one, a) + eps_sign * pm.dot(one, a_s)))
        return pm.Problem(obj, [(beta == a - a_s).named("lam"),
                                (pm.dot(one, a) - pm.dot(one, a_s) == 0).named("minus_b"),
                                (a >= 0).named("s"), (a_s >= 0).named("s_star"),
                                (a <= C).named("xi"), (a_s <= C).named("xi_star")],
                          "max", "my SVR dual", variables=[a, a_s, beta])
    return P, dual


def test_svr_epsilon_term():
    P, dual = svr_case()
    rep = check_derivation(P, dual())
    assert rep.ok, str(rep)
    assert "β read off your equalities" in rep.alignment
    rep = check_derivation(P, dual(eps_sign=-1.0))            # -ε Σ (α_i - α*_i)
    _fails_at(rep, "linear part")
    # the two objectives differ by exactly 2 ε Σ_i α*_i
    a_s = rep.first.point["alpha_star"]
    assert a_s.sum() > 0 and np.isclose(rep.first.amount, 2 * 0.1 * a_s.sum())
    assert "coefficients of α*" in rep.first.hint and "those of α agree" in rep.first.hint


def test_svr_stacked_variable_matches_the_pair():
    """One variable z = (α, α*) of length 2N stands for the derived stacked pair (by shape),
    LIBSVM's form: min 1/2 zᵀ[[K, -K], [-K, K]]z + Σ (ε - y_i) z_i + Σ (ε + y_i) z_{N+i}."""
    X, yv = _reg()
    eps, Cv = 0.1, 1.0
    P = pd.EpsilonSVR(C=Cv, epsilon=eps, kernel=RBF).primal(X, yv)
    K = RBF(X)
    z = pm.Variable("z", 2 * N)
    s = np.r_[np.ones(N), -np.ones(N)]
    Q2 = pm.GramOperator.dense_matrix(np.block([[K, -K], [-K, K]]))
    p = pm.Data("p", np.r_[eps - yv, eps + yv])
    D = pm.Problem(0.5 * pm.quad_form(z, Q2) + pm.dot(p, z),
                   [pm.dot(pm.Data("s", s), z) == 0, z >= 0, z <= pm.Data("C", Cv)], "min",
                   "LIBSVM SVR")
    rep = check_derivation(P, D)
    assert rep.ok, str(rep)
    assert "z ↔ α, α* (shape)" in str(rep)
    p_bad = pm.Data("p", np.r_[eps - yv, -eps + yv])        # ε with the sign of y in α*
    D_bad = pm.Problem(0.5 * pm.quad_form(z, Q2) + pm.dot(p_bad, z),
                       [pm.dot(pm.Data("s", s), z) == 0, z >= 0, z <= pm.Data("C", Cv)],
                       "min", "LIBSVM SVR")
    _fails_at(check_derivation(P, D_bad), "linear part")


def lssvc_case(Cv=2.0):
    X, y = _clf()
    P = pd.LSSVC(C=Cv, kernel=RBF).primal(X, y)
    a, Y = pm.Variable("alpha", N), pm.Data("y", y)
    H = pm.GramOperator(RBF, X, sign=y, diag=1.0 / Cv)

    def dual(sign_constraint=False):
        cons = [(pm.dot(Y, a) == 0).named("minus_b")]
        if sign_constraint:
            cons.append((a >= 0).named("s"))
        return pm.Problem(pm.vsum(a) - 0.5 * pm.quad_form(a, H), cons, "max", "my LS-SVM")
    return P, dual, X, y


def test_lssvc_spurious_sign_constraint():
    P, dual, *_ = lssvc_case()
    assert check_derivation(P, dual()).ok
    rep = check_derivation(P, dual(sign_constraint=True))     # alpha is free in LS-SVM
    _fails_at(rep, "your constraint 'α_i ≥ 0'", "does not follow")


def one_class_case(nu=0.25):
    X, _ = _clf(3)
    w = pm.FeatureVariable("w", RBF, X)
    rho, xi = pm.Variable("rho"), pm.Variable("xi", N)
    c = pm.Data("c", 1.0 / (nu * N), txt="1/(νN)")
    P = pm.Problem(0.5 * pm.norm2(w) + c * pm.vsum(xi) - rho,
                   [(w @ pm.phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "one-class SVM primal", variables=[w, rho, xi])
    a = pm.Variable("alpha", N)
    K = pm.GramOperator(RBF, X)

    def dual(half=0.5, upper=c):
        return pm.Problem(-(half * pm.quad_form(a, K)),
                          [(pm.vsum(a) == 1).named("rho"), (a >= 0).named("s"),
                           (a <= upper).named("xi")], "max", "my one-class dual")
    return P, dual


def test_one_class_missing_half_and_box():
    P, dual = one_class_case()
    assert check_derivation(P, dual()).ok
    rep = check_derivation(P, dual(half=1.0))
    _fails_at(rep, "quadratic part")
    assert "2 × the derived one: a missing 1/2?" in rep.first.hint
    al = rep.first.point["alpha"]
    X = P.variables[0].basis
    assert np.isclose(rep.first.amount, -0.5 * al @ RBF(X) @ al) and rep.first.amount < 0
    rep = check_derivation(P, dual(upper=pm.Data("c", 1.0 / N, txt="1/N")))
    _fails_at(rep, "α_i ≤ 1/N", "α_i ≤ 1/(νN)")


def test_svdd_extra_half():
    """SVDD (Tax & Duin): max Σ α_i k(x_i, x_i) - αᵀKα,  Σ α_i = 1,  0 <= α <= C."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((N, 2))
    a_, R2, xi = pm.FeatureVariable("a", LIN, X), pm.Variable("R2"), pm.Variable("xi", N)
    C = pm.Data("C", 0.3)
    P = pm.Problem(R2 + C * pm.vsum(xi), [(pm.norm2(pm.phi(X) - a_) <= R2 + xi).named("alpha"),
                                          (xi >= 0).named("mu")], "min", "SVDD primal")
    al = pm.Variable("alpha", N)
    kdiag = pm.Data("kii", np.einsum("ij,ij->i", X, X), txt="k(x_i, x_i)")
    K = pm.GramOperator(LIN, X)

    def dual(c=1.0):
        return pm.Problem(pm.dot(kdiag, al) - c * pm.quad_form(al, K),
                          [(pm.vsum(al) == 1).named("R2"), (al >= 0).named("s"),
                           (al <= C).named("xi")], "max", "my SVDD dual")
    assert check_derivation(P, dual()).ok
    rep = check_derivation(P, dual(0.5))
    _fails_at(rep, "quadratic part")
    assert "0.5 × the derived one: an extra 1/2?" in rep.first.hint


def test_pinball_svr_boxes_swapped():
    """Quantile SVR: boxes α <= C τ, α* <= C (1 - τ) (Takeuchi et al. 2006)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((N, 2))
    yv = X[:, 0] + 0.3 * rng.standard_normal(N)
    tau, Cv = 0.3, 2.0
    w, b = pm.FeatureVariable("w", LIN, X), pm.Variable("b")
    xi, xs = pm.Variable("xi", N), pm.Variable("xi_star", N)
    Y, C, T = pm.Data("y", yv), pm.Data("C", Cv), pm.Data("tau", tau)
    f = w @ pm.phi(X) + b
    P = pm.Problem(0.5 * pm.norm2(w) + C * pm.vsum(T * xi + (1 - T) * xs),
                   [(Y - f <= xi).named("alpha"), (f - Y <= xs).named("alpha_star"),
                    (xi >= 0).named("mu"), (xs >= 0).named("mu_star")], "min", "pinball primal")
    a, a_s, beta = pm.Variable("alpha", N), pm.Variable("alpha_star", N), pm.Variable("beta", N)
    one = pm.Data("1", np.ones(N), txt="1")

    def dual(t_a, t_s):
        return pm.Problem(pm.dot(Y, beta) - 0.5 * pm.quad_form(beta, pm.GramOperator(LIN, X)),
                          [(beta == a - a_s).named("lam"), (pm.dot(one, beta) == 0).named("nb"),
                           (a >= 0).named("s"), (a_s >= 0).named("s2"),
                           (a <= pm.Data("Ct", Cv * t_a, txt="Cτ")).named("xi"),
                           (a_s <= pm.Data("Cs", Cv * t_s, txt="C(1-τ)")).named("xi_star")],
                          "max", "my pinball dual", variables=[a, a_s, beta])
    assert check_derivation(P, dual(tau, 1 - tau)).ok
    rep = check_derivation(P, dual(1 - tau, tau))
    _fails_at(rep, "α_i ≤ Cτ")


def test_per_sample_margins_linear_term():
    X, y = _clf(6)
    m = np.linspace(0.5, 1.5, N)
    w, b, xi = pm.FeatureVariable("w", LIN, X), pm.Variable("b"), pm.Variable("xi", N)
    Y, M, C = pm.Data("y", y), pm.Data("m", m), pm.Data("C", 1.0)
    P = pm.Problem(0.5 * pm.norm2(w) + C * pm.vsum(xi),
                   [(Y * (w @ pm.phi(X) + b) >= M - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "margin-rescaled primal")
    a = pm.Variable("alpha", N)

    def dual(lin):
        return pm.Problem(lin - 0.5 * pm.quad_form(a, pm.GramOperator(LIN, X, sign=y)),
                          [(pm.dot(Y, a) == 0).named("minus_b"), (a >= 0).named("s"),
                           (a <= C).named("xi")], "max", "my margins dual")
    assert check_derivation(P, dual(pm.dot(M, a))).ok
    rep = check_derivation(P, dual(pm.vsum(a)))              # the margins forgotten
    _fails_at(rep, "linear part")


def test_klr_entropy_dual_missing_constant():
    """Kernel logistic regression: a non-quadratic dual (entropies) is compared by value at
    feasible points; the constant N C log C (formulations.md section 13) forgotten."""
    X, y = _clf()
    Cv = 2.0
    P = pd.KernelLogisticRegression(C=Cv, kernel=RBF).primal(X, y)
    a, Y, C = pm.Variable("alpha", N), pm.Data("y", y), pm.Data("C", Cv)
    Q = pm.GramOperator(RBF, X, sign=y)

    def dual(const):
        obj = -(0.5 * pm.quad_form(a, Q)) + pm.sum_entropy(a) + pm.sum_entropy(C - a) + const
        return pm.Problem(obj, [pm.dot(Y, a) == 0, a >= 0, a <= C], "max", "my KLR dual")
    assert check_derivation(P, dual(pm.Data("k", N * Cv * np.log(Cv)))).ok
    rep = check_derivation(P, dual(0.0))
    _fails_at(rep, "objective values differ")
    assert f"{-N * Cv * np.log(Cv):.6g}" in rep.first.hint


# ============================================================================ KKT systems
def csvc_kkt(stat_sign=-1.0, comp_slack=True):
    X, y = _clf()
    P = pd.CSVC(C=1.0, kernel=RBF).primal(X, y)
    w, b, xi = pm.Variable("w", N), pm.Variable("b"), pm.Variable("xi", N)   # w: coefficients
    a, mu = pm.Variable("alpha", N), pm.Variable("mu", N)
    Y, C, K = pm.Data("y", y), pm.Data("C", 1.0), pm.Data("K", RBF(X))
    f = K @ w + b
    g = Y * f - 1 + xi if comp_slack else Y * f - 1
    kkt = [w == Y * a,                                        # ∂L/∂w = 0: w = Σ α_i y_i φ(x_i)
           pm.dot(Y, a) == 0,                                 # ∂L/∂b = 0
           C - a + stat_sign * mu == 0,                       # ∂L/∂ξ_i = 0
           Y * f >= 1 - xi, xi >= 0, a >= 0, mu >= 0,         # feasibility
           (a, g), (mu, xi)]                                  # complementary slackness
    return P, kkt


def test_kkt_csvc():
    P, kkt = csvc_kkt()
    rep = check_derivation(P, kkt=kkt)
    assert rep.ok, str(rep)
    assert check_derivation(P, kkt=P.kkt()).ok
    rep = check_derivation(P, kkt=csvc_kkt(stat_sign=+1.0)[1])
    _fails_at(rep, "∂L/∂ξ_i = C_i - α_i - μ_i = 0", "C - α_i + μ_i = 0")
    assert "∂L/∂ξ_1 = " in rep.first.witness
    pt = rep.first.point         # your row i = 1 holds there, the derived row i = 1 does not
    assert np.isclose(1.0 - pt["alpha"][0] + pt["mu"][0], 0.0)
    assert np.isclose(rep.first.amount, 1.0 - pt["alpha"][0] - pt["mu"][0])
    assert rep.first.amount != 0
    rep = check_derivation(P, kkt=csvc_kkt(comp_slack=False)[1])
    _fails_at(rep, "complementarity [α]")


def test_kkt_equivalent_forms_and_mapping():
    """Scaled conditions, another order, other names (given by mapping), a complementarity
    expression scaled by -2, and a redundant extra inequality all pass."""
    X, y = _clf()
    P = pd.CSVC(C=1.0, kernel=RBF).primal(X, y)
    w, b, xi = pm.Variable("beta", N), pm.Variable("b"), pm.Variable("s", N)
    a, m = pm.Variable("a", N), pm.Variable("m", N)
    Y, C, K = pm.Data("y", y), pm.Data("C", 1.0), pm.Data("K", RBF(X))
    f = K @ w + b
    kkt = [(m, 3 * xi), 2 * (C - a - m) == 0, xi >= 0, 4 * a >= 0, m >= 0,
           Y * f + xi >= 1, 0.5 * pm.dot(Y, a) == 0, -w + Y * a == 0,
           (a, -2 * (Y * f - 1 + xi)), a <= C]               # a <= C: implied (m >= 0)
    mapping = {"beta": "w", "s": "xi", "a": "alpha", "m": "mu"}
    rep = check_derivation(P, kkt=kkt, mapping=mapping)
    assert rep.ok, str(rep)
    rep = check_derivation(P, kkt=kkt)                       # a, m: same shape, no names
    assert not rep.ok and rep.first.title == "variables"


def test_kkt_lssvc_stationarity_in_e():
    X, y = _clf()
    Cv = 2.0
    P = pd.LSSVC(C=Cv, kernel=RBF).primal(X, y)
    w, b, e, a = pm.Variable("w", N), pm.Variable("b"), pm.Variable("e", N), pm.Variable("alpha", N)
    Y, C, K = pm.Data("y", y), pm.Data("C", Cv), pm.Data("K", RBF(X))

    def kkt(stat_e):
        return [w == Y * a, pm.dot(Y, a) == 0, stat_e, Y * (K @ w + b) == 1 - e]
    assert check_derivation(P, kkt=kkt(C * e - a == 0)).ok   # e_i = α_i / C
    rep = check_derivation(P, kkt=kkt(e - C * a == 0))       # e_i = C α_i: inverted
    _fails_at(rep, "∂L/∂e")


# ============================================================================ Lagrangian, recovery
def test_lagrangian_csvc():
    X, y = _clf()
    P = pd.CSVC(C=1.0, kernel=RBF).primal(X, y)
    K = RBF(X)

    def lag(sign):
        def L(x, m):
            w, b, xi = x["w"], float(np.ravel(x["b"])[0]), x["xi"]
            g = y * (K @ w + b) - 1 + xi
            return 0.5 * w @ K @ w + xi.sum() + sign * m["alpha"] @ g - m["mu"] @ xi
        return L
    assert check_derivation(P, lagrangian=lag(-1.0)).ok
    assert check_derivation(P, lagrangian=P.lagrangian()).ok
    rep = check_derivation(P, lagrangian=lag(+1.0))
    _fails_at(rep, "the term of α_i", "Σ_i α_i")
    assert "coefficient of α_1 in L is -1 in yours, 1 derived" in rep.first.witness
    assert rep.first.witness.startswith("at the origin")


def test_recovery_formulas():
    X, y = _clf()
    P, dual, *_ = csvc_case()
    der = pd.dualize(P)

    def recover(ok):
        def rec(v):
            out = der.recover({"alpha": v["alpha"]})
            if not ok:
                out["w"] = np.asarray(v["alpha"])             # w = Σ α_i φ(x_i): y forgotten
            return out
        return rec
    assert check_derivation(P, dual(), recover=recover(True)).ok
    rep = check_derivation(P, dual(), recover=recover(False))
    assert not rep.ok and rep.first.part == "recovery" and "w differs" in rep.first.title
    assert "dual optimum" in rep.first.witness


# ============================================================================ the catalogue
@pytest.mark.parametrize("name", ["CSVC", "HardMarginSVC", "L2SVC", "NuSVC", "EpsilonSVR",
                                  "NuSVR", "LSSVC", "LSSVR", "KernelRidge"])
def test_catalogue_hand_duals_pass(name):
    cls = getattr(pd, name)
    X, y = _reg() if getattr(cls, "_task", "") == "regression" else _clf()
    if name == "HardMarginSVC":
        X = X.copy()
        X[:, 0] += 2.0 * y
    m = cls(kernel=RBF)
    rep = check_derivation(m.primal(X, y), m.dual(X, y))
    assert rep.ok, str(rep)


# ============================================================================ the API
def test_assert_derivation_message_is_the_report():
    P, dual, *_ = csvc_case()
    assert assert_derivation(P, dual()).ok
    with pytest.raises(AssertionError) as ei:
        assert_derivation(P, dual(eq=False))
    assert str(ei.value) == str(check_derivation(P, dual(eq=False)))
    from primaldual.testing import assert_derivation as from_testing
    assert from_testing is assert_derivation
    assert pd.check_derivation is check_derivation and "check_derivation" in pd.__all__


def test_bad_arguments():
    P, dual, *_ = csvc_case()
    with pytest.raises(ValueError, match="nothing to check"):
        check_derivation(P)
    with pytest.raises(TypeError, match="primal must be a Problem"):
        check_derivation("P", dual())
    with pytest.raises(ValueError, match="tol must be positive"):
        check_derivation(P, dual(), tol=0)
    with pytest.raises(ValueError, match="mapping"):
        check_derivation(P, dual(), mapping={"alpha": "nope"})
    with pytest.raises(TypeError, match="mapping"):
        check_derivation(P, dual(), mapping={"alpha": 3})
    # a variable matching nothing: reported, not guessed
    a, b_ = pm.Variable("a", N), pm.Variable("c", N)
    D = pm.Problem(pm.vsum(a) - pm.vsum(b_), [(a >= 0).named("s"), (b_ >= 0).named("t")],
                   "max", "two blocks")
    rep = check_derivation(P, D)
    assert not rep.ok and rep.first.title == "variables"


def test_cli_check_derivation(tmp_path, capsys):
    f = tmp_path / "mine.py"
    f.write_text(
        "import numpy as np\nimport primaldual as pd\nimport primaldual.model as pm\n"
        "from primaldual.kernels import make_kernel\n"
        "X = np.random.default_rng(0).standard_normal((6, 2))\n"
        "y = np.array([1., -1, 1, -1, 1, -1])\n"
        "k = make_kernel('rbf', gamma=0.5)\n"
        "primal = pd.CSVC(C=1.0, kernel=k).primal(X, y)\n"
        "a = pm.Variable('alpha', 6)\n"
        "dual = pm.Problem(pm.vsum(a) - 0.5 * pm.quad_form(a, pm.GramOperator(k, X, sign=y)),\n"
        "                  [(a >= 0).named('s'), (a <= pm.Data('C', 1.0)).named('xi')], 'max')\n")
    assert main(["check-derivation", str(f)]) == 1
    out = capsys.readouterr().out
    assert "the derived constraint 'Σ_i y_i α_i = 0' is missing from yours" in out
    f.write_text(f.read_text().replace("[(a >= 0)", "[(pm.dot(pm.Data('y', y), a) == 0), (a >= 0)"))
    assert main(["check-derivation", str(f)]) == 0
    assert capsys.readouterr().out.startswith("derivation OK")
    assert main(["check-derivation", str(tmp_path / "none.py")]) == 2
    (tmp_path / "empty.py").write_text("x = 1\n")
    assert main(["check-derivation", str(tmp_path / "empty.py")]) == 2


# ============================================================================ the docs page
def test_docs_page_quotes_real_runs(tmp_path, monkeypatch):
    """docs/check_your_derivation.md: every python block runs (in order, one namespace) and
    the text block after it is exactly what the block prints."""
    import contextlib
    import io
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "check_your_derivation.md").read_text()
    pairs = re.findall(r"```python\n(.*?)```\s*\n```text\n(.*?)\n```", page, flags=re.S)
    assert len(pairs) >= 10
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__docs__"}
    reports = 0
    for code, quoted in pairs:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "check_your_derivation.md", "exec"), ns)  # noqa: S102
        assert buf.getvalue().rstrip("\n") == quoted
        reports += quoted.count("witness :")
    assert reports >= 7        # the five mistakes, the KKT system and the Lagrangian
