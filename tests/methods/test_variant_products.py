"""A placeholder Variant's fit evaluates the kernel expansion on its ``N`` training rows once:
the recovery's slacks, the certificate's constraint values and the stored model's training
decision (``certificate_.f``) share one product ``K[:, S] beta_S``, as the catalogue's fits do.
The stored model is still the one ``predict`` uses: its training decision equals
``decision_function`` on those rows, and its coefficients are the recovered point's."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
import primaldual.kernels.gram as gram
from primaldual.model import FeatureVariable, N, Param, Problem, Variable, X, norm2, phi, vsum, x


def one_class(scale: float = 1.0):
    nu = Param("nu")
    w, rho, xi = FeatureVariable("w"), Variable("rho"), Variable("xi", N)
    P = Problem(0.5 * norm2(w) + 1 / (nu * N) * vsum(xi) - rho,
                [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")], "min",
                "one-class SVM primal")
    return P, scale * (w @ phi(x)) - rho


def _training_products(monkeypatch, fit, n_rows: int) -> int:
    """Kernel products evaluated (not read from the fit's cache) with ``n_rows`` rows and at
    least one column."""
    calls = [0]
    orig = gram._matvec

    def counted(kernel, Xr, Zb, cols, *args):
        calls[0] += Xr.shape[0] == n_rows and cols.shape[0] > 0  # (an empty one costs nothing)
        return orig(kernel, Xr, Zb, cols, *args)

    monkeypatch.setattr(gram, "_matvec", counted)
    fit()
    monkeypatch.setattr(gram, "_matvec", orig)
    return calls[0]


@pytest.mark.parametrize("same_rows", [False, True])
def test_one_training_product_per_fit(monkeypatch, same_rows):
    rng = np.random.default_rng(3)
    P, dec = one_class()
    n = 400                                   # more rows than the expansion checks (256)
    Xa = rng.standard_normal((n, 4))
    m = pd.Variant(P, decision=dec, task="novelty", kernel="rbf", gamma=0.5, nu=0.2)
    m.fit(Xa)
    m.fit(rng.standard_normal((n, 4)))        # the shape's template learned
    Xb = Xa if same_rows else rng.standard_normal((n, 4))
    # a new estimator on the same rows reuses the bound derivation (another kernel object)
    m2 = pd.Variant(P, decision=dec, task="novelty", kernel="rbf", gamma=0.5, nu=0.2)
    k = _training_products(monkeypatch, lambda: m2.fit(Xb), n)
    # on the same rows the feature variable may still hold the earlier fit's product
    assert k <= 1 if same_rows else k == 1
    assert m2.status_ == "optimal"
    S = m2.support_
    # the expansion's coefficients are the recovered point's (w @ phi(x): coefficient 1)
    assert np.array_equal(m2.dual_coef_[0], m2.point_["w"][S])
    f = m2.decision_function(Xb)
    np.testing.assert_allclose(m2.certificate_.f, f, rtol=0, atol=1e-12)


def test_non_integer_coefficient_is_kept():
    """A decision ``0.5 <w, phi(x)> - rho`` keeps its least-squares coefficient (not an
    integer): the model predicts the expression, and the fit is certified as before."""
    rng = np.random.default_rng(4)
    P, dec = one_class(0.5)
    Xa = rng.standard_normal((300, 3))
    m = pd.Variant(P, decision=dec, task="novelty", kernel="rbf", gamma=0.5, nu=0.2).fit(Xa)
    S = m.support_
    np.testing.assert_allclose(m.dual_coef_[0], 0.5 * m.point_["w"][S], rtol=1e-12, atol=0)
    Xq = rng.standard_normal((50, 3))
    # the expression at the recovered point, evaluated independently of the stored model
    expect = 0.5 * gram.kernel_matvec(m.kernel_, Xq, m.point_["w"][S], Z=Xa[S]) \
        - float(m.point_["rho"][0])
    np.testing.assert_allclose(m.decision_function(Xq), expect, rtol=0, atol=1e-10)
    np.testing.assert_allclose(m.certificate_.f, m.decision_function(Xa), rtol=0, atol=1e-12)
