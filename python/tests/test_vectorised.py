"""Vectorised functions agree with their scalar calls element by element (bit for bit), broadcast
like numpy, and agree with exact rational arithmetic."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest

import evalsim


def unbiased_pass_at_k(n, c, k):
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def test_pass_at_k_and_pass_hat_k_vectorised_equal_scalar_calls():
    rng = np.random.default_rng(1)
    n = rng.integers(1, 60, size=2000)
    c = (rng.random(2000) * (n + 1)).astype(np.int64)
    k = 1 + (rng.random(2000) * n).astype(np.int64)
    for f in (evalsim.pass_at_k, evalsim.pass_hat_k):
        v = f(n, c, k)
        assert v.shape == (2000,) and v.dtype == np.float64
        scalar = [f(int(a), int(b), int(d)) for a, b, d in zip(n, c, k)]
        assert all(isinstance(s, float) for s in scalar)
        assert np.array_equal(v, np.array(scalar))


def test_pass_at_k_equals_the_exact_ratio_of_binomials():
    cases = [(n, c, k) for n in (1, 2, 7, 20, 50) for c in range(0, n + 1, max(1, n // 5)) for k in range(1, n + 1, max(1, n // 4))]
    n, c, k = (np.array(x) for x in zip(*cases))
    got = evalsim.pass_at_k(n, c, k)
    hat = evalsim.pass_hat_k(n, c, k)
    for g, h, (a, b, d) in zip(got, hat, cases):
        exact = unbiased_pass_at_k(a, b, d)
        assert abs(Fraction(float(g)) - exact) <= exact * Fraction(1, 10**12), (a, b, d)
        exact_hat = Fraction(comb(b, d), comb(a, d))
        assert abs(Fraction(float(h)) - exact_hat) <= exact_hat * Fraction(1, 10**12), (a, b, d)


def test_broadcasting_follows_numpy():
    n = np.array([[10], [20]])
    k = np.array([1, 2, 5])
    got = evalsim.pass_at_k(n, 3, k)
    assert got.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert got[i, j] == evalsim.pass_at_k(int(n[i, 0]), 3, int(k[j]))
    assert evalsim.pass_at_k([], [], []).shape == (0,)


def test_exact_functions_of_rates_vectorised_equal_scalar_calls():
    p = np.linspace(0, 1, 101)
    for k in (1, 3, 16):
        at = evalsim.exact_pass_at_k(p, k)
        hat = evalsim.exact_pass_hat_k(p, k)
        assert np.array_equal(at, [evalsim.exact_pass_at_k(float(x), k) for x in p])
        assert np.array_equal(hat, [evalsim.exact_pass_hat_k(float(x), k) for x in p])
        for x, a in zip(p[1::10], at[1::10]):
            exact = 1 - (1 - Fraction(float(x))) ** k
            assert abs(Fraction(float(a)) - exact) <= exact * Fraction(1, 10**12)


def test_maj_at_k_of_one_share_equals_the_element_by_element_path():
    p = np.linspace(0, 1, 41)
    for rule in ("random", "strict", "absolute"):
        for k in (1, 2, 5, 8):
            together = evalsim.exact_maj_at_k(p, k, 0.4, rule)
            # A share array that is not one value takes the per-element path.
            shares = np.full(p.shape, 0.4)
            apart = evalsim.exact_maj_at_k(p, k, shares, rule)
            scalar = [evalsim.exact_maj_at_k(float(x), k, 0.4, rule) for x in p]
            assert np.array_equal(together, apart) and np.array_equal(apart, scalar), (rule, k)


def test_maj_at_1_is_the_rate_and_absolute_majority_of_three_is_exact():
    p = np.array([0.0, 0.25, 0.5, 0.9])
    # maj@1 is summed from the binomial pmf of one sample: equal to p up to its rounding.
    assert np.all(np.abs(evalsim.exact_maj_at_k(p, 1) - p) <= 4e-16 * np.maximum(p, 1e-300))
    # Absolute majority of 3: at least 2 right, whatever the wrong answers are.
    got = evalsim.exact_maj_at_k(p, 3, 0.7, "absolute")
    for x, g in zip(p, got):
        q = Fraction(float(x))
        exact = 3 * q**2 * (1 - q) + q**3
        assert abs(Fraction(float(g)) - exact) <= Fraction(1, 10**15)


def test_seed_sd_and_question_se_are_their_formulas():
    rates = [0.1, 0.5, 0.95, 0.3]
    n = 8
    exact_var = sum(Fraction(r) * (1 - Fraction(r)) for r in rates) / n
    sd = evalsim.seed_sd(np.array(rates), n)
    assert abs(Fraction(sd) ** 2 * len(rates) ** 2 - exact_var) <= exact_var * Fraction(1, 10**12)
    mean = sum(Fraction(r) for r in rates) / len(rates)
    var = sum((Fraction(r) - mean) ** 2 for r in rates) / (len(rates) - 1)
    se = evalsim.question_se(rates)
    assert abs(Fraction(se) ** 2 * len(rates) - var) <= var * Fraction(1, 10**12)
    assert evalsim.question_se([0.3]) == 0.0


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint16, np.float64])
def test_any_integer_dtype_is_accepted(dtype):
    n = np.array([10, 20], dtype=dtype)
    assert np.array_equal(evalsim.pass_at_k(n, 3, 2), evalsim.pass_at_k([10, 20], 3, 2))
