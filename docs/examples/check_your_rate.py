"""Check your own convergence rate: the error of a Monte Carlo mean decays like n^-1/2.

Run it: python docs/examples/check_your_rate.py (or, for the same check on the command line,
python -m verify.rate check_your_rate:mc_error --sizes 1000,2000,4000,8000,16000,32000,64000 --claimed -0.5,
from this folder). It takes some seconds: pinning an order -1/2 within 0.1, allowing for the correction
terms a Monte Carlo error may still carry, takes a few thousand repeats per size, and repeats="auto" (the
default) measures a pilot of 64, then what its noise says, within a budget of 60 s.
"""

import numpy as np

from verify.rates import check_rate

SIZES = [1000 * 2**k for k in range(7)]  # a ladder of ratio 2 over a 64-fold range


def mc_error(n, rng):
    """|mean of n uniform draws - 1/2|: random, so it takes the stream rng (one per size and repeat)."""
    return abs(rng.random(n).mean() - 0.5)


def trapezoid_error(n):
    """The trapezoid rule for the integral of e^x over [0, 1]: deterministic, error ~ n^-2."""
    x = np.linspace(0.0, 1.0, n + 1)
    y = np.exp(x)
    return abs((y.sum() - 0.5 * (y[0] + y[-1])) / n - (np.e - 1.0))


if __name__ == "__main__":
    res = check_rate(mc_error, SIZES, claimed=-0.5)
    print(res.summary())
    print(res.final_line())          # PASS rate: ...: the asymptotic order of the error equals p = -0.5 within 0.1 ...
    assert res.passed, res.message
    print(f"spent: {res.spent['seconds']:.3g} s, {res.spent['repeats']} repeats per size, {res.spent['looks']} looks")
    # with too few repeats the claim is not decided, and the result says how many would decide it
    few = check_rate(mc_error, SIZES, claimed=-0.5, repeats=64)
    assert few.status == "inconclusive" and few.needed_repeats > 64, few.message
    # a deterministic error, and a claim it must fail: second order is not first order
    assert check_rate(trapezoid_error, [8, 16, 32, 64], claimed=-2).passed
    assert check_rate(trapezoid_error, [8, 16, 32, 64], claimed=-1).status == "fail"
    # error = O(n^-1) holds for it (kind="bound": the order is -1 or steeper)
    assert check_rate(trapezoid_error, [8, 16, 32, 64], claimed=-1, kind="bound").passed
