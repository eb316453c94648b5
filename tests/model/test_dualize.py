"""Mechanical duals (primaldual.model.dualize) against the catalogue's hand-written duals, CVXPY
solves of the primal, and the SMO solver on the detected BoxQP structure."""

import numpy as np
import pytest

import primaldual as pd
from primaldual.kernels import make_kernel
from primaldual.model import (
    Data,
    FeatureVariable,
    Problem,
    Variable,
    norm2,
    phi,
    sum_entropy,
    sum_logistic,
    sum_squares,
    vsum,
)
from primaldual.model.dualize import Derivation, DualizationError, dualize
from primaldual.model.structure import box_qp_of, kkt_system_of
from primaldual.testing import _compare_points

SEEDS = [0, 1, 2]


def _data(seed, n=24, regression=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    if regression:
        return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


CASES = [
    ("CSVC", dict(C=2.0, gamma=0.5), False),
    ("HardMarginSVC", dict(kernel="rbf", gamma=3.0), False),
    ("L2SVC", dict(C=2.0, gamma=0.5), False),
    ("EpsilonSVR", dict(C=2.0, epsilon=0.1, gamma=0.5), True),
    ("LSSVC", dict(C=2.0, gamma=0.5), False),
    ("LSSVR", dict(C=2.0, gamma=0.5), True),
    ("KernelRidge", dict(C=2.0, gamma=0.5), True),
]


def _method(name, kw):
    try:
        cls = getattr(pd, name)
    except AttributeError:
        pytest.skip(f"{name} not available")
    try:
        return cls(**kw)
    except TypeError as exc:  # constructor of a method written in parallel differs
        pytest.skip(f"{name}: {exc}")


@pytest.mark.parametrize("name,kw,regression", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seed", SEEDS)
def test_mechanical_dual_matches_hand_written(name, kw, regression, seed):
    m = _method(name, kw)
    X, y = _data(seed, regression=regression)
    data = m._prepare(X, y)
    P, Dh = m._primal(data), m._dual(data)
    der = dualize(P)
    assert der.dual.sense == "max"
    sd, sh = der.dual.solve(), Dh.solve()
    assert sd.status == sh.status == "optimal"
    rel = abs(sd.objective_value - sh.objective_value) / max(1.0, abs(sh.objective_value))
    assert rel <= 1e-7, (sd.objective_value, sh.objective_value)
    # same primal solution (feature variable compared through <w, phi(x_i)>)
    rd = der.recover(sd)
    rh = m._from_dual(data, sh).primal_point
    assert _compare_points(rd, rh, P, 1e-5) == []
    # and the recovered point is primal optimal: P(x) = dual value, feasible
    assert abs(P.evaluate(rd) - sd.objective_value) <= 1e-6 * max(1.0, abs(sd.objective_value))
    assert P.infeasibility(rd) <= 1e-6


@pytest.mark.parametrize("seed", SEEDS)
def test_recover_without_multipliers_uses_complementarity(seed):
    X, y = _data(seed)
    m = pd.CSVC(C=1.5, gamma=0.5)
    data = m._prepare(X, y)
    P = m._primal(data)
    der = dualize(P)
    sd = der.dual.solve()
    full = der.recover(sd)
    only_alpha = der.recover({"alpha": sd.values["alpha"]})
    assert _compare_points(full, only_alpha, P, 1e-5) == []
    sp = P.solve()
    assert abs(P.evaluate(only_alpha) - sp.objective_value) <= 1e-6 * abs(sp.objective_value)


def test_csvc_derived_dual_has_box_qp_structure_and_names():
    X, y = _data(3)
    m = pd.CSVC(C=2.0, gamma=0.5)
    data = m._prepare(X, y)
    der = dualize(m._primal(data))
    D = der.dual
    assert [v.name for v in D.variables] == ["alpha"]
    assert set(D.multipliers) == {"minus_b", "s", "xi"}
    box = box_qp_of(D)
    assert box.equality == "one"
    np.testing.assert_array_equal(box.sign, data.y)
    np.testing.assert_allclose(box.C, data.C)
    np.testing.assert_allclose(box.p, -np.ones(len(y)))
    K = data.gram()
    np.testing.assert_allclose(box.Q.dense(), np.outer(data.y, data.y) * K, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_box_qp_solved_by_smo_matches_cvxpy(seed):
    from primaldual.backends.smo import smo_solve
    X, y = _data(seed, n=30)
    m = pd.CSVC(C=1.0, gamma=0.5)
    data = m._prepare(X, y)
    der = dualize(m._primal(data))
    box = box_qp_of(der.dual)
    res = smo_solve(box.Q.X, box.Q.kernel, box.p, box.C, sign=box.sign, tol=1e-8)
    sd = der.dual.solve()
    assert abs(-res.objective - sd.objective_value) <= 1e-6 * max(1.0, sd.objective_value)
    assert abs(der.dual.evaluate({"alpha": res.alpha}) - sd.objective_value) <= 1e-6 * max(
        1.0, sd.objective_value)


def _one_class(X, nu, gamma):
    N = X.shape[0]
    w = FeatureVariable("w", make_kernel("rbf", gamma=gamma), X)
    rho, xi = Variable("rho"), Variable("xi", N)
    c = Data("c", 1.0 / (nu * N), txt="1/(νN)")
    return Problem(0.5 * norm2(w) + c * vsum(xi) - rho,
                   [(w @ phi(X) >= rho - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "one-class primal", variables=[w, rho, xi])


@pytest.mark.parametrize("seed", SEEDS)
def test_one_class_dual_against_cvxpy_primal(seed):
    X, _ = _data(seed, n=30)
    P = _one_class(X, 0.3, 0.5)
    der = dualize(P)
    box = box_qp_of(der.dual)
    assert box.equality == "one" and box.delta == 1.0
    np.testing.assert_array_equal(box.sign, np.ones(30))
    np.testing.assert_allclose(box.C, 1 / (0.3 * 30))
    sd, sp = der.dual.solve(), P.solve()
    assert abs(sd.objective_value - sp.objective_value) <= 1e-7 * max(1, abs(sp.objective_value))
    rec = der.recover(sd)
    assert _compare_points(rec, sp.values, P, 1e-5) == []
    assert "Σ_i α_i = 1" in str(der.dual)


@pytest.mark.parametrize("seed", SEEDS)
def test_hand_written_ls_primal_with_scaled_sum_squares(seed):
    """min 1/2||w||^2 + 1/2 sum (d_i e_i)^2 s.t. <w,phi(x_i)> + b + e_i = y_i against the dense
    KKT solve of [[0, 1^T], [1, K + D^-2]] [b; a] = [0; y]."""
    X, y = _data(seed, regression=True)
    N = len(y)
    rng = np.random.default_rng(seed + 10)
    d = rng.uniform(0.5, 2.0, N)
    k = make_kernel("rbf", gamma=0.5)
    w, b, e = FeatureVariable("w", k, X), Variable("b"), Variable("e", N)
    P = Problem(0.5 * norm2(w) + 0.5 * sum_squares(Data("d", d) * e),
                [(w @ phi(X) + b + e == Data("y", y)).named("alpha")], "min", "ls primal",
                variables=[w, b, e])
    der = dualize(P)
    K = k(X)
    A = np.block([[np.zeros((1, 1)), np.ones((1, N))], [np.ones((N, 1)), K + np.diag(1 / d**2)]])
    sol = np.linalg.solve(A, np.concatenate([[0.0], y]))
    rec = der.recover({"alpha": sol[1:]})
    np.testing.assert_allclose(K @ rec["w"], K @ sol[1:], atol=1e-8)
    np.testing.assert_allclose(rec["b"], sol[:1], atol=1e-8)
    np.testing.assert_allclose(rec["e"], sol[1:] / d**2, atol=1e-8)
    Qd = der.dual.objective.terms[0].op.dense()
    np.testing.assert_allclose(Qd, K + np.diag(1 / d**2), atol=1e-10)


def test_derivation_renders_like_a_board():
    X, y = _data(0)
    der = dualize(pd.CSVC(C=1.0, gamma=0.5).primal(X, y))
    assert isinstance(der, Derivation)
    text = str(der)
    for piece in ("Lagrangian", "L(w, b, ξ; α, μ)", "w = Σ_i α_i y_i φ(x_i)", "Σ_i y_i α_i = 0",
                  "α_i ≤ C_i", "maximize    Σ_i α_i - 1/2 αᵀQα"):
        assert piece in text, piece
    tex = der.to_latex()
    assert r"\sum_{i} y_{i} \alpha_{i} = 0" in tex and r"\leq C_{i}" in tex
    assert all(s.text and s.latex for s in der.steps)


def _wbxi(N, X):
    w = FeatureVariable("w", make_kernel("rbf", gamma=0.5), X)
    return w, Variable("b"), Variable("xi", N)


def test_errors_name_the_block():
    X, y = _data(0, n=10)
    w, b, xi = _wbxi(10, X)
    Y = Data("y", y)
    # the textbook KLR is dualised (tests/model/test_conjugates.py); a term without a known
    # conjugate is refused by name
    dualize(Problem(0.5 * norm2(w) + sum_logistic(-(Y * (w @ phi(X) + b))), [], "min", "klr"))
    P = Problem(0.5 * norm2(w) - sum_entropy(xi), [(Y * (w @ phi(X) + b) >= 1 - xi)
                                                   .named("alpha")], "min", "entropy")
    with pytest.raises(DualizationError, match="SumEntropy.*'xi'.*no conjugate"):
        dualize(P)
    P = Problem(-0.5 * norm2(w) + vsum(xi), [(Y * (w @ phi(X) + b) >= 1 - xi).named("alpha")])
    with pytest.raises(DualizationError, match="'w'.*nonconvex"):
        dualize(P)
    P = Problem(vsum(xi), [(Y * (w @ phi(X) + b) >= 1 - xi).named("alpha"),
                           (xi >= 0).named("mu")])
    with pytest.raises(DualizationError, match="feature-space block 'w'"):
        dualize(P)
    d = np.ones(10)
    d[3] = 0.0
    e = Variable("e", 10)
    P = Problem(0.5 * norm2(w) + sum_squares(Data("d", d) * e),
                [(w @ phi(X) + b + e == Y).named("alpha")])
    with pytest.raises(DualizationError, match="'e' is singular"):
        dualize(P)
    assert issubclass(DualizationError, ValueError)
    with pytest.raises(TypeError, match="primal"):
        dualize("not a problem")
    Pmax = Problem(-0.5 * norm2(w), [(Y * (w @ phi(X) + b) >= 1).named("alpha")], "max")
    with pytest.raises(DualizationError, match="minimisation"):
        dualize(Pmax)


def _example(name):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_example_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_one_class_example_agrees_with_sklearn(capsys):
    out = _example("one_class_svm").main(seed=1, N=60, nu=0.3)
    assert out["rel_gap"] <= 1e-7
    assert abs(out["scale"] - 0.3 * 60) <= 1e-3 * 0.3 * 60   # LIBSVM scales alpha by nu N
    assert out["deviation"] <= 1e-4 and out["agree"] >= 0.99
    assert "Σ_i α_i = 1" in capsys.readouterr().out


def test_cost_sensitive_example_agrees_with_csvc_class_weight(capsys):
    out = _example("cost_sensitive_svm").main(seed=2, N=60)
    assert out["dev1"] <= 1e-4 and abs(out["gap"]) <= 1e-6 and abs(out["gap2"]) <= 1e-6
    assert out["smo_vs_cvx"] <= 1e-6 * 100
    assert "Σ_i m_i α_i" in capsys.readouterr().out


@pytest.mark.parametrize("name,kw,regression", [c for c in CASES if c[0] in
                                                ("LSSVC", "LSSVR", "KernelRidge")],
                         ids=["LSSVC", "LSSVR", "KernelRidge"])
def test_ls_family_derived_dual_solves_with_kkt_backend(name, kw, regression):
    m = _method(name, kw)
    X, y = _data(4, regression=regression)
    data = m._prepare(X, y)
    der = dualize(m._primal(data))
    assert kkt_system_of(der.dual) is not None          # detected from the dual itself
    sk, sc = der.dual.solve(backend="kkt"), der.dual.solve(backend="cvxpy")
    assert abs(sk.objective_value - sc.objective_value) <= 1e-7 * max(1, abs(sc.objective_value))
    assert _compare_points(der.recover(sk), der.recover(sc), der.primal, 1e-6) == []


def test_svr_stacked_dual_solves_with_smo():
    m = _method("EpsilonSVR", dict(C=2.0, epsilon=0.1, gamma=0.5))
    X, y = _data(5, regression=True)
    data = m._prepare(X, y)
    der = dualize(m._primal(data))
    box = box_qp_of(der.dual)
    np.testing.assert_array_equal(box.sign, box.Q.sign)      # SMO's one-sign convention
    s_smo, s_cvx = der.dual.solve(backend="smo", tol=1e-9), der.dual.solve()
    assert abs(s_smo.objective_value - s_cvx.objective_value) <= 1e-7 * max(
        1, abs(s_cvx.objective_value))
    assert _compare_points(der.recover(s_smo), der.recover(s_cvx), der.primal, 1e-5) == []


# ---------------------------------------------------------------- quadratic terms over blocks
def _twin_plane(seed, d=3, eps=None, kernel=None, n=14):
    """One plane of the twin SVM (Jayadeva et al. 2007), data-embedded, with its plain CVXPY
    reference: ``min 1/2 ||A w + b||² (+ eps/2 ||(w, b)||²) + c Σ ξ``, ``-(B w + b) + ξ ≥ 1``."""
    import cvxpy as cp
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(n + seed, d)) + 1.0, rng.normal(size=(n - 3 + seed, d)) - 1.0
    if kernel is not None:          # the kernel-generated surface K(x, Cᵀ) u + b
        Cm = np.vstack([A, B])
        A, B = kernel(A, Cm), kernel(B, Cm)
    c = 0.3 + 0.4 * seed
    w, b, xi = Variable("w", A.shape[1], index="d"), Variable("b"), Variable("xi", B.shape[0])
    obj = 0.5 * sum_squares(Data("A", A) @ w + b) + Data("c_1", c) * vsum(xi)
    if eps is not None:
        obj = obj + 0.5 * Data("eps", eps, txt="ε") * (norm2(w) + norm2(b))
    P = Problem(obj, [(-(Data("B", B) @ w + b) + xi >= 1).named("alpha"),
                      (xi >= 0).named("mu")], "min", "twin SVM plane primal")
    wr, br, xr = cp.Variable(A.shape[1]), cp.Variable(), cp.Variable(B.shape[0])
    ro = 0.5 * cp.sum_squares(A @ wr + br) + c * cp.sum(xr)
    if eps is not None:
        ro = ro + 0.5 * eps * (cp.sum_squares(wr) + cp.square(br))
    ref = cp.Problem(cp.Minimize(ro), [-(B @ wr + br) + xr >= 1, xr >= 0])
    ref.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return P, ref.value, {"w": wr.value, "b": br.value}, (A, B, c, eps)


@pytest.mark.parametrize("seed", SEEDS)
def test_sum_squares_over_w_and_b_dualised_jointly(seed):
    """``sum_squares(A @ w + b)`` couples w and b: eliminated together, the dual's value is
    the primal's (CVXPY), the recovered plane is the reference's, the KKT residuals vanish,
    and the dual's Q is the paper's ``G (HᵀH)⁻¹ Gᵀ`` with ``H = [A 1]``, ``G = [B 1]``."""
    from primaldual.certificate import certify
    from tests.model.text_eval import TextEvaluator
    P, ref, ref_pt, (A, B, c, _) = _twin_plane(seed)
    der = dualize(P)
    sol = der.dual.solve(backend="cvxpy")
    pt = der.recover(sol)
    assert abs(sol.objective_value - ref) <= 1e-7 * max(1.0, abs(ref))
    assert abs(P.evaluate(pt) - ref) <= 1e-7 * max(1.0, abs(ref))
    assert _compare_points(pt, ref_pt, None, 1e-6) == []
    cert = certify(der.primal, pt, der.multipliers(sol), der.dual, dict(sol.values))
    assert abs(cert.relative_gap) <= 1e-7
    assert max(cert.kkt.values()) <= 1e-6, cert.kkt
    H, G = np.hstack([A, np.ones((len(A), 1))]), np.hstack([B, np.ones((len(B), 1))])
    Q = G @ np.linalg.solve(H.T @ H, G.T)
    a = np.asarray(sol.values["alpha"], float)
    assert abs(TextEvaluator({"α": a, "Q": Q}).value(der.dual.objective.txt)
               - sol.objective_value) <= 1e-7 * max(1.0, abs(ref))
    text = str(der.dual)
    assert "H = ∂²L/∂(w, b)² = Σ_l (A_l, 1)(A_l, 1)ᵀ" in text and "(-B_i, -1) for α_i" in text
    assert "Stationarity in (w, b): eliminate jointly" in str(der)


def test_joint_block_dual_is_a_linear_kernel_box_qp():
    """Q = (L⁻¹G')ᵀ(L⁻¹G') with HᵀH = L Lᵀ: the linear kernel on the N columns of L⁻¹Gᵀ
    (dim z = d + 1 rows each), never an N x N array; SMO solves it to the CVXPY value."""
    P, ref, ref_pt, (A, B, c, _) = _twin_plane(1, n=60)
    der = dualize(P)
    box = box_qp_of(der.dual)
    assert box is not None and box.Q.matrix is None
    assert box.Q.X.shape == (len(B), A.shape[1] + 1)
    H, G = np.hstack([A, np.ones((len(A), 1))]), np.hstack([B, np.ones((len(B), 1))])
    np.testing.assert_allclose(box.Q.X @ box.Q.X.T, G @ np.linalg.solve(H.T @ H, G.T),
                               atol=1e-10)
    s2 = der.dual.solve(backend="smo", tol=1e-10)
    assert abs(s2.objective_value - ref) <= 1e-7 * max(1.0, abs(ref))
    assert _compare_points(der.recover(s2), ref_pt, None, 1e-5) == []


def test_norm2_of_an_affine_expression_is_its_sum_of_squares():
    P, ref, ref_pt, (A, B, c, _) = _twin_plane(0)
    w, b = P.variable("w"), P.variable("b")
    xi = P.variable("xi")
    P2 = Problem(0.5 * norm2(Data("A", A) @ w + b) + Data("c_1", c) * vsum(xi),
                 P.constraints, "min", "twin SVM plane primal")
    assert P2.objective.txt == P.objective.txt
    der = dualize(P2)
    assert abs(der.dual.solve().objective_value - ref) <= 1e-7 * max(1.0, abs(ref))
    u, v = Variable("u", 3, index="d"), Variable("v", 3, index="d")
    assert norm2(u - v).txt == "Σ_k (u_k - v_k)²"
    with pytest.raises(TypeError, match="feature-space"):
        norm2(FeatureVariable("v", make_kernel("linear"), A) @ phi(A) + b)


@pytest.mark.parametrize("seed", [0, 1])
def test_singular_gram_refused_and_regularised_kernel_surface_dualised(seed):
    """The kernel surface ``K(A, Cᵀ) u + b`` has more unknowns than rows of A: HᵀH is singular
    and refused, naming the regulariser; with ``eps/2 ||(u, b)||²`` written, the dual equals
    the CVXPY primal."""
    k = make_kernel("rbf", gamma=0.5)
    with pytest.raises(DualizationError, match=r"HᵀH.*singular.*eps/2 \* \(norm2\(w\) \+ "
                                               r"norm2\(b\)\)"):
        dualize(_twin_plane(seed, kernel=k)[0])
    P, ref, ref_pt, _ = _twin_plane(seed, eps=1e-2, kernel=k)
    der = dualize(P)
    assert "+ ε I" in str(der.dual)
    sol = der.dual.solve()
    assert abs(sol.objective_value - ref) <= 1e-7 * max(1.0, abs(ref))
    assert _compare_points(der.recover(sol), ref_pt, None, 1e-5) == []


def test_sum_squares_with_an_offset_gives_the_ridge_dual():
    """``1/2 ||X w - y||² + 1/2 ||w||²`` with a constraint: the offset's linear term and
    constant reach the dual (value equal to the primal's)."""
    import cvxpy as cp
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 3))
    y = X @ np.array([1.0, 2.0, 3.0]) + 0.1 * rng.normal(size=20)
    w = Variable("w", 3, index="d")
    P = Problem(0.5 * sum_squares(Data("X", X) @ w - Data("y", y)) + 0.5 * norm2(w),
                [(vsum(w) <= 1).named("alpha")], "min", "ridge primal")
    der = dualize(P)
    sol = der.dual.solve()
    wr = cp.Variable(3)
    ref = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X @ wr - y) + 0.5 * cp.sum_squares(wr)),
                     [cp.sum(wr) <= 1])
    ref.solve()
    assert abs(sol.objective_value - ref.value) <= 1e-7 * ref.value
    np.testing.assert_allclose(der.recover(sol)["w"], wr.value, atol=1e-6)


def test_joint_elimination_latex_renders():
    """Every step's LaTeX of a joint elimination (a plane, a sum of squares with an offset, a
    regularised kernel surface) parses with matplotlib's mathtext, and so do the duals'."""
    from tests.model.test_rendering import _mathtext_errors
    w = Variable("w", 3, index="d")
    X = np.random.default_rng(5).normal(size=(8, 3))
    ridge = Problem(0.5 * sum_squares(Data("X", X) @ w - Data("y", X[:, 0])) + 0.5 * norm2(w),
                    [(vsum(w) <= 1).named("alpha")], "min", "ridge primal")
    for P in (_twin_plane(0)[0], ridge,
              _twin_plane(1, eps=1e-2, kernel=make_kernel("rbf", gamma=0.5))[0]):
        der = dualize(P)
        for step in der.steps:
            assert _mathtext_errors(step.latex) == [], step.title
        assert _mathtext_errors(der.dual.to_latex()) == []
