"""``Variant(task="ranking")``: a ranking SVM (Joachims 2002) written as a factory over the
pairs of each query; ``predict`` returns scores and ``score`` is the pairwise accuracy within
queries (never an R² of scores against grades)."""

from __future__ import annotations

import numpy as np
import pytest

import primaldual as pd
from primaldual.model import Data, Problem, Variable, norm2, vsum
from primaldual.ranking import pairwise_accuracy


def _pairs(y, qid):
    return [(i, j) for i in range(y.size) for j in range(y.size)
            if qid[i] == qid[j] and y[i] > y[j]]


def ranking_svm(X, y, kernel, C, qid):
    """min 1/2 ||w||^2 + C Σ ξ_ij  s.t.  wᵀ(x_i - x_j) >= 1 - ξ_ij on the ordered pairs."""
    P_ = _pairs(y, qid)
    D = np.array([X[i] - X[j] for i, j in P_])
    w, xi = Variable("w", X.shape[1]), Variable("xi", len(P_))
    P = Problem(0.5 * norm2(w) + Data("C", C) * vsum(xi),
                [(Data("D", D) @ w >= 1 - xi).named("alpha"), (xi >= 0).named("mu")],
                "min", "ranking SVM primal")
    return P, Data("X", X) @ w


def _data(seed, queries=6, per=8, d=4):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    X = rng.normal(size=(queries * per, d))
    rel = np.digitize(X @ w + 0.3 * rng.normal(size=X.shape[0]), [-1.0, 0.0, 1.0])
    return X, rel.astype(float), np.repeat(np.arange(queries), per)


@pytest.mark.parametrize("seed", [0, 1])
def test_ranking_variant_scores_pairs_within_queries(seed):
    X, rel, qid = _data(seed)
    m = pd.Variant(ranking_svm, task="ranking", kernel="linear", C=1.0, tol=1e-6)
    m.fit(X[:32], rel[:32], qid=qid[:32])
    assert m.certificate_.status == "optimal"
    scores = m.predict(X[32:])
    assert scores.shape == (16,)
    acc = m.score(X[32:], rel[32:], qid=qid[32:])
    assert acc == pytest.approx(pairwise_accuracy(rel[32:], scores, qid[32:]))
    assert 0.6 < acc <= 1.0          # a learnable ordering, not an R² of scores against grades
    assert not hasattr(m, "decision_function")
    with pytest.raises(ValueError, match="sample_weight"):
        m.score(X[32:], rel[32:], sample_weight=np.ones(16))


def _fast_pairs(y, qid):
    out = []
    for q in np.unique(qid):
        r = np.flatnonzero(qid == q)
        ii, jj = np.meshgrid(r, r, indexing="ij")
        ok = y[ii] > y[jj]
        out += list(zip(ii[ok], jj[ok], strict=True))
    return out


def test_many_pairs_reach_the_dual_as_a_linear_kernel_never_a_pair_gram_matrix(monkeypatch):
    """||w||^2 of a plain w with rows D w over P pairs >> d: the dual's Q = D Dᵀ stays the
    linear kernel on the pair differences (SMO's columns, the linear route's explicit w), so
    memory is O(P d), not O(P^2)."""
    import sys

    from primaldual.kernels.functions import Linear
    from primaldual.model.structure import box_qp_of

    monkeypatch.setattr(sys.modules[__name__], "_pairs", _fast_pairs)
    X, rel, qid = _data(5, queries=150, per=20, d=6)          # 3,000 rows, ~20,000 pairs
    m = pd.Variant(ranking_svm, task="ranking", kernel="linear", C=1.0)
    m.fit(X, rel, qid=qid)
    op = box_qp_of(m.derivation_.dual).Q
    assert op.matrix is None and type(op.kernel) is Linear and op.X.shape[1] == 6
    assert op.X.shape[0] == len(_fast_pairs(rel, qid)) > 10_000
    assert m.backend_ == "linear" and m.certificate_.status == "optimal"
    assert m.score(X, rel, qid=qid) > 0.9
