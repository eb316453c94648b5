"""The twin SVM (Jayadeva, Khemchandani & Chandra 2007) as one estimator, ``TwinSVC``: each
plane a derived factory Variant, checked against the two plane QPs written independently in
CVXPY (objectives, planes, the nearest-plane predictions), linear and with kernel-generated
surfaces."""

import pickle

import cvxpy as cp
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from primaldual.exceptions import DualizationError
from primaldual.kernels import make_kernel
from primaldual.methods.twin import TwinSVC


def _data(seed, n=80, d=3):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n // 2, d)) + 0.7, rng.normal(size=(n - n // 2, d)) - 0.7])
    y = np.r_[np.full(n // 2, "pos"), np.full(n - n // 2, "neg")]
    return X, y


def _cvxpy_plane(near, far, c, side, eps=0.0):
    """min 1/2 ||near w + b||² + eps/2 ||(w, b)||² + c Σ ξ  s.t.  side (far w + b) + ξ ≥ 1."""
    w, b, xi = cp.Variable(near.shape[1]), cp.Variable(), cp.Variable(far.shape[0])
    obj = 0.5 * cp.sum_squares(near @ w + b) + c * cp.sum(xi)
    if eps:
        obj = obj + 0.5 * eps * (cp.sum_squares(w) + cp.square(b))
    pr = cp.Problem(cp.Minimize(obj), [side * (far @ w + b) + xi >= 1, xi >= 0])
    pr.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return pr.value, w.value, float(b.value)


@pytest.mark.parametrize("seed", [0, 1])
def test_linear_twin_svc_matches_two_cvxpy_qps(seed):
    X, y = _data(seed)
    c1, c2 = 0.5 + seed, 2.0
    m = TwinSVC(c1=c1, c2=c2, tol=1e-10).fit(X, y)
    assert list(m.classes_) == ["neg", "pos"]          # classes_[1] = "pos" is the +1 class
    A, B = X[y == "pos"], X[y == "neg"]
    refs = [_cvxpy_plane(A, B, c1, -1.0), _cvxpy_plane(B, A, c2, +1.0)]
    for k, (val, w, b) in enumerate(refs):
        cert = m.certificates_[k]
        assert abs(cert.primal_objective - val) <= 1e-6 * max(1.0, abs(val))
        assert abs(cert.dual_objective - val) <= 1e-6 * max(1.0, abs(val))
        np.testing.assert_allclose(m.coef_[k], w, atol=1e-6)
        assert abs(m.intercept_[k] - b) <= 1e-6
        assert cert.status == "optimal" and max(cert.kkt.values()) <= 1e-6
        assert "eliminate jointly" in str(m.planes_[k].derivation_)
    # the nearest-plane rule, from the reference planes
    Xt = np.random.default_rng(9).normal(size=(50, 3))
    dist = np.column_stack([np.abs(Xt @ w + b) / np.linalg.norm(w) for _, w, b in refs])
    np.testing.assert_allclose(m.distances(Xt), dist, atol=1e-5)
    expect = np.where(dist[:, 0] <= dist[:, 1], "pos", "neg")
    assert np.mean(m.predict(Xt) == expect) >= 0.98   # ties within 1e-5 may go either way
    assert m.score(X, y) >= 0.85


def test_cvxpy_route_reads_the_planes_features_not_an_n_by_n_factor(monkeypatch):
    # the plane's dual Q = Z Zᵀ is a linear kernel on d + 1 numbers per row: the CVXPY route
    # compiles ||Zᵀα||² as a user would, and the pivoted Cholesky of an N x N matrix is never run
    import primaldual.model.gram as gram

    def refuse(*a, **k):
        raise AssertionError("psd_factor called on the CVXPY route of a linear plane")
    monkeypatch.setattr(gram, "psd_factor", refuse)
    X, y = _data(3)
    m = TwinSVC(c1=1.0, c2=0.5, backend="cvxpy").fit(X, y)
    A, B = X[y == "pos"], X[y == "neg"]
    for k, (val, w, b) in enumerate([_cvxpy_plane(A, B, 1.0, -1.0),
                                     _cvxpy_plane(B, A, 0.5, +1.0)]):
        assert m.planes_[k].backend_ == "cvxpy"
        assert m.certificates_[k].status == "optimal"
        assert abs(m.certificates_[k].primal_objective - val) <= 1e-6 * max(1.0, abs(val))
        np.testing.assert_allclose(m.coef_[k], w, atol=1e-5)
        assert abs(m.intercept_[k] - b) <= 1e-5


def test_kernel_surfaces_match_cvxpy_and_need_eps():
    """K(x, Cᵀ) u + b over all training rows C: HᵀH is singular (N + 1 unknowns), refused
    with the regulariser named; with eps the planes equal the CVXPY ones."""
    X, y = _data(2, n=60)
    with pytest.raises(DualizationError, match="singular.*pass eps > 0"):
        TwinSVC(kernel="rbf", gamma=0.4).fit(X, y)
    eps = 1e-2
    m = TwinSVC(c1=1.0, c2=0.5, kernel="rbf", gamma=0.4, eps=eps, tol=1e-10).fit(X, y)
    k = make_kernel("rbf", gamma=0.4)
    A, B = X[y == "pos"], X[y == "neg"]
    refs = [_cvxpy_plane(k(A, X), k(B, X), 1.0, -1.0, eps),
            _cvxpy_plane(k(B, X), k(A, X), 0.5, +1.0, eps)]
    K = k(X)
    for k_, (val, u, b) in enumerate(refs):
        assert abs(m.certificates_[k_].primal_objective - val) <= 1e-6 * max(1.0, abs(val))
        f = m.planes_[k_].predict(X)                     # K(x_i, Cᵀ) u + b on the rows
        np.testing.assert_allclose(f, K @ u + b, atol=1e-5)
    dist = np.column_stack([np.abs(K @ u + b) / np.sqrt(u @ K @ u) for _, u, b in refs])
    np.testing.assert_allclose(m.distances(X), dist, atol=1e-5)
    assert m.score(X, y) >= 0.9


def test_twin_svc_is_a_scikit_learn_classifier():
    X, y = _data(3)
    m = TwinSVC(c1=2.0, eps=1e-3)
    assert clone(m).get_params()["c1"] == 2.0
    scores = cross_val_score(m, X, y, cv=3)
    assert scores.shape == (3,) and scores.min() >= 0.7
    with pytest.raises(ValueError, match="Only binary classification"):
        TwinSVC().fit(X, np.where(np.arange(len(y)) % 3 == 0, "a", y))
    fitted = TwinSVC(eps=1e-3).fit(X, y)
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(X), fitted.predict(X))
    with pytest.raises(ValueError, match="eps"):
        TwinSVC(eps=-1.0).fit(X, y)


def test_placeholder_spec_with_a_quadratic_over_w_and_b_refits_on_new_data():
    """A spec on placeholders whose sum of squares couples w and b: derived once on the
    template, bound to data sets of other sizes (the template road), each fit equal to a plain
    CVXPY model, SMO below 2,000 rows and the linear route above."""
    import primaldual as pd
    from primaldual.model import Data, N, Param, Problem, Variable, X, d, sum_squares, vsum, x, y
    C = Param("C")
    w, b, xi = Variable("w", d, index="d"), Variable("b"), Variable("xi", N)
    spec = Problem(0.5 * sum_squares(Data("X", X) @ w + b) + C * vsum(xi),
                   [(y * (Data("X", X) @ w + b) >= 1 - xi).named("alpha"),
                    (xi >= 0).named("mu")], "min", "plane through the data primal")
    for n, c, seed, backend in [(60, 1.0, 0, "smo"), (90, 0.3, 1, "smo"),
                                (2500, 1.0, 2, "linear")]:
        rng = np.random.default_rng(seed)
        Xd = rng.normal(size=(n, 3))
        yd = np.where(Xd[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
        v = pd.Variant(spec, decision=Data("X", x) @ w + b, C=c, kernel="linear",
                       tol=1e-9).fit(Xd, yd)
        wr, br, xr = cp.Variable(3), cp.Variable(), cp.Variable(n)
        ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(Xd @ wr + br) + c * cp.sum(xr)),
                         [cp.multiply(yd, Xd @ wr + br) >= 1 - xr, xr >= 0])
        ref.solve(solver="CLARABEL")
        assert v.backend_ == backend
        assert abs(v.certificate_.primal_objective - ref.value) <= 1e-6 * ref.value
        np.testing.assert_allclose(v.point_["w"], wr.value, atol=1e-5)
        np.testing.assert_allclose(v.decision_function(Xd[:5]), Xd[:5] @ wr.value + br.value,
                                   atol=1e-5)


@parametrize_with_checks([TwinSVC(eps=1e-3)])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_the_surfaces_share_one_kernel_matrix_and_its_class_blocks():
    """Both planes of one fit take the kernel matrix from one shared holder, cleared after the
    fit (the fitted estimator pickles without it); the norms ``sqrt(uᵀKu)`` are those of the
    kernel matrix."""
    X, y = _data(3, n=60)
    m = TwinSVC(kernel="rbf", gamma=0.5, eps=1e-3, tol=1e-8).fit(X, y)
    K = make_kernel("rbf", gamma=0.5)(X)
    for p, nrm in zip(m.planes_, m._norms, strict=True):
        u = p.point_["u"]
        assert nrm == pytest.approx(np.sqrt(u @ K @ u), rel=1e-12)
    assert all(p.spec.gram.K is None for p in m.planes_)      # cleared after the fit
    assert m.planes_[0].spec.gram is m.planes_[1].spec.gram
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(m)).predict(X), m.predict(X))


def test_the_decisions_kernel_matrix_is_compared_block_by_block(monkeypatch):
    """The training-row decision ``K u`` is read as the kernel expansion only when its matrix
    is the kernel matrix in every row block (a changed entry in the last block is found), and
    a match is remembered for the next point of the same decision."""
    from primaldual.methods import _variant_expansion as ve

    monkeypatch.setattr(ve, "_GRAM_CHUNK", 7)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    kern = make_kernel("rbf", gamma=0.3)
    K = kern(X)
    memo: dict = {}
    assert ve._is_gram(K, kern, X, memo) and ("gram", id(K)) in memo
    assert ve._is_gram(K, kern, X, memo)
    bad = K.copy()
    bad[-1, 3] *= 1 + 1e-9
    assert not ve._is_gram(bad, kern, X, {})
    bad[-1, 3] = np.nan
    assert not ve._is_gram(bad, kern, X, None)
