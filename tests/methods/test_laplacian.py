"""LapRLS / LapSVC: primal vs dual (CVXPY), closed form, KKT adapter, graph Laplacian,
reduction to kernel ridge."""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge as SKKernelRidge
from sklearn.neighbors import NearestNeighbors

from primaldual.backends.linsys import adapter as kkt_adapter
from primaldual.methods.laplacian import LapRLS, LapSVC, graph_laplacian, unlabelled_mask
from primaldual.methods.ridge import KernelRidge
from primaldual.model.structure import box_qp_of
from primaldual.testing import assert_forms_agree

SEEDS = [0, 1, 2]


def _data(seed, n=40, n_lab=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    yc = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1.0, -1.0)
    yr = np.sin(X[:, 0]) + 0.05 * rng.normal(size=n)
    lab = np.zeros(n, dtype=bool)
    lab[rng.choice(n, n_lab, replace=False)] = True
    if len(np.unique(yc[lab])) < 2:
        lab[np.argmax(yc)] = lab[np.argmin(yc)] = True
    return X, np.where(lab, yc, np.nan), np.where(lab, yr, np.nan), lab


def test_graph_laplacian():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    for weights in ("heat", "binary"):
        L = graph_laplacian(X, 4, weights).toarray()
        np.testing.assert_allclose(L, L.T)
        np.testing.assert_allclose(L.sum(axis=1), 0, atol=1e-12)
        assert np.linalg.eigvalsh(L).min() > -1e-10
    # binary weights: W_ij = 1 iff j in kNN(i) or i in kNN(j)
    nn = NearestNeighbors(n_neighbors=5).fit(X)
    _, idx = nn.kneighbors(X)
    A = np.zeros((30, 30))
    for i in range(30):
        A[i, idx[i, 1:]] = 1
    W = np.maximum(A, A.T)
    np.testing.assert_allclose(graph_laplacian(X, 4, "binary").toarray(), np.diag(W.sum(1)) - W)
    # heat weights with explicit t
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    Wh = W * np.exp(-D2 / 0.7)
    np.testing.assert_allclose(graph_laplacian(X, 4, "heat", 0.7).toarray(),
                               np.diag(Wh.sum(1)) - Wh, atol=1e-12)
    with pytest.raises(ValueError, match="weights"):
        graph_laplacian(X, 4, "cosine")
    with pytest.raises(ValueError, match="n_neighbors"):
        graph_laplacian(X, 0)


def test_unlabelled_mask():
    np.testing.assert_array_equal(unlabelled_mask(np.array([1.0, np.nan, -1.0])), [0, 1, 0])
    np.testing.assert_array_equal(unlabelled_mask(np.array(["a", None, "b"], dtype=object)),
                                  [0, 1, 0])


@pytest.mark.parametrize("seed", SEEDS)
def test_laprls_primal_dual_and_closed_form(seed):
    X, _, yr, lab = _data(seed)
    m = LapRLS(gamma_A=0.05, gamma_I=0.5 + seed, gamma=0.5, n_neighbors=5)
    assert_forms_agree(m, X, yr, output="predict")
    # Zhang's closed form alpha = (J K + gA l I + gI l/(u+l)^2 L K)^{-1} J y
    K, L, l_ = m.kernel_laplacian(X, yr)
    n = K.shape[0]
    J = np.diag(np.r_[np.ones(l_), np.zeros(n - l_)])
    a = np.linalg.solve(J @ K + 0.05 * l_ * np.eye(n) + m.gamma_I * l_ / n**2 * (L @ K),
                        np.r_[yr[lab], np.zeros(n - l_)])
    Xo = np.r_[X[lab], X[~lab]]
    Xt = np.random.default_rng(seed + 3).normal(size=(10, 2))
    np.testing.assert_allclose(m.predict(Xt), m.kernel_(Xt, Xo) @ a, atol=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_laprls_kkt_adapter(seed):
    X, _, yr, _ = _data(seed)
    D = LapRLS(gamma_A=0.05, gamma_I=1.0, gamma=0.5).dual(X, yr)
    assert kkt_adapter.accepts(D)
    s_k, s_c = kkt_adapter.solve(D), D.solve(backend="cvxpy")
    np.testing.assert_allclose(s_k.values["beta"], s_c.values["beta"], atol=1e-6)
    assert s_k.info["kkt_residual"] <= 1e-10


@pytest.mark.parametrize("seed", SEEDS)
def test_laprls_reduces_to_kernel_ridge(seed):
    X, _, yr, lab = _data(seed)
    Xl, yl = X[lab], yr[lab]
    gA, l_ = 0.03, lab.sum()
    m = LapRLS(gamma_A=gA, gamma_I=0.0, gamma=0.5).fit(Xl, yl, backend="cvxpy")
    kr = KernelRidge(C=1.0 / (gA * l_), gamma=0.5).fit(Xl, yl, backend="cvxpy")
    sk = SKKernelRidge(alpha=gA * l_, kernel="rbf", gamma=0.5).fit(Xl, yl)
    Xt = np.random.default_rng(seed).normal(size=(10, 2))
    np.testing.assert_allclose(m.predict(Xt), kr.predict(Xt), atol=1e-6)
    np.testing.assert_allclose(m.predict(Xt), sk.predict(Xt), atol=1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_lapsvc_primal_dual(seed):
    X, yc, _, lab = _data(seed)
    m = LapSVC(gamma_A=0.05, gamma_I=0.5 + seed, gamma=0.5, graph_weights="binary")
    cd = assert_forms_agree(m, X, yc, 1e-6, output_tol=1e-5)
    assert set(m.predict(X)) <= {-1.0, 1.0}
    # the dual has the box-QP structure with a dense matrix (detected)
    D = m.dual(X, yc)
    bq = box_qp_of(D)
    assert bq.Q.matrix is not None and np.allclose(bq.C, 1.0 / lab.sum())
    # dual value = primal value (box QP objective in min form is -D)
    assert abs(-bq.objective(m.dual_beta_) - cd.dual_objective) <= 1e-8


def test_lapsvc_uses_unlabelled_points():
    """Two moons with 1 label per moon: the graph term carries the labels along the manifold."""
    from sklearn.datasets import make_moons
    X, y = make_moons(80, noise=0.05, random_state=0)
    ys = np.full(80, np.nan)
    for c in (0, 1):
        ys[np.flatnonzero(y == c)[0]] = c
    semi = LapSVC(gamma_A=1e-4, gamma_I=10.0, gamma=5.0).fit(X, ys, backend="cvxpy")
    sup = LapSVC(gamma_A=1e-4, gamma_I=0.0, gamma=5.0).fit(X, ys, backend="cvxpy")
    assert semi.score(X, y) >= 0.95 > sup.score(X, y)


def test_bad_input():
    X, yc, yr, _ = _data(0)
    with pytest.raises(ValueError, match="gamma_A"):
        LapRLS(gamma_A=0.0).fit(X, yr)
    with pytest.raises(ValueError, match="gamma_I"):
        LapRLS(gamma_I=-1.0).fit(X, yr)
    with pytest.raises(ValueError, match="labelled"):
        LapRLS().fit(X, np.full(len(X), np.nan))
    with pytest.raises(ValueError, match="2 classes"):
        LapSVC().fit(X, np.where(np.isnan(yc), np.nan, 1.0))


# ----- sample weights: the loss is the weighted mean sum_i v_i loss_i, v_i = s_i / sum_j s_j
def _weights(seed, n):
    return np.random.default_rng(seed + 20).uniform(0.3, 3.0, size=n)


@pytest.mark.parametrize("seed", SEEDS)
def test_laprls_weighted_primal_dual_and_closed_form(seed):
    """Weighted LapRLS: primal and dual fits certified with equal predictions, the KKT
    backend's exact solve gives the same, and the weighted closed form
    ``alpha = (J^T V J K + gamma_A I + c_I L K)^{-1} J^T V y`` (V = diag(v)) holds."""
    X, _, yr, lab = _data(seed)
    sw = _weights(seed, len(X))
    m = LapRLS(gamma_A=0.05, gamma_I=0.5 + seed, gamma=0.5, n_neighbors=5)
    cert = assert_forms_agree(m, X, yr, output="predict", sample_weight=sw)
    assert abs(cert.primal_objective - cert.dual_objective) <= 1e-8 * max(
        1.0, abs(cert.primal_objective))
    pred = m.predict(X)
    m.fit(X, yr, sample_weight=sw, backend="kkt")
    assert m.certificate_.max_kkt_residual <= 1e-10
    np.testing.assert_allclose(m.predict(X), pred, atol=1e-6)
    K, L, l_ = m.kernel_laplacian(X, yr, sw)
    n = K.shape[0]
    v = np.r_[sw[lab] / sw[lab].sum(), np.zeros(n - l_)]
    a = np.linalg.solve(np.diag(v) @ K + 0.05 * np.eye(n) + m.gamma_I / n**2 * (L @ K),
                        v * np.r_[yr[lab], np.zeros(n - l_)])
    Xo = np.r_[X[lab], X[~lab]]
    Xt = np.random.default_rng(seed + 3).normal(size=(10, 2))
    np.testing.assert_allclose(m.predict(Xt), m.kernel_(Xt, Xo) @ a, atol=1e-8)
    D = m.dual(X, yr, sample_weight=sw)
    assert kkt_adapter.accepts(D)
    np.testing.assert_allclose(m.kkt_system(X, yr, sw).C, 2 * v[:l_])


@pytest.mark.parametrize("seed", SEEDS)
def test_lapsvc_weighted_primal_dual(seed):
    """Weighted LapSVM: the box is ``0 <= beta_i <= v_i``; primal and dual fits certified and
    equal; SMO agrees."""
    X, yc, _, lab = _data(seed)
    sw = _weights(seed, len(X))
    m = LapSVC(gamma_A=0.05, gamma_I=0.5 + seed, gamma=0.5, graph_weights="binary")
    cert = assert_forms_agree(m, X, yc, 1e-6, output_tol=1e-5, sample_weight=sw)
    bq = box_qp_of(m.dual(X, yc, sample_weight=sw))
    np.testing.assert_allclose(bq.C, sw[lab] / sw[lab].sum())
    assert abs(-bq.objective(m.dual_beta_) - cert.dual_objective) <= 1e-8
    f = m.decision_function(X)
    m.fit(X, yc, sample_weight=sw, backend="smo")
    assert m.status_ == "optimal" and abs(m.certificate_.relative_gap) <= 1e-3
    np.testing.assert_allclose(m.decision_function(X), f, atol=1e-2)


@pytest.mark.parametrize("seed", [0, 1])
def test_laplacian_integer_weights_equal_repeated_rows(seed):
    """Integer weights equal repeating the labelled rows. Repeating a row also adds a graph
    node, so the equivalence is exact only without the graph term (gamma_I = 0; the loss is a
    weighted mean, so repeating rows and weighting them give the same objective in w)."""
    X, yc, yr, lab = _data(seed, n=30, n_lab=16)
    rng = np.random.default_rng(seed)
    sw = rng.integers(1, 4, size=len(X)).astype(float)
    rep = np.repeat(np.arange(len(X)), np.where(lab, sw, 1).astype(int))
    Xt = rng.normal(size=(12, 2))
    for est, y, kw, tol in ((LapRLS, yr, {"backend": "kkt"}, 1e-9),
                            (LapSVC, yc, {"backend": "cvxpy"}, 1e-5)):
        m = est(gamma_A=0.02, gamma_I=0.0, gamma=0.5).fit(X, y, sample_weight=list(sw), **kw)
        r = est(gamma_A=0.02, gamma_I=0.0, gamma=0.5).fit(X[rep], y[rep], **kw)
        out = "predict" if est is LapRLS else "decision_function"
        np.testing.assert_allclose(getattr(m, out)(Xt), getattr(r, out)(Xt), atol=tol)
        assert abs(m.certificate_.primal_objective - r.certificate_.primal_objective) <= tol


def test_laplacian_zero_weight_is_unlabelled_and_scale_free():
    """With the graph on: a labelled point of weight 0 is exactly an unlabelled point (still a
    graph node), and multiplying all weights by a constant changes nothing."""
    X, yc, yr, lab = _data(0)
    sw = _weights(0, len(X))
    drop = np.flatnonzero(lab)[:3]
    sw0 = sw.copy()
    sw0[drop] = 0.0
    Xt = np.random.default_rng(5).normal(size=(10, 2))
    for est, y in ((LapRLS, yr), (LapSVC, yc)):
        kw = {"gamma_A": 0.05, "gamma_I": 2.0, "gamma": 0.5}
        a = est(**kw).fit(X, y, sample_weight=sw0, backend="cvxpy")
        yn = y.copy()
        yn[drop] = np.nan
        b = est(**kw).fit(X, yn, sample_weight=sw, backend="cvxpy")
        c = est(**kw).fit(X, y, sample_weight=7.5 * sw0, backend="cvxpy")
        for o in (b, c):
            np.testing.assert_allclose(o.predict(Xt) if est is LapRLS else
                                       o.decision_function(Xt),
                                       a.predict(Xt) if est is LapRLS else
                                       a.decision_function(Xt), atol=1e-5)
        assert a.certificate_.extra["l"] == lab.sum() - 3
        # a negative weight drops the label in fit (LIBSVM), the problem itself refuses it
        sneg = sw0.copy()
        sneg[drop] = -1.0
        d = est(**kw).fit(X, y, sample_weight=sneg, backend="cvxpy")
        np.testing.assert_allclose(d.certificate_.primal_objective,
                                   a.certificate_.primal_objective, rtol=1e-6)
        with pytest.raises(ValueError, match="sample_weight must be >= 0"):
            est(**kw).primal(X, y, sample_weight=sneg)


def test_laplacian_bad_sample_weight():
    X, yc, yr, lab = _data(0)
    for est, y in ((LapRLS, yr), (LapSVC, yc)):
        with pytest.raises(ValueError, match="sample_weight"):
            est().fit(X, y, sample_weight=np.ones(3))
        with pytest.raises(ValueError, match="sample_weight|NaN"):
            est().fit(X, y, sample_weight=np.r_[np.nan, np.ones(len(X) - 1)])
        with pytest.raises(ValueError, match="zero"):
            est().fit(X, y, sample_weight=np.where(lab, 0.0, 1.0))
        with pytest.raises(ValueError, match="sample_weight"):
            est().dual(X, y, sample_weight=np.ones((len(X), 2)))
    with pytest.raises(ValueError, match="class"):   # one class left with a positive weight
        LapSVC().fit(X, yc, sample_weight=np.where(yc > 0, 1.0, 0.0))


@pytest.mark.parametrize("name", ["LapSVC", "LapRLS"])
def test_precomputed_kernel_with_interleaved_unlabelled_rows_equals_the_kernel_itself(name):
    """Issue 27 (found by the Laplacian oracle): the fit reorders the rows (loss rows first);
    a precomputed Gram matrix must be reordered on both sides and ``support_`` must index the
    rows as passed, or the decision function reads the wrong columns (it differed by 7.9)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(36, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    y[rng.random(36) < 0.5] = np.nan
    y[:2] = [1.0, -1.0]
    K = np.exp(-0.7 * ((X[:, None] - X[None]) ** 2).sum(-1))
    est = {"LapSVC": LapSVC, "LapRLS": LapRLS}[name]
    # gamma_I = 0: a precomputed fit builds its graph on the Gram rows, not on X
    a = est(kernel="precomputed", gamma_I=0.0).fit(K, y)
    b = est(kernel="rbf", gamma=0.7, gamma_I=0.0).fit(X, y)
    fa = a.decision_function(K) if name == "LapSVC" else a.predict(K)
    fb = b.decision_function(X) if name == "LapSVC" else b.predict(X)
    assert a.status_ == "optimal"
    np.testing.assert_allclose(fa, fb, atol=1e-3 * np.abs(fb).max())  # SMO's tol
    np.testing.assert_array_equal(np.sort(a.support_), np.sort(b.support_))
    # support_ indexes the rows as passed: the support vectors are those rows of X
    np.testing.assert_array_equal(b.support_vectors_, X[b.support_])
