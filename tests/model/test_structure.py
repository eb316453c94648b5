"""Structure derived from the problem itself (issue 20, part 2): no catalogue dual carries a
hand-built record; ``detect_box_qp`` and ``detect_kkt_system`` reproduce, field by field, the
records the catalogue used to attach (and the fits' fast-path records), the backend choice over the
catalogue is what it was, and a box QP written with the modelling API reaches SMO through the same
``accepts`` path as CSVC's dual."""

import numpy as np
import pytest

import primaldual as pd
from primaldual.backends import choose, get_backend, select
from primaldual.kernels import make_kernel
from primaldual.model import Data, GramOperator, Problem, Variable, dot, quad_form, vsum
from primaldual.model.problem import LazyProblem
from primaldual.model.structure import (
    BoxQP,
    box_qp_of,
    box_qp_refusal,
    detect_box_qp,
    detect_kkt_system,
    kkt_system_of,
)


def _xy(n=14, seed=0, regression=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=n) if regression else np.where(X[:, 0] > 0, 1.0, -1.0)
    return X, y


def _regression(name):
    return any(k in name for k in ("SVR", "Ridge", "RLS"))


# every catalogue method, plus the variants whose record differs (hard margin / tube, per-sample
# C, no bias, a large C (LS-SVM refuses C = inf up front), another nu)
CASES = [(name, {}, False) for name in sorted(pd._METHODS)] + [
    ("CSVC", {"C": np.inf}, False), ("CSVC", {"class_weight": "balanced"}, True),
    ("EpsilonSVR", {"C": np.inf}, False), ("NuSVR", {"nu": 0.3}, True),
    ("NuSVC", {"nu": 0.3}, True), ("L2SVC", {"C": 3.0}, True),
    ("LSSVC", {"C": 1e6}, False), ("LSSVR", {"fit_intercept": False}, True),
    ("ProximalSVC", {"C": 2.0}, True)]


def _case(name, params, weighted):
    m = getattr(pd, name)(**params)
    X, y = _xy(regression=_regression(name))
    sw = np.linspace(0.5, 1.5, len(y)) if weighted else None
    data = m._prepare(X, y, sw)
    return m, data, m._dual(data)


def _reference(m, data):
    """The record the method knows for its dual: the fit's fast path, the ``kkt_system()``
    record, or (LapSVC) the record that used to be attached by hand."""
    if m._dual_structure(data):
        return m._dual_structure(data)
    if hasattr(m, "_kkt"):
        return {"kkt_system": m._kkt(data)}
    if isinstance(m, pd.LapSVC):
        l_ = data.extra["l"]
        Q = GramOperator(matrix=data.extra["G"] * np.outer(data.y, data.y))
        return {"box_qp": BoxQP(Q, -np.ones(l_), np.full(l_, 1.0 / l_), "one", data.y.copy(),
                                variable="beta",
                                multipliers={"eq": "minus_b", "lower": "s", "upper": "xi"})}
    return {}


def _same_box(found, ref, rng):
    assert found.n == ref.n
    for _ in range(2):                                 # Q acting on random vectors
        v = rng.normal(size=ref.n)
        np.testing.assert_allclose(found.Q.matvec(v), ref.Q.matvec(v), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(found.p, ref.p, rtol=1e-14)
    np.testing.assert_allclose(found.C, ref.C, rtol=1e-14)        # inf where inf
    assert found.equality == ref.equality
    np.testing.assert_allclose(found.sign, ref.sign)
    assert found.delta == pytest.approx(ref.delta, abs=1e-15)
    assert (found.nu_total is None) == (ref.nu_total is None)
    if ref.nu_total is not None:
        assert found.nu_total == pytest.approx(ref.nu_total, rel=1e-14)
        assert found.sum_sense == ref.sum_sense
    assert found.multipliers == ref.multipliers
    assert (found.variable, found.variables, found.sense_max) == \
        (ref.variable, ref.variables, ref.sense_max)
    assert found.n_first == ref.n_first                            # the split of two blocks
    a = rng.uniform(size=ref.n)
    fv, rv = found.split_values(a), ref.split_values(a)            # incl. derived (SVR's beta)
    assert fv.keys() == rv.keys()
    for k in rv:
        np.testing.assert_allclose(fv[k], rv[k], rtol=1e-12, atol=1e-12)
    assert found.derived_multipliers.keys() == ref.derived_multipliers.keys()
    for k, fn in ref.derived_multipliers.items():                  # SVR's lambda = K beta
        np.testing.assert_allclose(found.derived_multipliers[k](fv), fn(rv), rtol=1e-10,
                                   atol=1e-12)


def _same_kkt(found, ref):
    assert (found.kernel is None) == (ref.kernel is None)
    np.testing.assert_allclose(found.H(), ref.H(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(found.unsigned_matrix(), ref.unsigned_matrix(), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(found.inv_C(), ref.inv_C(), rtol=1e-14)
    np.testing.assert_allclose(found.d, ref.d)
    np.testing.assert_allclose(found.signs, ref.signs)
    assert (found.bias, found.rank_one, found.variable, found.multipliers) == \
        (ref.bias, ref.rank_one, ref.variable, ref.multipliers)


@pytest.mark.parametrize("name, params, weighted", CASES)
def test_detection_reproduces_every_record(name, params, weighted):
    """The dual carries nothing by hand; detection gives back every record the method knows,
    field by field (nothing is on an allow-list of undetectable records)."""
    m, data, D = _case(name, params, weighted)
    assert D.structure == {}, "a catalogue dual must not attach a record by hand"
    ref = _reference(m, data)
    rng = np.random.default_rng(0)
    box, ks = detect_box_qp(D), detect_kkt_system(D)
    assert (box is not None) == ("box_qp" in ref), name
    assert (ks is not None) == ("kkt_system" in ref), name
    if box is not None:
        _same_box(box, ref["box_qp"], rng)
        assert box_qp_of(D) is D.structure["box_qp"]                 # cached on first use
    if ks is not None:
        _same_kkt(ks, ref["kkt_system"])
        assert kkt_system_of(D) is D.structure["kkt_system"]


# the backends that accepted each catalogue dual while records were attached by hand
BEFORE = {"CSVC": ("smo", "lowrank"), "EpsilonSVR": ("smo", "lowrank"),
          "HardMarginSVC": ("smo", "lowrank"), "KernelLogisticRegression": (),
          "KernelRidge": ("kkt",), "L2SVC": ("smo", "lowrank"), "LSSVC": ("kkt",),
          "LSSVR": ("kkt",), "LapRLS": ("kkt",), "LapSVC": ("smo",),
          "NuSVC": ("smo", "lowrank"), "NuSVR": ("smo", "lowrank"), "ProximalSVC": ("kkt",)}


def test_backend_choice_over_the_catalogue_is_unchanged():
    assert set(BEFORE) == set(pd._METHODS)
    for name, accepted in BEFORE.items():
        m, data, D = _case(name, {}, False)
        fast = LazyProblem(lambda m=m, data=data: m._dual(data),
                           structure=m._dual_structure(data))       # what a fit hands over
        for P in (D, fast):
            got = tuple(b for b in ("smo", "kkt", "lowrank") if get_backend(b).accepts(P))
            assert got == accepted, name
            assert choose(P)[0] == (accepted[0] if accepted else "cvxpy"), name


def test_custom_box_qp_reaches_smo_through_the_same_accepts_path():
    X, y = _xy(n=20, seed=3)
    k = make_kernel("rbf", gamma=0.7)
    a = Variable("alpha", len(y))
    Y, C = Data("y", y), Data("C", 1.5)
    custom = Problem(vsum(a) - 0.5 * quad_form(a, GramOperator(k, X, sign=y)),
                     [(dot(Y, a) == 0).named("nu"), (a >= 0).named("s"), (a <= C).named("xi")],
                     "max", "my box QP")
    assert "box_qp" not in custom.structure        # nothing attached by hand
    m = pd.CSVC(C=1.5, kernel="rbf", gamma=0.7)
    D = m._dual(m._prepare(X, y))
    smo = get_backend("smo")
    assert smo.accepts(custom) and smo.accepts(D)
    assert select(custom, "auto") == "smo" == select(D, "auto")
    s1 = custom.solve(backend="auto", tol=1e-8)
    s2 = D.solve(backend="smo", tol=1e-8)
    assert s1.backend == "smo" and "smo" in s1.info["backend_choice"]
    assert s1.objective_value == pytest.approx(s2.objective_value, rel=1e-7)


def _stacked_problem(sum_op, p_sign=-1.0, eps=0.0):
    """An SVR-like dual written by hand: ``beta = a - a*`` with ``1ᵀ(a + a*)`` bounded."""
    X, y = _xy(n=12, seed=5, regression=True)
    k = make_kernel("rbf", gamma=0.5)
    a, a_s, beta = Variable("a", 12), Variable("a_star", 12), Variable("beta", 12)
    one = Data("1", np.ones(12))
    Y = Data("y", y)
    total = dot(one, a) + dot(one, a_s)
    obj = (-0.5 * quad_form(beta, GramOperator(k, X)) + dot(Y, a) + p_sign * dot(Y, a_s)
           - eps * total)
    cons = [(beta == a - a_s).named("lam"), (dot(one, a) - dot(one, a_s) == 0).named("mb"),
            (total <= 3.0).named("s_sum") if sum_op == "<=" else (total >= 3.0).named("s_sum"),
            (a >= 0).named("l1"), (a_s >= 0).named("l2"), (a <= 1.0).named("u1"),
            (a_s <= 1.0).named("u2")]
    return Problem(obj, cons, "max", "stacked")


def test_nu_pair_is_detected_only_when_equality_is_without_loss():
    """``1ᵀa <= t`` is solved at equality only when every variable pairs with one that cancels
    it (raising both changes nothing); ``1ᵀa >= t`` only for a homogeneous objective."""
    box = detect_box_qp(_stacked_problem("<="))
    assert box is not None and box.equality == "nu" and box.nu_total == 3.0
    assert box.variables == ("a", "a_star") and box.split == 12
    assert box.multipliers["sum"] == "s_sum" and box.sum_sense == "<="
    assert detect_box_qp(_stacked_problem("<=", p_sign=1.0)) is None   # p_k + p_l != 0
    assert "1^T a <= nu_total cannot be taken at equality" in \
        box_qp_refusal(_stacked_problem("<=", p_sign=1.0))
    assert detect_box_qp(_stacked_problem(">=")) is None               # r != 0
    assert "1^T a >= nu_total cannot be taken" in box_qp_refusal(_stacked_problem(">="))
    sol = _stacked_problem("<=").solve(backend="smo", tol=1e-9)
    ref = _stacked_problem("<=").solve(backend="cvxpy")
    assert sol.objective_value == pytest.approx(ref.objective_value, rel=1e-6, abs=1e-7)


def test_refusals_name_the_failed_condition():
    a = Variable("alpha", 4)
    P = Problem(vsum(a), [(a >= 0).named("s"), (a <= 1).named("u")], "max", "LP")
    with pytest.raises(ValueError, match="not a box-constrained QP"):
        select(P, "smo")
    name, why = choose(P)
    # a linear program: the LP backend (issue 28), after every QP backend said why not
    assert name == "lp" and "smo:" in why and "kkt:" in why and "lowrank:" in why
    assert "gsmo:" in why
    # the condition, each time a backend reading the BoxQP refused (linear, pairs, smo, lowrank)
    assert "pairs:" in why
    assert why.count("no single concave quad_form term") == 5
    X, y = _xy()
    D = pd.LSSVC().dual(X, y)
    with pytest.raises(ValueError, match=r"lower bound a >= 0"):
        select(D, "smo")
    with pytest.raises(ValueError, match=r"KKTSystem.*not free"):
        select(pd.CSVC().dual(X, y), "kkt")
    with pytest.raises(ValueError, match="Q is a matrix"):
        select(pd.LapSVC().dual(X, y), "lowrank")
