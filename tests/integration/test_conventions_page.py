"""The conventions page states what the code computes: the relative gap's unit and nu-SVC's
scale of ``decision_function``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import primaldual as pd

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "conventions.md").read_text()


def _row(name: str) -> str:
    return next(line for line in PAGE.splitlines() if line.startswith(f"| {name} |"))


def test_relative_gap_row_matches_the_certificate():
    row = _row("duality gap")
    assert "max(u, abs(P))" in row and "min(1, C_max²)" in row and "max(1, abs(P))" not in row
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 2))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(80) > 0, 1, -1)
    for C in (0.01, 0.1, 10.0):
        c = pd.CSVC(C=C, kernel="rbf", gamma=0.5).fit(X, y).certificate_
        u = min(1.0, C * C)
        expected = (c.primal_objective - c.dual_objective) / max(u, abs(c.primal_objective))
        assert np.isclose(c.relative_gap, expected, rtol=1e-9, atol=1e-15)


def test_prediction_row_names_the_nu_svc_scale():
    row = _row("prediction")
    assert "nu-SVC" in row and "/ ρ" in row
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    m = pd.NuSVC(nu=0.3, kernel="rbf", gamma=0.5).fit(X, y)
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    f_pd = K @ m.beta_ + m.b_
    np.testing.assert_allclose(m.decision_function(X), f_pd / m.rho_, rtol=1e-6, atol=1e-9)


def test_the_docs_extra_the_installation_page_names_exists():
    import tomllib
    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert {"mkdocs", "mkdocs-material"} <= {r.split(">")[0].split("=")[0] for r in
                                              extras["docs"]}
    assert '".[docs]"' in (root / "docs" / "installation.md").read_text()


def test_the_radius_margin_bound_is_attributed_and_stated_with_its_constant():
    """Zhang 8.1.1 covers the VC dimension only; the bound is Vapnik's, with the diameter
    D = 2R of the ball, so 4 R^2 ||w||^2 / N bounds the leave-one-out error rate."""
    root = Path(__file__).resolve().parents[2]
    form = (root / "docs" / "formulations.md").read_text()
    sec = form[form.index("## 16."):]
    sec = sec[:sec.index("\n## ", 5)]
    assert "4R^2\\|w\\|^2/N" in sec and "D^2 = 4R^2" in sec
    assert "Zhang](bibliography.md#zhang) 8.1.1 (the bound" not in sec
    assert "## Vapnik and Chapelle" in (root / "docs" / "bibliography.md").read_text()


def test_api_and_kernel_methods_pages_state_the_bound_as_the_code_computes_it():
    """``m.bound()`` is the criterion R^2 ||w||^2; the pages call that the criterion and give
    the bound 4 R^2 ||w||^2 / N beside it (checked against the ball and the fit)."""
    root = Path(__file__).resolve().parents[2]
    api = (root / "docs" / "api.md").read_text()
    row = next(line for line in api.splitlines() if line.startswith("| `m.bound()`"))
    assert "criterion `R² ‖w‖²`" in row and "`4 R² ‖w‖² / N`" in row and "D² = 4R²" in row
    kpage = (root / "docs" / "kernel_methods_beyond_svm.md").read_text()
    assert "`4 R² ‖w‖² / N` (`D² = 4R²`)" in kpage and "| `R² ‖w‖²` |" in kpage
    rng = np.random.default_rng(2)
    X = np.r_[rng.standard_normal((15, 2)) + 3.0, rng.standard_normal((15, 2)) - 3.0]
    y = np.r_[np.ones(15), -np.ones(15)]
    m = pd.HardMarginSVC(kernel="linear").fit(X, y)
    R2 = pd.EnclosingBall(kernel="linear").fit(X).radius2_
    assert m.bound() == pytest.approx(R2 * float(m.beta_ @ (X @ X.T) @ m.beta_), rel=1e-6)


def test_kpca_pages_say_what_the_certificate_objective_is():
    """The LS-SVM primal is 0 at every eigenpair; the certificate's primal objective is the
    captured variance sum_k u_k' Omega_c u_k, which the pages must say (checked numerically)."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "kernel_methods_beyond_svm.md").read_text()
    assert "captured" in text or "capture" in text
    assert "Σ_k u_kᵀ Ω_c u_k" in text
    from primaldual.datasets import load_dataset
    X, _ = load_dataset("moons", n_samples=100)
    m = pd.KernelPCA(n_components=2, kernel="rbf", gamma=2.0).fit(X)
    K = np.exp(-2.0 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    H = np.eye(100) - 1.0 / 100
    Om = H @ K @ H
    U = m.eigenvectors_
    assert np.isclose(m.certificate_.primal_objective, np.trace(U.T @ Om @ U), rtol=1e-8)
