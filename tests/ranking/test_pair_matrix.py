"""``pair_matrix``: one row ``e_a - e_b`` per ordered pair of a query (``rel_a > rel_b``), the
difference matrix a ranking SVM's constraints are written with."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual.ranking import pair_matrix


def test_rows_are_the_ordered_pairs_of_each_query():
    rel = np.array([2.0, 0.0, 1.0, 1.0, 3.0, 0.0])
    qid = np.array([0, 0, 0, 1, 1, 1])
    D = pair_matrix(rel, qid)
    assert sp.isspmatrix_csr(D) and D.shape[1] == 6
    expect = {(a, b) for a in range(6) for b in range(6)
              if qid[a] == qid[b] and rel[a] > rel[b]}
    got = set()
    for row in D.toarray():
        assert sorted(row[row != 0].tolist()) == [-1.0, 1.0]
        got.add((int(np.flatnonzero(row == 1)[0]), int(np.flatnonzero(row == -1)[0])))
    assert got == expect and D.shape[0] == len(expect) == 6
    f = np.arange(6.0) ** 2
    assert set((D @ f).tolist()) == {f[a] - f[b] for a, b in expect}


def test_no_pair_and_bad_lengths_are_clear_errors():
    with pytest.raises(ValueError, match="no ordered pair"):
        pair_matrix([1.0, 1.0, 2.0], [0, 0, 1])
    with pytest.raises(ValueError, match="one entry per row"):
        pair_matrix([1.0, 0.0], [0, 0, 1])
    with pytest.raises(ValueError, match="finite"):
        pair_matrix([1.0, np.nan], [0, 0])
