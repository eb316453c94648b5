"""The one-class Variant benchmark of docs/benchmarks.md runs on a tiny size, and its row says
that neither a refit on the same rows nor a fit on new rows ran a reduction of the
derivation (the reduction-call column is ``0 / 0``)."""

from __future__ import annotations

from tests import background

_COMMAND = background.script("benchmarks/bench_variant_engine.py",
    "--n", "150", "--refits", "1", timeout=300)


@background.job(lambda: _COMMAND)
def test_bench_variant_engine_tiny():
    out = background.stdout(**_COMMAND)
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in out.splitlines()
            if ln.startswith("| 150 |")]
    assert len(rows) == 1
    row = rows[0]
    assert row[-1] == "0 / 0"
    assert all(float(v) > 0 for v in row[1:8])


_MEDIANS = background.script("benchmarks/bench_variant_engine.py", "--n", "150", "--cpu-medians",
                             "2", timeout=300)


@background.job(lambda: _MEDIANS)
def test_bench_variant_engine_cpu_medians_tiny():
    out = background.stdout(**_MEDIANS)
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in out.splitlines()
            if ln.startswith("| 150 |")]
    assert len(rows) == 1 and len(rows[0]) == 7
    assert all(float(v) > 0 for v in rows[0][2:])
