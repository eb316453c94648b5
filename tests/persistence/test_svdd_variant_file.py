"""An SVDD ``Variant`` on a linear kernel (its decision ``R² - ‖φ(x) - a‖²`` has a
``k(x, x)`` term, ``diag_coef_``) saved and loaded: the file holds the term (no pickle), the
loaded model's decision equals the fitted one's bit for bit, and a file whose ``diag_coef_``
has the wrong shape is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
from primaldual.exceptions import ModelFileError
from primaldual.model import norm2, phi, x
from primaldual.persistence import load, save
from tests.methods.test_variant_new_rows import svdd
from tests.persistence.forge_file import refile


def _fitted():
    P, _, _, _ = svdd()
    a, R2 = P.variable("a"), P.variable("R2")
    Z = np.random.default_rng(4).normal(size=(40, 3))
    m = pd.Variant(P, decision=R2 - norm2(phi(x) - a), task="novelty", kernel="linear",
                   C=0.1, tol=1e-9).fit(Z)
    return P, m


def test_linear_svdd_variant_round_trips(tmp_path):
    P, m = _fitted()
    assert m.diag_coef_.tolist() == [-1.0]
    path = tmp_path / "svdd.npz"
    save(m, path)
    with np.load(path, allow_pickle=False) as z:
        assert "diag_coef_" in z.files and all(z[k].dtype != object for k in z.files)
    Zq = np.random.default_rng(5).normal(size=(25, 3))
    for back in (load(path), load(path, spec=P)):
        assert np.array_equal(back.diag_coef_, m.diag_coef_)
        assert np.array_equal(back.decision_function(Zq), m.decision_function(Zq))
        assert np.array_equal(back.predict(Zq), m.predict(Zq))


def test_a_diag_coef_of_the_wrong_shape_is_refused(tmp_path):
    _, m = _fitted()
    save(m, tmp_path / "m.npz")

    def two(a):
        a["diag_coef_"] = np.array([-1.0, 0.0])
    # the forger recomputes the digest: the shape check itself must refuse it
    forged = refile(tmp_path / "m.npz", tmp_path / "forged.npz", None, two)
    with pytest.raises(ModelFileError, match=r"diag_coef_ must have shape \(1,\)"):
        load(forged)
