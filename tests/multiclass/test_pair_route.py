"""Issue 31 (small data, round 3): the lean route of one-vs-one sub-problems
(:mod:`primaldual.methods._pair`) fits exactly what the generic pipeline fits.

Each case is fitted twice, through the lean route and with it switched off (every sub-problem
through ``_fit_subproblem``), and every attribute of every sub-problem is compared: the same
dual point, intercept, support, certificate (objectives, gap, every KKT residual, per sample),
solution multipliers and status -- not "close to LIBSVM", the same numbers, bit for bit where
the two routes run the same operations. The cases where the route must not apply (weights,
an iteration limit, an indefinite kernel, probability) are checked to leave it.

One relaxation (issue 31, round 5): the lean route's finish (``_pair._finish``) sums the
certificate's five inner products (``beta^T K beta``, ``u^T xi``, ``p^T a``, ``y^T a``,
``1^T a``) in one compiled pass, in index order, where the generic route calls numpy (BLAS
``ddot``, pairwise sums). The certificate's scalars built from them (objectives, gap,
relative gap, the equality and sum rows' residuals, ``dual_feasibility_of_dual``) and
``margin_`` then agree to 1e-12 relative (1e-14 absolute for residuals near 0; the gap,
a difference of the objectives, to 1e-12 of them), not bit for bit. Everything else --
the solve, ``alpha_``, ``beta_``, ``b_``, support, ``dual_coef_``, ``intercept_``, the
per-sample residuals, ``certificate_.f``, status -- is compared bit for bit, and a planted
fault (a wrong ``b`` or ``alpha`` reported as optimal) must be flagged by the lean
certificate itself (``test_lean_certificate_flags_a_planted_fault``).
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine

import primaldual as pdl
import primaldual.methods._multiclass as mc
from primaldual.methods._pair import pair_route

_TIMES = ("time [s]",)
#: the certificate's scalars summed in another order by the lean finish (see the docstring)
_RTOL, _ATOL = 1e-12, 1e-14


def _close(a: float, b: float) -> bool:
    return (a != a and b != b) or abs(a - b) <= max(_ATOL, _RTOL * max(abs(a), abs(b)))


def _same(a, b, path, sums=False):
    """Equal bit for bit; with ``sums`` (inside the certificate) floats and one-entry arrays
    (the scalar residuals) to ``_RTOL`` / ``_ATOL``."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype, path
        if sums and a.shape == (1,) and a.dtype.kind == "f":
            assert _close(float(a[0]), float(b[0])), (path, a, b)
        else:
            assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), path
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            if k not in _TIMES:
                _same(a[k], b[k], f"{path}.{k}", sums)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            _same(u, v, f"{path}[{i}]", sums)
    elif isinstance(a, float):
        assert (a != a and b != b) or a == b or (sums and _close(a, b)), (path, a, b)
    elif a is None or isinstance(a, (str, int, bool, np.number)):
        assert a == b or (sums and _close(float(a), float(b))), (path, a, b)


def _fit_both(monkeypatch, est, X, y):
    calls = []
    real = mc.fit_pair

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(mc, "fit_pair", counting)
    lean = type(est)(**est.get_params()).fit(X, y)
    used = len(calls)
    monkeypatch.setattr(mc, "pair_route", lambda *a, **k: None)
    generic = type(est)(**est.get_params()).fit(X, y)
    return lean, generic, used


@pytest.mark.parametrize("make", [
    lambda: pdl.CSVC(), lambda: pdl.NuSVC(), lambda: pdl.CSVC(kernel="linear", C=0.1),
    lambda: pdl.CSVC(kernel="poly", C=10.0), lambda: pdl.NuSVC(nu=0.2, gamma=0.1),
    lambda: pdl.CSVC(decision_function_shape="ovo", tol=1e-5)])
@pytest.mark.parametrize("data", ["iris", "wine"])
def test_lean_route_fits_what_the_generic_route_fits(monkeypatch, make, data):
    X, y = (load_iris if data == "iris" else load_wine)(return_X_y=True)
    if data == "wine":
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    lean, generic, used = _fit_both(monkeypatch, make(), X, y)
    assert used == 3                                  # every pair took the lean route
    for e, g in zip(lean.estimators_, generic.estimators_, strict=True):
        de, dg = vars(e), vars(g)
        assert list(de) == list(dg)
        for k in de:
            if k in ("kernel_", "_sv_rows"):
                continue
            v, w = de[k], dg[k]
            if k == "certificate_":
                # the gap is a difference of the objectives: its rounding is theirs
                scale = max(1.0, abs(w.primal_objective), abs(w.dual_objective))
                for g in ("duality_gap", "relative_gap"):
                    assert abs(getattr(v, g) - getattr(w, g)) <= _RTOL * scale, g
                _same({x: z for x, z in vars(v).items() if x not in ("duality_gap",
                                                                     "relative_gap")},
                      {x: z for x, z in vars(w).items() if x not in ("duality_gap",
                                                                     "relative_gap")},
                      k, sums=True)
                for key in ("stationarity[w]", "primal_feasibility[alpha]",
                            "dual_feasibility[alpha]", "dual_feasibility[xi]",
                            "complementarity[alpha]", "complementarity[xi]"):
                    assert v.kkt[key] == w.kkt[key], key    # (the compiled terms: same bits)
                assert v.status == "optimal"
            elif k == "solution_":
                assert v.problem is None and w.problem is None
                _same({x: y_ for x, y_ in vars(v).items() if x not in ("solve_time", "info",
                                                                       "problem")},
                      {x: y_ for x, y_ in vars(w).items() if x not in ("solve_time", "info",
                                                                       "problem")}, k)
                _same({x: y_ for x, y_ in v.info.items() if x != "compile_time"},
                      {x: y_ for x, y_ in w.info.items() if x != "compile_time"}, k)
            else:
                _same(v, w, k, sums=k == "margin_")
    for k in ("support_", "dual_coef_", "intercept_", "n_support_", "n_iter_"):
        _same(getattr(lean, k), getattr(generic, k), k)
    assert np.array_equal(lean.decision_function(X), generic.decision_function(X))


def test_lean_route_certified_by_the_oracle():
    from primaldual.testing import assert_oracle_optimal

    X, y = load_wine(return_X_y=True)
    for est in (pdl.CSVC(), pdl.NuSVC()):
        est.fit(X, y)
        rep = assert_oracle_optimal(est, X, y)
        assert len(rep.parts) == 3


@pytest.mark.parametrize("est, why", [
    (pdl.CSVC(max_iter=50), "an iteration limit warns: the generic route says so once"),
    (pdl.CSVC(kernel="sigmoid"), "an indefinite kernel warns"),
    (pdl.CSVC(probability=True), "Platt's sigmoid per pair"),
    (pdl.CSVC(class_weight="balanced"), "weights"),
    (pdl.CSVC(C=np.inf), "the hard margin"),
    (pdl.CSVC(backend="cvxpy"), "another backend"),
    (pdl.CSVC(form="primal"), "the primal form"),
])
def test_lean_route_refuses(est, why):
    X, y = load_iris(return_X_y=True)
    params = est._validate_params()
    params["gamma"] = 0.1
    params["_kernel"] = est._kernel(X, params)
    sw = None
    if params.get("class_weight") is not None:
        sw = np.ones(X.shape[0])             # (folded into sample weights by the multiclass fit)
    assert pair_route(est, X, params, None, None, sw) is None, why


def test_lean_route_falls_back_when_the_solve_is_not_optimal(monkeypatch):
    """A sub-problem the lean route cannot certify is fitted by the generic route (here: the
    SMO solve forced to report a stop at the iteration limit)."""
    import primaldual.methods._pair as pair

    X, y = load_iris(return_X_y=True)
    real = pair._smo_solve
    seen = []

    def stopped(*args, **kw):
        r = real(*args, **kw)
        seen.append(1)
        r.status = "max_iter"
        return r

    monkeypatch.setattr(pair, "_smo_solve", stopped)
    m = pdl.CSVC().fit(X, y)
    assert len(seen) == 3
    assert all(e.certificate_.status == "optimal" for e in m.estimators_)
    monkeypatch.setattr(pair, "_smo_solve", real)
    ref = pdl.CSVC().fit(X, y)
    assert np.array_equal(m.dual_coef_, ref.dual_coef_)


def test_a_variant_has_no_one_vs_one_pairs_to_route():
    """The lean route serves the catalogue's one-vs-one sub-problems. A user's ``Variant`` is
    binary (``task="classification"``): a three-class y is refused with a clear error, so no
    Variant fit ever has sub-problems that the route could serve, and the route itself refuses
    a Variant estimator (no ``_pair_kind``)."""
    from primaldual.model import (
        FeatureVariable,
        N,
        Param,
        Problem,
        Variable,
        X,
        norm2,
        phi,
        vsum,
        x,
    )
    from primaldual.model import y as ys

    C, w = Param("C"), FeatureVariable("w")
    b, xi = Variable("b"), Variable("xi", N)
    spec = Problem(0.5 * norm2(w) + C * vsum(xi),
                   [(ys * (w @ phi(X) + b) >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                   "min", "C-SVC primal")
    Xi, yi = load_iris(return_X_y=True)
    est = pdl.Variant(spec, w @ phi(x) + b, task="classification", C=1.0)
    with pytest.raises(ValueError, match="binary"):
        est.fit(Xi, yi)
    assert pair_route(est, Xi, {"kernel": "rbf"}, None, None, None) is None


@pytest.mark.parametrize("make", [pdl.CSVC, pdl.NuSVC])
@pytest.mark.parametrize("fault", ["b", "alpha"])
def test_lean_certificate_flags_a_planted_fault(monkeypatch, make, fault):
    """The lean finish certifies the point predict uses, recomputed from the kernel -- never
    the solver's word: an SMO result with a wrong intercept (its equality multiplier shifted)
    or a wrong dual point (one multiplier moved off the equality ``y^T a = 0``), still
    reported "optimal", is flagged by the lean certificate itself (status "inaccurate", with
    the warning), and the fault is visible in the certificate's numbers."""
    import primaldual.methods._pair as pair
    from primaldual.solution import InaccurateSolutionWarning

    X, y = load_iris(return_X_y=True)
    real_solve, real_finish = pair._smo_solve, pair._finish
    lean = []

    def faulty(*args, **kw):
        r = real_solve(*args, **kw)
        if fault == "b":
            # C-SVC: b = -nu_eq; nu-SVC: b = -(r1 - r2)/2, rho = (r1 + r2)/2 (times 1/s)
            if r.r1 is None:
                r.b += 0.5
            else:
                r.r1 += 0.5 * abs(r.r1)
        else:
            j = int(np.flatnonzero(r.alpha == 0)[0])
            r.alpha = r.alpha.copy()
            r.alpha[j] = 0.5 * float(np.max(r.alpha))
        return r

    def spy(*args, **kw):
        out = real_finish(*args, **kw)
        lean.append(out)
        return out

    monkeypatch.setattr(pair, "_smo_solve", faulty)
    monkeypatch.setattr(pair, "_finish", spy)
    with pytest.warns(InaccurateSolutionWarning):
        m = make().fit(X, y)
    assert lean == [True] * 3                 # certified by the lean finish, not the generic
    tol = m.estimators_[0]._certify_tol()
    for e in m.estimators_:
        c = e.certificate_
        assert c.status == "inaccurate" and e.status_ == "inaccurate"
        worst = max(abs(c.relative_gap), max(c.kkt.values()))
        assert worst > tol
    if fault == "alpha":
        assert all(e.certificate_.kkt["stationarity[b]"] > tol for e in m.estimators_)
    # the unperturbed fit is certified optimal by the same route
    monkeypatch.setattr(pair, "_smo_solve", real_solve)
    lean.clear()
    ok = make().fit(X, y)
    assert lean == [True] * 3
    assert all(e.certificate_.status == "optimal" for e in ok.estimators_)
