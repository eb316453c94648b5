"""One road (issue 28): the catalogue's box-QP duals reach their backend through the structure
*detected* on the method's derived dual -- the detector a user's spec goes through -- once per
shape, bound to each fit's data (primaldual/methods/_structure.py); no backend selection names
a method class."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import primaldual as pd
from primaldual.methods import _structure
from primaldual.model import detection
from primaldual.model.structure import detect_box_qp

ROOT = Path(__file__).resolve().parents[2]
CLASSES = ["CSVC", "NuSVC", "EpsilonSVR", "NuSVR", "L2SVC", "HardMarginSVC"]


def _xy(name, n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if "SVR" in name:
        return X, X[:, 0] - X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    if name == "HardMarginSVC":
        return X, (X[:, 0] > 0).astype(int)
    return X, (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)


def _est(name, **kw):
    base = {"HardMarginSVC": {"kernel": "linear"}, "NuSVC": {"nu": 0.3}}.get(name, {})
    return getattr(pd, name)(**base, **kw)


@pytest.fixture
def fresh():
    _structure.clear_structure_templates()
    yield
    _structure.clear_structure_templates()


def _spy(monkeypatch):
    seen = []
    real = detection._read_box_qp

    def spy(problem):
        seen.append(problem.name)
        return real(problem)

    monkeypatch.setattr(detection, "_read_box_qp", spy)
    return seen


def _same_record(found, ref):
    """Field by field (the detector's record of the fit's own dual as reference)."""
    assert found.n == ref.n and found.equality == ref.equality
    assert found.Q.kernel is ref.Q.kernel and found.Q.X is ref.Q.X
    for f in ("sign", "index", "diag"):
        u, v = getattr(found.Q, f), getattr(ref.Q, f)
        assert (u is None) == (v is None)
        if u is not None:
            np.testing.assert_allclose(u, v, rtol=1e-13, err_msg=f"Q.{f}")
    for f in ("p", "C", "sign"):
        np.testing.assert_allclose(getattr(found, f), getattr(ref, f), rtol=1e-13, err_msg=f)
    assert found.delta == pytest.approx(ref.delta, abs=1e-15)
    assert (found.nu_total is None) == (ref.nu_total is None)
    if ref.nu_total is not None:
        assert found.nu_total == pytest.approx(ref.nu_total, rel=1e-13)
    for f in ("multipliers", "variable", "variables", "split", "sum_sense", "sense_max"):
        assert getattr(found, f) == getattr(ref, f), f
    assert list(found.derived) == list(ref.derived)
    assert list(found.derived_multipliers) == list(ref.derived_multipliers)
    z = {n: np.random.default_rng(0).normal(size=ref.n_first) for n in (ref.variables or ())}
    for k in ref.derived:
        np.testing.assert_allclose(found.derived[k](z), ref.derived[k](z), rtol=1e-13)
        for m in ref.derived_multipliers:
            np.testing.assert_allclose(found.derived_multipliers[m](z),
                                       ref.derived_multipliers[m](z), rtol=1e-10)


@pytest.mark.parametrize("name", CLASSES)
def test_catalogue_fit_goes_through_detection(name, fresh, monkeypatch):
    """The first fit of a shape runs the detector on the method's dual (probes and the fit's
    own); later fits bind the shape's template, and the record they get is the one the
    detector reads from the dual on their data (weights per sample included)."""
    seen = _spy(monkeypatch)
    X, y = _xy(name, 40, 0)
    m = _est(name).fit(X, y)
    dual_name = m.dual(X, y).name
    assert seen and set(seen) == {dual_name}
    rec = m.solution_.problem.structure["box_qp"]
    assert rec.origin == f"detected on {dual_name!r} (this fit)"
    assert m.backend_ == "smo"
    n_first = len(seen)
    for seed, n in ((1, 33), (2, 57)):
        X2, y2 = _xy(name, n, seed)
        sw = np.random.default_rng(seed).uniform(0.5, 2.0, n)
        m2 = _est(name).fit(X2, y2, sample_weight=sw)
        rec2 = m2.solution_.problem.structure["box_qp"]
        if name == "HardMarginSVC" or len(seen) > n_first:
            continue   # per-sample weights are another shape for the others (C a vector)
        assert rec2.origin == f"detected on {dual_name!r} (shape template)"
    for seed, n in ((3, 29), (4, 61)):
        X2, y2 = _xy(name, n, seed)
        sw = np.random.default_rng(seed).uniform(0.5, 2.0, n)
        params = m._validate_params()
        params = {**params, "gamma": m._resolve_gamma(X2, params)}
        data = m._prepare(X2, y2, None if name == "HardMarginSVC" else sw, params)
        count = len(seen)
        st = _structure.dual_structure(m, data)
        assert len(seen) == count, "a known shape must not be detected again"
        assert st["box_qp"].origin.endswith("(shape template)")
        _same_record(st["box_qp"], detect_box_qp(m._dual(data)))
    assert all(v == "template" for v in _structure.structure_templates().values())


@pytest.mark.parametrize("name, first, later", [
    ("CSVC", {"C": 1e10}, [{"C": 1e-8}, {"C": 1.0}]),
    ("EpsilonSVR", {"C": 1e8, "epsilon": 1e-6}, [{"C": 1e-3, "epsilon": 10.0}, {}]),
    ("NuSVR", {"C": 1e-6, "nu": 0.01}, [{"C": 1e3, "nu": 1.0}])])
def test_a_template_learned_at_one_scale_binds_at_any(name, first, later, fresh):
    """The template is learned on probes at unit scale (whatever the first fit's C, epsilon
    or y), so it binds exactly at every other scale: the bound record equals the detector's."""
    X, y = _xy(name, 30, 0)
    _est(name, **first).fit(X, y)
    assert list(_structure.structure_templates().values()) == ["template"]
    for kw in later:
        for scale in (1e-6, 1.0, 1e6):
            m = _est(name, **kw)
            yy = y * scale if "SVR" in name else y
            params = m._validate_params()
            params = {**params, "gamma": m._resolve_gamma(X, params)}
            data = m._prepare(X, yy, None, params)
            st = _structure.dual_structure(m, data)
            assert st["box_qp"].origin.endswith("(shape template)")
            _same_record(st["box_qp"], detect_box_qp(m._dual(data)))


def test_backend_follows_the_detected_structure(fresh, monkeypatch):
    """Make the detector refuse every box QP: the same CSVC now goes elsewhere (never SMO), so
    the choice is read from the detected structure, not from the class."""
    X, y = _xy("CSVC", 30, 0)
    assert pd.CSVC().fit(X, y).backend_ == "smo"
    _structure.clear_structure_templates()

    def refuse(problem):
        raise detection._NoShape("refused for the test")

    monkeypatch.setattr(detection, "_read_box_qp", refuse)
    m = pd.CSVC().fit(X, y)
    assert m.backend_ != "smo"
    assert m.certificate_.is_optimal(1e-3, 1e-3)
    with pytest.raises(ValueError, match="refused for the test"):
        pd.CSVC(backend="smo").fit(X, y)


def test_a_shape_without_template_is_detected_on_every_fit(fresh, monkeypatch):
    """A dual whose record is not affine in its dual data gets no template: every fit detects
    on its own dual (same road, slower) and the reason is reported."""
    X, y = _xy("CSVC", 30, 0)

    class Odd(pd.CSVC):
        def _dual_data(self, data):      # C enters the dual through C^2 / C: not affine in C
            return {"y": data.y, "C2": data.C ** 2}

        def _dual(self, data, values=None):
            v = self._dual_data(data) if values is None else values
            d = super()._dual_data(data)
            d["C"] = np.sqrt(v["C2"])
            return super()._dual(data, d)

    seen = _spy(monkeypatch)
    for _ in range(_structure._RETRIES):     # learning is tried again on a few fits, then not
        Odd().fit(X, y, sample_weight=np.linspace(0.5, 2.0, 30))
    reasons = _structure.structure_templates()
    assert len(reasons) == 1 and "affine" in next(iter(reasons.values()))
    count = len(seen)
    m = Odd().fit(X, y, sample_weight=np.linspace(0.5, 2.0, 30))
    assert len(seen) == count + 1
    assert m.solution_.problem.structure["box_qp"].origin.endswith("(this fit)")
    assert m.backend_ == "smo"


def _code_words(path: Path) -> set[str]:
    """Identifiers and string constants of a module's code (docstrings and comments left out:
    they may mention a class as an example)."""
    import ast

    tree = ast.parse(path.read_text())
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.body and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant):
            docs.add(id(node.body[0].value))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docs:
            out.update(re.findall(r"\w+", node.value))
    return out


def test_no_backend_selection_names_a_method_class():
    names = set(pd._METHODS) | {"HardMarginSVC", "L2SVC"}
    files = list((ROOT / "primaldual" / "backends").rglob("*.py")) + [
        ROOT / "primaldual" / "methods" / "_structure.py",
        ROOT / "primaldual" / "methods" / "_structure_template.py",
        ROOT / "primaldual" / "methods" / "_box_certificate.py",
        ROOT / "primaldual" / "model" / "structure.py",
        ROOT / "primaldual" / "model" / "detection.py"]
    for path in files:
        hits = names & _code_words(path)
        assert not hits, f"{path.relative_to(ROOT)} names {sorted(hits)}"


def test_catalogue_classes_write_no_structure_record():
    for name in CLASSES:
        cls = getattr(pd, name)
        assert not hasattr(cls, "_box_qp"), name
        for klass in cls.__mro__:
            assert "_dual_structure" not in vars(klass) or klass.__name__ == "KernelMethod"
            assert "_certify" not in vars(klass) or klass.__name__ == "KernelMethod"
