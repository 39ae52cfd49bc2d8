"""Loader fuzz test (issue 14): seeded mutants of real URDF and MJCF files (tests/support/fuzz.py) either load or
raise an ArticError naming the file; never another exception. Bounded: about 1,000 loads (seconds), no stepping."""

from __future__ import annotations

import pytest

from artic import ArticError
from tests.support.fuzz import load_mutants, make_mutants, sources

SEEDS = (0, 1, 2)
PER_SEED = 300


@pytest.mark.parametrize("seed", SEEDS)
def test_mutants_load_or_raise_an_artic_error_naming_the_file(seed, tmp_path):
    """Every mutant (deleted elements/attributes, garbage, NaN, inf, 1e300 and '' numbers, cycles, self-parents,
    missing meshes, duplicate names, misplaced free joints, undefined classes) loads or raises an ArticError whose
    message names the mutated file. Both outcomes occur, so the test checks something either way."""
    mutants = make_mutants(seed, PER_SEED, tmp_path)
    raw = [m for m in mutants if m.error is not None and not isinstance(m.error, ArticError)]
    assert not raw, "\n".join(f"{m.path.name} {m.mutations}: {m.error!r}" for m in raw[:10])
    refused = [m for m in mutants if isinstance(m.error, ArticError)]
    loaded = [m for m in mutants if m.loaded is not None]
    assert len(refused) > PER_SEED // 4 and len(loaded) > PER_SEED // 20
    for m in refused:
        assert str(m.path) in str(m.error), f"{m.mutations}: {m.error}"


def test_every_source_contributes_and_mutants_are_reproducible(tmp_path):
    """Each source file is mutated (so a missing optional package cannot empty the test silently beyond the shipped
    files), and the same seed gives the same mutations and the same outcome."""
    names = {s[0] for s in sources()}
    assert {"arm6", "ant", "humanoid"} <= names
    a = make_mutants(7, 30, tmp_path / "a")
    b = make_mutants(7, 30, tmp_path / "b")
    assert {m.source for m in a} == names
    assert [m.mutations for m in a] == [m.mutations for m in b]
    assert [type(m.error) for m in a] == [type(m.error) for m in b]


def test_load_mutants_returns_the_loaded_ones(tmp_path):
    """`load_mutants` (for the stepping checks) returns exactly the mutants that loaded, each with its model."""
    mutants = load_mutants(3, 40, tmp_path)
    assert mutants and all(m.loaded is not None and m.error is None for m in mutants)
    assert len(mutants) == sum(m.loaded is not None for m in make_mutants(3, 40, tmp_path / "again"))
