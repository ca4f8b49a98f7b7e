"""verify.rates: the rate rule on errors whose asymptotic orders are known in closed form, misuse, and assert_rate.

Closed forms: |N(0,1)| n^-1/2 is the exact law of the error of a mean of n normals; the trapezoid rule is
second order on e^x over [0, 1] (error (e - 1) h^2 / 12 + O(h^4)) and spectral on the periodic exp(cos x)
(error 4 pi I_n(1)); 5 n^-1/2 - 4/n has local orders (-2.5 + 4 n^-1/2) / (5 - 4 n^-1/2), still moving below
n ~ 1000; (1/n + 100/n^2) exp(sigma Z) is the audit's pre-asymptotic case (asymptotic order -1, local orders
-1.26 .. -1.04 at n = 200 .. 3200). The rule's measured operating characteristics: tests/verify/test_rate_oc.py.
"""

import math
import time

import numpy as np
import pytest
from scipy.special import i0

from spectral.floor.validation import InputError
from verify.core.implementation import ImplementationError
from verify.rate_cases import case, draw_errors
from verify.rates import STATUSES, RateQuantities, check_rate, decide_rate, measure_rate, parse_budget, takes_rng
from verify.testing import assert_rate

MC_SIZES = [1000 * 2**k for k in range(7)]


def gauss_mean_error(n, rng):
    """|mean of n normals|: exactly |N(0,1)| n^-1/2 (order -1/2, random)."""
    return abs(rng.standard_normal()) / math.sqrt(n)


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


def _normal_errors(sizes, repeats, seed):
    rng = np.random.default_rng(seed)
    return np.abs(rng.standard_normal((len(sizes), repeats))) / np.sqrt(np.asarray(sizes, float))[:, None]


def test_monte_carlo_order_passes_with_enough_repeats_and_wrong_orders_fail():
    q = RateQuantities(np.asarray(MC_SIZES), _normal_errors(MC_SIZES, 6000, 1), False, "mc")
    res = decide_rate(q, claimed=-0.5)
    assert res.status == "pass" and res.passed and res.asymptotic
    lo, hi = res.asymptotic_interval
    assert -0.6 <= lo < -0.5 < hi <= -0.4 and lo <= res.order <= hi
    assert len(res.local_orders) == 6 and len(res.windows) == 5
    for wrong in (-0.8, -0.2):  # the same errors: a wrong order fails, naming the side
        bad = decide_rate(q, claimed=wrong)
        assert bad.status == "fail" and "does not hold" in bad.message
    assert "faster" in decide_rate(q, claimed=-0.2).message and "slower" in decide_rate(q, claimed=-0.8).message
    assert decide_rate(q, claimed=-0.7, kind="bound").status == "fail"  # O(n^-0.7) is wrong
    assert decide_rate(q, claimed=-0.5, kind="bound").status == "pass"
    assert decide_rate(q, claimed=-0.3, kind="bound").status == "pass"


def test_a_noisy_run_is_inconclusive_and_says_how_many_repeats_would_decide():
    q = RateQuantities(np.asarray(MC_SIZES), _normal_errors(MC_SIZES, 64, 2), False, "mc")
    res = decide_rate(q, claimed=-0.5)
    assert res.status == "inconclusive" and not res.passed
    assert 1000 < res.needed_repeats < 100_000
    assert f"about {res.needed_repeats} repeats per size would decide" in res.message
    # what the message promises holds: that many repeats decide (this seed)
    more = RateQuantities(np.asarray(MC_SIZES), _normal_errors(MC_SIZES, res.needed_repeats, 3), False, "mc")
    assert decide_rate(more, claimed=-0.5).status == "pass"


def test_the_audits_pre_asymptotic_case_never_passes_a_wrong_order_nor_fails_the_true_one():
    # (1/n + 100/n^2) exp(sigma Z) at n = 200 .. 3200 with 8 to 32 repeats: the old rule passed "equal -1.15" in
    # 17 of 20 seeds and failed the true -1 in up to 14 of 20; 40 seeds of each noise level here
    for name in ("audit-0.1-32", "audit-0.2-16", "audit-0.3-8"):
        c = case(name)
        errors, _ = draw_errors(c, 40, seed=11)
        for e in errors:
            q = RateQuantities(np.asarray(c.sizes), e, False, name)
            assert decide_rate(q, claimed=-1.0).status != "fail"
            assert decide_rate(q, claimed=-1.15).status != "pass"
            assert decide_rate(q, claimed=-1.3, kind="bound").status != "pass"
    # noise-free, the drift is shown: pre-asymptotic, naming larger sizes; past n = 3200 the order decides
    exact = check_rate(lambda n: 1 / n + 100 / n**2, [200, 400, 800, 1600, 3200], claimed=-1.0)
    assert exact.status == "pre-asymptotic" and exact.needed_size > 3200
    assert f"sizes up to about n = {exact.needed_size:g}" in exact.message
    later = check_rate(lambda n: 1 / n + 100 / n**2, [12800 * 2**k for k in range(5)], claimed=-1.0)
    assert later.status == "pass"


def test_a_deterministic_second_order_error():
    sizes = [8, 16, 32, 64]
    res = check_rate(nonperiodic_error, sizes, claimed=-2)
    assert res.status == "pass" and res.quantities.deterministic and res.quantities.errors.shape == (4, 1)
    assert res.asymptotic_interval == pytest.approx((-2, -2), abs=2e-3)
    for claimed, kind, status in ((-1, "bound", "pass"), (-1, "equal", "fail"), (-3, "bound", "fail"),
                                  (-2.15, "equal", "fail"), (-1.85, "equal", "fail")):
        assert check_rate(nonperiodic_error, sizes, claimed=claimed, kind=kind).status == status


def test_an_exact_power_law_has_a_degenerate_interval():
    res = check_rate(lambda n: 3 * n**-1.5, [10, 20, 40, 80], claimed=-1.5)
    assert res.status == "pass" and res.asymptotic_interval == pytest.approx((-1.5, -1.5), abs=1e-12)
    assert res.local_orders == pytest.approx((-1.5,) * 3)
    for claimed, status in ((-1.41, "pass"), (-1.39, "fail"), (-1.59, "pass"), (-1.61, "fail")):
        assert check_rate(lambda n: 3 * n**-1.5, [10, 20, 40, 80], claimed=claimed).status == status


def test_spectral_convergence_satisfies_a_bound_but_not_an_equal_order():
    sizes = [3, 4, 5, 6, 7]  # errors 0.28 .. 2e-5: above the round-off level
    bound = check_rate(periodic_error, sizes, claimed=-2, kind="bound")
    equal = check_rate(periodic_error, sizes, claimed=-2)
    assert all(b < a for a, b in zip(bound.local_orders, bound.local_orders[1:]))  # ever steeper
    assert bound.status == "pass" and equal.status == "fail" and "faster than claimed" in equal.message


def test_a_moving_mixture_is_decided_only_where_its_extrapolation_allows():
    # 5 n^-1/2 - 4/n: at n = 4..32 the local orders -0.24 .. -0.40 still move: the extrapolated interval reaches
    # outside the band (pre-asymptotic, naming larger sizes); at n = 10..640 it has settled enough to pass
    early = check_rate(mixture, [4, 8, 16, 32], claimed=-0.5)
    assert early.status == "pre-asymptotic" and early.needed_size > 32 and not early.passed
    exact = [(-2.5 + 4 * n**-0.5) / (5 - 4 * n**-0.5) for n in (4, 8, 16, 32)]
    assert all(a > v > b for a, v, b in zip(exact, early.local_orders, exact[1:]))
    assert check_rate(mixture, [10, 40, 160, 640], claimed=-0.5).status == "pass"
    # a level that stops decaying (1/n + 1e-3) fails at once: slower than claimed
    rising = check_rate(lambda n: 1 / n + 1e-3, [10, 100, 1000, 10000], claimed=-1)
    assert rising.status == "fail" and "slower than claimed" in rising.message


def test_log_factors_can_be_claimed():
    sizes = [16, 32, 64, 128, 256]
    assert check_rate(lambda n: math.log(n) / n, sizes, claimed=-1, log_power=1).status == "pass"
    without = check_rate(lambda n: math.log(n) / n, sizes, claimed=-1)  # the log factor reads as a drift
    assert without.status != "pass" and without.asymptotic_interval[1] < -0.7
    res = check_rate(lambda n: math.log(n) ** 2 / n, sizes, claimed=-1, log_power=2, kind="bound")
    assert res.passed and res.log_power == 2 and "(log n)^2" in res.message
    with pytest.raises(InputError, match="log_power needs sizes above 1"):
        check_rate(lambda n: 1 / n, [1, 2, 4], claimed=-1, log_power=1)


def test_a_round_off_floor_is_left_out_never_read_as_slower():
    # 3 n^-3 plus a floor of 1e-12: the last local orders bend; those sizes are left out and the run is round-off
    res = check_rate(lambda n: abs(3 * n**-3.0 + 1e-12 * math.sin(n)), [8 * 2**k for k in range(11)], claimed=-3)
    assert res.status == "round-off" and not res.passed and res.left_out[-1] == 8192
    assert "without them: pass" in res.message and "leave those sizes out" in res.message
    assert res.check_result().record("clear_of_round_off").passed is False
    kept = [n for n in [8 * 2**k for k in range(11)] if n not in res.left_out]
    assert check_rate(lambda n: abs(3 * n**-3.0 + 1e-12 * math.sin(n)), kept, claimed=-3).passed
    # the sizes above the floor still fail a wrong claim on their own
    assert check_rate(lambda n: abs(3 * n**-3.0 + 1e-12 * math.sin(n)), [8 * 2**k for k in range(11)],
                      claimed=-2).status == "fail"
    # exact zeros and errors below floor: left out; fewer than 3 sizes left: round-off
    assert check_rate(lambda n: 0.0, [10, 20, 40], claimed=-2).status == "round-off"
    assert check_rate(lambda n: 1e-15 * n**-2.0, [10, 20, 40], claimed=-2, floor=0.0, roundoff=0.0).passed
    assert check_rate(periodic_error, [8, 16, 32, 64], claimed=-2, kind="bound").status == "round-off"


def test_nan_errors_never_pass():
    res = check_rate(lambda n: math.nan if n == 40 else 1 / n, [10, 20, 40, 80], claimed=-1)
    assert res.status == "non-finite" and not res.passed and math.isnan(res.order)
    assert "not finite (nan at n = 40" in res.message
    cr = res.check_result()
    assert not cr.passed and cr.record("errors_finite").passed is False
    inf = decide_rate(RateQuantities(np.array([1, 2, 3]), np.array([[1.0], [np.inf], [0.1]]), True), claimed=-1)
    assert inf.status == "non-finite"


def test_records_carry_the_verdict_for_every_status():
    noisy = RateQuantities(np.asarray(MC_SIZES), _normal_errors(MC_SIZES, 16, 4), False, "mc")
    cases = [check_rate(lambda n: 3 * n**-1.5, [10, 20, 40], claimed=-1.5),
             decide_rate(noisy, claimed=-0.5),
             check_rate(mixture, [4, 8, 16, 32], claimed=-0.5),
             check_rate(periodic_error, [3, 4, 5, 6], claimed=-2),
             check_rate(periodic_error, [3, 4, 5, 6], claimed=-2, kind="bound"),
             check_rate(periodic_error, [8, 16, 32], claimed=-2),
             check_rate(lambda n: math.nan, [10, 20, 40], claimed=-2)]
    assert {c.status for c in cases} == set(STATUSES)
    for res in cases:
        cr = res.check_result()
        assert cr.passed == res.passed and cr.check == "rate" and cr.claims == ()
        assert cr.record("status").measured == res.status and res.message in cr.notes
        assert cr.final_line().startswith("PASS rate: " if res.passed else "FAIL rate: ")
        if not res.passed:  # the first failing record carries the message
            assert res.message in cr.final_line()
        assert cr.summary().splitlines()[0] == "rate"


def test_same_seed_same_numbers_and_streams_per_size_and_repeat():
    a = check_rate(gauss_mean_error, [100, 200, 400], claimed=-0.5, repeats=8, seed=3)
    b = check_rate(gauss_mean_error, [100, 200, 400], claimed=-0.5, repeats=8, seed=3)
    assert a.asymptotic_interval == b.asymptotic_interval and np.array_equal(a.quantities.errors, b.quantities.errors)
    more = measure_rate(gauss_mean_error, [100, 200, 400, 800], repeats=10, seed=3)
    assert np.array_equal(more.errors[:3, :8], a.quantities.errors)  # adding a size or repeats changes no draw


def test_repeats_auto_decides_within_its_budget_and_says_what_it_spent():
    sizes = [1000, 2000, 4000, 8000, 16000]
    res = check_rate(gauss_mean_error, sizes, claimed=-0.5, tolerance=0.25, seed=5, budget="20000 calls")
    assert res.status == "pass" and res.spent["calls"] <= 20000 and res.spent["looks"] >= 2
    assert res.spent["first_repeats"] == 64 and res.quantities.errors.shape == (5, res.spent["repeats"])
    assert "spent" in res.message and "of the budget 20000 calls" in res.message
    # the same pilot on a budget too small for more: undecided, and says what would still be needed
    small = check_rate(gauss_mean_error, sizes, claimed=-0.5, tolerance=0.25, seed=5, budget="400 calls")
    assert small.status == "inconclusive" and small.spent["calls"] == 320
    assert "still needed: about" in small.message and small.needed_repeats > 64
    # the decision recorded is the one of the last look (its share of the error rate)
    assert small.quantities.spent["last_confidence"] == pytest.approx(1 - 0.05)


def test_sizes_auto_extends_the_ladder_while_the_drift_is_undecided():
    res = check_rate(mixture, [4, 8, 16, 32, "auto"], claimed=-0.5)
    assert res.status == "pass" and res.spent["sizes"][:4] == (4, 8, 16, 32) and len(res.spent["sizes"]) > 4
    assert res.spent["sizes"][4] == 64  # along the ladder (ratio 2)
    with pytest.raises(InputError, match='need repeats="auto"'):
        check_rate(mixture, [4, 8, 16, "auto"], claimed=-0.5, repeats=8)


def test_budget_parsing():
    assert parse_budget(60) == ("seconds", 60.0) and parse_budget("2.5s") == ("seconds", 2.5)
    assert parse_budget("5000 calls") == ("calls", 5000.0) and parse_budget("90") == ("seconds", 90.0)
    for bad in ("5x", "-3s", "0", "calls", float("nan")):
        with pytest.raises(InputError, match="budget"):
            parse_budget(bad)


def test_misuse_is_one_line_naming_the_function():
    with pytest.raises(InputError, match="error must be a function"):
        check_rate(None, [10, 20, 40], claimed=-1)
    with pytest.raises(ImplementationError, match="ignores its rng"):  # takes rng, never draws from it
        check_rate(lambda n, rng: 1.0 / n, [10, 20, 40], claimed=-1, repeats=4)
    with pytest.raises(ImplementationError, match=r"raised ZeroDivisionError: division by zero \(at n = 10\)"):
        check_rate(lambda n: 1 / 0, [10, 20, 40], claimed=-1)
    with pytest.raises(ImplementationError, match=r"shape \(1,\) at n = 10 \(return float\(x\[0\]\) or x.item\(\)"):
        check_rate(lambda n: np.array([1.0 / n]), [10, 20, 40], claimed=-1)
    for value in ("small", None, True, [0.1], np.ones(2), 1j):
        with pytest.raises(ImplementationError, match="must return one real number.*at n = 10"):
            check_rate(lambda n, v=value: v, [10, 20, 40], claimed=-1)
    with pytest.raises(ImplementationError, match=r"must take \(n\).*its signature is .*\(n, a, b\)"):
        check_rate(lambda n, a, b: 1.0, [10, 20, 40], claimed=-1)
    start = time.perf_counter()
    with pytest.raises(ImplementationError, match=r"ran past its time limit of 0.2 s.*\(at n = 10\)"):
        check_rate(lambda n: time.sleep(5) or 1.0, [10, 20, 40], claimed=-1, timeout=0.2)
    assert time.perf_counter() - start < 2
    with pytest.raises(InputError, match=">= 0"):
        check_rate(lambda n: -1.0 / n, [10, 20, 40], claimed=-1)
    assert check_rate(lambda n: np.float32(1 / n), [10, 20, 40], claimed=-1).passed  # numpy scalars are numbers
    assert check_rate(lambda n: np.array(1.0 / n), [10, 20, 40], claimed=-1).passed  # a 0-d array is one number


def test_arity_and_bad_input():
    assert takes_rng(gauss_mean_error) and not takes_rng(nonperiodic_error)
    assert not takes_rng(lambda n, scale=2: n) and takes_rng(lambda *a: 0)
    for kwargs, match in (({"sizes": [10, 20]}, "at least 3"), ({"sizes": [10, 30, 20]}, "increase"),
                          ({"sizes": "10,20,30"}, "sequence"), ({"repeats": 1}, "repeats"),
                          ({"repeats": "many"}, "repeats"), ({"kind": "lower"}, "kind"), ({"tolerance": 0}, "tolerance"),
                          ({"confidence": 1.0}, "confidence"), ({"correction": 0}, "correction"),
                          ({"timeout": -1}, "timeout"), ({"budget": "soon"}, "budget")):
        args = {"sizes": [10, 20, 40], **kwargs}
        with pytest.raises(InputError, match=match):
            check_rate(gauss_mean_error, args.pop("sizes"), claimed=-0.5, **args)


def test_assert_rate_returns_the_result_or_raises_with_the_table():
    res = assert_rate(nonperiodic_error, [8, 16, 32, 64], claimed=-2)
    assert res.passed and res.status == "pass"
    with pytest.raises(AssertionError) as info:
        assert_rate(mixture, [4, 8, 16, 32], claimed=-0.5)
    text = str(info.value)
    assert text.startswith("rate pre-asymptotic: ") and "the local orders still move" in text
    assert "assertion" in text and "asymptotic_order_low" in text and "parameters:" in text
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
    record_rate(rec, "error_slope", 1.2, 1.0, atol=0.02, why="test band", x=eps, errors=err, asymptote="small")
    assert rec["error_slope"].passed is False
    assert "local orders still moving: 1.15, 1.08, 1.04" in rec["error_slope"].failure()
    # sizes (n -> infinity), a NaN and a sign change: the decision stands, the diagnosis is left out or NaN
    rec = Recorder()
    record_rate(rec, "order", -0.5, -0.5, atol=0.1, why="test", x=[10, 20, 40], errors=[1, np.nan, 0.3])
    assert rec["order"].passed and all(math.isnan(v) for v in rec["order_interval"].measured)
    rec = Recorder()
    record_rate(rec, "order", math.nan, -0.5, atol=0.1, why="test", x=[10, 20, 40], errors=[1, -0.5, 0.3])
    assert rec["order"].passed is False and "order_interval" not in rec
