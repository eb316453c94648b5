"""Sparse X on the SMO route of CSVC, NuSVC, EpsilonSVR and NuSVR stays sparse end to end
(kernel columns in the compiled core, the certificate's kernel products, predict and
decision_function from sparse rows, sparse support_vectors_), and gives the dense fit's
model and certificate to round-off."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import primaldual as pd
from primaldual.validation import indefinite_eigenvalue

N, D = 150, 257  # the full X's shape (no kernel block or product has it)


def _X(seed=0):
    X = sp.random(N, D, density=0.08, format="csr", random_state=seed)
    X.data = 2.0 * X.data - 1.0
    return X


def _targets(X):
    s = np.asarray(X.sum(axis=1)).ravel()
    y2 = (s > np.median(s)).astype(int)
    y3 = np.digitize(s, np.quantile(s, [1 / 3, 2 / 3]))
    yr = s + 0.05 * np.sin(np.arange(N))
    return y2, y3, yr


@pytest.fixture
def no_full_densify(monkeypatch):
    """While ``guard["on"]``, any ``toarray``/``todense`` of a sparse matrix of the full X's
    shape raises."""
    seen = {}
    state = {"on": False}
    for cls in {sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array, sp.coo_matrix}:
        for name in ("toarray", "todense"):
            for owner in cls.__mro__:
                if name in owner.__dict__:
                    break
            key = (owner, name)
            if key in seen:
                continue
            orig = owner.__dict__[name]

            def guard(self, *a, _orig=orig, **k):
                if state["on"] and self.shape == (N, D):
                    raise AssertionError("the full sparse X was densified")
                return _orig(self, *a, **k)

            seen[key] = True
            monkeypatch.setattr(owner, name, guard)
    return state


def _check(est, y, fmt, guard, *, decision=True):
    X = _X()
    Xt = sp.random(40, D, density=0.08, format="csr", random_state=9)
    dense = clone(est).fit(X.toarray(), y)
    Xs = X.asformat(fmt)
    guard["on"] = True
    model = clone(est).fit(Xs, y)
    fs = model.decision_function(Xt.asformat(fmt)) if decision else None
    ps = model.predict(Xt.asformat(fmt))
    guard["on"] = False
    assert model._sparse_rows
    assert sp.issparse(model.support_vectors_) and sp.issparse(model.dual_coef_)
    np.testing.assert_array_equal(model.support_, dense.support_)
    np.testing.assert_allclose(model.support_vectors_.toarray(), dense.support_vectors_.toarray()
                               if sp.issparse(dense.support_vectors_) else dense.support_vectors_)
    np.testing.assert_allclose(np.ravel(model.intercept_), np.ravel(dense.intercept_),
                               rtol=1e-10, atol=1e-12)
    if decision:
        fd = dense.decision_function(Xt.toarray())
        np.testing.assert_allclose(fs, fd, rtol=1e-10, atol=1e-10 * np.abs(fd).max())
    pd_ = dense.predict(Xt.toarray())
    np.testing.assert_allclose(ps, pd_, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(pd_).max()))
    certs = (model.certificates_, dense.certificates_) if hasattr(model, "certificates_") \
        else ([model.certificate_], [dense.certificate_])
    # an indefinite Gram matrix (the sigmoid kernel here) is never certified optimal
    kern = getattr(dense, "kernel_", None) or dense.estimators_[0].kernel_
    expected = "optimal" if indefinite_eigenvalue(kern, X.toarray()) is None else "inaccurate"
    for cs, cd in zip(*certs, strict=True):
        assert cs.status == cd.status == expected
        for name in ("primal_objective", "dual_objective"):
            assert getattr(cs, name) == pytest.approx(getattr(cd, name), rel=1e-10)
        assert cs.relative_gap == pytest.approx(cd.relative_gap, rel=1e-6, abs=1e-12)
        assert cs.max_kkt_residual == pytest.approx(cd.max_kkt_residual, rel=1e-6, abs=1e-12)
    return model


KERNELS = [dict(kernel="linear"), dict(kernel="rbf", gamma=0.3)]
CASES = [
    ("CSVC binary", lambda k: pd.CSVC(C=2.0, **k), 0),
    ("CSVC 3-class", lambda k: pd.CSVC(C=2.0, **k), 1),
    ("NuSVC", lambda k: pd.NuSVC(nu=0.3, **k), 0),
    ("EpsilonSVR", lambda k: pd.EpsilonSVR(C=2.0, epsilon=0.05, **k), 2),
    ("NuSVR", lambda k: pd.NuSVR(C=2.0, nu=0.4, **k), 2),
]


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("kw", KERNELS, ids=lambda k: k["kernel"])
@pytest.mark.parametrize("name, make, which", CASES, ids=[c[0] for c in CASES])
def test_sparse_fit_equals_dense_and_never_densifies(no_full_densify, name, make, which, kw,
                                                    fmt):
    y = _targets(_X())[which]
    _check(make(kw), y, fmt, no_full_densify, decision=which != 2)


@pytest.mark.parametrize("kernel", ["poly", "sigmoid"])
def test_sparse_poly_sigmoid(no_full_densify, kernel):
    y2 = _targets(_X())[0]
    kw = dict(kernel=kernel, gamma=0.1, coef0=0.5 if kernel == "poly" else -0.2)
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _check(pd.CSVC(**kw), y2, "csr", no_full_densify)


def _sparse_and_dense(est, X, y, guard, **fit_kw):
    """``(sparse fit, dense fit, sparse fit's decision values)``; the sparse fit and its
    predictions run with the full-densify guard on."""
    b = clone(est).fit(X.toarray(), y, **fit_kw)
    guard["on"] = True
    a = clone(est).fit(X, y, **fit_kw)
    fa = a.decision_function(X)
    guard["on"] = False
    return a, b, fa


def test_sparse_fit_scale_gamma_equals_dense(no_full_densify):
    X = _X()
    y2 = _targets(X)[0]
    a, b, fa = _sparse_and_dense(pd.CSVC(gamma="scale"), X, y2, no_full_densify)
    assert a._gamma == pytest.approx(b._gamma, rel=1e-12)
    np.testing.assert_allclose(fa, b.decision_function(X.toarray()), rtol=1e-10, atol=1e-10)


def test_sparse_fit_with_zero_sample_weight_and_probability(no_full_densify):
    X = _X()
    y2 = _targets(X)[0]
    sw = np.ones(N)
    sw[:5] = 0.0
    est = pd.CSVC(kernel="rbf", gamma=0.3, probability=True, random_state=0)
    a, b, fa = _sparse_and_dense(est, X, y2, no_full_densify, sample_weight=sw)
    no_full_densify["on"] = True
    pa = a.predict_proba(X)
    no_full_densify["on"] = False
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(fa, b.decision_function(X.toarray()), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(pa, b.predict_proba(X.toarray()), rtol=1e-8, atol=1e-8)


def test_other_backends_still_densify():
    """Only the SMO route keeps X sparse: another backend gets dense rows (as before)."""
    X = _X()
    y2 = _targets(X)[0]
    m = pd.CSVC(kernel="linear").fit(X[:60], y2[:60], backend="cvxpy")
    assert not m._sparse_rows and sp.issparse(m.support_vectors_)
    ref = pd.CSVC(kernel="linear").fit(X[:60], y2[:60])
    assert ref._sparse_rows
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X),
                               rtol=1e-2, atol=1e-2)
    assert not pd.L2SVC(kernel="linear").fit(X, y2)._sparse_rows


def test_sparse_linear_coef_equals_dense(no_full_densify):
    X = _X()
    y3 = _targets(X)[1]
    a, b, _ = _sparse_and_dense(pd.CSVC(kernel="linear"), X, y3, no_full_densify)
    no_full_densify["on"] = True
    ca = a.coef_
    no_full_densify["on"] = False
    assert isinstance(ca, np.ndarray) and ca.shape == (3, D)
    np.testing.assert_allclose(ca, b.coef_, rtol=1e-10, atol=1e-12)
