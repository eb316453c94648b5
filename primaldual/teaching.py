"""Teaching views of a method: recovery rules, notation, numbers on small data, derivation
steps, and the per-sample complementarity table of a fit.

Everything here is read from the method's own primal and dual problems (so what is printed is
what is solved); the recovery and notation texts restate docs/formulations.md.

>>> import numpy as np, primaldual as pd
>>> from primaldual.datasets import load_dataset
>>> X, y = load_dataset("amini")
>>> m = pd.HardMarginSVC(kernel="linear").fit(X, y)
>>> print(m.kkt_table())                      # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .methods._kkt_table import KKTTable, kkt_table, model_bias, model_task

__all__ = ["RECOVERY", "NOTATION", "OWN_NOTATION", "KKTTable", "kkt_table", "show_text",
           "numbers_text", "steps_text", "side_by_side", "HAND_STEPS", "slide_note"]

#: How ``w``, ``b`` (and ``rho``, ``epsilon``) are recovered from the dual solution, per method.
RECOVERY: dict[str, str] = {
    "HardMarginSVC": (
        "w = Σ_i α_i y_i φ(x_i), so f(x) = Σ_i α_i y_i k(x_i, x) + b.\n"
        "Support vectors: α_i > 0; all lie on the margin, y_i f(x_i) = 1, so\n"
        "b = y_i - Σ_j α_j y_j k(x_j, x_i) for any of them (averaged over all).\n"
        "The multiplier of yᵀα = 0 is -b. Margin width 2/‖w‖ with ‖w‖² = αᵀQα."),
    "CSVC": (
        "w = Σ_i α_i y_i φ(x_i), so f(x) = Σ_i α_i y_i k(x_i, x) + b.\n"
        "Free SVs (0 < α_i < C_i) lie on the margin, y_i f(x_i) = 1:\n"
        "b = y_i - Σ_j α_j y_j k(x_j, x_i), averaged over the free SVs; with none, b is the\n"
        "midpoint of the interval the KKT conditions allow (LIBSVM's rule). The multiplier\n"
        "of yᵀα = 0 is -b.\n"
        "ξ_i = max(0, 1 - y_i f(x_i)), μ_i = C_i - α_i (bounded SVs α_i = C_i: y_i f(x_i) ≤ 1)."),
    "L2SVC": (
        "w = Σ_i α_i y_i φ(x_i); ξ_i = α_i / C (from ∂L/∂ξ_i = 0).\n"
        "Every SV (α_i > 0) satisfies y_i f(x_i) = 1 - α_i / C, so\n"
        "b = y_i (1 - α_i / C) - Σ_j α_j y_j k(x_j, x_i), averaged over the SVs.\n"
        "The multiplier of yᵀα = 0 is -b."),
    "NuSVC": (
        "w = Σ_i α_i y_i φ(x_i). Free SVs (0 < α_i < 1/N) of each class lie on the margins\n"
        "y_i f(x_i) = ρ: with r1 = mean over free SVs with y = +1 of Σ_j α_j y_j k(x_j, x_i) and\n"
        "r2 = -(the same mean over y = -1), ρ = (r1 + r2)/2 and b = -(r1 - r2)/2.\n"
        "ρ is also the multiplier of Σ_i α_i ≥ ν, -b that of yᵀα = 0.\n"
        "Scaled by 1/ρ the solution is the C-SVC one with C = 1/(N ρ)."),
    "EpsilonSVR": (
        "w = Σ_i (α_i - α*_i) φ(x_i), f(x) = Σ_i (α_i - α*_i) k(x_i, x) + b.\n"
        "A free α_i (0 < α_i < C) puts x_i on the upper tube edge: b = y_i - Σ_j β_j K_ij - ε;\n"
        "a free α*_i on the lower edge: b = y_i - Σ_j β_j K_ij + ε; b is their average.\n"
        "At most one of α_i, α*_i is non-zero; points strictly inside the tube have both 0.\n"
        "The multiplier of 1ᵀ(α - α*) = 0 is -b."),
    "NuSVR": (
        "w = Σ_i (α_i - α*_i) φ(x_i). Free α_i and free α*_i give the two tube edges\n"
        "y_i - Σ_j β_j K_ij = b + ε and = b - ε: b is their midpoint, ε half their distance.\n"
        "ε is also the multiplier of 1ᵀ(α + α*) ≤ C ν, -b that of 1ᵀ(α - α*) = 0."),
    "LSSVC": (
        "w = Σ_i α_i y_i φ(x_i), e_i = α_i / C: every point is a support vector.\n"
        "b comes with α from the linear system [[0, yᵀ], [y, Q + I/C]] [b; α] = [0; 1];\n"
        "it is -(the multiplier of yᵀα = 0)."),
    "LSSVR": (
        "w = Σ_i α_i φ(x_i), e_i = α_i / C; b and α from\n"
        "[[0, 1ᵀ], [1, K + I/C]] [b; α] = [0; y]; b is -(the multiplier of 1ᵀα = 0)."),
    "ProximalSVC": (
        "w = Σ_i α_i y_i φ(x_i) and b = Σ_i α_i y_i = yᵀα (b is regularised, so there is no\n"
        "constraint yᵀα = 0); ξ_i = α_i / C; α solves (Q + y yᵀ + I/C) α = 1."),
    "KernelRidge": (
        "w = Σ_i α_i φ(x_i), e_i = α_i / C, no bias: (K + I/C) α = y, f(x) = Σ_i α_i k(x_i, x)."),
    "LapRLS": (
        "w = Σ_j a_j φ(x_j) over all l + u points with a = P⁻¹ Jᵀ β, e_i = l β_i / 2 on the\n"
        "labelled points; in closed form a = (Jᵀ J K + γ_A l I + γ_I l/(u+l)² L_G K)⁻¹ Jᵀ y\n"
        "(an (l+u) × (l+u) system). No bias: f(x) = Σ_j a_j k(x_j, x)."),
    "LapSVC": (
        "w = Σ_j a_j φ(x_j) over all l + u points with a = P⁻¹ Jᵀ Y β; μ_i = 1/l - β_i.\n"
        "Support vectors are the labelled points with β_i > 0 (free: 0 < β_i < 1/l);\n"
        "b = -(the multiplier of yᵀβ = 0), or LIBSVM's rule on the dual gradient."),
    "KernelLogisticRegression": (
        "w = Σ_i α_i y_i φ(x_i) with α_i = C σ(-y_i f(x_i)), strictly between 0 and C:\n"
        "every point is a support vector. b = -(the multiplier of yᵀα = 0), or from\n"
        "y_i f(x_i) = log((C - α_i)/α_i). P(y = +1 | x) = σ(f(x))."),
}

_NOTATION_KERNEL = "f_i = ⟨w, φ(x_i)⟩ + b, K_ij = k(x_i, x_j) = ⟨φ(x_i), φ(x_j)⟩"
_NOTATION_GRAPH = (
    "  W_ij the k-nearest-neighbour graph weights, L_G = D - W the graph Laplacian (D = diag "
    "of row sums),\n  Σ_{i<j} W_ij (f_i - f_j)² = fᵀ L_G f; J = [I_l 0] (l × (l+u)) picks the "
    "labelled rows\n  (Jᵀ J = diag(1, ..., 1, 0, ..., 0)); P = 2 γ_A I + 2 γ_I/(u+l)² L_G K")
#: Symbols a method's rendering uses beyond the common ones.
NOTATION: dict[str, str] = {
    "_classifier": _NOTATION_KERNEL + ", Q_ij = y_i y_j K_ij (Q = Y K Y, Y = diag(y))",
    "_regression": _NOTATION_KERNEL,
    "NuSVC": "ν ∈ (0, 1] is the parameter, ρ the margin variable (not the multiplier -b)",
    "EpsilonSVR": "β = α - α* (the signed dual coefficient of f)",
    "NuSVR": "β = α - α* (the signed dual coefficient of f)",
}
#: Methods whose notation replaces the common lines (rather than adding to them).
OWN_NOTATION: dict[str, str] = {
    "KernelRidge": ("f_i = ⟨w, φ(x_i)⟩ (no bias), K_ij = k(x_i, x_j) = ⟨φ(x_i), φ(x_j)⟩; "
                    "β = α"),
    "LapRLS": (
        "l labelled points first, then u unlabelled; K_ij = k(x_i, x_j) = ⟨φ(x_i), φ(x_j)⟩ "
        "over all l + u;\n  f_i = ⟨w, φ(x_i)⟩ = (K a)_i on all l + u points (no bias);\n"
        + _NOTATION_GRAPH),
    "LapSVC": (
        "l labelled points first, then u unlabelled; K_ij = k(x_i, x_j) = ⟨φ(x_i), φ(x_j)⟩ "
        "over all l + u;\n  f_i = ⟨w, φ(x_i)⟩ = (K a)_i on all l + u points, the decision "
        "value f_i + b;\n" + _NOTATION_GRAPH + "; Y = diag(y) (labelled points)"),
}


def notation_text(model: Any) -> str:
    name = type(model).__name__
    if name in OWN_NOTATION:
        return OWN_NOTATION[name]
    base = NOTATION["_regression" if model_task(model) == "regression" else "_classifier"]
    own = NOTATION.get(name)
    return base + ("\n  " + own if own else "")


def _fmt_matrix(A: np.ndarray, fmt: str = "{: .4f}") -> str:
    A = np.atleast_2d(np.asarray(A, dtype=float))
    return "\n".join("  [" + " ".join(fmt.format(v) for v in row) + "]" for row in A)


def _tex_matrix(A: np.ndarray) -> str:
    A = np.atleast_2d(np.asarray(A, dtype=float))
    rows = r" \\ ".join(" & ".join(f"{v:.4f}" for v in row) for row in A)
    return r"\begin{pmatrix}" + rows + r"\end{pmatrix}"


#: the method class each of :data:`~primaldual.datasets.AMINI_EXAMPLES`' CLI names solves
_SLIDE_CLASS = {"hard-margin": "HardMarginSVC", "csvc": "CSVC"}


def _vec(v: Any) -> str:
    return "(" + ", ".join(f"{float(a):.4f}" for a in v) + ")"


def slide_note(model: Any, data_name: str) -> str:
    """The numbers Amini's slide prints next to this fit's (``data_name`` one of
    :data:`~primaldual.datasets.AMINI_EXAMPLES`, ``model`` fitted on it with the slide's
    method, kernel and ``C``); ``""`` for any other fit."""
    from .datasets import AMINI_EXAMPLES

    ex = AMINI_EXAMPLES.get(data_name)
    if ex is None or type(model).__name__ != _SLIDE_CLASS[ex.method]:
        return ""
    same_C = ex.C is None or getattr(model, "C", None) == ex.C
    if getattr(model.kernel_, "name", "") != ex.kernel or not same_C:
        return ""
    w0 = f"w₀ = {ex.w0:.4f}" if ex.w0 is not None else "w₀ not printed"
    return (f'Amini\'s slide "{ex.slide}" and this fit on its X:\n'
            f"  slide  α = {_vec(ex.alpha)}  {w0}\n"
            f"  fit    α = {_vec(model.alpha_)}  b  = {model_bias(model):.4f}\n"
            "The slide prints X rounded to 2 decimals: points within that rounding (each\n"
            "coordinate moved by less than 0.005) give the slide's digits (Texts and notation,\n"
            "Amini's worked examples).")


def numbers_text(model: Any, X: np.ndarray, y: np.ndarray, data_name: str = "",
                 fmt: str = "text", backend: str = "cvxpy") -> str:
    """X, y, K, Q and the solution (α, b, w, objective values, gap) on a small data set."""
    m = model.fit(X, y, backend=backend)
    K = np.asarray(m.kernel_(X), dtype=float)
    out: list[str] = []
    yv = np.asarray(y, dtype=float)
    cls = model_task(model) != "regression"
    # no bias line for the methods without one (kernel ridge, LapRLS)
    has_b = any(getattr(v, "name", "") == "b" for v in model.primal(X, y).variables)
    alpha = np.asarray(getattr(m, "alpha_", m.beta_), dtype=float)
    cert = m.certificate_
    if fmt == "text":
        out.append(f"X ({X.shape[0]} x {X.shape[1]}):\n{_fmt_matrix(X, '{: .2f}')}")
        out.append(f"y: {np.array2string(yv, precision=3)}")
        out.append(f"K = [k(x_i, x_j)] ({m.kernel_!r}):\n{_fmt_matrix(K)}")
        if cls:
            out.append(f"Q = Y K Y:\n{_fmt_matrix(K * np.outer(yv, yv))}")
        out.append(f"α   = {np.array2string(alpha, precision=4, suppress_small=True)}")
        if "alpha_star" in {k[:-1] for k in vars(m) if k.endswith("_")}:
            out.append(f"α*  = {np.array2string(m.alpha_star_, precision=4, suppress_small=True)}")
        if has_b:
            out.append(f"b   = {model_bias(m):.4f}")
        if getattr(m.kernel_, "name", "") == "linear":
            norm = float(np.linalg.norm(m.coef_))
            out.append(f"w   = {np.array2string(m.coef_, precision=4)}   (‖w‖ = {norm:.4f}"
                       + (f", margin 2/‖w‖ = {2 / norm:.4f})" if cls else ")"))
        out.append(f"primal value {cert.primal_objective:.6f}, "
                   f"dual value {cert.dual_objective:.6f}, "
                   f"relative gap {cert.relative_gap:.1e} ({m.backend_})")
        note = slide_note(m, data_name)
        if note:
            out.append(note)
        return "\n".join(out)
    out.append(r"X = " + _tex_matrix(X) + r",\quad y = " + _tex_matrix(yv[:, None]))
    out.append(r"K = " + _tex_matrix(K))
    if cls:
        out.append(r"Q = " + _tex_matrix(K * np.outer(yv, yv)))
    out.append(r"\alpha = " + _tex_matrix(alpha[None, :])
               + (rf",\quad b = {model_bias(m):.4f}" if has_b else ""))
    return r"\begin{gathered}" + r" \\ ".join(out) + r"\end{gathered}"


#: Why the Laplacian methods are derived by hand (one line, printed above the steps).
_HAND_WHY = ("The graph term makes the objective depend on w through f_j = ⟨w, φ(x_j)⟩ on all "
             "l + u points,\nwhich the mechanical dualizer (a plain ‖w‖² per feature-space "
             "block) does not eliminate:\nderived by hand, and checked on the data.")
_REPRESENTER = (
    ("Representer: the objective and constraints see w only through f_j = ⟨w, φ(x_j)⟩ "
     "(j ≤ l+u) and ‖w‖², so w = Σ_j a_j φ(x_j): f = K a, ‖w‖² = aᵀ K a, Σ_{i<j} W_ij "
     "(f_i - f_j)² = aᵀ K L_G K a, ⟨w, φ(x_i)⟩ = (J K a)_i for i ≤ l",
     r"\text{Representer: } w = \sum_j a_j \phi(x_j),\ f = Ka,\ \|w\|^2 = a^TKa,\ "
     r"\sum_{i<j} W_{ij}(f_i - f_j)^2 = a^TKL_GKa"),
)
#: Hand derivations (text, LaTeX) of the methods the mechanical dualizer does not derive.
HAND_STEPS: dict[str, list[tuple[str, str]]] = {
    "LapRLS": [
        *_REPRESENTER,
        ("Lagrangian: L(a, e; β) = 1/l Σ_i e_i² + γ_A aᵀ K a + γ_I/(u+l)² aᵀ K L_G K a "
         "- βᵀ(J K a + e - y)",
         r"L(a, e; \beta) = \tfrac1l \sum_i e_i^2 + \gamma_A a^TKa + \tfrac{\gamma_I}{(u+l)^2}"
         r" a^TKL_GKa - \beta^T(JKa + e - y)"),
        ("∂L/∂e_i = 2/l e_i - β_i = 0 ⇒ e_i = l β_i / 2, so 1/l Σ_i e_i² - βᵀe = -l/4 Σ_i β_i²",
         r"\partial L/\partial e_i = \tfrac2l e_i - \beta_i = 0 \Rightarrow e_i = "
         r"\tfrac{l}{2}\beta_i"),
        ("∂L/∂a = 2 γ_A K a + 2 γ_I/(u+l)² K L_G K a - K Jᵀ β = K (P a - Jᵀ β) = 0, solved by "
         "a = P⁻¹ Jᵀ β (every solution gives the same w)",
         r"\partial L/\partial a = K(Pa - J^T\beta) = 0 \Leftarrow a = P^{-1}J^T\beta"),
        ("Substitute: K P = 2 γ_A K + 2 γ_I/(u+l)² K L_G K is symmetric, so P⁻ᵀ K = K P⁻¹ and "
         "γ_A aᵀKa + γ_I/(u+l)² aᵀ K L_G K a = ½ aᵀ K P a = ½ βᵀ J K P⁻¹ Jᵀ β, "
         "βᵀ J K a = βᵀ J K P⁻¹ Jᵀ β",
         r"\gamma_A a^TKa + \tfrac{\gamma_I}{(u+l)^2}a^TKL_GKa = \tfrac12 a^TKPa = \tfrac12 "
         r"\beta^TJKP^{-1}J^T\beta"),
        ("Dual: maximize yᵀβ - l/4 Σ_i β_i² - 1/2 βᵀ(J K P⁻¹ Jᵀ)β over β ∈ R^l (no "
         "constraints: the primal has only equalities); optimal where "
         "(J K P⁻¹ Jᵀ + l/2 I) β = y",
         r"\max_\beta\ y^T\beta - \tfrac{l}{4}\sum_i\beta_i^2 - \tfrac12\beta^T(JKP^{-1}J^T)"
         r"\beta"),
        ("Closed form: β = 2 e / l = 2 (y - J K a) / l and P a = Jᵀ β give "
         "(Jᵀ J K + γ_A l I + γ_I l/(u+l)² L_G K) a = Jᵀ y",
         r"(J^TJK + \gamma_A l I + \tfrac{\gamma_I l}{(u+l)^2}L_GK)\,a = J^Ty"),
    ],
    "LapSVC": [
        *_REPRESENTER,
        ("Lagrangian: L(a, b, ξ; β, μ) = 1/l Σ_i ξ_i + γ_A aᵀ K a + γ_I/(u+l)² aᵀ K L_G K a "
         "- Σ_i β_i (y_i ((J K a)_i + b) - 1 + ξ_i) - Σ_i μ_i ξ_i",
         r"L(a, b, \xi; \beta, \mu) = \tfrac1l \sum_i \xi_i + \gamma_A a^TKa "
         r"+ \tfrac{\gamma_I}{(u+l)^2} a^TKL_GKa - "
         r"\sum_i \beta_i (y_i((JKa)_i + b) - 1 + \xi_i) - \sum_i \mu_i\xi_i"),
        ("∂L/∂ξ_i = 1/l - β_i - μ_i = 0 with μ_i ≥ 0 ⇒ 0 ≤ β_i ≤ 1/l; ∂L/∂b = -yᵀβ = 0",
         r"\mu_i = \tfrac1l - \beta_i \geq 0,\ y^T\beta = 0"),
        ("∂L/∂a = K (P a - Jᵀ Y β) = 0, solved by a = P⁻¹ Jᵀ Y β (every solution gives the "
         "same w)",
         r"\partial L/\partial a = K(Pa - J^TY\beta) = 0 \Leftarrow a = P^{-1}J^TY\beta"),
        ("Substitute (K P symmetric, as for LapRLS): maximize 1ᵀβ - 1/2 βᵀ(Y J K P⁻¹ Jᵀ Y)β "
         "s.t. yᵀβ = 0, 0 ≤ β_i ≤ 1/l",
         r"\max_\beta\ 1^T\beta - \tfrac12\beta^T(YJKP^{-1}J^TY)\beta\ \text{s.t. } "
         r"y^T\beta = 0,\ 0 \leq \beta_i \leq \tfrac1l"),
    ],
}


def _hand_check(model: Any, X: np.ndarray, y: np.ndarray) -> list[str]:
    """The hand derivation checked on ``X, y``: the primal and the hand-written dual solved
    (CVXPY; strong duality: equal values), the dual's ``a = P⁻¹ Jᵀ β`` (``Jᵀ Y β`` for LapSVC)
    against the primal's ``a`` (as ``f = K a``), and for LapRLS the closed form."""
    name = type(model).__name__
    sp, sd = model.primal(X, y).solve(backend="cvxpy"), model.dual(X, y).solve(backend="cvxpy")
    if not (sp.has_point and sd.has_point):
        return [f"check: primal {sp.status}, hand-written dual {sd.status}"]
    K, Lg, l_ = model.kernel_laplacian(X, y)
    n = K.shape[0]
    L = Lg.toarray()
    gA, gI = float(model.gamma_A), float(model.gamma_I)
    P = 2.0 * gA * np.eye(n) + 2.0 * gI / n ** 2 * (L @ K)
    beta = np.asarray(sd.values["beta"], dtype=float)
    J = np.eye(l_, n)
    yl = np.asarray(y, dtype=float)[~np.isnan(np.asarray(y, dtype=float))][:l_]
    if name != "LapRLS":   # the classifier's labels as ±1 (the larger class is +1)
        yl = np.where(yl == np.unique(yl)[-1], 1.0, -1.0)
    ywt = beta if name == "LapRLS" else yl * beta
    a_dual = np.linalg.solve(P, J.T @ ywt)
    a_primal = np.asarray(sp.values["w"], dtype=float)
    pv, dv = float(sp.objective_value), float(sd.objective_value)

    def verdict(rel: float, tol: float = 1e-6) -> str:
        return f"(relative difference {rel:.1e}): " + ("equal" if rel <= tol else "DIFFERENT")

    scale = max(1.0, float(np.max(np.abs(K @ a_primal))))
    lines = [f"check: primal {pv:.8g}, hand-written dual {dv:.8g} "
             + verdict(abs(pv - dv) / max(1.0, abs(pv))),
             "check: f = K a from the dual's a = P⁻¹ Jᵀ " + ("β" if name == "LapRLS" else "Y β")
             + " and from the primal's a "
             + verdict(float(np.max(np.abs(K @ (a_dual - a_primal)))) / scale, 1e-4)]
    if name == "LapRLS":
        M = J.T @ J @ K + gA * l_ * np.eye(n) + gI * l_ / n ** 2 * (L @ K)
        a_cf = np.linalg.solve(M, J.T @ yl)
        lines.append("check: the closed form's a and the dual's a "
                     + verdict(float(np.max(np.abs(a_cf - a_dual)))
                               / max(1.0, float(np.max(np.abs(a_cf))))))
    return lines


def steps_text(model: Any, X: np.ndarray, y: np.ndarray, fmt: str = "text") -> str:
    """The mechanical derivation of the method's primal, checked against its hand-written dual
    (both solved; their optimal values must agree). For a method the mechanical dualizer does
    not cover (the Laplacian methods: :data:`HAND_STEPS`), the derivation by hand, each result
    checked on ``X, y``."""
    from .model.dualize import dualize

    P, D = model.primal(X, y), model.dual(X, y)
    try:
        res = dualize(P)
    except (ValueError, TypeError, NotImplementedError) as exc:
        hand = HAND_STEPS.get(type(model).__name__)
        if hand is None:
            return f"(not derived mechanically: {exc})"
        checks = _hand_check(model, X, y)
        if fmt == "text":
            import textwrap

            return "\n".join([_HAND_WHY, *(textwrap.fill(f"{i}. {t}", 100,
                                                          subsequent_indent="   ")
                                           for i, (t, _) in enumerate(hand, 1)), *checks])
        rows = [rf"&\text{{{i}.}}\ {tex}" for i, (_, tex) in enumerate(hand, 1)]
        rows += [rf"&\text{{{c}}}" for c in checks]
        return r"\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}"
    lines = []
    for i, st in enumerate(res.steps, 1):
        if fmt == "text":
            lines.append(f"{i}. {st}")
        else:
            lines.append(rf"&\text{{{i}. {st.title}}}: \\ &\quad {st.latex}")
    sm, sh = res.dual.solve(backend="cvxpy"), D.solve(backend="cvxpy")
    if sm.has_point and sh.has_point:
        mv, hv = float(sm.objective_value), float(sh.objective_value)
        rel = abs(mv - hv) / max(1.0, abs(hv))
        verdict = "equal" if rel <= 1e-6 else "DIFFERENT"
        msg = (f"check: mechanical dual {mv:.8g}, hand-written dual {hv:.8g} "
               f"(relative difference {rel:.1e}): {verdict}")
        if rel > 1e-6:
            raise AssertionError(msg)
    else:
        msg = f"check: mechanical dual {sm.status}, hand-written dual {sh.status}"
    if fmt == "text":
        return "\n".join([*lines, msg])
    return (r"\begin{aligned}" + r" \\ ".join([*lines, rf"&\text{{{msg}}}"])
            + r"\end{aligned}")


def show_text(model: Any, X: np.ndarray, y: np.ndarray, fmt: str = "text", *,
              data_name: str = "", steps: bool = False, numbers: bool = False) -> str:
    """Primal, Lagrangian, KKT conditions, dual, recovery (and optionally the derivation steps
    and the numbers on the data) of ``model``'s method, as text, LaTeX or Markdown."""
    P = model.primal(X, y)
    sections: list[tuple[str, str, str]] = []   # (title, text, latex)
    L, Kc, D = P.lagrangian(), P.kkt(), model.dual(X, y)
    for title, obj in (("Primal", P), ("Lagrangian", L), ("KKT conditions", Kc), ("Dual", D)):
        sections.append((title, str(obj), obj.to_latex()))
    rec = RECOVERY.get(type(model).__name__, "")
    if rec:
        sections.append(("Recovery", rec, r"\text{" + rec.replace("\n", " ") + "}"))
    nota = notation_text(model)
    sections.append(("Notation", nota, r"\text{" + nota.replace("\n", " ") + "}"))
    if steps:
        title = ("Derivation (by hand)" if type(model).__name__ in HAND_STEPS
                 else "Derivation (mechanical)")
        sections.append((title, steps_text(model, X, y),
                         steps_text(model, X, y, "latex")))
    if numbers:
        sections.append((f"Numbers on {data_name or 'the data'}",
                         numbers_text(model, X, y, data_name),
                         numbers_text(model, X, y, data_name, "latex")))
    name = type(model).__name__
    out: list[str] = []
    if fmt == "markdown":
        out.append(f"# {name}\n")
        for title, txt, tex in sections:
            if title in ("Recovery", "Notation"):
                out.append(f"## {title}\n\n```\n{txt}\n```\n")
            else:
                out.append(f"## {title}\n\n$$\n{tex}\n$$\n")
    elif fmt == "latex":
        out.append(f"% {name}")
        for title, txt, tex in sections:
            if title in ("Recovery", "Notation"):
                out.append(f"% {title}\n" + "\n".join("% " + ln for ln in txt.splitlines()))
            else:
                out.append(f"% {title}\n\\[\n{tex}\n\\]")
    else:
        for title, txt, _ in sections:
            out.append(f"== {title} ==\n{txt}\n")
    return "\n".join(out)


def side_by_side(model: Any, width: int = 60) -> str:
    """Primal and dual of one fit in two columns: each problem as rendered, its value at the
    returned point, and the pairing of every primal constraint with its multiplier (the dual's
    variable) -- the primal-versus-dual view of one solve."""
    state = getattr(model, "_kkt_state", None)
    if state is None:
        raise ValueError("side_by_side needs a model fitted in this session; fit it first")
    data = state[0]
    P, D = model._primal(data), model._dual(data)
    cert = model.certificate_
    left, right = str(P).splitlines(), str(D).splitlines()
    n = max(len(left), len(right))
    left = left + [""] * (n - len(left)) + ["", f"value P = {cert.primal_objective:.10g}"]
    right = right + [""] * (n - len(right)) + ["", f"value D = {cert.dual_objective:.10g}"]
    w = max(width, max(len(x) for x in left) + 2)
    rows = [f"{'PRIMAL':<{w}}DUAL", f"{'-' * (w - 2):<{w}}{'-' * 40}"]
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ""
        b = right[i] if i < len(right) else ""
        rows.append(f"{a:<{w}}{b}")
    rows.append("")
    rows.append(f"gap P - D = {cert.duality_gap:.3e} (relative {cert.relative_gap:.3e})")
    rows.append("each primal constraint's multiplier is a dual variable:")
    for c in P.constraints:
        rows.append(f"  [{c.mult_txt}]  {c.txt()}" + (f",  {c.where_txt()}" if c.where_txt()
                                                    else ""))
    return "\n".join(rows)
