"""Scaling out on Dask: joblib's dask backend runs grid searches and multiclass sub-problems on a
LocalCluster; the chunked fixed-size LS-SVM equals the in-memory one to 1e-10."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")

import joblib  # noqa: E402
from sklearn.datasets import load_iris, make_classification  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402

import primaldual as pd  # noqa: E402
from primaldual.distributed import fixed_size_lssvm  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_grid_search_and_multiclass_on_cluster(client):
    X, y = load_iris(return_X_y=True)
    grid = {"C": [0.5, 5.0], "gamma": [0.1, 1.0]}
    ref = GridSearchCV(pd.CSVC(), grid, cv=3).fit(X, y)
    m_ref = pd.LSSVC(C=10.0, gamma=0.5).fit(X, y)
    with distributed.get_task_stream(client) as ts, joblib.parallel_config(backend="dask"):
        gs = GridSearchCV(pd.CSVC(), grid, cv=3, n_jobs=-1).fit(X, y)
        m = pd.LSSVC(C=10.0, gamma=0.5)
        m.n_jobs = -1
        m.fit(X, y)
    assert len(ts.data) > 0  # the work ran as dask tasks
    assert gs.best_params_ == ref.best_params_
    np.testing.assert_allclose(gs.cv_results_["mean_test_score"],
                               ref.cv_results_["mean_test_score"])
    np.testing.assert_allclose(m.decision_function(X), m_ref.decision_function(X), atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("classifier", [True, False])
def test_chunked_fixed_size_lssvm_equals_in_memory(client, seed, classifier):
    X, y = make_classification(n_samples=1200, n_features=5, random_state=seed)
    if not classifier:
        y = X @ np.arange(1.0, 6.0) + np.sin(X[:, 0])
    Xd = da.from_array(X, chunks=(250, 5))
    kw = dict(C=3.0, gamma=0.2, rank=40, classifier=classifier, random_state=seed)
    mem = fixed_size_lssvm(X, y, **kw)
    dsk = fixed_size_lssvm(Xd, y, **kw)
    np.testing.assert_array_equal(mem.landmarks, dsk.landmarks)
    assert abs(mem.b - dsk.b) <= 1e-10 * max(1.0, abs(mem.b))
    np.testing.assert_allclose(dsk.alpha, mem.alpha, rtol=0, atol=1e-10 * np.abs(mem.alpha).max())
    np.testing.assert_allclose(dsk.w, mem.w, rtol=0, atol=1e-10 * np.abs(mem.w).max())
    f_mem = mem.decision_function(X)
    f_dsk = dsk.decision_function(Xd).compute()
    np.testing.assert_allclose(f_dsk, f_mem, rtol=0, atol=1e-10 * np.abs(f_mem).max())
    if classifier:
        assert np.mean(mem.predict(X) == y) > 0.8


def test_fixed_size_matches_dense_kkt_when_rank_is_full():
    # M = N landmarks: V V^T = K, so the low-rank solve is the dense LS-SVM
    X, y = make_classification(n_samples=60, n_features=3, n_redundant=0, random_state=5)
    fs = fixed_size_lssvm(X, y, C=2.0, gamma=0.3, rank=60)
    m = pd.LSSVC(C=2.0, gamma=0.3, backend="kkt").fit(X, y)
    np.testing.assert_allclose(fs.decision_function(X), m.decision_function(X), atol=1e-6)
    with pytest.raises(ValueError, match="rank"):
        fixed_size_lssvm(X, y, rank=0)
