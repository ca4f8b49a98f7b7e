"""verify.rates: the rate rule on known cases, and verify.testing.assert_rate.

Every expected order is a closed form: |N(0,1)| n^-1/2 is the exact law of the error of a mean of n
normals; the trapezoid rule is spectral on a periodic analytic integrand (error 4 pi I_n(1) for
exp(cos x)) and second order on e^x over [0, 1] (error (e - 1) h^2 / 12 + O(h^4)); 5 n^-1/2 - 4 n^-1
has local orders (-2.5 + 4 n^-1/2) / (5 - 4 n^-1/2), still moving below n ~ 1000.
"""

import math

import numpy as np
import pytest
from scipy.special import i0

from spectral.validation import InputError
from verify.rates import STATUSES, RateQuantities, check_rate, decide_rate, measure_rate, takes_rng
from verify.testing import assert_rate


def gauss_mean_error(n, rng):
    """|mean of n normals|: exactly |N(0,1)| n^-1/2 (order -1/2, random)."""
    return abs(rng.standard_normal()) / math.sqrt(n)


def mc_uniform_error(n, rng):
    """|mean of n uniforms - 1/2|: order -1/2 (a Monte Carlo mean)."""
    return abs(rng.random(n).mean() - 0.5)


def _trapezoid(f, a, b, n):
    x = np.linspace(a, b, n + 1)
    y = f(x)
    return (b - a) / n * (y.sum() - 0.5 * (y[0] + y[-1]))


def periodic_error(n):
    """Trapezoid rule on exp(cos x) over one period: error 4 pi I_n(1) (faster than any power)."""
    return abs(_trapezoid(lambda x: np.exp(np.cos(x)), 0.0, 2 * math.pi, n) - 2 * math.pi * i0(1.0))


def nonperiodic_error(n):
    """Trapezoid rule on e^x over [0, 1]: error (e - 1) / (12 n^2) + O(n^-4)."""
    return abs(_trapezoid(np.exp, 0.0, 1.0, n) - (math.e - 1))


def mixture(n):
    return 5 * n**-0.5 - 4 / n


def test_monte_carlo_mean_passes_with_its_interval():
    res = check_rate(mc_uniform_error, [500, 2000, 8000, 32000], claimed=-0.5, repeats=64, tolerance=0.15)
    assert res.status == "pass" and res.passed and res.asymptotic
    lo, hi = res.interval
    assert -0.65 <= lo < res.order < hi <= -0.35
    assert len(res.local_orders) == 3 and len(res.quantities.errors[0]) == 64
    # the same errors do not make another order: -1 lies wholly outside the interval
    wrong = decide_rate(res.quantities, claimed=-1.0, tolerance=0.15)
    assert wrong.status == "fail" and not wrong.passed and "does not hold" in wrong.message


def test_a_noisy_run_is_inconclusive_not_passed_by_luck():
    # 8 repeats: the interval (about +-0.4) is wider than the band +-0.05: neither pass nor fail
    res = check_rate(gauss_mean_error, [100, 200, 400, 800], claimed=-0.5, repeats=8)
    assert res.status == "inconclusive" and not res.passed
    assert res.interval[1] - res.interval[0] > 0.1 and "more repeats" in res.message


def test_interval_covers_the_true_order_at_its_confidence():
    # measured coverage of the 95 % interval: 0.953 over 600 seeds at 16 repeats; 60 seeds here
    covered = sum(lo <= -0.5 <= hi for lo, hi in
                  (check_rate(gauss_mean_error, [100, 200, 400, 800], claimed=-0.5, repeats=16, seed=s,
                              tolerance=0.5, n_boot=500).interval for s in range(60)))
    assert covered >= 52  # binomial(60, 0.95): P(covered < 52) = 0.3 %


def test_a_biased_estimator_fails():
    # the mean of n uniforms against 0.49: the error tends to 0.01, order 0
    res = check_rate(lambda n, rng: abs(rng.random(n).mean() - 0.49), [1000, 4000, 16000, 64000], claimed=-0.5,
                     repeats=16, tolerance=0.15)
    assert res.status == "fail" and not res.passed


def test_spectral_trapezoid_satisfies_a_bound_but_not_an_equal_order():
    sizes = [4, 6, 8, 10]
    bound = check_rate(periodic_error, sizes, claimed=-2, kind="bound")
    equal = check_rate(periodic_error, sizes, claimed=-2, kind="equal")
    assert bound.quantities.deterministic and not bound.asymptotic  # the local orders keep steepening
    assert all(b < a for a, b in zip(bound.local_orders, bound.local_orders[1:])) and bound.local_orders[-1] < -20
    assert bound.status == "pass" and bound.passed and "steepen" in bound.message
    assert equal.status == "fail" and not equal.passed and "faster than claimed" in equal.message


def test_non_periodic_trapezoid_is_second_order():
    sizes = [8, 16, 32, 64]
    res = check_rate(nonperiodic_error, sizes, claimed=-2)
    assert res.status == "pass" and res.asymptotic
    assert res.order == pytest.approx(-2, abs=1e-3) and res.interval[1] - res.interval[0] < 1e-3
    assert check_rate(nonperiodic_error, sizes, claimed=-1, kind="bound").passed  # O(n^-1) holds too
    assert check_rate(nonperiodic_error, sizes, claimed=-1).status == "fail"
    assert check_rate(nonperiodic_error, sizes, claimed=-3, kind="bound").status == "fail"


def test_a_pre_asymptotic_mixture_says_so():
    res = check_rate(mixture, [4, 8, 16, 32], claimed=-0.5)
    assert res.status == "pre-asymptotic" and not res.passed and not res.asymptotic
    exact = [(-2.5 + 4 * n**-0.5) / (5 - 4 * n**-0.5) for n in (4, 8, 16, 32)]  # at the sizes (not between)
    assert all(a > v > b for a, v, b in zip(exact, res.local_orders, exact[1:]))
    assert res.message.startswith(f"{res.quantities.label}: local orders still moving: "
                                  + ", ".join(f"{v:.3g}" for v in res.local_orders))
    # the same function at n >= 1e4 has settled: the claim passes
    assert check_rate(mixture, [10**4, 4 * 10**4, 16 * 10**4, 64 * 10**4], claimed=-0.5).status == "pass"
    # rising local orders past the band fail at once: 1/n + 1e-3 levels off (slower than claimed)
    rising = check_rate(lambda n: 1 / n + 1e-3, [10, 100, 1000, 10000], claimed=-1)
    assert rising.status == "fail" and "slower than claimed" in rising.message


def test_a_moving_bound_that_may_still_cross_is_pre_asymptotic():
    # at n = 4..32 the local orders -0.24, -0.34, -0.40 steepen towards -1/2 but are not yet below -0.45: they may
    # still cross or not (pre-asymptotic); at n = 10..640 the last one, -0.476, is below: the bound holds
    res = check_rate(mixture, [4, 8, 16, 32], claimed=-0.5, kind="bound")
    assert res.status == "pre-asymptotic"
    assert check_rate(mixture, [10, 40, 160, 640], claimed=-0.5, kind="bound").status == "pass"


def test_nan_errors_never_pass():
    res = check_rate(lambda n: math.nan if n == 40 else 1 / n, [10, 20, 40, 80], claimed=-1)
    assert res.status == "non-finite" and not res.passed and math.isnan(res.order)
    assert "not finite (nan at n = 40" in res.message
    cr = res.check_result()
    assert not cr.passed and cr.record("errors_finite").passed is False
    inf = decide_rate(RateQuantities(np.array([1, 2, 3]), np.array([[1.0], [np.inf], [0.1]]), True), claimed=-1)
    assert inf.status == "non-finite"


def test_round_off_is_refused_not_fitted():
    res = check_rate(periodic_error, [8, 16, 32, 64], claimed=-2, kind="bound")  # exact to rounding from n = 16
    assert res.status == "round-off" and not res.passed and "round-off" in res.message
    assert res.check_result().record("smallest_error").passed is False
    # a floor of 0 lets tiny (nonzero) errors through: exactly zero never is
    ok = check_rate(lambda n: 1e-15 * n**-2.0, [10, 20, 40], claimed=-2, floor=0.0)
    assert ok.status == "pass"
    assert check_rate(lambda n: 0.0, [10, 20, 40], claimed=-2, floor=0.0).status == "round-off"


def test_exact_power_law_has_a_degenerate_interval():
    res = check_rate(lambda n: 3 * n**-1.5, [10, 20, 40, 80], claimed=-1.5)
    assert res.status == "pass" and res.quantities.deterministic and res.quantities.errors.shape == (4, 1)
    assert res.interval == pytest.approx((-1.5, -1.5), abs=1e-12)
    assert res.local_orders == pytest.approx((-1.5,) * 3)
    for claimed, kind, status in ((-1, "bound", "pass"), (-1, "equal", "fail"), (-2, "bound", "fail"),
                                  (-1.46, "equal", "pass"), (-1.44, "equal", "fail")):
        assert check_rate(lambda n: 3 * n**-1.5, [10, 20, 40, 80], claimed=claimed, kind=kind).status == status


def test_records_carry_the_verdict_for_every_status():
    cases = [check_rate(lambda n: 3 * n**-1.5, [10, 20, 40], claimed=-1.5),
             check_rate(gauss_mean_error, [100, 200, 400], claimed=-0.5, repeats=8),
             check_rate(mixture, [4, 8, 16, 32], claimed=-0.5),
             check_rate(periodic_error, [4, 6, 8, 10], claimed=-2, kind="bound"),
             check_rate(periodic_error, [4, 6, 8, 10], claimed=-2),
             check_rate(lambda n: 1 / n + 1e-3, [10, 100, 1000, 10000], claimed=-1),
             check_rate(periodic_error, [8, 16, 32], claimed=-2),
             check_rate(lambda n: math.nan, [10, 20, 40], claimed=-2)]
    assert {c.status for c in cases} == set(STATUSES)
    for res in cases:
        cr = res.check_result()
        assert cr.passed == res.passed and cr.check == "rate" and cr.claims == ()
        assert cr.record("status").measured == res.status and res.message in cr.notes
        assert cr.final_line().startswith("PASS rate: " if res.passed else "FAIL rate: ")
        assert "[paper" not in cr.final_line()
        if not res.passed:  # the first failing record carries the message
            assert res.message in cr.final_line()
        assert cr.summary().splitlines()[0] == "rate"


def test_same_seed_same_numbers_and_streams_per_size_and_repeat():
    a = check_rate(gauss_mean_error, [100, 200, 400], claimed=-0.5, repeats=8, seed=3)
    b = check_rate(gauss_mean_error, [100, 200, 400], claimed=-0.5, repeats=8, seed=3)
    assert a.interval == b.interval and np.array_equal(a.quantities.errors, b.quantities.errors)
    more = measure_rate(gauss_mean_error, [100, 200, 400, 800], repeats=10, seed=3)
    assert np.array_equal(more.errors[:3, :8], a.quantities.errors)  # adding a size or repeats changes no draw


def test_shared_samples_across_sizes_are_fine():
    # the error of the first n of one sample (nested, correlated across sizes): the paired bootstrap holds it
    def nested(n, rng):
        return abs(rng.standard_normal(8000)[:n].mean())

    res = check_rate(nested, [500, 1000, 2000, 4000, 8000], claimed=-0.5, repeats=48, tolerance=0.2)
    assert res.interval[0] <= -0.5 <= res.interval[1]


def test_arity_and_bad_input():
    assert takes_rng(gauss_mean_error) and not takes_rng(nonperiodic_error)
    assert not takes_rng(lambda n, scale=2: n) and takes_rng(lambda *a: 0)
    for kwargs, match in (({"sizes": [10, 20]}, "at least 3"), ({"sizes": [10, 30, 20]}, "increase"),
                          ({"sizes": "10,20,30"}, "sequence"), ({"repeats": 1}, "repeats"),
                          ({"kind": "lower"}, "kind"), ({"tolerance": 0}, "tolerance"),
                          ({"confidence": 1.0}, "confidence"), ({"n_boot": 10}, "n_boot")):
        args = {"sizes": [10, 20, 40], **kwargs}
        with pytest.raises(InputError, match=match):
            check_rate(gauss_mean_error, args.pop("sizes"), claimed=-0.5, **args)
    for value in ("small", None, True, np.ones(2), 1j):
        with pytest.raises(InputError, match="must return one real number.*at n = 10"):
            check_rate(lambda n, v=value: v, [10, 20, 40], claimed=-1)
    with pytest.raises(InputError, match=">= 0"):
        check_rate(lambda n: -1.0 / n, [10, 20, 40], claimed=-1)
    with pytest.raises(ZeroDivisionError):  # the library lets the user's exception through, traceback and all
        check_rate(lambda n: 1 / 0, [10, 20, 40], claimed=-1)
    assert check_rate(lambda n: np.float32(1 / n), [10, 20, 40], claimed=-1).passed  # numpy scalars are numbers


def test_assert_rate_returns_the_result_or_raises_with_the_table():
    res = assert_rate(nonperiodic_error, [8, 16, 32, 64], claimed=-2)
    assert res.passed and res.status == "pass"
    with pytest.raises(AssertionError) as info:
        assert_rate(mixture, [4, 8, 16, 32], claimed=-0.5)
    text = str(info.value)
    assert text.startswith("rate pre-asymptotic: ") and "local orders still moving" in text
    assert "assertion" in text and "local_orders_settled" in text and "parameters:" in text
    with pytest.raises(AssertionError, match="rate inconclusive"):
        assert_rate(gauss_mean_error, [100, 200, 400, 800], claimed=-0.5, repeats=8)


def test_record_rate_asserts_the_point_order_and_reports_interval_and_local_orders():
    from verify.core.result import Recorder
    from verify.rates import record_rate

    eps = np.array([0.001, 0.002, 0.004, 0.008])
    rec = Recorder()
    # a step variable (eps -> 0): error 2 eps + eps^2, local orders 1.0..1.02 in eps, nearest the limit last
    err = 2 * eps + eps**2
    slope = float(np.polyfit(np.log(eps), np.log(err), 1)[0])
    record_rate(rec, "error_slope", slope, 1.0, atol=0.05, why="test band", x=eps, errors=err, asymptote="small")
    assert rec["error_slope"].passed and rec["error_slope"].measured == slope
    lo, hi = rec["error_slope_interval"].measured
    assert lo <= slope <= hi and not rec["error_slope_interval"].deciding
    local = rec["error_slope_local_orders"].measured
    assert len(local) == 3 and local[-1] < local[0] and local[-1] == pytest.approx(1.0, abs=2e-3)
    # the point decides (calibrated tolerance), whatever the interval; a failure says when the orders still move
    rec = Recorder()
    err = eps + 30 * eps**2  # local orders 1.15, 1.08, 1.04 from the largest eps: moving
    record_rate(rec, "error_slope", 1.2, 1.0, atol=0.1, why="test band", x=eps, errors=err, asymptote="small")
    assert rec["error_slope"].passed is False and "local orders still moving: 1.15, 1.08, 1.04" in rec["error_slope"].failure()
    # sizes (n -> infinity), a NaN and a sign change: the decision stands, the diagnosis is left out or NaN
    rec = Recorder()
    record_rate(rec, "order", -0.5, -0.5, atol=0.1, why="test", x=[10, 20, 40], errors=[1, np.nan, 0.3])
    assert rec["order"].passed and all(math.isnan(v) for v in rec["order_interval"].measured)
    rec = Recorder()
    record_rate(rec, "order", math.nan, -0.5, atol=0.1, why="test", x=[10, 20, 40], errors=[1, -0.5, 0.3])
    assert rec["order"].passed is False and "order_interval" not in rec
