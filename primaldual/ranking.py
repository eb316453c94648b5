"""Ranking scores and query-keeping cross-validation for ranking models.

A ranking model scores rows; what matters is the order it induces inside each query
(``qid``), never across queries. The scores here compare that order with graded relevance
``rel`` (higher is better) query by query and average over the queries that have at least one
ordered pair (queries whose rows all share one grade carry no information and are skipped):

* :func:`pairwise_accuracy`: the fraction of pairs ``(i, j)`` of one query with
  ``rel_i > rel_j`` that the scores order the same way (``s_i > s_j``; a tie counts one half).
  It is ``1 - `` the ranking SVM's mean pairwise 0/1 loss (Joachims 2002).
* :func:`kendall_tau`: Kendall's tau-b between scores and grades per query (ties in both
  handled as :func:`scipy.stats.kendalltau`), averaged.
* :func:`ndcg`: normalised discounted cumulative gain at ``k`` per query with the gain
  ``rel`` and discount ``1 / log2(1 + rank)``, as :func:`sklearn.metrics.ndcg_score`.

:class:`QueryKFold` splits by query, so no query is split between training and test rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy.stats import kendalltau
from sklearn.model_selection import GroupKFold

__all__ = ["QueryKFold", "kendall_tau", "ndcg", "pair_matrix", "pairwise_accuracy",
           "ranking_score"]


def _check(rel: Any, scores: Any, qid: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rel = np.asarray(rel, dtype=float).ravel()
    scores = np.asarray(scores, dtype=float).ravel()
    n = rel.shape[0]
    qid = np.zeros(n, dtype=np.int64) if qid is None else np.asarray(qid).ravel()
    if scores.shape[0] != n or qid.shape[0] != n:
        raise ValueError(f"rel, scores and qid must have one entry per row: got {n}, "
                         f"{scores.shape[0]} and {qid.shape[0]}")
    if not (np.all(np.isfinite(rel)) and np.all(np.isfinite(scores))):
        raise ValueError("rel and scores must be finite")
    return rel, scores, qid


def pair_matrix(rel: Any, qid: Any = None) -> Any:
    """The ordered pairs of a ranking SVM (Joachims 2002) as a sparse ``P x N`` difference
    matrix ``D``: one row ``e_a - e_b`` per pair ``(a, b)`` of rows of one query with
    ``rel_a > rel_b`` (queries in sorted order, pairs row-major within each), so that
    ``(D f)_p = f_a - f_b``. Written into a spec as ``Data("D", pair_matrix(y, qid))``; CSR,
    ``O(P)`` memory.

    Raises ``ValueError`` when ``rel`` is not finite, ``qid`` has another length, or no query
    holds two rows of different relevance (no pair at all)."""
    import scipy.sparse as sp

    rel, _, qid = _check(rel, np.zeros(np.shape(np.ravel(rel))), qid)
    pairs = []
    for q in np.unique(qid):
        r = np.flatnonzero(qid == q)
        ii, jj = np.meshgrid(r, r, indexing="ij")
        ok = rel[ii] > rel[jj]
        pairs.append(np.c_[ii[ok], jj[ok]])
    ab = np.vstack(pairs) if pairs else np.zeros((0, 2), dtype=np.int64)
    if not ab.shape[0]:
        raise ValueError("pair_matrix: no query holds two rows of different relevance, so "
                         "there is no ordered pair")
    p = np.arange(ab.shape[0])
    return sp.csr_matrix((np.r_[np.ones(p.size), -np.ones(p.size)], (np.r_[p, p], ab.T.ravel())),
                         shape=(p.size, rel.size))


def _per_query(rel: Any, scores: Any, qid: Any,
               fn: Callable[[np.ndarray, np.ndarray], float | None]) -> float:
    rel, scores, qid = _check(rel, scores, qid)
    vals = []
    for q in np.unique(qid):
        m = qid == q
        r, s = rel[m], scores[m]
        if r.shape[0] < 2 or np.all(r == r[0]):
            continue
        v = fn(r, s)
        if v is not None:
            vals.append(v)
    if not vals:
        raise ValueError("no query has two rows of different relevance: the ranking score "
                         "is undefined")
    return float(np.mean(vals))


def _pairwise(r: np.ndarray, s: np.ndarray) -> float:
    hi = r[:, None] > r[None, :]
    ds = s[:, None] - s[None, :]
    return float(((ds > 0) + 0.5 * (ds == 0))[hi].mean())


def pairwise_accuracy(rel: Any, scores: Any, qid: Any = None) -> float:
    """Mean over queries of the fraction of ordered pairs (``rel_i > rel_j``) the scores order
    correctly (``s_i > s_j``; ties count one half). ``qid=None``: one query."""
    return _per_query(rel, scores, qid, _pairwise)


def _tau(r: np.ndarray, s: np.ndarray) -> float | None:
    if np.all(s == s[0]):
        return 0.0                       # a constant score orders nothing
    t = kendalltau(s, r).statistic
    return None if not np.isfinite(t) else float(t)


def kendall_tau(rel: Any, scores: Any, qid: Any = None) -> float:
    """Mean over queries of Kendall's tau-b between ``scores`` and ``rel``."""
    return _per_query(rel, scores, qid, _tau)


def ndcg(rel: Any, scores: Any, qid: Any = None, k: int | None = None) -> float:
    """Mean over queries of NDCG@k (gain ``rel``, discount ``1/log2(1 + rank)``; ties in the
    scores averaged over their orderings, as scikit-learn's ``ndcg_score``)."""
    from sklearn.metrics import ndcg_score
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ValueError(f"k must be a positive int or None, got {k!r}")
    if np.any(np.asarray(rel, dtype=float) < 0):
        raise ValueError("ndcg: rel must be non-negative grades")
    return _per_query(rel, scores, qid,
                      lambda r, s: float(ndcg_score(r[None, :], s[None, :], k=k)))


_SCORES = {"pairwise_accuracy": pairwise_accuracy, "kendall_tau": kendall_tau, "ndcg": ndcg}


def ranking_score(rel: Any, scores: Any, qid: Any = None, metric: str = "pairwise_accuracy"
                  ) -> float:
    """One of :func:`pairwise_accuracy` (default), :func:`kendall_tau`, :func:`ndcg` by name."""
    if metric not in _SCORES:
        raise ValueError(f"metric must be one of {sorted(_SCORES)}, got {metric!r}")
    return _SCORES[metric](rel, scores, qid)


class QueryKFold:
    """K-fold cross-validation that keeps every query whole (scikit-learn's ``GroupKFold``
    with the query ids as groups); usable as ``cv=`` with ``groups=qid``, or through
    :meth:`split` with ``qid`` given here."""

    def __init__(self, n_splits: int = 5) -> None:
        if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) \
                or n_splits < 2:
            raise ValueError(f"n_splits must be an int >= 2, got {n_splits!r}")
        self.n_splits = int(n_splits)

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        return self.n_splits

    def split(self, X: Any, y: Any = None, groups: Any = None
              ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        if groups is None:
            raise ValueError("QueryKFold.split needs groups=qid (the query of each row)")
        groups = np.asarray(groups).ravel()
        if np.unique(groups).shape[0] < self.n_splits:
            raise ValueError(f"groups: {np.unique(groups).shape[0]} queries cannot fill "
                             f"{self.n_splits} folds")
        yield from GroupKFold(n_splits=self.n_splits).split(X, y, groups)
