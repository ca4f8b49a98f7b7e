"""verify.rate_oc: the rate rule's measured operating characteristics on errors with known orders.

Default tier: a few cases at 20 runs (a smoke test of the table and of the targets' direction) and the identity
of the batched rule with verify.rates.decide_rate. Slow tier: the full table at 200 runs holds the targets (a
wrong claim passes in at most 5 % of runs, a true claim fails in at most 5 %, in every case within the rule's
model), and repeats="auto" decides the Monte Carlo order -1/2 and the README's example within the default budget.
"""

import numpy as np
import pytest

from verify import rate_oc
from verify.rate_cases import CASES, FAMILIES, case, draw_errors
from verify.rates import RateQuantities, decide_rate

SMOKE = ("audit-0.3-8", "trapezoid-exp", "gap-0.3-large", "gl-type", "simpson-floor", "pre-inflection",
         "biased-mean-visible")


def test_the_library_covers_every_family_and_draws_reproducibly():
    assert {c.family for c in CASES} == set(FAMILIES) and len({c.name for c in CASES}) == len(CASES)
    c = case("audit-0.2-16")
    a, orders = draw_errors(c, 3, seed=1)
    b, _ = draw_errors(c, 3, seed=1)
    assert a.shape == (3, 5, 16) and np.array_equal(a, b) and np.all(orders == -1.0)
    _, per_run = draw_errors(case("trapezoid-power"), 4, seed=1)  # the integrand, and so the order, per run
    assert np.all((per_run <= -1.3) & (per_run >= -1.7)) and len(set(per_run)) == 4


def test_smoke_a_few_cases_at_20_runs():
    rows = rate_oc.characteristics([case(name) for name in SMOKE], runs=20, seed=3)
    for row in rows:
        assert sum(row.shares["true"]) == pytest.approx(1.0)
        assert row.wrong_pass <= 0.1 and row.true_fail <= 0.1, (row.case.name, row.shares)
    table = rate_oc.table(rows)
    assert table.count("\n") == len(rows) + 1 and "| mixture | audit-0.3-8 |" in table
    shares = {r.case.name: r.shares for r in rows}
    assert shares["trapezoid-exp"]["true"] == (1.0, 0.0, 0.0)  # deterministic and asymptotic: decided
    assert shares["trapezoid-exp"]["+0.3"] == (0.0, 1.0, 0.0)
    assert shares["simpson-floor"]["true"][0] == 0.0  # a floor never lets a run pass (round-off)
    assert shares["pre-inflection"]["true"] == (0.0, 0.0, 1.0)  # an accelerating drift: undecided


def test_the_batched_rule_is_decide_rate():
    for name in ("audit-0.2-16", "float32-floor", "gl-type", "early-mixture"):
        c = case(name)
        errors, orders = draw_errors(c, 6, seed=2)
        rows = rate_oc.characteristics([c], runs=6, seed=2)[0].shares
        for off, kind, column in ((0.0, "equal", "true"), (0.15, "equal", "+0.15"), (-0.15, "bound", "bound -0.15")):
            statuses = [decide_rate(RateQuantities(np.asarray(c.sizes), e, c.deterministic, name), claimed=o + off,
                                    kind=kind, log_power=c.log_power, roundoff=c.roundoff or 1e-8).status
                        for e, o in zip(errors, orders)]
            got = (np.mean([s == "pass" for s in statuses]), np.mean([s == "fail" for s in statuses]))
            assert got == pytest.approx(rows[column][:2]), (name, column, statuses)


@pytest.mark.slow
def test_the_targets_hold_in_every_case_within_the_model():
    rows = rate_oc.characteristics(runs=200, seed=0)
    for row in rows:
        if row.in_model:
            assert row.meets_targets, (row.case.name, row.shares)
    outside = {r.case.name for r in rows if not r.in_model}
    assert outside == {"pre-inflection-noisy", "biased-mean"}  # documented: the noise hides a leading faster term


@pytest.mark.slow
def test_repeats_auto_decides_the_monte_carlo_order_and_the_readme_example():
    rows = {r.case.name: r for r in rate_oc.auto_characteristics(("exponential-mean", "readme-example"), runs=100)}
    assert rows["exponential-mean"].shares["true"][0] >= 0.90  # the target: PASS in >= 90 % of runs
    assert rows["readme-example"].shares["true"][0] >= 0.95  # the README's example, decided
    for row in rows.values():
        for column in ("-0.15", "+0.15", "bound -0.15"):
            assert row.shares[column][0] <= 0.05
        assert row.shares["true"][1] <= 0.05
