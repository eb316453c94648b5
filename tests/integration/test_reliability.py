"""Bad input gets a clear error naming the argument; numerical trouble is detected and reported;
nothing wrong is ever returned as optimal; fits are atomic; the command line never prints a
traceback (issues 10 and 14, docs/reliability.md).

Every test here is listed in the tables of docs/reliability.md.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import linear_kernel, rbf_kernel

import primaldual as pd
from primaldual import validation as V
from primaldual.solution import InaccurateSolutionWarning, InfeasibleProblemError


def _f(m, X):
    """``f(x)``: ``decision_function`` of a classifier, ``predict`` of a regressor (which has
    no ``decision_function``, as in scikit-learn)."""
    return m.decision_function(X) if hasattr(m, "decision_function") else m.predict(X)


def _clf(seed: int = 0, n: int = 20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _reg(seed: int = 0, n: int = 20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


CLASSIFIERS = ["CSVC", "L2SVC", "NuSVC", "LSSVC", "ProximalSVC", "KernelLogisticRegression",
               "LapSVC"]
REGRESSORS = ["EpsilonSVR", "NuSVR", "LSSVR", "KernelRidge", "LapRLS"]


def _data(name: str, seed: int = 0):
    return _reg(seed) if name in REGRESSORS else _clf(seed)


# ============================================================================ bad input: data
@pytest.mark.parametrize("name", CLASSIFIERS + REGRESSORS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_X(name, bad):
    X, y = _data(name)
    X = X.copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match="X contains"):
        getattr(pd, name)().fit(X, y)


@pytest.mark.parametrize("name", ["CSVC", "EpsilonSVR", "LSSVR", "KernelRidge"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_y(name, bad):
    X, y = _data(name)
    y = y.astype(float)
    y[2] = bad
    with pytest.raises(ValueError, match="y contains|Input y"):
        getattr(pd, name)().fit(X, y)


@pytest.mark.parametrize("sw_bad", ["nan", "inf", "zeros", "shape"])
def test_bad_sample_weight(sw_bad):
    X, y = _clf()
    sw = np.ones(len(y))
    if sw_bad == "nan":
        sw[0] = np.nan
    elif sw_bad == "inf":
        sw[0] = np.inf
    elif sw_bad == "negative":
        sw[0] = -1.0
    elif sw_bad == "zeros":
        sw[:] = 0.0
    else:
        sw = np.ones(5)
    with pytest.raises(ValueError, match="(?i)sample_weight|sample weights"):
        pd.CSVC().fit(X, y, sample_weight=sw)


def test_shape_mismatch_X_y():
    X, y = _clf()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        pd.CSVC().fit(X, y[:10])


def test_X_not_2d():
    X, y = _clf()
    with pytest.raises(ValueError, match="2D array"):
        pd.CSVC().fit(X[:, 0], y)


def test_predict_wrong_n_features():
    X, y = _clf()
    m = pd.CSVC(backend="smo").fit(X, y)
    with pytest.raises(ValueError, match="features"):
        m.predict(np.ones((3, 5)))


@pytest.mark.parametrize("name", ["CSVC", "NuSVC", "LSSVC", "KernelLogisticRegression"])
def test_one_class(name):
    X, _ = _clf()
    with pytest.raises(ValueError, match="2 classes"):
        getattr(pd, name)().fit(X, np.ones(len(X)))


@pytest.mark.parametrize("name", ["CSVC", "NuSVC", "LSSVC", "ProximalSVC"])
def test_three_classes_to_binary_problem_builder(name):
    """The Problem builders (``dual``/``primal``) are binary-only; ``fit`` has multiclass
    wrappers. LSSVR/KernelRidge given class labels are regressions: not a bad input."""
    X, _ = _clf(n=21)
    y3 = np.arange(21) % 3
    with pytest.raises(ValueError, match="exactly 2 classes"):
        getattr(pd, name)().dual(X, y3)


@pytest.mark.parametrize("X", [np.array([["a", "b"]] * 20, dtype=object), [["a", "b"]] * 20,
                               np.array([[1 + 1j, 0]] * 20)])
def test_non_numeric_X(X):
    _, y = _clf()
    with pytest.raises((ValueError, TypeError)):
        pd.CSVC().fit(X, y)


def test_non_numeric_y_regression():
    X, _ = _reg()
    with pytest.raises(ValueError):
        pd.EpsilonSVR().fit(X, np.array(["a"] * len(X), dtype=object))


@pytest.mark.parametrize("name", CLASSIFIERS + REGRESSORS)
def test_empty_data(name):
    with pytest.raises(ValueError, match="0 sample"):
        getattr(pd, name)().fit(np.zeros((0, 2)), np.zeros(0))


# ============================================================================ bad input: params
@pytest.mark.parametrize("name", ["CSVC", "L2SVC", "EpsilonSVR", "NuSVR", "LSSVC", "LSSVR"])
@pytest.mark.parametrize("C", [0, -1.0, float("nan")])
def test_C_not_positive(name, C):
    X, y = _data(name)
    with pytest.raises(ValueError, match="C must"):
        getattr(pd, name)(C=C).fit(X, y)


def test_C_wrong_type():
    X, y = _clf()
    with pytest.raises(TypeError, match="C must"):
        pd.CSVC(C="a").fit(X, y)


def test_C_infinite_soft_margin():
    """C = inf is the hard margin (as scikit-learn's SVC(C=np.inf)); where it is meaningless
    (nu-SVR's C nu N bound) it is refused by name."""
    X, y = _clf()
    m = pd.CSVC(C=float("inf"), kernel="rbf", gamma=10.0).fit(X, y)
    assert m.status_ == "optimal" and np.all(m.predict(X) == y)
    Xr, yr = _reg()
    with pytest.raises(ValueError, match="C must"):
        pd.NuSVR(C=float("inf")).fit(Xr, yr)


@pytest.mark.parametrize("name", ["NuSVC", "NuSVR"])
@pytest.mark.parametrize("nu", [0, -0.1, 1.5, float("nan")])
def test_nu_out_of_range(name, nu):
    X, y = _data(name)
    with pytest.raises(ValueError, match=r"nu must be in \(0, 1\]"):
        getattr(pd, name)(nu=nu).fit(X, y)


def test_nu_wrong_type():
    X, y = _clf()
    with pytest.raises(TypeError, match="nu must"):
        pd.NuSVC(nu="half").fit(X, y)


@pytest.mark.parametrize("backend", ["auto", "cvxpy"])
def test_nu_infeasible_for_class_balance(backend):
    X, _ = _clf()
    y = np.r_[np.ones(17), -np.ones(3)]
    with pytest.raises(ValueError, match="nu=0.9 is infeasible"):
        pd.NuSVC(nu=0.9).fit(X, y, backend=backend)


@pytest.mark.parametrize("eps", [-0.1, float("nan")])
def test_epsilon_negative(eps):
    X, y = _reg()
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        pd.EpsilonSVR(epsilon=eps).fit(X, y)


@pytest.mark.parametrize("gamma", [0, -1.0, "foo", float("nan")])
def test_gamma_bad(gamma):
    X, y = _clf()
    with pytest.raises((ValueError, TypeError), match="gamma must"):
        pd.CSVC(gamma=gamma).fit(X, y)


def test_unknown_kernel_name():
    X, y = _clf()
    with pytest.raises(ValueError, match="kernel must be one of .*rbf"):
        pd.CSVC(kernel="foo").fit(X, y)


def test_kernel_wrong_type():
    X, y = _clf()
    with pytest.raises(TypeError, match="kernel must be"):
        pd.CSVC(kernel=3).fit(X, y)


@pytest.mark.parametrize("cache", [-1, 0])
def test_cache_size_not_positive(cache):
    X, y = _clf()
    with pytest.raises(ValueError, match="cache_size must"):
        pd.CSVC(cache_size=cache).fit(X, y, backend="smo")


@pytest.mark.parametrize("rank", [50, 0, -3])
def test_rank_out_of_range(rank):
    X, y = _clf()
    with pytest.raises(ValueError, match="rank must"):
        pd.CSVC(rank=rank).fit(X, y, backend="lowrank")


@pytest.mark.parametrize("kw", [dict(backend="foo"), dict(form="foo")])
def test_backend_form_unknown(kw):
    X, y = _clf()
    with pytest.raises(ValueError, match="must be one of"):
        pd.CSVC().fit(X, y, **kw)


@pytest.mark.parametrize("params, fit_kw, exc, match", [
    ({"solver": "GUROBI42"}, {"backend": "cvxpy"}, ValueError, "solver must be one of"),
    ({"tol": -1.0}, {"backend": "smo"}, ValueError, "tol must"),
    ({"max_iter": "a"}, {"backend": "smo"}, TypeError, "max_iter must"),
    ({"kernel": "poly", "degree": 0}, {}, ValueError, "degree must"),
    ({"class_weight": "x"}, {}, ValueError, "class_weight must"),
])
def test_bad_parameter_names_the_argument(params, fit_kw, exc, match):
    X, y = _clf()
    with pytest.raises(exc, match=match):
        pd.CSVC(**params).fit(X, y, **fit_kw)


# ============================================================================ precomputed kernels
def test_precomputed_not_square():
    X, y = _clf()
    K = X @ X.T
    with pytest.raises(ValueError, match="square"):
        pd.CSVC(kernel="precomputed").fit(K[:, :10], y)


def test_precomputed_not_symmetric():
    X, y = _clf()
    K = X @ X.T
    K[0, 1] += 5.0
    with pytest.raises(ValueError, match="symmetric"):
        pd.CSVC(kernel="precomputed").fit(K, y)


def test_precomputed_not_psd():
    X, y = _clf()
    with pytest.raises(ValueError, match="positive semi-definite"):
        pd.CSVC(kernel="precomputed").fit(X @ X.T - 3.0 * np.eye(len(X)), y)


def test_check_precomputed_kernel_validator():
    X, _ = _clf()
    K = rbf_kernel(X, gamma=0.5)
    np.testing.assert_array_equal(V.check_precomputed_kernel(K), K)
    with pytest.raises(ValueError, match="X must be the square"):
        V.check_precomputed_kernel(K[:, :5])
    Kn = K.copy()
    Kn[0, 1] += 1e-3
    with pytest.raises(ValueError, match="X must be a symmetric"):
        V.check_precomputed_kernel(Kn)
    with pytest.raises(ValueError, match="X must be positive semi-definite"):
        V.check_precomputed_kernel(K - 2.0 * np.eye(len(K)))
    Kbad = K.copy()
    Kbad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        V.check_precomputed_kernel(Kbad)
    # round-off asymmetry and round-off negative eigenvalues are accepted
    V.check_precomputed_kernel(K + 1e-14 * np.triu(np.ones_like(K), 1))
    V.check_precomputed_kernel(linear_kernel(X))  # rank 2: eigenvalues ~ -1e-15
    # test-time cross kernel: only the number of columns is checked
    assert V.check_precomputed_kernel(K[:5], n_train=len(K)).shape == (5, len(K))
    with pytest.raises(ValueError, match="columns"):
        V.check_precomputed_kernel(K[:5, :4], n_train=len(K))


# ============================================================================ validators
def test_scalar_validators():
    assert V.check_positive(2, "C") == 2.0
    assert V.check_positive(np.inf, "C", allow_inf=True) == np.inf
    for bad in (0, -1, np.nan, np.inf):
        with pytest.raises(ValueError, match="C must be a number > 0"):
            V.check_positive(bad, "C")
    for bad in ("1", None, True):
        with pytest.raises(TypeError, match="C must"):
            V.check_positive(bad, "C")
    assert V.check_nonnegative(0, "epsilon") == 0.0
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        V.check_nonnegative(-1e-9, "epsilon")
    assert V.check_nu(1.0) == 1.0
    for bad in (0.0, 1.0001, -1, np.nan):
        with pytest.raises(ValueError, match=r"nu must be in \(0, 1\]"):
            V.check_nu(bad)
    with pytest.raises(ValueError, match="infeasible"):
        V.check_nu_feasible(0.5, np.r_[np.ones(9), -np.ones(1)])
    V.check_nu_feasible(0.2, np.r_[np.ones(9), -np.ones(1)])
    assert V.check_max_iter(-1) is None and V.check_max_iter(5) == 5
    with pytest.raises(ValueError, match="max_iter must"):
        V.check_max_iter(0)
    with pytest.raises(TypeError, match="max_iter must be an integer"):
        V.check_max_iter(2.5)
    with pytest.raises(ValueError, match="rank must be an integer <= 10"):
        V.check_rank(11, 10)
    with pytest.raises(ValueError, match="cache_size must"):
        V.check_cache_size(-5)
    with pytest.raises(ValueError, match="backend must be one of 'a', 'b'"):
        V.check_choice("c", "backend", ("a", "b"))


def test_array_validators():
    with pytest.raises(TypeError, match="X must be a numeric array"):
        V.check_finite_array(np.array([["a"]], dtype=object), "X")
    with pytest.raises(TypeError, match="X must be a real"):
        V.check_finite_array(np.array([[1j]]), "X")
    with pytest.raises(ValueError, match="X must have at least 1 sample"):
        V.check_finite_array(np.zeros((0, 3)), "X")
    with pytest.raises(ValueError, match="X must be 2-D"):
        V.check_finite_array(np.zeros(3), "X", ndim=2)
    with pytest.raises(ValueError, match="y contains infinite"):
        V.check_finite_array([1.0, np.inf], "y")
    np.testing.assert_array_equal(V.check_finite_array(np.array([["1", "2"]]), "X"), [[1, 2]])
    with pytest.raises(ValueError, match=r"sample_weight must have shape \(3,\)"):
        V.check_sample_weight(np.ones(2), 3)
    with pytest.raises(ValueError, match="all weights are zero"):
        V.check_sample_weight(np.zeros(3), 3)


# ============================================================================ numerical trouble
XOR_X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
XOR_Y = np.array([1, 1, -1, -1])


@pytest.mark.parametrize("backend", ["cvxpy", "smo"])
@pytest.mark.parametrize("case", ["xor", "noisy"])
def test_hard_margin_nonseparable_gives_ray(backend, case):
    """Non-separable data: InfeasibleProblemError with the status and the unbounded dual ray
    d >= 0, y^T d = 0, d^T Q d ~ 0 (checked on a Gram matrix computed by scikit-learn)."""
    if case == "xor":
        X, y = XOR_X, XOR_Y
    else:
        X, y = _clf(seed=1, n=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InfeasibleProblemError, match="not linearly separable") as info:
            pd.HardMarginSVC(kernel="linear").fit(X, y, backend=backend)
    sol = info.value.solution
    assert sol.status in ("unbounded", "infeasible", "infeasible_or_unbounded")
    assert not sol.has_point and np.isnan(sol.objective_value)
    d = np.asarray(sol.info["ray"], dtype=float)
    np.testing.assert_array_equal(d, sol.multipliers["alpha"])
    d = d / d.sum()
    yy = np.where(y == np.unique(y)[1], 1.0, -1.0)
    Q = yy[:, None] * linear_kernel(X) * yy[None, :]
    assert np.all(d >= -1e-9)
    assert abs(yy @ d) <= 1e-6
    # the dual objective 1^T(t d) - t^2/2 d^T Q d grows without bound: d^T Q d ~ 0 < 1^T d = 1
    assert d @ Q @ d <= 1e-5 * np.max(np.abs(Q))


@pytest.mark.parametrize("backend", ["cvxpy", "smo"])
def test_hard_margin_separable_is_optimal(backend):
    X, y = _clf(seed=0, n=20)
    y = np.where(X[:, 0] > 0, 1, -1)
    X = X + 0.5 * y[:, None] * np.array([1.0, 0.0])
    m = pd.HardMarginSVC(kernel="linear", tol=1e-8).fit(X, y, backend=backend)
    assert m.status_ == "optimal" and m.certificate_.is_optimal(1e-5, 1e-5)
    assert np.all(m.predict(X) == y)


def test_sigmoid_kernel_cvxpy_refuses():
    X, y = _clf()
    with pytest.raises(ValueError, match="positive semidefinite"):
        pd.CSVC(kernel="sigmoid").fit(X, y, backend="cvxpy")


@pytest.mark.parametrize("name,backend,kw", [("CSVC", "smo", {}),
                                             ("CSVC", "lowrank", {"rank": 10}),
                                             ("LSSVC", "kkt", {})])
def test_sigmoid_kernel_warns_with_policy(name, backend, kw):
    X, y = _clf()
    with pytest.warns(V.IndefiniteKernelWarning, match=f"backend '{backend}'"):
        getattr(pd, name)(kernel="sigmoid", **kw).fit(X, y, backend=backend)
    assert backend in V.INDEFINITE_POLICY


def test_psd_kernel_does_not_warn():
    X, y = _clf()
    with warnings.catch_warnings():
        warnings.simplefilter("error", V.IndefiniteKernelWarning)
        pd.CSVC(kernel="rbf").fit(X, y, backend="smo")
        pd.LSSVC(kernel="rbf").fit(X, y, backend="kkt")


@pytest.mark.parametrize("C", [1e6, 1e12])
def test_near_singular_kkt_duplicates_huge_C(C):
    """Duplicated points make K singular; with huge C the bordered system is nearly singular.
    The KKT backend recomputes the residual by kernel mat-vecs (never from the factor) and the
    certificate recomputes the KKT residuals: both must be small for status optimal, and the
    solution must match a dense least-squares solve of the same system."""
    X, _ = _reg(n=10)
    Xd = np.repeat(X, 3, axis=0)
    yd = np.sin(Xd[:, 0])
    m = pd.LSSVR(C=C, kernel="rbf", gamma=0.5).fit(Xd, yd, backend="kkt")
    assert m.status_ == "optimal"
    assert m.solution_.info["kkt_residual"] <= 1e-8
    assert m.certificate_.max_kkt_residual <= 1e-6 * max(1.0, np.max(np.abs(m.beta_)))
    # independent: lstsq of [[0, 1^T], [1, K + I/C]] [b; a] = [0; y]
    K = rbf_kernel(Xd, gamma=0.5)
    n = len(yd)
    A = np.block([[np.zeros((1, 1)), np.ones((1, n))], [np.ones((n, 1)), K + np.eye(n) / C]])
    sol = np.linalg.lstsq(A, np.r_[0.0, yd], rcond=None)[0]
    np.testing.assert_allclose(_f(m, X), K[::3][:, :] @ sol[1:] + sol[0],
                               atol=1e-6)


def test_singular_kkt_infinite_C_detected():
    """C = inf with duplicated points: K itself is singular; refused with the cause and the
    remedies (finite C, jitter), or solved with a reported jitter."""
    from primaldual.backends.linsys.direct import factor_kernel
    from primaldual.exceptions import SingularKKTError
    from primaldual.kernels import make_kernel
    X, _ = _reg(n=10)
    Xd = np.repeat(X, 3, axis=0)
    # the estimators refuse C = inf up front (issue 27, item 7); the KKT backend's factor
    # still takes it (interpolation) and must name the cause
    with pytest.raises(SingularKKTError, match="jitter"):
        factor_kernel(Xd, make_kernel("rbf", gamma=0.5), np.inf)
    with pytest.raises(ValueError, match="C must"):
        pd.LSSVR(C=np.inf, kernel="rbf", gamma=0.5).fit(Xd, np.sin(Xd[:, 0]), backend="kkt")


def test_cvxpy_optimal_inaccurate_warns_and_keeps_status(monkeypatch):
    import primaldual.backends.cvxpy_ as cb
    orig = cb.map_status
    monkeypatch.setattr(cb, "map_status",
                        lambda s: "inaccurate" if s == "optimal" else orig(s))
    X, y = _clf()
    with pytest.warns(InaccurateSolutionWarning):
        m = pd.CSVC().fit(X, y, backend="cvxpy")
    assert m.status_ == "inaccurate" and m.certificate_.status == "inaccurate"
    assert m.solution_.info["cvxpy_status"] == "optimal"


def test_smo_max_iter_convergence_warning_and_honest_certificate():
    from primaldual.exceptions import ConvergenceWarning
    X, y = _clf(n=30)
    with pytest.warns(ConvergenceWarning, match="max_iter=3 with maximal violation"):
        m = pd.CSVC(max_iter=3).fit(X, y, backend="smo")
    assert m.status_ == "max_iter" and m.certificate_.status == "max_iter"
    # the certificate shows the gap the early stop left, and does not call it optimal
    ref = pd.CSVC().fit(X, y, backend="cvxpy").certificate_
    assert m.certificate_.duality_gap > 1e3 * max(abs(ref.duality_gap), 1e-9)
    assert not m.certificate_.is_optimal()
    assert m.solution_.info["max_violation"] > 1e-3


@pytest.mark.parametrize("scale", [1e6, 1e-6])
@pytest.mark.parametrize("backend", ["cvxpy", "smo"])
def test_extreme_feature_scale_rbf_converges(scale, backend):
    """gamma='scale' adapts the RBF kernel to the feature scale: same answer as unscaled."""
    X, y = _clf(n=30)
    ref = pd.CSVC(C=10.0, tol=1e-8).fit(X, y, backend=backend)
    m = pd.CSVC(C=10.0, tol=1e-8).fit(X * scale, y, backend=backend)
    assert m.status_ == "optimal" and m.certificate_.is_optimal(1e-6, 1e-5)
    np.testing.assert_allclose(m.decision_function(X * scale), ref.decision_function(X),
                               atol=1e-4)


def test_extreme_scale_huge_C_cvxpy_says_why():
    """Linear kernel, features ~1e6, C = 1e6: Hessian entries ~1e12. Either the solve is
    certified optimal, or the error says it is numerical trouble and how to fix it (never a
    false 'infeasible')."""
    X, y = _clf(n=30)
    try:
        m = pd.CSVC(C=1e6, kernel="linear").fit(X * 1e6, y, backend="cvxpy")
    except V.NumericalTroubleError as exc:
        assert "standardize the features" in str(exc)
        assert exc.solution is not None
    else:
        assert m.certificate_.is_optimal(1e-6, 1e-6)


def test_extreme_scale_huge_C_smo_says_why():
    from primaldual.exceptions import ConvergenceWarning
    X, y = _clf(n=30)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        m = pd.CSVC(C=1e6, kernel="linear", max_iter=2000).fit(X * 1e6, y, backend="smo")
    assert m.status_ == "max_iter" and not m.certificate_.is_optimal()


def test_optimal_status_is_audited_against_residuals():
    """features 1e-6, linear kernel, C = 1e6: CVXPY says 'optimal'; the recomputed certificate
    shows what that is worth (relative gap ~1e-6 but complementarity residuals ~15 with alpha up
    to 1e6), so the strict certification predicate refuses it. Gross contradictions
    (relative gap or KKT > 1e-2 |P|) also downgrade the status (validation.audit_certificate)."""
    X, y = _clf(n=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = pd.CSVC(C=1e6, kernel="linear").fit(X * 1e-6, y, backend="cvxpy")
    cert = m.certificate_
    assert not cert.is_optimal(1e-6, 1e-4)
    assert cert.kkt["complementarity[alpha]"] > 1e-4
    assert m.status_ == cert.status


def test_audit_certificate_helper():
    X, y = _clf()
    m = pd.CSVC().fit(X, y, backend="cvxpy")
    cert = m.certificate_
    assert V.audit_certificate(cert) == "optimal"
    cert.kkt = dict(cert.kkt)
    key = next(iter(cert.kkt))
    cert.kkt[key] = 10.0
    with pytest.warns(InaccurateSolutionWarning, match="KKT residual"):
        assert V.audit_certificate(cert) == "inaccurate"
    assert cert.status == "inaccurate"


# ---------------- issue 14: labels
@pytest.mark.parametrize("y_bad, match", [
    (np.linspace(0.0, 1.0, 30), "Unknown label type"),
    (np.r_[np.zeros(15), np.ones(14), np.inf], "infinity"),
])
def test_lapsvc_rejects_continuous_or_infinite_labels(y_bad, match):
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match=match):
        pd.LapSVC().fit(X, y_bad)


def test_lapsvc_keeps_nan_as_unlabelled():
    X = np.random.default_rng(0).normal(size=(30, 2))
    y = np.r_[np.zeros(10), np.ones(10), np.full(10, np.nan)]
    assert list(pd.LapSVC().fit(X, y).classes_) == [0.0, 1.0]


# ---------------- issue 14: atomic fit
def _snapshot(est):
    return {k: v for k, v in est.__dict__.items()}


def _break_certificate(monkeypatch, boom):
    """Make the certificate step of every fit raise: the modelling-layer ``certify``, the
    closed-form ``_certify`` of the drop-in SVMs and the lean one-vs-one pairs' ``_finish``."""
    import primaldual.methods._base as base
    import primaldual.methods._pair as pair
    monkeypatch.setattr(base, "certify", boom)
    # the lean one-vs-one pairs compute their certificate in one function of their own
    monkeypatch.setattr(pair, "_finish", boom)
    for cls in (pd.CSVC, pd.NuSVC, pd.EpsilonSVR, pd.NuSVR):
        monkeypatch.setattr(cls, "_certify", boom)


@pytest.mark.parametrize("name", ["CSVC", "LapSVC", "EpsilonSVR"])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError])
def test_failed_refit_leaves_the_estimator_exactly_as_before(name, exc, monkeypatch):

    X, y = _data(name)
    est = getattr(pd, name)(kernel="linear").fit(X, y)
    before = _snapshot(est)
    pred = est.predict(X)

    def boom(*a, **k):
        raise exc("interrupted")

    _break_certificate(monkeypatch, boom)
    rng = np.random.default_rng(5)
    X2 = rng.normal(size=(15, X.shape[1]))
    y2 = np.arange(15) % 3 if name != "EpsilonSVR" else rng.normal(size=15)  # new labels
    with pytest.raises(exc):
        est.fit(X2, y2)
    after = _snapshot(est)
    assert after.keys() == before.keys()
    assert all(after[k] is before[k] for k in before)
    np.testing.assert_array_equal(est.predict(X), pred)


def test_failed_first_fit_leaves_the_estimator_unfitted(monkeypatch):
    from sklearn.exceptions import NotFittedError


    _break_certificate(monkeypatch,
                       lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    X, y = _clf()
    est = pd.CSVC()
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, y)
    assert not hasattr(est, "n_features_in_") and not hasattr(est, "classes_")
    with pytest.raises(NotFittedError):
        est.predict(X)


def test_binary_then_multiclass_refit_keeps_no_binary_state():
    X, y = _clf(n=30)
    est = pd.CSVC(kernel="linear").fit(X, y)
    assert hasattr(est, "certificate_")
    y3 = np.arange(30) % 3
    est.fit(X, y3)
    for name in ("certificate_", "status_", "beta_", "kernel_", "X_fit_", "eta_"):
        assert not hasattr(est, name), name
    assert len(est.certificates_) == 3
    assert set(est.predict(X)) <= {0, 1, 2}
    # and back to binary: the multiclass state is gone
    est.fit(X, y)
    assert not hasattr(est, "estimators_") and est.certificate_.status == est.status_


def test_multiclass_wrapper_refit_is_atomic(monkeypatch):
    from primaldual.multiclass import OneVsRestClassifier

    X, y = _clf(n=30)
    wrap = OneVsRestClassifier(pd.CSVC(kernel="linear")).fit(X, np.arange(30) % 3)
    before = _snapshot(wrap)
    _break_certificate(monkeypatch,
                       lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        wrap.fit(X[:20, :1], np.arange(20) % 4)
    assert _snapshot(wrap) == before


# ---------------- issue 14: statuses
def _separable(n: int = 30):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    X[:, 0] += 0.5 * y
    return X, y


@pytest.mark.parametrize("scale, params", [
    (1e-10, dict(kernel="linear", backend="cvxpy")),
    (1e-50, dict(kernel="linear", backend="smo")),
    (1.0, dict(kernel="rbf", gamma=1e-12)),
])
def test_separable_hard_margin_is_never_called_not_separable(scale, params):
    from primaldual.validation import NumericalTroubleError

    X, y = _separable()
    try:
        m = pd.HardMarginSVC(**params).fit(X * scale, y)
    except NumericalTroubleError as exc:
        assert "separable" in str(exc)
        return
    assert m.status_ == "optimal" and np.all(m.predict(X * scale) == y)


@pytest.mark.parametrize("scale", [1e-10, 1.0, 1e10])
def test_nonseparable_hard_margin_ray_is_scale_free(scale):
    X, y = _clf(n=30)  # overlapping classes
    with pytest.raises(InfeasibleProblemError) as info:
        pd.HardMarginSVC(kernel="linear", backend="cvxpy").fit(X * scale, y)
    ray = info.value.solution.info["ray"]
    assert np.all(ray >= 0) and abs(ray @ np.where(y > 0, 1.0, -1.0)) < 1e-6


def test_separability_ray_validator_is_relative():
    X, y = _separable()
    Q = np.outer(y, y) * (X @ X.T)
    for s in (1e-20, 1.0, 1e20):
        assert V.separability_ray(Q * s, y.astype(float))[0] is None
    Xo, yo = _clf(n=30)
    Qo = np.outer(yo, yo) * (Xo @ Xo.T)
    for s in (1e-20, 1.0, 1e20):
        assert V.separability_ray(Qo * s, yo.astype(float))[0] is not None


@pytest.mark.parametrize("name, params, scale", [
    ("CSVC", dict(backend="lowrank", rank=10, C=1e300), 1.0),   # solver_error, finite C
    ("L2SVC", dict(kernel="linear", backend="smo"), 1e20),      # NaN intercept
    ("HardMarginSVC", dict(kernel="linear", backend="smo"), 1e20),
])
def test_numerical_failure_is_numerical_trouble_not_infeasible(name, params, scale):
    from primaldual.validation import NumericalTroubleError

    X, y = _separable()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            m = getattr(pd, name)(**params).fit(X * scale, y)
        except NumericalTroubleError as exc:
            assert not isinstance(exc, InfeasibleProblemError)
            assert "numerical trouble" in str(exc) or "numerically" in str(exc)
            return
    # a fit that survives must be finite and honest
    assert np.isfinite(m.intercept_) and np.all(np.isfinite(m.beta_))
    if m.status_ == "optimal":
        assert np.isfinite(m.certificate_.relative_gap)


def test_epsilon_inf_is_rejected():
    X, y = _reg()
    with pytest.raises(ValueError, match="epsilon must be a finite number"):
        pd.EpsilonSVR(epsilon=np.inf).fit(X, y)


@pytest.mark.parametrize("cw, match", [
    ({1: 0, -1: 0}, "weight 0"),
    ({1: -1.0}, "finite weight >= 0"),
    ({1: np.nan}, "finite weight >= 0"),
    ({1: np.inf}, "finite weight >= 0"),
])
@pytest.mark.parametrize("backend", ["smo", "lowrank"])
def test_class_weight_bad_values(cw, match, backend):
    X, y = _clf()
    with pytest.raises(ValueError, match=match):
        pd.CSVC(class_weight=cw, backend=backend).fit(X, y)


# ---------------- issue 14: precomputed
PRECOMPUTED = ["CSVC", "HardMarginSVC", "LSSVC", "EpsilonSVR", "LapSVC", "LapRLS"]


def _pre_data(name):
    X, y = _separable()
    return X, (X[:, 0] if name in ("EpsilonSVR", "LapRLS") else y)


@pytest.mark.parametrize("name", PRECOMPUTED)
def test_precomputed_predict_with_cross_kernel(name):
    X, y = _pre_data(name)
    K = X @ X.T
    m = getattr(pd, name)(kernel="precomputed").fit(K, y)
    Xt = np.random.default_rng(3).normal(size=(7, 2))
    if name.startswith("Lap"):  # the graph is built on the rows of K, not of X
        assert m.predict(Xt @ X.T).shape == (7,)
        np.testing.assert_allclose(m.predict(K[:5]), m.predict(K)[:5])
        return
    ref = getattr(pd, name)(kernel="linear").fit(X, y)
    np.testing.assert_allclose(m.decision_function(Xt @ X.T) if hasattr(m, "classes_")
                               else m.predict(Xt @ X.T),
                               ref.decision_function(Xt) if hasattr(ref, "classes_")
                               else ref.predict(Xt), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", PRECOMPUTED)
@pytest.mark.parametrize("bad, match", [("asym", "symmetric"), ("indef", "positive semi-definite"),
                                        ("nonsquare", "square")])
def test_precomputed_checks_for_every_method(name, bad, match):
    X, y = _pre_data(name)
    K = X @ X.T
    if bad == "asym":
        K[0, 1] += 1.0
    elif bad == "indef":
        K -= 5.0 * np.eye(K.shape[0])
    else:
        K = K[:, :20]
    with pytest.raises(ValueError, match=match):
        getattr(pd, name)(kernel="precomputed").fit(K, y)


def test_indefinite_callable_kernel_warns_on_smo():
    X, y = _clf()
    with pytest.warns(V.IndefiniteKernelWarning, match="smallest eigenvalue"):
        pd.CSVC(kernel=lambda A, B: -(A @ B.T), backend="smo").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", V.IndefiniteKernelWarning)
        pd.CSVC(kernel=lambda A, B: A @ B.T, backend="smo").fit(X, y)


# ---------------- issue 14: command line, no traceback ever
def _cli(argv, capsys):
    from primaldual.cli import main

    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    return code, err


def test_cli_missing_output_directories(tmp_path, capsys):
    for opt in ("--save", "--plot"):
        code, err = _cli(["fit", "CSVC", "--data", "blobs", opt,
                          str(tmp_path / "no" / "such" / "f.out")], capsys)
        assert code == 2 and f"argument {opt}: directory does not exist" in err
        assert err.count("\n") == 1


@pytest.mark.parametrize("n", ["0", "1", "-5"])
def test_cli_check_too_few_points(n, capsys):
    code, err = _cli(["check", "CSVC", "--n", n], capsys)
    assert code == 2 and "argument --n" in err


def test_cli_huge_csv_cell(tmp_path, capsys):
    path = tmp_path / "big.csv"
    path.write_text("a,b\n" + "1" * 200_000 + ",1\n2,0\n")
    code, err = _cli(["fit", "CSVC", "--data", str(path)], capsys)
    assert code == 2 and "not a readable CSV" in err


@pytest.mark.parametrize("kind", ["continuous", "many"])
def test_cli_label_column_that_looks_like_regression(tmp_path, capsys, kind):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = X[:, 0] if kind == "continuous" else np.arange(40)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.c_[X, y], delimiter=",")
    code, err = _cli(["fit", "CSVC", "--data", str(path)], capsys)
    assert code == 2 and "label column" in err and "regression" in err


def test_cli_crafted_model_file(tmp_path, capsys):
    path = tmp_path / "m.npz"
    np.savez(path, beta_=np.zeros(3))
    (tmp_path / "x.csv").write_text("1,2\n")
    code, err = _cli(["predict", str(path), str(tmp_path / "x.csv")], capsys)
    assert code == 2 and err.startswith("primaldual")


@pytest.mark.parametrize("exc", [MemoryError("Unable to allocate 26.8 GiB"),
                                 OSError("disk full"), RuntimeError("boom")])
def test_cli_unexpected_errors_are_one_line(monkeypatch, capsys, exc):
    import primaldual.cli.parser as parser  # the parser binds each subcommand's handler

    def fail(args):
        raise exc

    monkeypatch.setattr(parser, "cmd_fit", fail)
    code, err = _cli(["fit", "CSVC", "--data", "blobs"], capsys)
    assert code == 2 and err.startswith("primaldual") and err.count("\n") == 1


# ---------------- issue 14: memory guard before N x N allocations
@pytest.mark.parametrize("name, backend", [("CSVC", "cvxpy"), ("LSSVR", "kkt"),
                                           ("KernelRidge", "auto")])
def test_memory_guard_before_dense_kernel(monkeypatch, name, backend):
    from primaldual.exceptions import InsufficientMemoryError

    monkeypatch.setattr(V, "available_memory", lambda: 4 * 2**20)  # 4 MiB left
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1100, 2))
    y = np.sign(X[:, 0]) if name == "CSVC" else X[:, 0]
    with pytest.raises(InsufficientMemoryError, match=r"1100 x 1100 kernel matrix needs .* GiB"
                       r".*backend='smo'.*'lowrank'.*'cg'") as info:
        getattr(pd, name)().fit(X, y, backend=backend)
    assert isinstance(info.value, MemoryError)


def test_memory_guard_message_on_the_command_line(monkeypatch, capsys):
    monkeypatch.setattr(V, "available_memory", lambda: 2**20)
    code, err = _cli(["fit", "LSSVR", "--data", "sinc", "--n-samples", "1100"], capsys)
    assert code == 2 and "kernel matrix needs" in err and err.count("\n") == 1


# ---------------- issue 14: parameters a backend ignores warn once
@pytest.mark.parametrize("backend, params, ignored", [
    ("cvxpy", dict(tol=1e-6, max_iter=50, cache_size=10.0, rank=5), ["tol", "max_iter",
                                                                      "cache_size", "rank"]),
    ("lowrank", dict(rank=5, tol=1e-6, cache_size=10.0), ["tol", "cache_size"]),
    ("smo", dict(tol=1e-6, max_iter=10_000, rank=5, solver="SCS"), ["rank", "solver"]),
])
def test_backend_ignored_parameters_warn_once(monkeypatch, backend, params, ignored):
    import primaldual.engine.stages as steps
    from primaldual.exceptions import IgnoredParameterWarning

    monkeypatch.setattr(steps, "_WARNED_IGNORED", set())
    X, y = _clf()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        pd.CSVC(**params).fit(X, y, backend=backend)
        pd.CSVC(**params).fit(X, y, backend=backend)  # the second fit does not warn again
    msgs = [str(w.message) for w in rec if issubclass(w.category, IgnoredParameterWarning)]
    assert sorted(m.split("=")[0].split(": ")[1] for m in msgs) == sorted(ignored)
    assert all(f"ignored by backend {backend!r}" in m for m in msgs)


def test_default_parameters_do_not_warn(monkeypatch):
    import primaldual.engine.stages as steps
    from primaldual.exceptions import IgnoredParameterWarning

    monkeypatch.setattr(steps, "_WARNED_IGNORED", set())
    X, y = _clf()
    with warnings.catch_warnings():
        warnings.simplefilter("error", IgnoredParameterWarning)
        for backend in ("cvxpy", "smo", "auto"):
            pd.CSVC().fit(X, y, backend=backend)
        pd.LSSVR().fit(*_reg(), backend="kkt")


# ---------------- issue 14: scale cases found by the fuzzing
@pytest.mark.parametrize("name, backend, sx, gamma, kernel", [
    ("HardMarginSVC", "lowrank", 1e10, 1.0, "rbf"),   # predict raised LinAlgError
    ("CSVC", "lowrank", 1.0, 1e300, "rbf"),            # 'optimal', then LinAlgError
    ("HardMarginSVC", "auto", 1e4, 1.0, "linear"),     # no support vector (absolute tol)
    ("HardMarginSVC", "smo", 1e8, 1.0, "linear"),
    ("LapRLS", "auto", 1e10, 1e11, "linear"),         # raw LinAlgError (singular P)
    ("LapSVC", "smo", 1e9, 0.1, "linear"),
    ("L2SVC", "smo", 1e-7, 1e6, "rbf"),                # raw OverflowError, then NaN cert
])
def test_scale_cases_found_by_fuzzing_are_honest(name, backend, sx, gamma, kernel):
    from primaldual.testing import assert_honest_fit, scaled_case

    c_scale, seed, n = {"LapRLS": (1e11, 37150, 8), "LapSVC": (0.1, 56471, 12),
                        "L2SVC": (1e9, 20574, 8)}.get(name, (1.0, 0, 8))
    est, X, y = scaled_case(name, sx, c_scale, gamma, n, seed, kernel)
    out = assert_honest_fit(est, X, y, backend=backend)
    if not isinstance(out, Exception):
        assert np.all(np.isfinite(_f(out, X)))
        if kernel == "linear" and name == "HardMarginSVC":
            assert len(out.support_) > 0 and np.all(out.predict(X) == y)
