"""Warm fits cross between primaldual's files at most as often as the one-engine design allows
(counted as ``benchmarks/bench_crossings.py`` counts them: calls whose caller and callee are
two different files of the package, under ``sys.setprofile``, on 300 x 5 seeded data)."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_crossings as bc  # noqa: E402

import primaldual as pd  # noqa: E402

_rng = np.random.default_rng(0)
_X = _rng.standard_normal((300, 5))
_y2 = np.where(_X[:, 0] + 0.3 * _rng.standard_normal(300) > 0, 1, 0)
_y3 = np.digitize(_X[:, 0] + 0.3 * _rng.standard_normal(300), [-0.4, 0.4])
_P, _DEC = bc.one_class_spec()

CASES = [
    ("variant-one-class", lambda: pd.Variant(_P, decision=_DEC, task="novelty", gamma=0.5,
                                             nu=0.1), (_X,), 200),
    ("lssvc", lambda: pd.LSSVC(C=1.0, gamma=0.5), (_X, _y2), 150),
    ("csvc-3-class", lambda: pd.CSVC(C=1.0, gamma=0.5), (_X, _y3), 120),
    ("csvc-binary", lambda: pd.CSVC(C=1.0, gamma=0.5), (_X, _y2), 80),
]


@pytest.mark.parametrize("name, make, args, target", CASES, ids=[c[0] for c in CASES])
def test_warm_fit_crossings_within_target(name, make, args, target):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            make().fit(*args)
        m = make()
        n, files = bc.crossings(lambda: m.fit(*args))
    assert m.predict(args[0]).shape == (300,)   # a real fit was counted
    assert 0 < n <= target, (n, files.most_common(5))


def test_the_counter_sees_crossings():
    # a call from one package file into another is counted, one within a file is not
    from primaldual.certificate import relative_gap
    n, files = bc.crossings(lambda: pd.validation.check_positive(1.0, "C"))
    assert n == 0   # called from the test file (outside the package): not a crossing
    n, _ = bc.crossings(lambda: relative_gap(1.0, 2.0, 1.0))
    assert n == 0
    m = pd.CSVC(C=1.0, gamma=0.5)
    n, files = bc.crossings(lambda: m.fit(_X, _y2))
    assert n > 10 and "engine/stages.py" in {f.replace(os.sep, "/") for f in files}
