"""The catalogue is the one list of methods: the package, the CLI and persistence read it."""

from __future__ import annotations

import importlib

import pytest

import primaldual
from primaldual import catalogue, cli
from primaldual.persistence.format import _classes


def test_every_entry_is_a_class_of_its_module():
    for entry in catalogue.METHODS + catalogue.ESTIMATORS:
        mod = importlib.import_module(f"primaldual.{entry.module}")
        cls = getattr(mod, entry.name)
        assert getattr(primaldual, entry.name) is cls
        assert catalogue.method_class(entry.name) is cls
        assert entry.name in primaldual.__all__
    for entry in catalogue.METHODS:  # primal-dual methods have both problems
        cls = catalogue.method_class(entry.name)
        assert callable(cls.primal) and callable(cls.dual)


def test_names_and_aliases_are_unique_and_resolve():
    names = [e.name for e in catalogue.METHODS + catalogue.ESTIMATORS]
    assert len(names) == len(set(names))
    aliases = [a for e in catalogue.METHODS for a in e.aliases]
    assert len(aliases) == len(set(aliases))
    assert not set(aliases) & {n.lower() for n in names}
    for alias, name in catalogue.ALIASES.items():
        assert catalogue.resolve(alias) == name
        assert catalogue.resolve(alias.upper().replace("-", "_")) == name
    for name in catalogue.NAMES:
        assert catalogue.resolve(name.lower()) == name
    with pytest.raises(ValueError, match="allowed: HardMarginSVC"):
        catalogue.resolve("nosuch")


def test_readers_share_the_one_list():
    assert cli.METHOD_CLASSES is catalogue.NAMES
    assert cli.METHOD_ALIASES is catalogue.ALIASES
    assert tuple(_classes()) == catalogue.NAMES
    assert list(primaldual._METHODS) == list(catalogue.NAMES)
