"""Issue 27: the independent oracle (primaldual.testing.oracle_gap) and the regressions it found.

The oracle is checked against references outside the library (a CVXPY model written here,
numpy eigen-decompositions, closed forms derived in the comments); each numbered item of
issue 27 has a regression test named after what it checks."""

import warnings

import cvxpy as cp
import numpy as np
import pytest

import primaldual as pd
from primaldual.multiclass import OneVsRestClassifier
from primaldual.testing import FUZZ_BACKENDS, assert_oracle_optimal, oracle_gap, oracle_tolerance


def _xy(seed=0, n=30, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    y[:2] = [1, -1]
    return X * scale, y


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **kw)


def _rbf(A, B, g):
    return np.exp(-g * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


# ----------------------------------------------------------------------------- the oracle itself
def _csvc_optimum_by_cvxpy(X, y, C, g):
    """C-SVC primal optimum from a CVXPY model written here (not the library's): the primal
    over ``f = K beta + b`` with ``||w||^2 = beta^T K beta`` (``K = L L^T``)."""
    K = _rbf(X, X, g)
    L = np.linalg.cholesky(K + 1e-12 * np.eye(len(y)))
    beta, b = cp.Variable(len(y)), cp.Variable()
    f = K @ beta + b
    obj = 0.5 * cp.sum_squares(L.T @ beta) + C * cp.sum(cp.pos(1 - cp.multiply(y, f)))
    return cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL")


def test_oracle_primal_and_dual_bracket_an_independent_cvxpy_optimum():
    X, y = _xy(0, 25)
    m = _fit(pd.CSVC(C=1.0, gamma=0.5, tol=1e-6), X, y, backend="smo")
    rep = oracle_gap(m, X, y)
    p_star = _csvc_optimum_by_cvxpy(X, y, 1.0, 0.5)
    # weak duality both ways: D <= p* <= P, and the gap is what SMO's tol allows
    assert rep.dual <= p_star + 1e-7 * abs(p_star)
    assert rep.primal >= p_star - 1e-7 * abs(p_star)
    assert 0 <= rep.relative_gap <= 1e-5
    assert rep.independent_kernel and rep.ok


def test_oracle_detects_a_planted_wrong_intercept_and_wrong_multipliers():
    X, y = _xy(1, 30)
    m = _fit(pd.CSVC(C=1.0, gamma=0.5), X, y, backend="smo")
    assert oracle_gap(m, X, y).ok
    good = m.intercept_.copy()
    m.intercept_ = good + 0.3  # the predictor moves, the multipliers do not
    rep = oracle_gap(m, X, y)
    assert m.status_ == "optimal" and rep.relative_gap > 1e-2 and not rep.ok
    m.intercept_ = good
    m.alpha_ = 2.0 * m.alpha_  # a dual box of 2C
    rep = oracle_gap(m, X, y)
    assert rep.dual_infeasibility >= 0.5 and not rep.ok  # (2C - C) / 2C
    with pytest.raises(AssertionError, match="dual infeasible"):
        assert_oracle_optimal(m, X, y)


def test_oracle_tolerance_is_tol_capped_at_1e_2():
    assert oracle_tolerance(pd.CSVC(tol=10.0)) == 1e-2
    assert oracle_tolerance(pd.CSVC(tol=1e-9)) == 1e-6
    assert oracle_tolerance(pd.CSVC(tol=1e-4)) == 1e-4


CASES = [("CSVC", {}), ("L2SVC", {}), ("NuSVC", {}), ("HardMarginSVC", {}),
         ("EpsilonSVR", {}), ("NuSVR", {}), ("LSSVC", {}), ("LSSVR", {}),
         ("ProximalSVC", {}), ("KernelRidge", {}), ("KernelLogisticRegression", {})]


@pytest.mark.parametrize("name,kw", CASES)
@pytest.mark.parametrize("backend", ["auto", "cvxpy", "lowrank"])
def test_every_estimator_is_optimal_by_the_oracle(name, kw, backend):
    est = getattr(pd, name)(**kw)
    if backend == "lowrank" and "lowrank" not in FUZZ_BACKENDS[name]:
        pytest.skip("no low-rank route for this estimator")
    X, y = _xy(3, 24)
    if est._task == "regression":
        y = np.sin(X[:, 0])
    if name == "HardMarginSVC":
        X[:, 0] += 1.5 * y
    _fit(est, X, y, backend=backend)
    rep = assert_oracle_optimal(est, X, y)
    # the library's own relative gap is the oracle's (same unit, same predictor)
    assert est.status_ == "optimal"
    if name == "NuSVC":
        # the oracle's primal point is the predictor
        # optimal along its ray (nu-SVC): a different point, the gap bounded by tol the same
        assert abs(est.certificate_.relative_gap) <= oracle_tolerance(est)
    else:
        assert abs(est.certificate_.relative_gap - rep.relative_gap) <= 1e-6 + 1e-3 * abs(
            rep.relative_gap)


@pytest.mark.parametrize("maker", [
    lambda: pd.CSVC(), lambda: pd.CSVC(multiclass="ovr"), lambda: pd.NuSVC(class_weight="balanced"),
    lambda: pd.LSSVC(coding="moc"),
    lambda: OneVsRestClassifier(pd.L2SVC())])
def test_multiclass_fits_are_optimal_by_the_oracle_per_sub_problem(maker):
    X, _ = _xy(4, 36)
    y = np.arange(36) % 3
    est = _fit(maker(), X, y)
    rep = assert_oracle_optimal(est, X, y)
    assert len(rep.parts) == est.codes_.shape[1]


# ----------------------------------------------------------------------------- item 1: L2-SVC
@pytest.mark.parametrize("how", ["C", "sample_weight", "scaled"])
def test_l2svc_certificate_uses_the_predictors_slacks_not_alpha_over_C(how):
    X, y = _xy(2, 12)
    kw = {}
    if how == "C":
        est = pd.L2SVC(C=1e12)
    elif how == "sample_weight":
        est, kw = pd.L2SVC(), {"sample_weight": np.full(12, 1e12)}
    else:
        est, X = pd.L2SVC(C=1e7), X * 1e7
    _fit(est, X, y, backend="smo", **kw)
    rep = assert_oracle_optimal(est, X, y, kw.get("sample_weight"))
    # the certificate's primal is the predictor's: xi_i = max(0, 1 - y_i f_i)
    assert est.certificate_.primal_objective == pytest.approx(rep.primal, rel=1e-6)
    if est.status_ == "optimal":
        assert rep.relative_gap <= oracle_tolerance(est)


# ----------------------------------------------------------------------------- item 2: one unit
@pytest.mark.parametrize("name,backend,C,scale", [
    ("NuSVR", "cvxpy", 1e-9, 1.0), ("CSVC", "lowrank", 1e-9, 1.0),
    ("EpsilonSVR", "lowrank", 1e-8, 1e5), ("LSSVR", "kkt", 1e-9, 1.0)])
def test_relative_gap_has_one_unit_min_1_C2_for_every_route(name, backend, C, scale):
    X, y = _xy(0, 40, scale)
    est = getattr(pd, name)(C=C)
    if est._task == "regression":
        y = np.sin(X[:, 0] / scale)
    _fit(est, X, y, backend=backend)
    rep = assert_oracle_optimal(est, X, y)
    c = est.certificate_
    unit = max(min(1.0, C * C), abs(c.primal_objective))
    assert c.relative_gap == pytest.approx(c.duality_gap / unit, rel=1e-12, abs=1e-300)
    assert c.relative_gap == pytest.approx(rep.relative_gap, rel=1e-3, abs=1e-7)


# ----------------------------------------------------------------------------- item 3: tol cap
@pytest.mark.parametrize("tol", [1.0, 10.0])
def test_optimal_implies_gap_at_most_1e_2_whatever_tol(tol):
    X, y = _xy(0, 40)
    est = _fit(pd.CSVC(C=10.0, tol=tol), X, y, backend="smo")
    rep = assert_oracle_optimal(est, X, y)
    assert rep.relative_gap > 1e-2  # SMO stopped early (the case of the issue) ...
    assert est.status_ != "optimal"  # ... and says so


# ----------------------------------------------------------------------------- item 4: ball, bound
def test_enclosing_ball_of_orthonormal_images_has_radius2_one_minus_1_over_N():
    # RBF with gamma = 1e8 on X * 1e6: K = I to rounding; the ball of N orthonormal points has
    # its centre at the mean (a = 1/N) and R^2 = 1 - 1/N
    X, _ = _xy(0, 40, 1e6)
    ball = pd.EnclosingBall(kernel="rbf", gamma=1e8, backend="cvxpy").fit(X)
    assert ball.radius2_ == pytest.approx(1 - 1 / 40, rel=1e-6)
    assert ball.status_ == "optimal"
    assert_oracle_optimal(ball, X)
    # SMO's fused kernel loses the diagonal here (|x|^2 + |z|^2 - 2 x.z cancels at 1e12): the
    # radius it finds is wrong, and the audited status says so
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        smo = pd.EnclosingBall(kernel="rbf", gamma=1e8, backend="smo").fit(X)
    assert smo.status_ != "optimal" or smo.radius2_ == pytest.approx(1 - 1 / 40, rel=1e-6)
    assert_oracle_optimal(smo, X)


@pytest.mark.parametrize("scale", [1e-6, 1e3])
def test_enclosing_ball_unit_scales_with_the_kernel(scale):
    # linear kernel: R^2(s X) = s^2 R^2(X) exactly (the optimal a is scale free)
    X, _ = _xy(1, 30)
    ref = pd.EnclosingBall(kernel="linear", tol=1e-9).fit(X)
    ball = pd.EnclosingBall(kernel="linear", tol=1e-9).fit(X * scale)
    assert ball.radius2_ == pytest.approx(scale**2 * ref.radius2_, rel=1e-6)
    assert ball.status_ == "optimal"
    assert_oracle_optimal(ball, X * scale)


def test_enclosing_ball_status_is_audited_against_its_gap():
    X, _ = _xy(1, 30)
    ball = pd.EnclosingBall(kernel="linear", tol=0.5).fit(X * 1e-6)
    rep = oracle_gap(ball, X * 1e-6)
    assert ball.status_ != "optimal" or rep.relative_gap <= 1e-2


def _ball_radius2_cvxpy(K):
    a = cp.Variable(K.shape[0])
    L = np.linalg.cholesky(K + 1e-12 * np.eye(K.shape[0]))
    prob = cp.Problem(cp.Maximize(np.diag(K) @ a - cp.sum_squares(L.T @ a)),
                      [cp.sum(a) == 1, a >= 0])
    return prob.solve(solver="CLARABEL")


def test_l2svc_bound_uses_per_sample_C_i():
    X, y = _xy(5, 24)
    sw = np.linspace(0.5, 3.0, 24)
    m = _fit(pd.L2SVC(C=2.0, gamma=0.5, tol=1e-8), X, y, sample_weight=sw, backend="cvxpy")
    B = m.bound()
    Ci = 2.0 * sw
    a = m.alpha_
    K = _rbf(X, X, 0.5)
    w2 = float((a * y) @ K @ (a * y)) + float(a @ (a / Ci))
    R2 = _ball_radius2_cvxpy(K + np.diag(1.0 / Ci))
    assert B == pytest.approx(R2 * w2, rel=1e-5)


# ----------------------------------------------------------------------------- item 5: KernelPCA
def test_kernel_pca_drops_numerically_zero_components_of_duplicated_rows():
    from sklearn.decomposition import KernelPCA as SK
    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(3, 4)), 8, axis=0)
    for kernel in ("linear", "rbf"):
        ours = pd.KernelPCA(n_components=None, kernel=kernel).fit(X)
        ref = SK(kernel=kernel).fit(X)
        # 3 distinct points, centred: rank 2
        assert ours.eigenvalues_.shape == ref.eigenvalues_.shape == (2,)
        assert_oracle_optimal(ours, X)


@pytest.mark.parametrize("n", [None, 6])
def test_kernel_pca_transform_of_training_rows_equals_fit_transform(n):
    rng = np.random.default_rng(1)
    X = np.repeat(rng.normal(size=(3, 4)), 8, axis=0)
    m = pd.KernelPCA(n_components=n, kernel="rbf", gamma=0.3)
    Z = m.fit_transform(X)
    assert np.max(np.abs(m.transform(X) - Z)) <= 1e-10 * max(1.0, np.max(np.abs(Z)))


def test_kernel_pca_certificate_rejects_non_leading_eigenpairs():
    from sklearn.datasets import load_iris
    from sklearn.metrics.pairwise import rbf_kernel
    X = load_iris().data
    m = pd.KernelPCA(n_components=4, kernel="rbf", gamma=0.5).fit(X)
    assert m.certificate_.status == "optimal"
    N = X.shape[0]
    J = np.eye(N) - 1.0 / N
    Kc = J @ rbf_kernel(X, gamma=0.5) @ J  # full rank: eigenpairs 5..8 are genuine ones
    lam, U = np.linalg.eigh(Kc)
    # plant eigenpairs 5..8 (exact eigenpairs, but not the leading ones)
    m.eigenvalues_, m.eigenvectors_ = lam[::-1][4:8].copy(), U[:, ::-1][:, 4:8].copy()
    KU = Kc @ m.eigenvectors_
    from primaldual.decomposition.kpca import _deflated_top
    m._certify(KU - m.eigenvectors_ * m.eigenvalues_, "planted", KU,
               _deflated_top(Kc, m.eigenvectors_, m.eigenvalues_))
    assert m.certificate_.status == "inaccurate"
    assert m.certificate_.kkt["spectrum_order"] > 0.1


def test_kernel_pca_certificate_primal_is_recomputed_from_the_vectors():
    from sklearn.datasets import load_iris
    X = load_iris().data
    m = pd.KernelPCA(n_components=3).fit(X)
    c = m.certificate_
    Xc = X - X.mean(0)
    U = m.eigenvectors_
    assert c.primal_objective == pytest.approx(float(np.sum(U * (Xc @ (Xc.T @ U)))), rel=1e-12)
    assert c.dual_objective == pytest.approx(float(np.sum(m.eigenvalues_)), rel=1e-12)


def test_kernel_pca_arpack_on_constant_data_is_not_a_raw_scipy_error():
    m = pd.KernelPCA(n_components=2, eigen_solver="arpack").fit(np.ones((20, 3)))
    assert np.all(m.eigenvalues_ == 0)


def test_kernel_pls_matches_an_independent_nipals_reference():
    X, _ = _xy(0, 30)
    y = np.sin(X[:, 0])
    m = pd.KernelPLSRegression(n_components=2).fit(X, y)
    assert_oracle_optimal(m, X, y)


# ----------------------------------------------------------------------------- item 8: atomic fit
@pytest.mark.parametrize("make,second", [
    (lambda: pd.KernelPCA(n_components=2), lambda m, X, y: m.fit(np.full((5, 7), np.nan))),
    (lambda: pd.KernelPLSRegression(n_components=1),
     lambda m, X, y: m.fit(np.ones((6, 7)), np.arange(6.0))),
    (lambda: pd.EnclosingBall(kernel="linear"), lambda m, X, y: m.fit(np.full((5, 7), np.inf))),
])
def test_failed_refit_leaves_the_old_model_predicting(make, second):
    X, _ = _xy(0, 20)
    y = np.sin(X[:, 0])
    m = make()
    m.fit(X, y) if isinstance(m, pd.KernelPLSRegression) else m.fit(X)
    out = (m.predict(X) if hasattr(m, "predict") else
           m.transform(X) if hasattr(m, "transform") else m.decision_function(X))
    with pytest.raises(ValueError):
        second(m, X, y)
    assert m.n_features_in_ == 2
    again = (m.predict(X) if hasattr(m, "predict") else
             m.transform(X) if hasattr(m, "transform") else m.decision_function(X))
    assert np.array_equal(out, again)


def test_failed_platt_step_restores_the_earlier_probabilistic_model(monkeypatch):
    import primaldual.calibration as cal
    X, y = _xy(0, 30)
    m = pd.CSVC(probability=True).fit(X, y)
    before = (m.probA_.copy(), m.dual_coef_.copy(), m.predict_proba(X))

    def fail(*args, **kwargs):
        raise RuntimeError("planted failure of the Platt step")

    monkeypatch.setattr(cal, "platt_fit", fail)
    with pytest.raises(RuntimeError, match="planted"):
        m.fit(X[:20] * 2.0, y[:20])
    assert np.array_equal(m.probA_, before[0]) and np.array_equal(m.dual_coef_, before[1])
    assert np.array_equal(m.predict_proba(X), before[2])


# ----------------------------------------------------------------------------- item 12: the gap
@pytest.mark.parametrize("name", ["CSVC", "L2SVC", "EpsilonSVR", "NuSVR", "HardMarginSVC"])
def test_certificate_gap_of_a_stopped_fit_equals_the_oracles(name):
    """Stopped after 2 SMO iterations the fit is far from optimal: its certificate must report
    the gap the oracle recomputes (numpy kernel, the predictor's primal, the multipliers'
    dual) -- a certificate whose gap were 0 or scaled would differ -- and not be 'optimal'."""
    X, y = _xy(7, 30)
    est = getattr(pd, name)(max_iter=2, gamma=0.5)
    if est._task == "regression":
        y = np.sin(2 * X[:, 0])
    if name == "HardMarginSVC":
        X[:, 0] += 1.5 * y
    _fit(est, X, y, backend="smo")
    rep = oracle_gap(est, X, y)
    c = est.certificate_
    if name == "HardMarginSVC":  # infeasible margins: P - D may be negative, the margins tell
        assert rep.extra["violation:margin violation max(0, 1 - min y_i f_i)"] > 0.1
    else:
        assert rep.gap > 1e-3 * abs(rep.primal)  # the stopped fit is really not optimal
    if name == "NuSVR":
        # the certificate's primal keeps the recovered epsilon_, the oracle's the predictor's
        # optimal one: the certificate's gap is the larger (conservative), by less than 2x
        assert rep.gap * (1 - 1e-9) <= c.duality_gap <= 2 * rep.gap
    else:
        assert c.duality_gap == pytest.approx(rep.gap, rel=1e-6)
        assert c.relative_gap == pytest.approx(rep.relative_gap, rel=1e-6)
    assert est.status_ != "optimal"


# ----------------------------------------------------------------------------- SMO stop and bias
@pytest.mark.parametrize("tol", [1e-3, 1e-5])
def test_smo_stops_on_libsvm_rule_at_its_own_tol(tol):
    """SMO stops when the maximal violating pair is below ``tol`` (LIBSVM's rule, in its
    units) -- not at a looser one -- and the certified gap meets ``tol`` too."""
    X, y = _xy(0, 60)
    m = _fit(pd.CSVC(C=1.0, gamma=0.5, tol=tol), X, y, backend="smo")
    assert m.solution_.info["max_violation"] < tol
    assert m.status_ == "optimal" and oracle_gap(m, X, y).relative_gap <= tol


@pytest.mark.parametrize("dense", [True, False])
def test_smo_intercept_equals_libsvm_on_both_routes(dense):
    """The intercept of the numpy (dense) and the compiled SMO routes equals LIBSVM's
    (scikit-learn's SVC at the same tol): the mean over free support vectors, not the
    midpoint of the bounded ones' interval."""
    from sklearn.svm import SVC

    from primaldual.backends import get_backend
    X, y = _xy(2, 40)
    m = pd.CSVC(C=1.0, gamma=0.5)
    sol = get_backend("smo").solve(m.dual(X, y), tol=1e-8, dense=dense)
    b = -float(np.ravel(sol.multipliers["minus_b"])[0])
    ref = SVC(C=1.0, gamma=0.5, tol=1e-8).fit(X, y)
    assert np.count_nonzero((ref.dual_coef_ != 0) & (np.abs(ref.dual_coef_) < 1.0)) > 0
    assert b == pytest.approx(float(ref.intercept_[0]), abs=1e-7)  # agree to ~1e-9


# ------------------------------------------------------------ Bayesian kernel machines
def _bayes_data(seed=0, n=20, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    yc = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    if classes == 3:
        yc = np.digitize(X[:, 0], [-0.4, 0.4])
    yr = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    return X, yc, yr


def _gp_mode_by_scipy(K, t):
    """The Laplace mode from scipy's L-BFGS on ``Psi(a) = t^T K a - sum log(1 + e^{K a})
    - a^T K a / 2`` (``f = K a``), independent of the library's Newton iteration."""
    import scipy.optimize

    def obj(a):
        f = K @ a
        v = -(t @ f - np.logaddexp(0, f).sum() - 0.5 * a @ f)
        g = -(K @ (t - 1 / (1 + np.exp(-f))) - f)
        return v, g

    res = scipy.optimize.minimize(obj, np.zeros(len(t)), jac=True, method="L-BFGS-B",
                                  options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 5000})
    return K @ res.x


def test_gpc_oracle_mode_stationarity_holds_and_matches_an_independent_mode():
    from primaldual.gaussian_process import GPClassifier

    X, yc, _ = _bayes_data(0)
    m = _fit(GPClassifier(optimizer=None, gamma=0.7, amplitude=2.0), X, yc)
    rep = assert_oracle_optimal(m, X, yc)
    assert rep.status == "optimal" and rep.independent_kernel
    assert rep.extra["violation:||f_ - K (t - sigma(f_))|| / max(1, ||f_||)"] < 1e-8
    f_ref = _gp_mode_by_scipy(2.0 * _rbf(X, X, 0.7), yc.astype(float))
    assert np.max(np.abs(f_ref - m.f_)) < 1e-5 * max(1.0, np.max(np.abs(f_ref)))


def test_gpc_oracle_fails_on_a_perturbed_mode_binary_and_one_vs_rest():
    from primaldual.gaussian_process import GPClassifier

    for classes in (2, 3):
        X, yc, _ = _bayes_data(1, classes=classes)
        m = _fit(GPClassifier(), X, yc)
        assert_oracle_optimal(m, X, yc)
        st = m.estimators_[-1]
        st["f_"] = st["f_"] + 0.05 * np.sign(st["f_"])   # a mode 5% off, pi_ kept consistent
        st["pi_"] = 1 / (1 + np.exp(-st["f_"]))
        with pytest.raises(AssertionError, match=r"f_ - K \(t - sigma"):
            assert_oracle_optimal(m, X, yc)


def test_rvr_oracle_evidence_stationarity_and_planted_faults():
    X, _, yr = _bayes_data(2)
    m = _fit(pd.RVR(gamma=0.5), X, yr)
    assert m.converged_
    rep = assert_oracle_optimal(m, X, yr)
    assert rep.independent_kernel and rep.status == "optimal"
    # a perturbed precision of a kept basis function: alpha_i != gamma_i / mu_i^2
    bad = _fit(pd.RVR(gamma=0.5), X, yr)
    bad.alpha_ = bad.alpha_.copy()
    bad.alpha_[0] *= 1.5
    bad.mu_ = _rvr_mean(bad, X, yr)                     # posterior kept consistent
    with pytest.raises(AssertionError, match="alpha_i mu_i"):
        assert_oracle_optimal(bad, X, yr)
    # a perturbed noise precision
    bad = _fit(pd.RVR(gamma=0.5), X, yr)
    bad.beta_ *= 1.5
    bad.mu_ = _rvr_mean(bad, X, yr)
    with pytest.raises(AssertionError, match="beta"):
        assert_oracle_optimal(bad, X, yr)
    # a relevant basis function pruned (the model refitted without it): q_i^2 > s_i
    bad = _fit(pd.RVR(gamma=0.5), X, yr)
    k = int(np.argmax(np.abs(bad.mu_)))
    bad.active_ = np.delete(bad.active_, k)
    bad.alpha_ = np.delete(bad.alpha_, k)
    bad.mu_ = _rvr_mean(bad, X, yr)
    with pytest.raises(AssertionError, match="pruned"):
        assert_oracle_optimal(bad, X, yr)
    # a posterior mean that is not the one of (alpha_, beta_)
    bad = _fit(pd.RVR(gamma=0.5), X, yr)
    bad.mu_ = bad.mu_ * 1.01
    with pytest.raises(AssertionError, match="posterior mean"):
        assert_oracle_optimal(bad, X, yr)


def _rvr_mean(m, X, y):
    """``mu = beta (A + beta Phi^T Phi)^{-1} Phi^T t`` of the model's columns (numpy)."""
    P = np.column_stack([_rbf(X, X, 0.5), np.ones(len(y))])[:, m.active_]
    H = m.beta_ * P.T @ P + np.diag(m.alpha_)
    return np.linalg.solve(H, m.beta_ * P.T @ y)


def test_rvc_oracle_laplace_mode_and_evidence_stationarity_and_planted_faults():
    for classes in (2, 3):
        X, yc, _ = _bayes_data(3, n=24, classes=classes)
        m = _fit(pd.RVC(gamma=0.5), X, yc)
        assert m.converged_
        rep = assert_oracle_optimal(m, X, yc)
        assert rep.status == "optimal"
        sub = m.estimators_[0] if classes == 3 else m
        sub.mu_ = sub.mu_ * 1.05                          # not the Laplace mode
        with pytest.raises(AssertionError, match="Laplace mode"):
            assert_oracle_optimal(m, X, yc)
    X, yc, _ = _bayes_data(3, n=24)
    m = _fit(pd.RVC(gamma=0.5), X, yc)
    m.alpha_ = m.alpha_ * 3.0                             # precisions off their optimum
    with pytest.raises(AssertionError, match="alpha_i mu_i"):
        assert_oracle_optimal(m, X, yc)


def test_rvm_oracle_checks_only_fits_called_converged():
    X, _, yr = _bayes_data(2)
    m = _fit(pd.RVR(gamma=0.5, max_iter=1), X, yr)
    assert not m.converged_
    rep = oracle_gap(m, X, yr)
    assert rep.status == "not converged" and rep.ok       # it claims nothing


def test_gpc_and_rvc_on_overflowing_kernels_raise_numerical_trouble_not_raw_errors():
    """Fuzz seeds 93 (GPClassifier, linear kernel on features at 1e12: B's Cholesky fails) and
    179 (RVC, cubic kernel at 1e10: the IRLS Hessian overflows) raised raw LinAlgError /
    scipy's ValueError before; now primaldual's NumericalTroubleError, the estimator
    untouched."""
    from primaldual.exceptions import NumericalTroubleError
    from primaldual.testing import assert_honest_fit, oracle_case

    for seed, name in ((93, "GPClassifier"), (179, "RVC")):
        c = oracle_case(seed)
        assert c["case"][1] == name
        r = assert_honest_fit(c["estimator"], c["X"], c["y"], **c["fit"])
        assert isinstance(r, NumericalTroubleError)
        assert not hasattr(c["estimator"], "classes_")


def test_gpc_oracle_reports_an_unverifiable_residual_instead_of_passing_it():
    """Fuzz seed 1105: linear kernel on features at 1e4 (``||K|| ~ 1.5e9``). Newton's mode is
    converged to ~10 digits, but ``K (t - sigma(f))`` amplifies f's rounding by ``||K|| / 4``:
    the derivable rounding floor is above 1e-2, so the oracle says "unverifiable" (not
    "optimal") and still reports the residual (~9 relative before Newton's stop also asked for
    the residual; ~2e-3 since)."""
    from primaldual.testing import oracle_case

    c = oracle_case(1105)
    m = _fit(c["estimator"], c["X"], c["y"])
    rep = oracle_gap(m, c["X"], c["y"])
    assert rep.status.startswith("unverifiable")
    assert np.isfinite(rep.extra["violation:||f_ - K (t - sigma(f_))|| / max(1, ||f_||)"])


def test_gp_classifier_with_a_loose_tol_still_stops_at_a_stationary_mode():
    """Fuzz seeds 4295 and 4630 (linear kernel, tol = 1e-2): Newton stopped when Psi rose by
    less than tol, with the mode's residual ||f - K (t - pi)|| at 1e-2..0.15 relative; the stop
    now also asks the residual to be within min(1e-2, sqrt(tol)), which the oracle checks."""
    import warnings

    from primaldual.testing import assert_honest_fit, oracle_case

    for seed in (4295, 4630):
        c = oracle_case(seed)
        assert c["case"][1] == "GPClassifier"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_honest_fit(c["estimator"], c["X"], c["y"], **c["fit"])


# ----------------------------------------------------------------------------- Laplacian methods
def _lap_data(seed=0, n=36, classes=2, unlabelled=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    if classes == 2:
        y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    else:
        y = np.digitize(X[:, 0], [-0.4, 0.4]).astype(float)
    y[rng.random(n) < unlabelled] = np.nan
    y[:classes] = np.arange(classes) if classes > 2 else [1.0, -1.0]
    return X, y


def _lapsvc_optimum_by_cvxpy(X, y, gamma_A, gamma_I, g, k):
    """LapSVM primal optimum from a CVXPY model written here: ``f = K a + b`` on all rows,
    ``||w||^2 = a^T K a``, the graph ``L`` of a k-NN heat graph built with scikit-learn's
    NearestNeighbors (not the library's graph code)."""
    from sklearn.neighbors import NearestNeighbors
    n = X.shape[0]
    dist, idx = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    dist, idx = dist[:, 1:], idx[:, 1:]
    t = float(np.mean(dist ** 2))
    W = np.zeros((n, n))
    W[np.repeat(np.arange(n), k), idx.ravel()] = np.exp(-(dist ** 2).ravel() / t)
    W = np.maximum(W, W.T)
    Lg = np.diag(W.sum(1)) - W
    K = _rbf(X, X, g)
    R = np.linalg.cholesky(K + 1e-10 * np.eye(n))
    lab = ~np.isnan(y)
    a, b = cp.Variable(n), cp.Variable()
    f = K @ a
    Lh = np.linalg.cholesky(Lg + 1e-12 * np.eye(n))  # f^T L f = ||Lh^T f||^2
    obj = (cp.sum(cp.pos(1 - cp.multiply(y[lab], f[lab] + b))) / lab.sum()
           + gamma_A * cp.sum_squares(R.T @ a) + gamma_I / n ** 2 * cp.sum_squares(Lh.T @ f))
    return cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL")


def test_laplacian_oracle_brackets_an_independent_cvxpy_lapsvm_optimum():
    X, y = _lap_data(1)
    m = _fit(pd.LapSVC(gamma=0.8, gamma_A=0.05, gamma_I=2.0, n_neighbors=5), X, y)
    rep = oracle_gap(m, X, y)
    p_star = _lapsvc_optimum_by_cvxpy(X, y, 0.05, 2.0, 0.8, 5)
    assert rep.dual <= p_star + 1e-6 * abs(p_star) <= rep.primal + 2e-6 * abs(p_star)
    assert rep.ok and rep.relative_gap <= 1e-3 and rep.independent_kernel


@pytest.mark.parametrize("name", ["LapSVC", "LapRLS"])
@pytest.mark.parametrize("backend", ["auto", "cvxpy"])
@pytest.mark.parametrize("weights", [False, True])
def test_laplacian_fits_are_optimal_by_the_oracle(name, backend, weights):
    X, y = _lap_data(2)
    sw = np.random.default_rng(5).uniform(0.2, 3.0, X.shape[0]) if weights else None
    if weights:
        sw[3] = 0.0  # a labelled point of weight 0 is a graph node only
    m = _fit(getattr(pd, name)(backend=backend), X, y, sample_weight=sw)
    assert_oracle_optimal(m, X, y, sample_weight=sw)


def test_laplacian_oracle_covers_multiclass_precomputed_and_the_primal_form():
    X, y = _lap_data(3, n=45, classes=3)
    for kw in ({}, {"multiclass": "ovr"}, {"graph_weights": "binary", "n_neighbors": 3}):
        m = _fit(pd.LapSVC(**kw), X, y)
        rep = oracle_gap(m, X, y)
        assert len(rep.parts) == 3 and rep.ok
    Xb, yb = _lap_data(4)
    K = _rbf(Xb, Xb, 0.7)
    for cls in (pd.LapSVC, pd.LapRLS):
        assert_oracle_optimal(_fit(cls(kernel="precomputed"), K, yb), K, yb)
        assert_oracle_optimal(_fit(cls(form="primal"), Xb, yb), Xb, yb)


@pytest.mark.parametrize("fault", ["coef", "intercept", "beta", "gamma_I"])
def test_laplacian_oracle_detects_planted_faults(fault):
    X, y = _lap_data(5)
    name = "LapRLS" if fault == "beta" else "LapSVC"
    m = _fit(getattr(pd, name)(), X, y)
    assert oracle_gap(m, X, y).ok
    if fault == "coef":
        m.dual_coef_ = m.dual_coef_ * 1.05
    elif fault == "intercept":
        m.intercept_ = m.intercept_ + 0.3
    elif fault == "beta":
        m.dual_beta_ = m.dual_beta_ * 1.2
    else:  # a fit whose graph term was weighted 10x too little (gamma_I / n instead of / n^2
        # would be one such slip): the stored predictor is not optimal for the stated problem
        m.gamma_I = m.gamma_I * 10.0
    assert not oracle_gap(m, X, y).ok
