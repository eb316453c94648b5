"""Issue 27, item 10: the memory guard reads the process limit (``RLIMIT_AS``) and the cgroup
limit (v2 ``memory.max - memory.current``, v1 ``memory.limit_in_bytes -
memory.usage_in_bytes``), not only ``MemAvailable``, and routes check every block they hold."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import primaldual.validation as V
from primaldual.exceptions import InsufficientMemoryError

GiB = 2**30


def _fake_cgroup(monkeypatch, tmp_path, version, limit, used):
    if version == "v2":
        (tmp_path / "memory.max").write_text(f"{limit}\n")
        (tmp_path / "memory.current").write_text(f"{used}\n")
    else:
        (tmp_path / "memory").mkdir()
        (tmp_path / "memory" / "memory.limit_in_bytes").write_text(f"{limit}\n")
        (tmp_path / "memory" / "memory.usage_in_bytes").write_text(f"{used}\n")
    monkeypatch.setattr(V, "_CGROUP_ROOT", str(tmp_path))
    monkeypatch.setattr(V, "_cgroup_paths", lambda: [(version, "")])


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_cgroup_limit_minus_usage_bounds_available_memory(monkeypatch, tmp_path, version):
    _fake_cgroup(monkeypatch, tmp_path, version, limit=GiB, used=GiB - 100 * 2**20)
    assert V.memory_limits()["cgroup"] == 100 * 2**20
    assert V.available_memory() == min(V.memory_limits().values()) <= 100 * 2**20
    V.check_memory(50 * 2**20, "a small block")
    with pytest.raises(InsufficientMemoryError, match="0.2 GiB but only 0.1 GiB"):
        V.check_memory(200 * 2**20, "the 5000 x 5000 kernel matrix")


def test_cgroup_without_a_limit_is_ignored(monkeypatch, tmp_path):
    (tmp_path / "memory.max").write_text("max\n")
    (tmp_path / "memory.current").write_text("12345\n")
    monkeypatch.setattr(V, "_CGROUP_ROOT", str(tmp_path))
    monkeypatch.setattr(V, "_cgroup_paths", lambda: [("v2", "")])
    assert "cgroup" not in V.memory_limits()


def test_process_limit_ulimit_v_is_read_and_refuses_a_kernel_block():
    # in a child process: RLIMIT_AS = current virtual size + 200 MiB; a 6000 x 6000 kernel
    # (275 MiB) must be refused by the guard (InsufficientMemoryError naming the sizes), not
    # fail inside numpy with a raw MemoryError
    code = textwrap.dedent("""
        import os, resource, numpy as np
        import primaldual.validation as V
        from primaldual.kernels import make_kernel
        from primaldual.exceptions import InsufficientMemoryError
        vm = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (vm + 200 * 2**20, resource.RLIM_INFINITY))
        lim = V.memory_limits()
        assert "process" in lim and lim["process"] <= 200 * 2**20, lim
        assert V.available_memory() <= 200 * 2**20
        X = np.zeros((6000, 2))
        try:
            make_kernel("rbf", gamma=1.0)(X)
        except InsufficientMemoryError as exc:
            print("REFUSED", exc)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "REFUSED" in r.stdout and "6000 x 6000" in r.stdout


def test_block_bytes_sums_every_block():
    assert V.block_bytes([(3, 4), (5,)]) == 8 * 17
    assert V.block_bytes([(10, 10)] * 3, itemsize=4) == 1200


def test_check_memory_keeps_its_two_argument_signature(monkeypatch):
    monkeypatch.setattr(V, "available_memory", lambda: 1000)
    V.check_memory(1000, "exactly the memory left")
    with pytest.raises(InsufficientMemoryError, match="backend='smo'"):
        V.check_memory(1001, "one byte more")
    with pytest.raises(InsufficientMemoryError, match="smaller batches"):
        V.check_memory(1001, "x", hint="predict in smaller batches")


def test_guard_counts_the_whole_set_of_blocks_of_gp_fit(monkeypatch):
    # N = 2000: one N x N block is 32 MB and fits in 100 MB; the GP's 10 blocks do not
    from primaldual.gaussian_process import GPClassifier

    monkeypatch.setattr(V, "available_memory", lambda: 100 * 2**20)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(InsufficientMemoryError, match=r"10 blocks of 2000 x 2000"):
        GPClassifier().fit(X, y)


def test_guard_counts_the_whole_set_of_blocks_of_the_cvxpy_route(monkeypatch):
    # N = 1100: the kernel alone (9.7 MB) fits in 40 MB, the CVXPY route's 10 blocks do not
    import primaldual as pd

    monkeypatch.setattr(V, "available_memory", lambda: 40 * 2**20)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1100, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(InsufficientMemoryError, match=r"CVXPY: 10 blocks .* 1100 x 1100 kernel"):
        pd.CSVC().fit(X, y, backend="cvxpy")
