"""Model files whose digest is recomputed by the forger are still validated: classes unique and
representable in their stored dtype, float arrays float64."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual as pd
from primaldual.exceptions import ModelFileError
from primaldual.persistence import load, save
from tests.persistence.forge_file import refile


def _forge(tmp_path, edit_meta=None, edit_arrays=None, model=None):
    if model is None:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(30, 2))
        model = pd.CSVC().fit(X, np.where(X[:, 0] > 0, "ab", "cd"))
    save(model, tmp_path / "m.npz")
    return refile(tmp_path / "m.npz", tmp_path / "forged.npz", edit_meta, edit_arrays)


def test_the_unforged_file_loads(tmp_path):
    assert list(load(_forge(tmp_path)).classes_) == ["ab", "cd"]


def test_truncating_classes_dtype_is_refused(tmp_path):
    path = _forge(tmp_path, edit_meta=lambda m: m.update(classes_dtype="<U1"))
    with pytest.raises(ModelFileError, match="classes"):
        load(path)


def test_duplicate_classes_are_refused(tmp_path):
    path = _forge(tmp_path, edit_meta=lambda m: m.update(classes=["ab", "ab"]))
    with pytest.raises(ModelFileError, match="unique"):
        load(path)


def test_float16_arrays_are_refused(tmp_path):
    def half(a):
        a["support_vectors_"] = a["support_vectors_"].astype(np.float16)
    with pytest.raises(ModelFileError, match="float64"):
        load(_forge(tmp_path, edit_arrays=half))


def test_a_kernel_parameter_out_of_range_is_refused(tmp_path):
    def poly(m):
        m["kernel"] = {"name": "poly", "degree": 10**9, "gamma": 1.0, "coef0": 1.0}
    with pytest.raises(ModelFileError):
        load(_forge(tmp_path, edit_meta=poly))


# Each forged kernel is refused by the kernel's own constructor, and the message names the
# kernel and its parameter. The first one loaded before: (1e-3 x'z)^(1e9) underflows to 0
# for every pair of these points, so the model predicted finite values and passed the
# predict-based check.
@pytest.mark.parametrize("kernel, match", [
    ({"name": "poly", "degree": 10**9, "gamma": 1e-3, "coef0": 0.0},
     "kernel 'poly': degree must be an integer <= 1000"),
    ({"name": "poly", "degree": 2.5, "gamma": 1.0, "coef0": 1.0},
     "kernel 'poly': degree must be an integer >= 1"),
    ({"name": "poly", "degree": True, "gamma": 1.0, "coef0": 1.0}, "kernel 'poly': degree"),
    ({"name": "poly", "degree": 3, "gamma": 1.0, "coef0": float("nan")},
     "kernel 'poly': coef0 must be a finite number"),
    ({"name": "rbf", "gamma": float("nan")}, "kernel 'rbf': gamma must be a number > 0"),
    ({"name": "rbf", "gamma": -1.0}, "kernel 'rbf': gamma must be a number > 0"),
    ({"name": "rbf", "gamma": float("inf")}, "kernel 'rbf': gamma must be a number > 0"),
    ({"name": "rbf", "gamma": "1"}, "kernel 'rbf': gamma must be a number > 0"),
    ({"name": "bspline", "order": 10**9}, "kernel 'bspline': order must be an integer <= 50"),
    ({"name": "sum", "k1": {"name": "linear"}, "k2": {"name": "rbf", "gamma": 0.0}},
     "kernel 'sum': gamma must be a number > 0")],
    ids=["poly-1e9-underflowing", "poly-2.5", "poly-bool", "coef0-nan", "gamma-nan",
         "gamma-negative", "gamma-inf", "gamma-string", "bspline-1e9", "sum-gamma-0"])
def test_implausible_kernel_parameters_are_refused_naming_the_field(tmp_path, kernel, match):
    with pytest.raises(ModelFileError, match=match):
        load(_forge(tmp_path, edit_meta=lambda m: m.update(kernel=kernel)))


def test_the_largest_accepted_degree_is_a_model_file_like_any_other(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] > 0, "ab", "cd")
    m = pd.CSVC(kernel="poly", degree=2, gamma=0.5).fit(X, y)
    path = _forge(tmp_path, model=m,
                  edit_meta=lambda meta: meta["kernel"].update(degree=1000, gamma=1e-9))
    assert load(path).kernel_.degree == 1000


def _multiclass():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    return pd.CSVC().fit(X, np.array(["ab", "cd", "ef"])[np.argmax(X @ rng.normal(size=(2, 3)),
                                                                   axis=1)])


def _sparse():
    X = sp.random(60, 8, density=0.4, random_state=2, format="csr")
    return pd.CSVC().fit(X, np.where(np.asarray(X.sum(axis=1)).ravel() > 1.0, 1, -1))


def _all_float64_to_float16(arrays):
    for k in list(arrays):
        if arrays[k].dtype == np.float64:
            arrays[k] = arrays[k].astype(np.float16)


@pytest.mark.parametrize("edit, match", [
    (lambda m: m.update(classes=["ab", "ab", "cd"]), "unique"),
    (lambda m: m.update(classes_dtype="<U1"), "classes"),
    (lambda m: [e.update(kernel={"name": "poly", "degree": 10**9, "gamma": 1.0, "coef0": 1.0})
                for e in m["multiclass"]["estimators"]], "degree must be an integer <= 1000")],
    ids=["duplicate", "U1", "poly-1e9"])
def test_a_forged_multiclass_file_is_refused(tmp_path, edit, match):
    with pytest.raises(ModelFileError, match=match):
        load(_forge(tmp_path, edit_meta=edit, model=_multiclass()))


@pytest.mark.parametrize("make", [_multiclass, _sparse], ids=["multiclass", "sparse"])
def test_float16_arrays_of_multiclass_and_sparse_files_are_refused(tmp_path, make):
    with pytest.raises(ModelFileError, match="must be float64, got float16"):
        load(_forge(tmp_path, edit_arrays=_all_float64_to_float16, model=make()))


def test_model_file_errors_are_value_errors():
    assert issubclass(ModelFileError, ValueError)
