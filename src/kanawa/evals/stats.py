"""Paired statistics for comparing two eval runs, in pure Python (no numpy at `import kanawa`).

Two questions are asked of the paired differences ``d_i = candidate_i - baseline_i`` (one per case,
each the mean over that case's repeats):

1. **Is the mean difference real?** A paired sign-flip (randomisation) test: under "no change" every
   difference is as likely to have the opposite sign, so the observed mean is compared with the means
   of all ``2**n`` sign patterns. The test makes no normality assumption, handles ties and zero
   differences (pass/fail assertions are mostly 0/1) and tests the same quantity the interval is about.
2. **How large is it?** A percentile bootstrap confidence interval of the mean difference.

Eval scores are usually on a small grid (assertions are 0/1, repeats make them k/r, judges give
tenths), so both are computed **exactly** when the differences are multiples of a small unit: the
sign-flip distribution and the bootstrap distribution of the mean are sums of independent integer
steps, counted exactly as coefficients of a polynomial product (one big integer). That is
deterministic (no resampling noise, no seed) and fast enough to simulate thousands of comparisons in
a test. Other scores fall back to seeded Monte Carlo with the "+1" p-value, which keeps the test's
level at or below alpha.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "PairedResult",
    "bootstrap_interval",
    "holm_adjust",
    "paired_analysis",
    "sign_flip_p_value",
]

#: The largest unit denominator tried when looking for a common grid of the differences.
_MAX_GRID = 1000
#: Size (bits) of the packed polynomial above which the exact computation gives way to Monte Carlo.
_MAX_EXACT_BITS = 8_000_000
_TOLERANCE = 1e-9


@dataclass(frozen=True, kw_only=True)
class PairedResult:
    """What the paired analysis found for one scorer: effect, interval, p-value and how it was computed."""

    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str  # "exact" or "monte-carlo"


def _grid(values: Sequence[float]) -> int | None:
    """The smallest unit 1/L (L <= _MAX_GRID) that every value is an integer multiple of, or None."""
    for scale in range(1, _MAX_GRID + 1):
        if all(abs(v * scale - round(v * scale)) < _TOLERANCE * max(1.0, scale) for v in values):
            return scale
    return None


def _coefficients(poly: int, count: int, width_bits: int) -> list[int]:
    """The ``count`` coefficients of a polynomial packed ``width_bits`` (a multiple of 8) bits apiece."""
    step = width_bits // 8
    raw = poly.to_bytes(count * step, "little")
    return [int.from_bytes(raw[i : i + step], "little") for i in range(0, count * step, step)]


def _packing_bits(largest: int) -> int:
    """Bits per coefficient, a whole number of bytes, for coefficients up to ``largest``."""
    return max(8, -(-(largest.bit_length() + 1) // 8) * 8)


def _sign_flip_exact(steps: Sequence[int]) -> tuple[list[int], int] | None:
    """Counts of sign patterns by ``e``, the total of the steps given a minus sign; None if too big.

    The product of ``(1 + x**|k_i|)`` counts them; it is computed as one big integer, each coefficient
    in its own bit field (Kronecker substitution), so the work is a handful of C-level shifts and adds.
    The flipped statistic for exponent ``e`` is ``sum(|k_i|) - 2e``.
    """
    total = sum(abs(k) for k in steps)
    bits = _packing_bits(1 << len(steps))
    if (total + 1) * bits > _MAX_EXACT_BITS:
        return None
    poly = 1
    for k in steps:
        poly += poly << (abs(k) * bits)
    return _coefficients(poly, total + 1, bits), total


def sign_flip_p_value(diffs: Sequence[float], *, resamples: int = 4000, seed: int = 0) -> tuple[float, str]:
    """Two-sided p-value of the paired sign-flip test of "mean difference is zero"; with the method used.

    Exact when the differences lie on a small grid, else Monte Carlo with ``resamples`` seeded sign
    patterns and the (count + 1) / (resamples + 1) estimate, which never understates the p-value's level.
    """
    nonzero = [d for d in diffs if d != 0.0]
    if not nonzero:
        return 1.0, "exact"
    scale = _grid(nonzero)
    if scale is not None:
        steps = [round(d * scale) for d in nonzero]
        exact = _sign_flip_exact(steps)
        if exact is not None:
            counts, total = exact
            observed = abs(sum(steps))
            tail = sum(c for e, c in enumerate(counts) if abs(total - 2 * e) >= observed)
            return min(1.0, tail / (1 << len(steps))), "exact"
    return _sign_flip_monte_carlo(nonzero, resamples=resamples, seed=seed), "monte-carlo"


def _sign_flip_monte_carlo(diffs: Sequence[float], *, resamples: int, seed: int) -> float:
    """Monte Carlo sign-flip p-value; sign patterns come from random bits looked up 8 cases at a time."""
    rng = random.Random(seed)
    n = len(diffs)
    observed = abs(math.fsum(diffs)) - 1e-12 * max(1.0, sum(abs(d) for d in diffs))
    # Sum over a random subset S, then the statistic is sum(d) - 2 * sum_{i in S} d_i.
    chunks: list[list[float]] = []
    for start in range(0, n, 8):
        part = diffs[start : start + 8]
        table = [0.0] * (1 << len(part))
        for mask in range(1, len(table)):
            low = mask & -mask
            table[mask] = table[mask ^ low] + part[low.bit_length() - 1]
        chunks.append(table)
    total = math.fsum(diffs)
    hits = 0
    for _ in range(resamples):
        bits = rng.getrandbits(n) if n else 0
        flipped = 0.0
        for table in chunks:
            flipped += table[bits & 0xFF]
            bits >>= 8
        if abs(total - 2.0 * flipped) >= observed:
            hits += 1
    return (hits + 1) / (resamples + 1)


def _bootstrap_exact(steps: Sequence[int], confidence: float) -> tuple[float, float] | None:
    """Percentile interval of the exact (infinite-resample) bootstrap of the mean of integer steps.

    Drawing n steps with replacement, the totals are counted by ``P(x)**n`` where ``P`` has the count
    of each distinct step as its coefficients; one big-integer power gives them all, exactly.
    Returns None when the packed polynomial would be too large (the caller then resamples).
    """
    n = len(steps)
    counts = Counter(steps)
    low_value = min(counts)
    width = max(counts) - low_value
    bits = _packing_bits(n**n)
    size = n * width + 1
    if size * bits > _MAX_EXACT_BITS:
        return None
    base = sum(c << ((k - low_value) * bits) for k, c in counts.items())
    totals = _coefficients(base**n, size, bits)
    alpha = Fraction(1.0 - confidence)
    everything = n**n
    lower_index = _quantile_index(totals, alpha / 2, everything)
    upper_index = _quantile_index(totals, 1 - alpha / 2, everything)
    offset = n * low_value
    return (offset + lower_index) / n, (offset + upper_index) / n


def _quantile_index(counts: Sequence[int], q: Fraction, everything: int) -> int:
    """The first index whose cumulative count reaches the fraction q of ``everything`` (exactly)."""
    cumulative = 0
    for index, c in enumerate(counts):
        cumulative += c
        if cumulative * q.denominator >= q.numerator * everything:
            return index
    return len(counts) - 1


def bootstrap_interval(
    diffs: Sequence[float], *, confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float, str]:
    """Percentile bootstrap interval of the mean of ``diffs`` and the method used (exact or Monte Carlo)."""
    if not diffs:
        return 0.0, 0.0, "exact"
    scale = _grid(diffs)
    if scale is not None:
        exact = _bootstrap_exact([round(d * scale) for d in diffs], confidence)
        if exact is not None:
            return exact[0] / scale, exact[1] / scale, "exact"
    rng = random.Random(seed)
    n = len(diffs)
    draws = rng.choices(diffs, k=n * resamples)  # one call: far cheaper than one per resample
    means = sorted(sum(draws[i : i + n]) / n for i in range(0, n * resamples, n))
    alpha = 1.0 - confidence
    low = means[max(0, math.ceil(alpha / 2 * resamples) - 1)]
    high = means[min(resamples - 1, math.ceil((1.0 - alpha / 2) * resamples) - 1)]
    return low, high, "monte-carlo"


def paired_analysis(
    diffs: Sequence[float],
    *,
    confidence: float = 0.95,
    permutations: int = 4000,
    resamples: int = 2000,
    seed: int = 0,
) -> PairedResult:
    """The mean paired difference with its bootstrap interval and sign-flip p-value."""
    p_value, test_method = sign_flip_p_value(diffs, resamples=permutations, seed=seed)
    low, high, ci_method = bootstrap_interval(diffs, confidence=confidence, resamples=resamples, seed=seed)
    mean = math.fsum(diffs) / len(diffs) if diffs else 0.0
    method = "exact" if test_method == ci_method == "exact" else "monte-carlo"
    return PairedResult(
        n=len(diffs), mean_diff=mean, ci_low=low, ci_high=high, p_value=p_value, method=method
    )


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values: a family of scorers keeps its false-alarm rate at alpha."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
