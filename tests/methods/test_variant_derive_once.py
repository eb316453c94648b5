"""A placeholder Variant refitted on the same rows runs no reduction of its derivation: the
spec is dualised once (per spec) and bound once (per spec, rows, kernel, hyper-parameters)."""

from __future__ import annotations

import os
import sys

import numpy as np
from variant_specs import placeholder_specs

import primaldual as pd


def _reduction_calls(fit) -> int:
    n = [0]

    def hook(frame, event, arg):
        if event == "call":
            f = frame.f_code.co_filename.replace(os.sep, "/")
            if "/primaldual/model/" in f and (f.endswith("/dualize.py") or "/reduce_" in f):
                n[0] += 1

    sys.setprofile(hook)
    try:
        fit()
    finally:
        sys.setprofile(None)
    return n[0]


def test_refits_run_no_reduction():
    (oc, dec), _ = placeholder_specs()
    X = np.random.default_rng(3).standard_normal((150, 4))
    m = pd.Variant(oc, decision=dec, task="novelty", gamma=0.5, nu=0.2)
    first = _reduction_calls(lambda: m.fit(X))
    assert first > 0   # the counter sees the derivation when it does run
    f1 = m.decision_function(X)
    assert _reduction_calls(lambda: m.fit(X)) == 0
    from sklearn.base import clone
    assert _reduction_calls(lambda: clone(m).fit(X)) == 0
    np.testing.assert_array_equal(m.decision_function(X), f1)


def test_rows_edited_in_place_are_bound_again():
    (oc, dec), _ = placeholder_specs()
    X = np.random.default_rng(4).standard_normal((120, 3))
    m = pd.Variant(oc, decision=dec, task="novelty", gamma=0.5, nu=0.2).fit(X)
    f_before = m.decision_function(X).copy()
    X[:60] += 1.0
    m.fit(X)
    ref = pd.Variant(oc, decision=dec, task="novelty", gamma=0.5, nu=0.2).fit(X.copy())
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X))
    assert not np.allclose(m.decision_function(X), f_before)
