"""``dir(primaldual)`` (and so tab completion) lists every public name, the lazy ones included."""

from __future__ import annotations

import rlcompleter

import primaldual as pd


def test_dir_lists_every_public_name():
    names = dir(pd)
    assert set(pd.__all__) <= set(names)
    # the lazily imported classes, named independently of __all__ (the catalogue)
    for entry in (*pd.catalogue.METHODS, *pd.catalogue.ESTIMATORS):
        assert entry.name in names
    assert {"CSVC", "RVR", "RVC", "GPClassifier", "KernelPCA", "dualize"} <= set(names)
    for name in names:
        if not name.startswith("_"):
            getattr(pd, name)                     # every listed name resolves


def test_tab_completion_offers_the_estimators():
    completer = rlcompleter.Completer({"pd": pd})
    offered = set()
    state = 0
    while (c := completer.complete("pd.RV", state)) is not None:
        offered.add(c)
        state += 1
    assert {"pd.RVR", "pd.RVC"} <= {c.rstrip("(") for c in offered}
