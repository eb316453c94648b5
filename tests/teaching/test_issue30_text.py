"""Issue 30: what `show` and docs/formulations.md print for LapRLS and nu-SVR is what the code
computes. The printed closed forms are translated token by token into numpy and evaluated on
data built here (kernel, k-NN graph and Laplacian by hand, not by the library)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import primaldual as pd

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
ROOT = Path(__file__).resolve().parents[2]
FORMULATIONS = (ROOT / "docs" / "formulations.md").read_text()

# ----------------------------------------------------------------------------- a tiny evaluator
#: printed symbol (text or TeX) -> Python name; scalars and matrices both (np.matrix algebra)
_TOKENS = [
    (r"\\tfrac\{([^{}]*)\}\{((?:[^{}]|\{[^{}]*\})*)\}", None),  # \tfrac{a}{b}: recursive
    (r"\(u\+l\)(?:²|\^2)", "ul2"),
    (r"\^\{-1\}|⁻¹", ".I"),
    (r"\^T|ᵀ", ".T"),
    (r"\\gamma_A|γ_A", "gA"),
    (r"\\gamma_I|γ_I", "gI"),
    (r"L_\{?G\}?", "L"),   # the graph Laplacian (L alone is the Lagrangian)
    (r"[JKIVylu]", None),      # no bare L: the Laplacian is printed L_G
    (r"[+/()]", None),
    (r"\s+|\\,", ""),
]


def to_python(expr: str) -> str:
    """``(Jᵀ J K + γ_A l I)⁻¹ Jᵀ y`` or its TeX -> ``(J.T*J*K+gA*l*I).I*J.T*y`` (np.matrix)."""
    out: list[str] = []
    pos = 0
    while pos < len(expr):
        for pat, rep in _TOKENS:
            m = re.compile(pat).match(expr, pos)
            if not m:
                continue
            tok = m.group(0)
            if pat.startswith(r"\\tfrac"):
                tok = f"(({to_python(m.group(1))})/({to_python(m.group(2))}))"
            elif rep is not None:
                tok = rep
            if tok:
                starts = tok[0].isalnum() or tok[0] == "("
                ends = out and (out[-1][-1].isalnum() or out[-1][-1] == ")")
                if starts and ends:   # juxtaposition is a product
                    out.append("*")
                out.append(tok)
            pos = m.end()
            break
        else:
            raise ValueError(f"cannot read {expr[pos:]!r} in {expr!r}")
    return "".join(out)


def test_evaluator_reads_what_it_should():
    assert to_python("(Jᵀ J K + γ_A l I)⁻¹ Jᵀ y") == "(J.T*J*K+gA*l*I).I*J.T*y"
    assert to_python(r"\tfrac{\gamma_I l}{(u+l)^2}L_GK") == "((gI*l)/(ul2))*L*K"
    with pytest.raises(ValueError):
        to_python("Z")


# ----------------------------------------------------------------------------- reference data
def _problem(seed: int = 0, n_lab: int = 7, n_unl: int = 5, k: int = 3, gamma: float = 0.7):
    """Data with unlabelled points (labelled rows first) and, by hand: K, the symmetrised k-NN
    heat-kernel graph's Laplacian (t = mean squared k-NN distance), J."""
    rng = np.random.default_rng(seed)
    n = n_lab + n_unl
    X = rng.standard_normal((n, 2))
    y = np.r_[np.sin(2 * X[:n_lab, 0]) + 0.1 * X[:n_lab, 1], np.full(n_unl, np.nan)]
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.exp(-gamma * d2)
    nn = np.argsort(d2 + np.diag(np.full(n, np.inf)), axis=1)[:, :k]
    t = np.mean(np.take_along_axis(d2, nn, axis=1))
    W = np.zeros((n, n))
    for i in range(n):
        W[i, nn[i]] = np.exp(-d2[i, nn[i]] / t)
    W = np.maximum(W, W.T)
    L = np.diag(W.sum(1)) - W
    return X, y, K, L, n_lab, n_unl


def _evaluate(formula: str, X, y, K, L, l_, u, gA, gI, v=None) -> np.ndarray:
    n = l_ + u
    ns = {"J": np.asmatrix(np.eye(l_, n)), "K": np.asmatrix(K), "L": np.asmatrix(L),
          "I": np.asmatrix(np.eye(n)), "y": np.asmatrix(y[:l_]).T, "l": float(l_),
          "u": float(u), "ul2": float(n) ** 2, "gA": gA, "gI": gI,
          "V": np.asmatrix(np.diag(np.full(l_, 1.0 / l_) if v is None else v))}
    return np.asarray(eval(to_python(formula), {"__builtins__": {}}, ns)).ravel()  # noqa: S307


GA, GI = 0.05, 3.0


def _fitted(X, y, sample_weight=None):
    m = pd.LapRLS(gamma_A=GA, gamma_I=GI, gamma=0.7, n_neighbors=3)
    m.fit(X, y, sample_weight=sample_weight, backend="cvxpy")
    return np.asarray(m.beta_, dtype=float)


def test_show_laprls_closed_form_equals_the_fit(capsys):
    """The closed form `show laprls` prints, evaluated on data, is the fitted a (= beta_)."""
    from primaldual.cli import main

    assert main(["show", "laprls"]) == 0
    out = capsys.readouterr().out
    rec = out.split("== Recovery ==")[1].split("==")[0].replace("\n", " ")
    formula = re.search(r"in closed form a = (.*?)\s+\(an", rec).group(1)
    X, y, K, L, l_, u = _problem()
    a = _evaluate(formula, X, y, K, L, l_, u, GA, GI)
    np.testing.assert_allclose(a, _fitted(X, y), rtol=1e-6, atol=1e-8)
    # the wrong-dimension form the issue found does not evaluate (J is l x (l+u))
    with pytest.raises(ValueError):
        _evaluate("(J K + γ_A l I + γ_I l/(u+l)² L K)⁻¹ J y", X, y, K, L, l_, u, GA, GI)


def test_formulations_closed_forms_equal_the_fit():
    """Section 12's unweighted and weighted closed forms (TeX) evaluated on data."""
    sec = FORMULATIONS.split("## 12.")[1].split("## 13.")[0].replace("\n", " ")
    plain, weighted = re.findall(r"\$a = (\(J\^T.*?\)\^\{-1\}J\^T(?:V)?y)\$", sec)
    X, y, K, L, l_, u = _problem(seed=1)
    np.testing.assert_allclose(_evaluate(plain, X, y, K, L, l_, u, GA, GI), _fitted(X, y),
                               rtol=1e-6, atol=1e-8)
    s = np.r_[np.linspace(0.5, 2.0, l_), np.ones(u)]
    v = s[:l_] / s[:l_].sum()
    a = _evaluate(weighted, X, y, K, L, l_, u, GA, GI, v)
    np.testing.assert_allclose(a, _fitted(X, y, s), rtol=1e-6, atol=1e-8)


def test_show_laprls_notation_and_where():
    """No bias and no SVR text in LapRLS's notation; the dual's `where` defines only symbols
    the dual uses (no Y); LapSVC keeps its Y and its bias."""
    from primaldual.teaching import notation_text

    X, y, *_ = _problem()
    nota = notation_text(pd.LapRLS())
    assert "+ b" not in nota and "SVR" not in nota and "no bias" in nota
    assert "J = [I_l 0] (l × (l+u))" in nota
    dual = str(pd.LapRLS().dual(X, y))
    assert "Y = diag(y)" not in dual and "Y" not in dual.split("where")[0]
    svc = notation_text(pd.LapSVC())
    assert "f_i + b" in svc and "Y = diag(y)" in svc and "SVR" not in svc
    ycls = np.where(np.isnan(y), np.nan, np.where(y > np.nanmedian(y), 1.0, -1.0))
    assert "Y = diag(y)" in str(pd.LapSVC().dual(X, ycls))


@pytest.mark.parametrize("method", ["laprls", "lapsvc"])
def test_show_laplacian_steps_are_a_checked_derivation(capsys, method):
    from primaldual.cli import main

    assert main(["show", method, "--steps"]) == 0
    out = capsys.readouterr().out
    steps = out.split("== Derivation (by hand) ==")[1]
    assert "only norm2" not in out and "not derived" not in out
    assert "Representer" in steps and "a = P⁻¹ Jᵀ" in steps
    checks = [ln for ln in steps.splitlines() if ln.startswith("check:")]
    assert len(checks) == (3 if method == "laprls" else 2)
    assert all(ln.endswith(": equal") for ln in checks), checks
    if method == "laprls":   # the derivation ends at the closed form Recovery prints
        rec = out.split("== Recovery ==")[1].split("==")[0].replace("\n", " ")
        formula = re.search(r"in closed form a = \((.*?)\)⁻¹ Jᵀ y", rec).group(1)
        assert f"({formula.replace('  ', ' ')}) a = Jᵀ y" in " ".join(steps.split())
    assert main(["show", method, "--steps", "--markdown"]) == 0
    md = capsys.readouterr().out
    assert "## Derivation (by hand)" in md and r"\begin{aligned}" in md


@pytest.mark.parametrize("method", ["laprls", "lapsvc"])
def test_laplacian_is_never_written_L_beside_the_lagrangian(capsys, method):
    """`L` is the Lagrangian (`L(a, e; β)`, `∂L/∂a`); the graph Laplacian is `L_G` everywhere
    `show` prints, in text and in TeX, and in section 12 of docs/formulations.md."""
    from primaldual.cli import main

    bare = re.compile(r"(?<![\\\w])L(?![_(\w])(?!\s*\()")   # an L that is not L_G, L( or a word
    for fmt in ([], ["--markdown"]):
        assert main(["show", method, "--steps", *fmt]) == 0
        out = capsys.readouterr().out
        assert "L_G" in out
        for line in out.splitlines():
            hits = [m.start() for m in bare.finditer(line.replace(r"\partial L", ""))
                    if not line[m.start():].startswith("L/")]
            assert not hits, line
    sec = FORMULATIONS.split("## 12.")[1].split("## 13.")[0]
    assert "L_G = D - W" in sec and not re.search(r"(?<![\\\w])L(?:K|\s*=\s*D| K)", sec)


def test_formulations_nu_svr_box_is_the_codes():
    """Section 6's box and sum bound are what the fit satisfies: alpha_i, alpha*_i reach C (not
    C/N) and 1^T(alpha + alpha*) = C nu N."""
    sec = FORMULATIONS.split("## 6. nu-SVR")[1].split("## 7.")[0].replace("\n", " ")
    assert r"0 \leq \alpha_i, \alpha_i^* \leq C_i" in sec and "C/N" not in sec
    assert r"1^T(\alpha + \alpha^*) \leq C\nu N\ [\varepsilon]" in sec
    rng = np.random.default_rng(0)
    N, C, nu = 40, 2.0, 0.4
    X = rng.uniform(-3, 3, (N, 1))
    y = np.sinc(X[:, 0]) + 0.3 * rng.standard_normal(N)
    m = pd.NuSVR(C=C, nu=nu, gamma=1.0, tol=1e-6).fit(X, y)
    a, a_s = np.asarray(m.alpha_), np.asarray(m.alpha_star_)
    assert np.max(np.r_[a, a_s]) == pytest.approx(C, rel=1e-6)        # the box is C
    assert np.sum(a + a_s) == pytest.approx(C * nu * N, rel=1e-5)     # the sum bound C nu N
    shown = str(m.dual(X, y))
    assert "≤ C ν N" in shown


def test_show_numbers_print_no_bias_or_margin_for_laprls(capsys):
    """LapRLS has no bias and is no classifier: its numbers print neither `b` nor a margin; the
    printed w is Σ_j a_j x_j (linear kernel) of the printed a."""
    from primaldual.cli import main

    assert main(["show", "laprls", "--data", "amini"]) == 0
    out = capsys.readouterr().out.split("== Numbers on amini ==")[1]
    assert "b   =" not in out and "margin" not in out
    X = np.array([[float(v) for v in ln.strip(" []").split()] for ln in
                  out.split("X (6 x 2):\n")[1].split("\ny:")[0].splitlines()])
    a = np.array(out.split("α   = [")[1].split("]")[0].split(), dtype=float)
    w = np.array(out.split("w   = [[")[1].split("]]")[0].split(), dtype=float)
    np.testing.assert_allclose(X.T @ a, w, atol=2e-3)   # printed to 4 decimals (X to 2)
