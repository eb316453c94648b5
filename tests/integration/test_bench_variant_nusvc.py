"""The placeholder nu-SVC benchmark of docs/benchmarks.md runs on a tiny size, and its row says
the spec and the catalogue's NuSVC fitted the same model (both optimal, same predictions)."""

from __future__ import annotations

from tests import background

_COMMAND = background.script("benchmarks/bench_variant_nusvc.py",
    "--n", "150", "--repeats", "1", timeout=300)


@background.job(lambda: _COMMAND)
def test_bench_variant_nusvc_tiny():
    out = background.stdout(**_COMMAND)
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in out.splitlines()
            if ln.startswith("| 150 |")]
    assert len(rows) == 1
    row = rows[0]
    assert row[5] == "optimal / optimal"
    assert float(row[6]) == 1.0
    assert float(row[3]) > 0
