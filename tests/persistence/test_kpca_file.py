"""KernelPCA (the exact solvers) round-trips through the safe format bit for bit (scores,
pre-images), and a forged file is refused; loading never forms the N x N kernel matrix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual as pd
from primaldual.exceptions import ModelFileError
from primaldual.persistence import load, save
from tests.persistence.forge_file import refile


def _data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((40, 3)), 2.0 * rng.standard_normal((15, 3))


def _fit(**kw):
    X, _ = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pd.KernelPCA(**kw).fit(X)


@pytest.mark.parametrize("kw", [{}, {"kernel": "rbf", "n_components": 3},
                                {"kernel": "poly", "degree": 2, "n_components": 4,
                                 "fit_inverse_transform": True},
                                {"kernel": "rbf", "n_components": 5, "eigen_solver": "arpack"}],
                         ids=["linear-all", "rbf", "poly-inverse", "arpack"])
def test_kpca_round_trips_bit_for_bit(tmp_path, kw):
    X, Q = _data()
    m = _fit(**kw)
    save(m, tmp_path / "k.npz", key="k")
    m2 = load(tmp_path / "k.npz", key="k")
    for rows in (X, Q):
        assert np.array_equal(m.transform(rows), m2.transform(rows))
    if m.fit_inverse_transform:
        Z = m.transform(Q)
        assert np.array_equal(m.inverse_transform(Z), m2.inverse_transform(Z))
    for k in ("eigenvalues_", "eigenvectors_", "dual_coef_", "explained_variance_ratio_"):
        assert np.array_equal(getattr(m, k), getattr(m2, k)), k
    assert (m2.trace_, m2.solver_, m2.certificate_.status) == (m.trace_, m.solver_,
                                                               m.certificate_.status)


def test_a_precomputed_kpca_round_trips(tmp_path):
    X, Q = _data()
    m = pd.KernelPCA(kernel="precomputed", n_components=2).fit(X @ X.T)
    save(m, tmp_path / "k.npz")
    assert np.array_equal(m.transform(Q @ X.T), load(tmp_path / "k.npz").transform(Q @ X.T))


def _forge(tmp_path, edit_meta=None, edit_arrays=None):
    save(_fit(kernel="rbf", n_components=3, fit_inverse_transform=True), tmp_path / "k.npz")
    return refile(tmp_path / "k.npz", tmp_path / "forged.npz", edit_meta, edit_arrays)


def _set(key, value):
    def edit(a):
        a[key] = value(a[key])
    return edit


@pytest.mark.parametrize("edit_meta, edit_arrays, match", [
    (None, None, None),
    (lambda m: m.update(trace="nan"), None, "trace must be a finite number"),
    (lambda m: m["params"].update(rank=10), None, "exact fit"),
    (lambda m: m["params"].update(fit_inverse_transform=False), None, "arrays must be"),
    (lambda m: m.update(kernel={"name": "poly", "degree": 10**9, "gamma": 1.0, "coef0": 1.0}),
     None, "kernel 'poly': degree must be an integer <= 1000"),
    (lambda m: m.update(certificate=7), None, "certificate"),
    (None, _set("dual_coef_", lambda a: 2 * a), "dual_coef_ must be"),
    (None, _set("eigenvalues_", lambda a: a[::-1].copy()), "decreasing"),
    (None, _set("explained_variance_ratio_", lambda a: a + 0.1), "explained_variance"),
    (None, _set("X_transformed_fit_", lambda a: -a), "X_transformed_fit_ must be"),
    (None, _set("fit_col_mean", lambda a: a[:-1]), "fit_col_mean must have length"),
    (None, _set("X_fit_", lambda a: a.astype(np.float16)), "float64"),
    (None, lambda a: a.pop("inverse_dual_coef_"), "arrays must be")],
    ids=["unforged", "trace", "rank", "inverse-flag", "poly-1e9", "certificate", "dual",
         "order", "ratio", "pre-image", "col-mean", "float16", "missing"])
def test_a_forged_kpca_file_is_refused(tmp_path, edit_meta, edit_arrays, match):
    path = _forge(tmp_path, edit_meta, edit_arrays)
    if match is None:
        assert load(path).certificate_.status == "optimal"
        return
    with pytest.raises(ModelFileError, match=match):
        load(path)
