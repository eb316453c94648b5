"""One hinge-loss SVM over Dask (issue 31): ``CSVC(rank=M)`` / ``EpsilonSVR(rank=M)`` fitted on
``dask.array`` input on a LocalCluster equal the in-memory low-rank fits with the same seed
(the same landmarks, the same eta-problem solved to a certified gap), and predict on a
``dask.array`` returns a ``dask.array``."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")

import primaldual as pd  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _data(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    t = np.sin(2 * X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=n)
    return X, t


def test_csvc_on_dask_equals_numpy_fit(client):
    X, t = _data()
    y = np.where(t > 0, "yes", "no")
    Xd, yd = da.from_array(X, chunks=(150, 4)), da.from_array(y, chunks=150)
    ref = pd.CSVC(C=1.0, gamma=0.3, rank=40).fit(X, y)
    with distributed.get_task_stream(client) as ts:
        m = pd.CSVC(C=1.0, gamma=0.3, rank=40).fit(Xd, yd)
    assert len(ts.data) > 0  # the chunked products ran as tasks on the cluster
    np.testing.assert_array_equal(m.lowrank_factor_.basis_index,
                                  ref.lowrank_factor_.basis_index)
    cert = m.certificate_
    assert cert.status == "optimal" and cert.relative_gap <= 1e-6
    # the same certified eta-problem: the same objective and decision values
    assert cert.primal_objective == pytest.approx(ref.certificate_.primal_objective, rel=1e-6)
    f_ref = ref.decision_function(X)
    f = m.decision_function(Xd)
    assert isinstance(f, da.Array)
    np.testing.assert_allclose(f.compute(), f_ref, rtol=0, atol=1e-6 * np.max(np.abs(f_ref)))
    lab = m.predict(Xd)
    assert isinstance(lab, da.Array)
    np.testing.assert_array_equal(lab.compute(), ref.predict(X))
    np.testing.assert_allclose(m.decision_function(X), f_ref, atol=1e-6 * np.max(np.abs(f_ref)))
    # a model fitted in memory predicts chunk by chunk on a dask.array
    np.testing.assert_array_equal(ref.predict(Xd).compute(), ref.predict(X))


def test_epsilon_svr_on_dask_equals_numpy_fit(client):
    X, t = _data(400, seed=1)
    Xd, td = da.from_array(X, chunks=(130, 4)), da.from_array(t, chunks=130)
    ref = pd.EpsilonSVR(C=2.0, epsilon=0.1, gamma=0.3, rank=30).fit(X, t)
    m = pd.EpsilonSVR(C=2.0, epsilon=0.1, gamma=0.3, rank=30).fit(Xd, td)
    assert m.certificate_.status == "optimal" and m.certificate_.relative_gap <= 1e-6
    f_ref = ref.predict(X)
    f = m.predict(Xd)
    assert isinstance(f, da.Array)
    np.testing.assert_allclose(f.compute(), f_ref, atol=1e-6 * np.max(np.abs(f_ref)))


def test_dask_fit_refuses_what_it_does_not_do(client):
    X, t = _data(200)
    Xd, yd = da.from_array(X, chunks=100), da.from_array(np.sign(t), chunks=100)
    est = pd.CSVC(C=1.0, gamma=0.3)
    with pytest.raises(ValueError, match="integer rank"):
        est.fit(Xd, yd)
    assert not hasattr(est, "certificate_")  # a failed fit leaves the estimator as it was
    with pytest.raises(ValueError, match="sample_weight"):
        pd.CSVC(rank=20).fit(Xd, yd, sample_weight=np.ones(200))
    with pytest.raises(ValueError, match="binary"):
        pd.CSVC(rank=20).fit(Xd, da.from_array(np.arange(200) % 3, chunks=100))


def test_scaling_doc_code_runs():
    """Every ```python block of docs/scaling.md runs (the Dask one on its own LocalCluster)."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "scaling.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) >= 2
    for code in blocks:
        exec(compile(code, "docs/scaling.md", "exec"), {})


def test_v_recomputed_per_pass_gives_the_persisted_fit(client):
    """``persist=False`` (V too large for the cluster: only X is kept, and each pass recomputes
    the kernel rows it needs) solves the same eta-problem as ``persist=True``, pass for pass."""
    from primaldual.distributed import _fits_in_memory, lowrank_svm_dask

    X, t = _data(600, seed=2)
    y = np.where(t > 0, 1.0, -1.0)
    Xd = da.from_array(X, chunks=(150, 4))
    fits = [lowrank_svm_dask(Xd, y, C=1.0, gamma=0.3, rank=40, persist=p) for p in (True, False)]
    assert [f.persisted for f in fits] == [True, False]
    for f in fits:
        assert f.result.status == "optimal" and f.result.relative_gap <= 1e-6
    f0, f1 = (f.factor.transform(X) @ f.eta + f.b for f in fits)
    np.testing.assert_allclose(f1, f0, rtol=0, atol=1e-6 * np.max(np.abs(f0)))
    assert fits[1].passes == fits[0].passes
    # 'auto' decides from the workers' memory limits
    assert _fits_in_memory(1e3) and not _fits_in_memory(1e18)
    with pytest.raises(ValueError, match="persist"):
        lowrank_svm_dask(Xd, y, rank=10, persist="sometimes")
