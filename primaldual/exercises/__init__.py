"""Graded exercises: derive a dual (or a KKT system) by hand, have it checked line by line.

Each :class:`Exercise` poses a primal of the catalogue on small fixed data and asks for one
piece of its derivation. The answer is a derivation file in the format of
``primaldual check-derivation`` (:mod:`primaldual.derivation_file`), run with the exercise's
names already defined (``np``, ``pm``, the data ``X``, ``y``, ``N``, ``kernel``, the
hyper-parameters and ``primal``), so it only defines the piece: ``dual = pm.Problem(...)`` or
``kkt = [...]``. :func:`grade` compares it with the mechanical derivation
(:func:`~primaldual.derivation_check.check_derivation`) and names the first line that differs
with a witness.

Every exercise ships a reference answer (``solutions/NAME.txt``, :func:`reference_path`) that
the grader passes.

>>> from primaldual.exercises import names
>>> "csvc-dual" in names()
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from textwrap import fill
from typing import Any

import numpy as np

from .. import model as pm
from ..bounds import EnclosingBall
from ..derivation_check import DerivationReport
from ..derivation_file import DerivationFile, DerivationFileError, read_derivation_file
from ..kernels import make_kernel
from ..methods.lssvm import LSSVC
from ..methods.nusvc import NuSVC
from ..methods.proximal import ProximalSVC
from ..methods.ridge import KernelRidge
from ..methods.svc import CSVC, L2SVC, HardMarginSVC
from ..methods.svr import EpsilonSVR

__all__ = ["EXERCISES", "Exercise", "Grade", "exercise", "given", "grade", "names",
           "listing", "read_answer", "reference_path", "reference_text", "statement"]

#: The data every exercise is built on: few points, so that a statement stays readable, and
#: random ones, so that no coincidence of the data hides a wrong line.
N_POINTS = 8
GAMMA = 0.5


def _classification(separable: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N_POINTS, 2))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(N_POINTS) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    if separable:  # pull the classes apart: the hard margin needs separable data
        X[:, 0] += 2.0 * y
    return X, y


def _regression() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((N_POINTS, 2))
    return X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(N_POINTS)


@dataclass(frozen=True)
class Exercise:
    """One exercise.

    ``name`` is what the command line takes; ``method`` the estimator the primal is drawn
    from; ``asks`` the piece the answer must define (``"dual"`` or ``"kkt"``); ``task`` what
    to derive; ``hints`` what to name and where the usual slips are; ``params`` the
    hyper-parameters (given to the answer under these names); ``build(X, y, kernel, **params)``
    the primal; ``regression`` picks the data."""

    name: str
    title: str
    method: str
    asks: str
    task: str
    hints: tuple[str, ...]
    params: dict[str, float]
    build: Callable[..., Any]
    regression: bool = False
    separable: bool = False

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        return _regression() if self.regression else _classification(self.separable)


def _est(cls: type, **fixed: Any) -> Callable[..., Any]:
    def build(X: np.ndarray, y: np.ndarray, kernel: Any, **params: Any) -> Any:
        return cls(kernel=kernel, **fixed, **params).primal(X, y)
    return build


def _ball(X: np.ndarray, y: np.ndarray, kernel: Any) -> Any:
    return EnclosingBall(kernel=kernel).primal(X)


_Q = "Q_ij = y_i y_j k(x_i, x_j) is pm.GramOperator(kernel, X, sign=y)"
_EQ_B = ("the stationarity in b gives an equality constraint of the dual (its multiplier is "
         "-b); it is there whenever the primal has a bias b")
_DUAL = "Define `dual`, a pm.Problem over your dual variables (\"max\", or \"min\" of minus it)"
_KKT = ("Define `kkt`, a list of affine conditions (pm.Constraint: stationarity, primal and "
        "dual feasibility) and complementarity pairs (multiplier, expression) meaning "
        "multiplier_i * expression_i = 0")

#: The exercises, easiest first.
EXERCISES: tuple[Exercise, ...] = (
    Exercise("hard-margin-dual", "the dual of the hard-margin SVC", "HardMarginSVC", "dual",
             "the dual problem of the hard-margin SVC. " + _DUAL + ".",
             ("w is eliminated by ∂L/∂w = 0: w = Σ_i α_i y_i φ(x_i); " + _Q, _EQ_B), {},
             _est(HardMarginSVC), separable=True),
    Exercise("csvc-dual", "the dual of the C-SVC", "CSVC", "dual",
             "the dual problem of the C-SVC (soft margin, hinge loss). " + _DUAL + ".",
             ("ξ and μ are eliminated by ∂L/∂ξ_i = 0: C - α_i - μ_i = 0 with μ_i ≥ 0, "
              "which leaves a box on α", _EQ_B, _Q), {"C": 1.0}, _est(CSVC)),
    Exercise("l2svc-dual", "the dual of the L2-SVC (squared hinge)", "L2SVC", "dual",
             "the dual problem of the L2-SVC. " + _DUAL + ".",
             ("∂L/∂ξ_i = 0 gives ξ_i = α_i / C: no box on α, but a diagonal term in the "
              "quadratic form (pm.GramOperator(kernel, X, sign=y, diag=d) is Q + d I)", _EQ_B),
             {"C": 2.0}, _est(L2SVC)),
    Exercise("nusvc-dual", "the dual of the ν-SVC", "NuSVC", "dual",
             "the dual problem of the ν-SVC (Schölkopf et al.). " + _DUAL + ".",
             ("the slack weight is 1/N, so the box of the dual is α_i ≤ 1/N, not C",
              "∂L/∂ρ = 0 with the multiplier δ ≥ 0 of ρ ≥ 0 gives an inequality on Σ_i α_i",
              "the dual objective has no linear term", _EQ_B, _Q), {"nu": 0.3}, _est(NuSVC)),
    Exercise("svr-dual", "the dual of the ε-SVR", "EpsilonSVR", "dual",
             "the dual problem of the ε-SVR. " + _DUAL + ".",
             ("two multipliers per point: α_i of the upper tube edge, α*_i of the lower "
              "(variables `alpha` and `alpha_star`); a variable `beta` = α - α* of your own "
              "is read off an equality of yours",
              "the tube gives -ε Σ_i (α_i + α*_i): both multipliers pay ε",
              "the stationarity in b gives Σ_i (α_i - α*_i) = 0",
              "K_ij = k(x_i, x_j) is pm.GramOperator(kernel, X)"),
             {"C": 1.0, "epsilon": 0.1}, _est(EpsilonSVR), regression=True),
    Exercise("lssvm-kkt", "the KKT system of the LS-SVM classifier", "LSSVC", "kkt",
             "the KKT conditions of the LS-SVM classifier (Suykens): the linear system its "
             "fit solves. " + _KKT + ".",
             ("w is a vector of coefficients here, w = Σ_j w_j φ(x_j), so ⟨w, φ(x_i)⟩ is "
              "(K w)_i with K = pm.Data(\"K\", kernel(X))",
              "the constraints are equalities: no sign conditions, no complementarity",
              "∂L/∂e_i = 0 ties α_i to e_i"), {"C": 2.0}, _est(LSSVC)),
    Exercise("kernel-ridge-dual", "the dual of kernel ridge regression", "KernelRidge",
             "dual", "the dual problem of kernel ridge regression (no bias). " + _DUAL + ".",
             ("∂L/∂e_i = 0 gives e_i = α_i / C: a diagonal term in the quadratic form "
              "(pm.GramOperator(kernel, X, diag=d) is K + d I)",
              "no bias, so no equality constraint: the dual is unconstrained"),
             {"C": 2.0}, _est(KernelRidge), regression=True),
    Exercise("ball-dual", "the dual of the smallest enclosing ball (SVDD, C = ∞)",
             "EnclosingBall", "dual",
             "the dual problem of the smallest ball enclosing the points in feature space, "
             "written with r = R² - ‖c‖² so that the constraints are affine. " + _DUAL + ".",
             ("the multiplier of the i-th constraint is α_i; ∂L/∂r = 0 gives Σ_i α_i = 1",
              "κ_i = k(x_i, x_i): pm.Data(\"kappa\", np.diag(kernel(X)))",
              "the quadratic term is -αᵀKα, without 1/2"), {}, _ball),
    Exercise("proximal-dual", "the dual of the proximal SVM", "ProximalSVC", "dual",
             "the dual problem of the proximal SVM (Fung and Mangasarian): the bias is "
             "penalised, b² in the objective. " + _DUAL + ".",
             ("∂L/∂b = 0 gives b = Σ_i α_i y_i: no equality constraint, a term (yᵀα)² instead "
              "(pm.sum_squares(pm.dot(Y, alpha)))",
              "∂L/∂ξ_i = 0 gives ξ_i = α_i / C: a diagonal term 1/C",
              "the constraints are equalities: α is free"), {"C": 2.0}, _est(ProximalSVC)),
    Exercise("csvc-kkt", "the KKT conditions of the C-SVC", "CSVC", "kkt",
             "the KKT conditions of the C-SVC. " + _KKT + ".",
             ("w is a vector of coefficients here, w = Σ_j w_j φ(x_j), so ⟨w, φ(x_i)⟩ is "
              "(K w)_i with K = pm.Data(\"K\", kernel(X))",
              "L = f - Σ_i α_i g_i - Σ_i μ_i ξ_i for constraints g_i ≥ 0",
              "two complementarity pairs: (alpha, margin slack) and (mu, xi)"),
             {"C": 1.0}, _est(CSVC)),
)

_BY_NAME: dict[str, Exercise] = {e.name: e for e in EXERCISES}


def names() -> list[str]:
    """The exercise names, easiest first."""
    return [e.name for e in EXERCISES]


def exercise(name: str) -> Exercise:
    """The exercise called ``name`` (``ValueError`` naming the allowed values)."""
    key = name.strip().lower().replace("_", "-")
    if key not in _BY_NAME:
        raise ValueError(f"unknown exercise {name!r}; allowed: {', '.join(names())}")
    return _BY_NAME[key]


def given(ex: Exercise) -> dict[str, Any]:
    """The names an answer file runs with: ``np``, ``pm``, ``X``, ``y``, ``N``, ``kernel``, the
    hyper-parameters (floats) and ``primal``."""
    X, y = ex.data()
    kernel = make_kernel("rbf", gamma=GAMMA)
    return {"np": np, "pm": pm, "X": X, "y": y, "N": X.shape[0], "kernel": kernel,
            **ex.params, "primal": ex.build(X, y, kernel, **ex.params)}


def _names_hint(primal: Any) -> list[str]:
    """What the answer's variables are called: the primal's multipliers (and variables)."""
    mults = ", ".join(f"`{c.multiplier}` ({c.mult_txt} of {c.txt()})" for c in primal.constraints)
    out = [f"the grader matches your variables by name to the primal's multipliers: {mults}"]
    varnames = ", ".join(f"`{v.name}`" for v in primal.variables)
    out.append(f"the primal's variables are {varnames}")
    return out


#: Width the statement's prose is wrapped to (the primal is printed as it renders).
_WIDTH = 92


def statement(ex: Exercise) -> str:
    """The text ``primaldual exercise NAME`` prints: the primal, what to derive, hints."""
    g = given(ex)
    X, primal = g["X"], g["primal"]
    hyper = "".join(f", {k} = {v:g}" for k, v in ex.params.items())
    names_hint = _names_hint(primal)
    if ex.asks == "dual":
        names_hint = names_hint[:1]
    given_names = ", ".join(["np", "pm", f"X ({X.shape[0]} x {X.shape[1]})",
                             f"y ({len(g['y'])},)", "N", "kernel", *ex.params, "primal"])
    lines = [f"Exercise {ex.name}: {ex.title} (from {ex.method})", "",
             f"The primal, on N = {X.shape[0]} random points in R^{X.shape[1]}, "
             f"RBF kernel γ = {GAMMA:g}{hyper}:", "", str(primal), "",
             fill(f"Derive {ex.task}", _WIDTH), "", "Hints:"]
    lines += [fill(h, _WIDTH, initial_indent="  - ", subsequent_indent="    ")
              for h in (*names_hint, *ex.hints)]
    lines += ["", fill(f"Your file is run with these names defined: {given_names}.", _WIDTH),
              f"Grade it: primaldual exercise {ex.name} --answer FILE.py"]
    return "\n".join(lines)


def listing() -> str:
    """One line per exercise: its name, what it asks for and the method it is drawn from."""
    w = max(len(e.name) for e in EXERCISES)
    return "\n".join(f"{e.name:<{w}}  {e.title} ({e.method})" for e in EXERCISES)


def reference_path(ex: Exercise) -> Path:
    """The shipped reference answer of ``ex``."""
    return Path(__file__).resolve().parent / "solutions" / f"{ex.name}.txt"


def reference_text(ex: Exercise) -> str:
    """The shipped reference answer of ``ex``, as text."""
    return reference_path(ex).read_text(encoding="utf-8")


@dataclass
class Grade:
    """The grading of one answer: ``ok``, the :class:`DerivationReport` and ``str()`` the text
    ``primaldual exercise NAME --answer FILE`` prints."""

    exercise: Exercise
    report: DerivationReport

    @property
    def ok(self) -> bool:
        return self.report.ok

    def __str__(self) -> str:
        if self.ok:
            return f"{self.exercise.name}: PASS\n{self.report}"
        first = self.report.first
        where = f"{first.part}: {first.title}" if first is not None else ""
        return f"{self.exercise.name}: FAIL (first wrong line: {where})\n{self.report}"


def read_answer(ex: Exercise, path: str) -> DerivationFile:
    """Run the answer file with the exercise's names (:func:`given`) defined.

    Raises
    ------
    DerivationFileError
        As :func:`~primaldual.derivation_file.read_derivation_file`, and when the file
        replaces the exercise's ``primal`` or does not define the piece the exercise asks for.
    """
    g = given(ex)
    ans = read_derivation_file(path, given=g, run_name="__primaldual_exercise__")
    if ans.primal is not g["primal"]:
        raise DerivationFileError(f"{path} defines its own `primal`: an exercise grades "
                                  "against its own primal (the name `primal` is given), so "
                                  "leave it out")
    if ex.asks not in ans.pieces:
        what = "the KKT conditions" if ex.asks == "kkt" else "the dual"
        raise DerivationFileError(f"{path} defines no `{ex.asks}`: exercise {ex.name} asks "
                                  f"for {what} (defined: {', '.join(ans.pieces)})")
    return ans


def grade(ex: Exercise | str, path: str, tol: float = 1e-7) -> Grade:
    """Grade the answer file ``path`` of exercise ``ex`` (an :class:`Exercise` or its name)."""
    if isinstance(ex, str):
        ex = exercise(ex)
    return Grade(ex, read_answer(ex, path).check(tol))
