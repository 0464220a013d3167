"""The private regex sampler behind ``pattern`` in ``value_for_schema``: simple regexes get a matching
string, anything fancier gets ``None`` (the caller then falls back to a plain string)."""

from __future__ import annotations

import random
import re

import pytest

from kanawa.llm.testing.pattern_sampler import sample_pattern


@pytest.mark.parametrize(
    "pattern",
    [
        r"^\d{3}-\d{4}$",
        r"^[A-Z][a-z]+$",
        r"^(foo|bar)_[0-9a-f]{4}$",
        r"(?:ab)+c?",
        r"(?P<year>\d{4})",
        r"^[^@\s]+@example\.org$",
        r"\u3042\x41.",
        r"a{2,}b*",
    ],
)
def test_simple_patterns_get_a_matching_sample(pattern: str) -> None:
    for seed in range(3):
        sample = sample_pattern(pattern, random.Random(seed))
        assert sample is not None
        assert re.search(pattern, sample), (pattern, sample)


@pytest.mark.parametrize("pattern", [r"^(?=.*\d)\w+$", r"(a)\1", r"(?i)abc", r"*a", r"(ab", r"\p{L}"])
def test_patterns_beyond_the_sampler_give_none(pattern: str) -> None:
    assert sample_pattern(pattern, random.Random(0)) is None


def test_same_seed_same_sample() -> None:
    pattern = r"^[a-z]{3}\d$"
    assert sample_pattern(pattern, random.Random(4)) == sample_pattern(pattern, random.Random(4))
