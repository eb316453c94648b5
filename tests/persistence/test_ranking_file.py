"""A fitted ranking ``Variant`` (``task="ranking"``, a factory over the pairs of each query,
linear and RBF) saved and loaded: the file holds its expansion (no pickle), the loaded model's
scores equal the fitted one's bit for bit and its pairwise score is the same, with or without
the spec passed back."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import primaldual as pd
from primaldual.persistence import load, save

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "methods"))
from test_variant_ranking import _data, ranking_svm  # noqa: E402
from test_variant_ranking_rbf import ranking_rbf  # noqa: E402


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_ranking_variant_round_trips(tmp_path, kernel):
    X, rel, qid = _data(0, queries=8, per=8)
    spec = ranking_svm if kernel == "linear" else ranking_rbf
    m = pd.Variant(spec, task="ranking", kernel=kernel, gamma=0.3, C=1.0, tol=1e-8)
    m.fit(X[:48], rel[:48], qid=qid[:48])
    path = tmp_path / "rank.npz"
    save(m, path)
    with np.load(path, allow_pickle=False) as z:       # numbers and JSON only
        assert all(z[k].dtype != object for k in z.files)
    Xt, rt, qt = X[48:], rel[48:], qid[48:]
    for back in (load(path), load(path, spec=spec)):
        assert back._task() == "ranking"
        assert np.array_equal(back.predict(Xt), m.predict(Xt))
        assert back.score(Xt, rt, qid=qt) == m.score(Xt, rt, qid=qt)
        assert back.certificate_.dual_objective == m.certificate_.dual_objective
