"""Sparse models round-trip through the safe format as CSR arrays; argument errors are the
library's, naming the argument."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual as pd
from primaldual.exceptions import ModelFileError
from primaldual.persistence import load, save


def _sparse_data(n_classes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = sp.random(80, 10, density=0.3, random_state=seed, format="csr")
    if n_classes == 2:
        y = np.where(np.asarray(X.sum(axis=1)).ravel() + 0.1 * rng.standard_normal(80)
                     > np.median(np.asarray(X.sum(axis=1))), 1, -1)
    else:
        y = rng.integers(0, n_classes, 80)
    return X, y


def _same_csr(a, b) -> bool:
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    return (a.shape == b.shape and np.array_equal(a.indptr, b.indptr)
            and np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_sparse_model_round_trips_bit_for_bit(tmp_path, n_classes):
    X, y = _sparse_data(n_classes)
    m = pd.CSVC(kernel="rbf", gamma=0.5, C=2.0).fit(X, y)
    assert sp.issparse(m.support_vectors_)
    path = tmp_path / "sparse.npz"
    save(m, path)
    m2 = load(path)
    assert sp.issparse(m2.support_vectors_)
    assert _same_csr(m.support_vectors_, m2.support_vectors_)
    assert np.array_equal(m.decision_function(X), m2.decision_function(X))
    assert np.array_equal(m.predict(X), m2.predict(X))
    if n_classes > 2:
        for e, e2 in zip(m.estimators_, m2.estimators_, strict=True):
            assert _same_csr(e.support_vectors_, e2.support_vectors_)


_SPARSE_MODELS = {
    "EpsilonSVR": lambda X, y: pd.EpsilonSVR().fit(X, np.asarray(X.sum(axis=1)).ravel()),
    "KernelRidge": lambda X, y: pd.KernelRidge().fit(X, np.asarray(X.sum(axis=1)).ravel()),
    "KLR-ovr": lambda X, y: pd.KernelLogisticRegression(multiclass="ovr").fit(X, y % 3),
    "NuSVC-ovo": lambda X, y: pd.NuSVC(nu=0.3).fit(X, y % 3),
    "CSVC-lowrank": lambda X, y: pd.CSVC().fit(X, np.where(y % 2 == 0, 1, -1),
                                                backend="lowrank"),
}


@pytest.mark.parametrize("name", sorted(_SPARSE_MODELS))
def test_other_sparse_models_round_trip_as_plain_csr_arrays(tmp_path, name):
    """Regressors, one-vs-rest, one-vs-one and the low-rank backend on CSR X: the file holds
    only numeric arrays (it opens with ``allow_pickle=False``), the CSR parts of every
    sparse attribute come back equal, and so do the predictions, on sparse and dense rows."""
    import warnings
    X, y = _sparse_data(3, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = _SPARSE_MODELS[name](X, y)
    save(m, tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz", allow_pickle=False) as z:
        assert all(z[k].dtype != object for k in z.files)
        assert any(k.endswith("__csr_indptr") for k in z.files)
    m2 = load(tmp_path / "m.npz")
    assert _same_csr(m.support_vectors_, m2.support_vectors_)
    for Z in (X, X.toarray()):
        assert np.array_equal(m.predict(Z), m2.predict(Z))
        if hasattr(m, "decision_function"):
            assert np.array_equal(m.decision_function(Z), m2.decision_function(Z))


def test_a_forged_csr_part_is_refused(tmp_path):
    X, y = _sparse_data(2, seed=1)
    m = pd.CSVC(kernel="rbf", gamma=0.5).fit(X, y)
    path = tmp_path / "sparse.npz"
    save(m, path)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["support_vectors___csr_indices"] = arrays["support_vectors___csr_indices"] + 1000
    np.savez(tmp_path / "forged.npz", **arrays)
    with pytest.raises(ModelFileError):
        load(tmp_path / "forged.npz")


@pytest.mark.parametrize("path, kwargs, match", [
    (0, {}, "path"), (b"model.npz", {}, "path"), ("model.npz", {"max_bytes": "x"}, "max_bytes"),
    ("model.npz", {"max_bytes": 1.5}, "max_bytes"), ("model.npz", {"max_bytes": True},
                                                     "max_bytes")])
def test_load_argument_type_errors_name_the_argument(path, kwargs, match):
    with pytest.raises(TypeError, match=match):
        load(path, **kwargs)


def test_load_max_bytes_must_be_positive():
    with pytest.raises(ValueError, match="max_bytes"):
        load("model.npz", max_bytes=0)


def _unsupported(name):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((30, 2))
    make = {"KernelPLSRegression": lambda: pd.KernelPLSRegression(n_components=1).fit(
                Z, Z[:, 0]),
            "KernelPCA": lambda: pd.KernelPCA(n_components=2, kernel="rbf", rank=10).fit(Z)}
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make[name]()


@pytest.mark.parametrize("name, match", [
    ("KernelPLSRegression", "saving KernelPLSRegression models is not supported"),
    ("KernelPCA", "saving a KernelPCA fitted with rank= \\(a Nystrom factor\\) is not "
                  "supported")])
def test_save_of_an_unsupported_primaldual_estimator_says_so(tmp_path, name, match):
    """primaldual's own estimators that save does not write (EnclosingBall, RVR, RVC,
    GPClassifier and the exact KernelPCA are saved: their own test files): the refusal names
    the type and what is not supported (never "must be a primaldual estimator"), and no file
    is left behind."""
    with pytest.raises(TypeError, match=match) as exc:
        save(_unsupported(name), tmp_path / "m.npz")
    assert "must be a primaldual estimator" not in str(exc.value)
    assert not (tmp_path / "m.npz").exists()


def test_save_path_type_error_names_the_path(tmp_path):
    Z = np.random.default_rng(0).standard_normal((30, 2))
    with pytest.raises(TypeError, match="path"):
        save(pd.CSVC().fit(Z, np.where(Z[:, 0] > 0, 1, -1)), 3)


def test_save_of_a_foreign_object_is_refused():
    from sklearn.svm import SVC
    Z = np.random.default_rng(0).standard_normal((30, 2))
    with pytest.raises(TypeError, match="must be a primaldual estimator, got SVC"):
        save(SVC().fit(Z, np.where(Z[:, 0] > 0, 1, -1)), "never-written.npz")
