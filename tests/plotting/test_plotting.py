"""Plots render with the Agg backend; the images for docs/ecosystem.md are written to docs/img/
(set PRIMALDUAL_WRITE_DOCS_IMG=1 to regenerate them)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import primaldual as pd  # noqa: E402
from primaldual import plotting  # noqa: E402
from primaldual.sparsity import PrunedLSSVM  # noqa: E402
from primaldual.tuning import fit_with_options  # noqa: E402

IMG = Path(__file__).resolve().parents[2] / "docs" / "img"


def _save(fig, name):
    if os.environ.get("PRIMALDUAL_WRITE_DOCS_IMG"):
        IMG.mkdir(parents=True, exist_ok=True)
        fig.savefig(IMG / name, dpi=90, bbox_inches="tight")
    plt.close(fig)


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(-1, 0.9, (40, 2)), rng.normal(1, 0.9, (40, 2))]
    y = np.r_[np.zeros(40, int), np.ones(40, int)]
    return X, y


def _lines(ax):
    return sum(len(c.get_paths()) for c in ax.collections if hasattr(c, "get_paths"))


def test_decision_boundary(blobs):
    X, y = blobs
    m = pd.CSVC(C=1.0, gamma=0.5).fit(X, y)
    fig, ax = plt.subplots()
    plotting.plot_decision_boundary(m, X, y, ax=ax)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("free SV" in s for s in labels) and any("bounded SV" in s for s in labels)
    assert f"free SV ({len(m.free_support_)})" in labels
    _save(fig, "ecosystem_decision_boundary.png")
    with pytest.raises(ValueError, match="2 features"):
        plotting.plot_decision_boundary(m, np.c_[X, X], y)


def test_alpha_spectrum(blobs):
    X, y = blobs
    svm = pd.CSVC(C=1.0, gamma=0.5).fit(X, y)
    ls = pd.LSSVC(C=1.0, gamma=0.5).fit(X, y)
    fig, ax = plt.subplots()
    plotting.plot_alpha_spectrum({"C-SVC": svm, "LS-SVM": ls}, ax=ax)
    lines = ax.get_lines()
    assert len(lines) == 2
    # SVM spectrum has zeros (plotted as gaps), LS-SVM none
    assert np.isnan(lines[0].get_ydata()).any() and not np.isnan(lines[1].get_ydata()).any()
    _save(fig, "ecosystem_alpha_spectrum.png")


def test_smo_trace(blobs):
    X, y = blobs
    m = fit_with_options(pd.CSVC(C=10.0, gamma=0.5, tol=1e-6), X, y, record_trace=True)
    fig, ax = plt.subplots()
    plotting.plot_smo_trace(m, ax=ax)
    v = ax.get_lines()[0].get_ydata()
    assert len(v) == len(m.solution_.info["trace"]["iter"]) and np.nanmin(v) < 1e-5
    _save(fig, "ecosystem_smo_trace.png")
    with pytest.raises(ValueError, match="record_trace"):
        plotting.plot_smo_trace(pd.LSSVC().fit(X, y))


def test_pruning_path(blobs):
    X, y = blobs
    pr = PrunedLSSVM(pd.LSSVC(C=1.0, gamma=0.5), validation_fraction=0.25, tol=0.02).fit(X, y)
    fig, ax = plt.subplots()
    plotting.plot_pruning_path(pr, ax=ax)
    assert list(ax.get_lines()[0].get_xdata()) == pr.path_.n_sv
    _save(fig, "ecosystem_pruning_path.png")


def test_svr_tube():
    rng = np.random.default_rng(1)
    X = np.sort(rng.uniform(-3, 3, 60))[:, None]
    y = np.sinc(X[:, 0]) + 0.1 * rng.normal(size=60)
    m = pd.EpsilonSVR(C=10.0, epsilon=0.1, gamma=1.0).fit(X, y)
    fig, ax = plt.subplots()
    plotting.plot_svr_tube(m, X, y, ax=ax)
    f, up = ax.get_lines()[0].get_ydata(), ax.get_lines()[1].get_ydata()
    np.testing.assert_allclose(up - f, 0.1)
    _save(fig, "ecosystem_svr_tube.png")


def test_save_figure_creates_the_folder_and_says_where(tmp_path, capsys):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    out = plotting.save_figure(fig, tmp_path / "sub" / "f.png", dpi=40)
    plt.close(fig)
    assert out.exists() and out.stat().st_size > 0
    assert capsys.readouterr().out.strip() == f"figure: {out}"
