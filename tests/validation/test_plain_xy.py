"""The fast path of input validation (``validation.plain_xy``) returns exactly what
scikit-learn's checks return, and hands every input it does not recognise to them."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_X_y

import primaldual as pd
from primaldual.validation import plain_xy

rng = np.random.default_rng(0)
X = rng.normal(size=(12, 3))


@pytest.mark.parametrize("y", [np.arange(12) % 3, (np.arange(12) % 2).astype(bool),
                               np.where(np.arange(12) % 2, "a", "b"),
                               (np.arange(12) % 3).astype(float)])
@pytest.mark.parametrize("Xc", [X, np.asfortranarray(X), X.astype(np.float32),
                                np.arange(36).reshape(12, 3)])
def test_same_as_scikit_learn_for_classifiers(Xc, y):
    fast = plain_xy(Xc, y, classification=True)
    assert fast is not None
    Xs, ys = check_X_y(Xc, y, dtype=np.float64)
    check_classification_targets(ys)
    assert fast[0].dtype == np.float64 and np.array_equal(fast[0], Xs)
    assert fast[1].dtype == ys.dtype and np.array_equal(fast[1], ys)
    if Xc.dtype == np.float64:
        assert fast[0] is Xc  # not copied, as check_X_y


@pytest.mark.parametrize("bad", [
    (np.where(X > 1, np.nan, X), np.arange(12) % 2, True),          # NaN in X
    (X, np.linspace(0, 1, 12), True),                               # continuous labels
    (X, np.arange(12.0).reshape(-1, 1), True),                      # column vector y
    (X, np.array([0, 1] * 6, dtype=object), True),                  # object labels
    (X[:, :0], np.arange(12) % 2, True),                            # no feature
    (X, np.arange(11), True),                                       # lengths differ
    (X.tolist(), np.arange(12) % 2, True),                          # not an array
    (X, np.r_[np.inf, np.zeros(11)], False),                        # inf target
    (np.full((12, 3), 1e308), np.zeros(12), False),                 # sum overflows
])
def test_anything_else_goes_to_scikit_learn(bad):
    Xb, yb, classification = bad
    assert plain_xy(Xb, yb, classification) is None


def test_fitted_attributes_as_validate_data():
    pdx = pytest.importorskip("pandas")
    est = pd.CSVC()
    est.fit(pdx.DataFrame(X, columns=["a", "b", "c"]), np.arange(12) % 2)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    est.fit(X[:, :2], np.arange(12) % 2)   # the fast path: names of the earlier fit dropped
    assert est.n_features_in_ == 2 and not hasattr(est, "feature_names_in_")


def test_bad_input_keeps_scikit_learns_messages():
    with pytest.raises(ValueError, match="Unknown label type"):
        pd.CSVC().fit(X, np.linspace(0, 1, 12))
    with pytest.raises(ValueError, match="NaN"):
        pd.CSVC().fit(np.where(X > 1, np.nan, X), np.arange(12) % 2)
