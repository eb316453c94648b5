r"""Plots of fitted models (matplotlib is an optional extra: ``pip install primaldual[plot]``).

* :func:`plot_decision_boundary` -- 2-D data: ``f(x) = 0`` and the margins ``f(x) = +-1``,
  support vectors marked free (``0 < alpha_i < C_i``, on the margin: circles) and bounded
  (``alpha_i = C_i``, inside the margin or misclassified: squares); region and point colours
  agree (red ``f < 0``, blue ``f > 0``).
* :func:`plot_alpha_spectrum` -- the sorted ``|alpha_i|`` (Suykens Fig. 3.1): an SVM's spectrum
  drops to exactly 0 (sparseness), an LS-SVM's does not (``alpha_i = C e_i``).
* :func:`plot_smo_trace` -- SMO convergence per iteration: the maximal KKT violation and the
  objective's distance to its final value (fit with :func:`primaldual.tuning.fit_with_options`
  and ``record_trace=True``, or pass ``solution_.info["trace"]``).
* :func:`plot_pruning_path` -- LS-SVM pruning (Suykens 3.7): score against the number of
  support vectors, the kept step marked.
* :func:`plot_svr_tube` -- 1-D regression: ``f``, the tube ``f +- epsilon`` and the support
  vectors (on the tube edge: free; outside: bounded).

Every function takes an optional ``ax`` and returns it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["save_figure", "plot_fit", "plot_decision_boundary", "plot_alpha_spectrum",
           "plot_smo_trace", "plot_pruning_path", "plot_svr_tube"]


def _plt():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("primaldual.plotting needs matplotlib: pip install matplotlib "
                          "(or primaldual[plot])") from exc
    return plt


def _ax(ax: Any):
    return _plt().subplots(figsize=(5.5, 4.5))[1] if ax is None else ax


def _label(ax: Any, xlabel: str, ylabel: str, title: str, legend: bool = True) -> Any:
    """Axis labels, title and (small) legend: the finishing lines every plot here shares."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if legend:
        ax.legend(fontsize=8)
    return ax


def save_figure(fig: Any, path: Any, *, dpi: int = 90,
                description: str | None = None) -> Path:
    """Save ``fig`` to ``path`` (parent folders created), print ``figure: <path>``, return it.
    ``description`` is written into the PNG's text metadata (key ``Description``), so that a
    test can read what the figure says without OCR."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"Description": description} if description is not None else None
    fig.savefig(path, dpi=dpi, metadata=meta)
    print(f"figure: {path}")
    return path


def plot_decision_boundary(model: Any, X: Any, y: Any, *, ax: Any = None,
                           resolution: int = 200, margins: bool = True,
                           title: str | None = None, legend: bool = True) -> Any:
    """Decision regions of a fitted binary classifier on 2-D data, ``f = 0`` (solid) and the
    margins ``f = ±1`` (dashed, width ``2/‖w‖`` in the legend), training points coloured like
    the region of their class (``classes_[0]``: red, ``f < 0``; ``classes_[1]``: blue,
    ``f > 0``), free SVs (on the margin) circled, bounded SVs (inside the margin or
    misclassified) marked with a square. Equal aspect ratio, axes labelled ``x_1``, ``x_2``."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"X must be 2-D data with 2 features, got shape {X.shape}")
    if not hasattr(model, "free_support_"):
        raise TypeError("model must be a fitted binary primaldual classifier")
    if isinstance(resolution, bool) or not isinstance(resolution, int) or resolution < 10:
        raise ValueError(f"resolution must be an integer >= 10, got {resolution!r}")
    ax = _ax(ax)
    pad = 0.1 * (X.max(axis=0) - X.min(axis=0) + 1e-12)
    lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
    xx, yy = np.meshgrid(np.linspace(lo[0], hi[0], resolution),
                         np.linspace(lo[1], hi[1], resolution))
    zz = model.decision_function(np.column_stack([xx.ravel(), yy.ravel()])).reshape(xx.shape)
    # regions: f < 0 (predicted classes_[0]) red, f > 0 (classes_[1]) blue; the margin band
    # -1 < f < 1 in a lighter shade of each
    ax.contourf(xx, yy, zz, levels=[-np.inf, -1.0, 0.0, 1.0, np.inf],
                colors=["#f4b6b2", "#fbe0de", "#dce8f6", "#b3cde8"], alpha=0.9)
    ax.contour(xx, yy, zz, levels=[0.0], colors="k", linestyles="-", linewidths=1.2)
    if margins:
        ax.contour(xx, yy, zz, levels=[-1.0, 1.0], colors="k", linestyles="--", linewidths=0.9)
        m = getattr(model, "margin_", None)
        lab = "f = ±1" + (f" (width 2/‖w‖ = {m:.3g})" if m is not None and np.isfinite(m)
                          else "")
        ax.plot([], [], "k--", lw=0.9, label=lab)
    y = np.asarray(y)
    classes = getattr(model, "classes_", np.unique(y))
    for c, col in zip(classes, ("#d62728", "#1f77b4"), strict=False):
        sel = y == c
        ax.scatter(X[sel, 0], X[sel, 1], s=14, c=col, edgecolors="k", linewidths=0.3,
                   label=f"class {c}", zorder=3)
    free, bnd = np.asarray(model.free_support_), np.asarray(model.bounded_support_)
    if free.size:
        ax.scatter(X[free, 0], X[free, 1], s=90, facecolors="none", edgecolors="k",
                   linewidths=1.2, label=f"free SV ({free.size})", zorder=4)
    if bnd.size:
        ax.scatter(X[bnd, 0], X[bnd, 1], s=70, facecolors="none", edgecolors="#333333",
                   marker="s", linewidths=0.9, label=f"bounded SV ({bnd.size})", zorder=4)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.set_title(title if title is not None
                 else f"{type(model).__name__}: f = 0 (solid), f = ±1 (dashed)")
    if legend:
        ax.legend(loc="best", fontsize=7, framealpha=0.85)
    return ax


def plot_alpha_spectrum(models: Any, *, ax: Any = None, log: bool = True) -> Any:
    """Sorted ``|alpha_i|`` of one model or a ``{label: model}`` dict (Suykens Fig. 3.1)."""
    if not isinstance(models, dict):
        models = {type(models).__name__: models}
    ax = _ax(ax)
    for label, m in models.items():
        if not hasattr(m, "alpha_spectrum_"):
            raise TypeError(f"{label}: not a fitted primaldual model (no alpha_spectrum_)")
        a = np.asarray(m.alpha_spectrum_, dtype=float)
        a = a / a.max() if a.size and a.max() > 0 else a
        ax.plot(np.arange(1, a.size + 1), np.where(a > 0, a, np.nan) if log else a,
                label=f"{label} ({int(np.sum(a > 1e-8))} nonzero)")
    if log:
        ax.set_yscale("log")
    return _label(ax, "i (sorted)", "|alpha_i| / max |alpha|", "sorted support-value spectrum")


def plot_smo_trace(trace: Any, *, ax: Any = None) -> Any:
    """SMO convergence: maximal KKT violation and ``objective - final objective`` per
    iteration. ``trace`` is a fitted model (``solution_.info["trace"]``) or the trace dict."""
    if hasattr(trace, "solution_"):
        trace = trace.solution_.info.get("trace")
    if not isinstance(trace, dict) or not trace.get("iter"):
        raise ValueError("no SMO trace: fit with backend='smo' and record_trace=True "
                         "(primaldual.tuning.fit_with_options)")
    it = np.asarray(trace["iter"], dtype=float)
    viol = np.asarray(trace["violation"], dtype=float)
    obj = np.asarray(trace["objective"], dtype=float)
    gap = obj - obj[-1]
    ax = _ax(ax)
    ax.semilogy(it, np.where(viol > 0, viol, np.nan), label="max KKT violation")
    ax.semilogy(it, np.where(gap > 0, gap, np.nan), label="objective - final objective")
    return _label(ax, "SMO iteration", "log scale", "SMO convergence")


def plot_pruning_path(path: Any, *, ax: Any = None) -> Any:
    """Score against the number of support vectors along an LS-SVM pruning path
    (:class:`primaldual.sparsity.PrunePath`, or a fitted
    :class:`primaldual.sparsity.PrunedLSSVM`)."""
    if hasattr(path, "path_"):
        path = path.path_
    if not hasattr(path, "n_sv") or len(path.n_sv) == 0:
        raise TypeError("path must be a PrunePath or a fitted PrunedLSSVM")
    ax = _ax(ax)
    ax.plot(path.n_sv, path.score, "o-", ms=3)
    ax.plot([path.n_sv[path.best]], [path.score[path.best]], "r*", ms=12,
            label=f"kept: {path.n_sv[path.best]} SVs")
    ax.invert_xaxis()
    return _label(ax, "number of support vectors (pruning ->)", "validation score",
                  f"LS-SVM pruning path (stopped by {path.stopped_by})")


def plot_svr_tube(model: Any, X: Any, y: Any, *, ax: Any = None, n_grid: int = 400) -> Any:
    """1-D support-vector regression: ``f(x)``, the tube ``f +- epsilon``, the data and the
    support vectors (free: on the tube's edge; bounded: outside)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 1:
        raise ValueError(f"X must have shape (n, 1), got {X.shape}")
    eps = getattr(model, "epsilon_", None)
    if eps is None:
        eps = getattr(model, "epsilon", None)
    if eps is None or not hasattr(model, "support_"):
        raise TypeError("model must be a fitted epsilon- or nu-SVR")
    ax = _ax(ax)
    g = np.linspace(X.min(), X.max(), n_grid)[:, None]
    f = model.predict(g)
    ax.plot(g[:, 0], f, "k-", label="f(x)")
    ax.plot(g[:, 0], f + eps, "k--", lw=0.8, label=f"f ± ε (ε = {float(eps):.3g})")
    ax.plot(g[:, 0], f - eps, "k--", lw=0.8)
    ax.scatter(X[:, 0], y, s=10, c="#7f7f7f", label="data")
    free, bnd = np.asarray(model.free_support_), np.asarray(model.bounded_support_)
    y = np.asarray(y)
    ax.scatter(X[free, 0], y[free], s=60, facecolors="none", edgecolors="b",
               label=f"free SV ({free.size})")
    ax.scatter(X[bnd, 0], y[bnd], s=40, c="r", marker="x", label=f"bounded SV ({bnd.size})")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(f"{type(model).__name__} tube")
    ax.legend(fontsize=7)
    return ax


def plot_fit(model: Any, X: Any, y: Any, path: Any) -> None:
    """Save the picture of a fit to ``path`` (``primaldual fit --plot``): decision regions with
    the margins ``f = ±1`` and free and bounded SVs marked (binary, 2-D), predicted classes
    (multiclass, 2-D), the tube (1-D SVR) or the fit (1-D regression), else the sorted
    ``|alpha_i|``."""
    import matplotlib

    if os.environ.get("MPLBACKEND") is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = np.asarray(X, dtype=float), np.asarray(y)
    fig, ax = plt.subplots(figsize=(6, 5))
    regression = getattr(model, "_task", "") == "regression"
    if X.shape[1] == 2 and not regression and not hasattr(model, "estimators_"):
        plot_decision_boundary(model, X, y, ax=ax)
    elif X.shape[1] == 2 and not regression:
        pad = 0.5
        xx, yy = np.meshgrid(np.linspace(X[:, 0].min() - pad, X[:, 0].max() + pad, 150),
                             np.linspace(X[:, 1].min() - pad, X[:, 1].max() + pad, 150))
        zz = model.predict(np.column_stack([xx.ravel(), yy.ravel()]))
        codes = np.searchsorted(model.classes_, zz).reshape(xx.shape).astype(float)
        ax.contourf(xx, yy, codes, alpha=0.3, cmap="tab10", vmin=0, vmax=9)
        ax.scatter(X[:, 0], X[:, 1], c=np.searchsorted(model.classes_, y), cmap="tab10",
                   vmin=0, vmax=9, edgecolors="k", s=20)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel("$x_1$")
        ax.set_ylabel("$x_2$")
        ax.set_title(f"{type(model).__name__}: predicted classes")
    elif X.shape[1] == 1 and regression and hasattr(model, "free_support_") and (
            getattr(model, "epsilon_", None) is not None
            or getattr(model, "epsilon", None) is not None):
        plot_svr_tube(model, X, y, ax=ax)
    elif X.shape[1] == 1 and regression:
        order = np.argsort(X[:, 0])
        ax.scatter(X[:, 0], y, s=8, c="gray", label="data")
        ax.plot(X[order, 0], model.predict(X[order]), "r-", label="f(x)")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_title(type(model).__name__)
        ax.legend(loc="best")
    else:
        plot_alpha_spectrum(model, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
