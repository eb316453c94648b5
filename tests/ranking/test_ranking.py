"""Ranking scores against independent references: the pairwise fraction counted by a plain
double loop, scipy's Kendall tau and scikit-learn's NDCG, each per query then averaged."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import ndcg_score

from primaldual.ranking import QueryKFold, kendall_tau, ndcg, pairwise_accuracy, ranking_score


def _queries(seed: int = 0, n_q: int = 6):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_q), rng.integers(3, 9, n_q))
    rel = rng.integers(0, 4, qid.shape[0]).astype(float)
    scores = rel + rng.normal(0, 1.0, qid.shape[0])
    scores[:2] = scores[0]                       # one tie in the scores
    return rel, scores, qid


def _loop_pairwise(rel, scores, qid):
    out = []
    for q in np.unique(qid):
        idx = np.flatnonzero(qid == q)
        pairs = [(i, j) for i, j in itertools.permutations(idx, 2) if rel[i] > rel[j]]
        if pairs:
            out.append(np.mean([1.0 if scores[i] > scores[j] else 0.5 if scores[i] == scores[j]
                                else 0.0 for i, j in pairs]))
    return np.mean(out)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scores_equal_their_references_query_by_query(seed):
    rel, s, qid = _queries(seed)
    assert pairwise_accuracy(rel, s, qid) == pytest.approx(_loop_pairwise(rel, s, qid))
    qs = [q for q in np.unique(qid) if np.unique(rel[qid == q]).shape[0] > 1]
    taus = [kendalltau(s[qid == q], rel[qid == q]).statistic for q in qs]
    assert kendall_tau(rel, s, qid) == pytest.approx(np.mean(taus))
    for k in (None, 3):
        ref = np.mean([ndcg_score(rel[qid == q][None], s[qid == q][None], k=k) for q in qs])
        assert ndcg(rel, s, qid, k=k) == pytest.approx(ref)
    assert ranking_score(rel, s, qid, "kendall_tau") == kendall_tau(rel, s, qid)


def test_perfect_and_reversed_orders():
    rel, _, qid = _queries(3)
    assert pairwise_accuracy(rel, rel, qid) == 1.0 and kendall_tau(rel, rel, qid) == 1.0
    assert pairwise_accuracy(rel, -rel, qid) == 0.0 and kendall_tau(rel, -rel, qid) == -1.0
    # order across queries is irrelevant: shifting one query's scores changes nothing
    shifted = rel + 100.0 * (qid == 0)
    assert pairwise_accuracy(rel, shifted, qid) == 1.0


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="one entry per row"):
        pairwise_accuracy([1, 0], [0.5], None)
    with pytest.raises(ValueError, match="undefined"):
        pairwise_accuracy([1, 1, 1], [0.1, 0.2, 0.3], [0, 0, 0])
    with pytest.raises(ValueError, match="metric"):
        ranking_score([1, 0], [1, 0], None, "auc")


def test_query_kfold_keeps_every_query_whole():
    rel, _, qid = _queries(4, n_q=10)
    X = np.zeros((qid.shape[0], 1))
    cv = QueryKFold(3)
    seen = []
    for tr, te in cv.split(X, rel, groups=qid):
        assert not set(qid[tr]) & set(qid[te])
        seen.extend(te)
    assert sorted(seen) == list(range(qid.shape[0]))
    with pytest.raises(ValueError, match="groups"):
        next(cv.split(X))
