"""Operating characteristics of the rate rule: how often it passes, fails or stays undecided, measured.

For every case of :mod:`verify.rate_cases` (an error with a known asymptotic order ``p``), the
errors of many independent runs are drawn once and every claim is decided on the same errors by the
rule of :mod:`verify.rates` (:func:`verify.rate_rule.intervals` and
:func:`~verify.rate_rule.final_verdicts`, the very steps of :func:`verify.rates.decide_rate`,
batched over runs):

* ``true``: ``kind="equal"`` at ``p`` (and ``true bound``: ``kind="bound"`` at ``p``);
* ``-0.3``, ``-0.15``, ``+0.15``, ``+0.3``: ``kind="equal"`` at ``p`` plus that offset (wrong);
* ``bound -0.15``: ``error = O(n^(p - 0.15))`` (wrong: steeper than the truth).

The targets: a wrong claim passes in at most 5 % of runs, a true claim fails in at most 5 %, in
every case. :func:`auto_characteristics` runs ``repeats="auto"`` itself (the code of
:func:`verify.rates.check_rate`) on simulated errors with a simulated clock, and reports how often
a true claim is decided within the budget and what it spent.

``python -m verify.rate --operating-characteristics [--seeds 200]`` prints both tables.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from spectral.floor.validation import child_rng
from verify import rate_rule
from verify.rate_cases import CASES, RateCase, case, draw_errors, uniform_mean
from verify.rates import DEFAULT_BUDGET, DEFAULT_ROUNDOFF, DEFAULT_TOLERANCE, check_auto, parse_budget

__all__ = ["CLAIMS", "TARGET", "OCRow", "AutoRow", "characteristics", "auto_characteristics", "table", "auto_table",
           "AUTO_CASES", "CALL_COST"]

#: (column, offset from the true order, kind); the first and last are true claims
CLAIMS = (("true", 0.0, "equal"), ("-0.3", -0.3, "equal"), ("-0.15", -0.15, "equal"), ("+0.15", 0.15, "equal"),
          ("+0.3", 0.3, "equal"), ("bound -0.15", -0.15, "bound"), ("true bound", 0.0, "bound"))
#: the most a wrong claim may pass, and a true claim fail, in any case
TARGET = 0.05
#: seconds one call of an error function costs in the simulated clock of :func:`auto_characteristics`:
#: a + b n, measured here for ``abs(rng.standard_exponential(n).mean() - 1)`` (about 5 us a call plus
#: 18 ns a draw on a shared 2-core x86-64 machine; NumPy 2.4)
CALL_COST = (5e-6, 1.8e-8)


@dataclasses.dataclass(frozen=True)
class OCRow:
    """Shares of pass / fail / undecided per claim for one case.

    Attributes
    ----------
    case : RateCase
    runs : int
    shares : dict
        column -> (pass, fail, undecided), fractions of ``runs``.
    """

    case: RateCase
    runs: int
    shares: dict

    @property
    def wrong_pass(self) -> float:
        """The largest share of runs in which a wrong claim passed."""
        return max(self.shares[name][0] for name, off, _ in CLAIMS if off != 0)

    @property
    def true_fail(self) -> float:
        """The largest share of runs in which a true claim failed."""
        return max(self.shares[name][1] for name, off, _ in CLAIMS if off == 0)

    @property
    def meets_targets(self) -> bool:
        return self.wrong_pass <= TARGET and self.true_fail <= TARGET

    @property
    def in_model(self) -> bool:
        """Whether the rule's model holds for this case (the targets are promised only there)."""
        return not self.case.outside_model


def _shares(v: np.ndarray) -> tuple[float, float, float]:
    return float(np.mean(v == 1)), float(np.mean(v == -1)), float(np.mean(v == 0))


def characteristics(cases=CASES, *, runs: int = 200, seed: int = 0, tolerance: float | None = None,
                    confidence: float = 0.95, correction: float = rate_rule.Q_MIN) -> tuple[OCRow, ...]:
    """Pass / fail / undecided shares of every claim of :data:`CLAIMS` on ``runs`` draws of each case."""
    tolerance = DEFAULT_TOLERANCE if tolerance is None else tolerance
    rows = []
    for c in cases:
        errors, orders = draw_errors(c, runs, seed)
        logn = np.log(np.asarray(c.sizes, dtype=float))
        low, high, keep = rate_rule.intervals(logn, errors, confidence=confidence, q_min=correction,
                                              roundoff=c.roundoff or DEFAULT_ROUNDOFF, log_power=c.log_power)
        shares = {}
        for name, offset, kind in CLAIMS:
            v = rate_rule.final_verdicts(low, high, keep, len(c.sizes), orders + offset, kind, tolerance)
            shares[name] = _shares(v)
        rows.append(OCRow(case=c, runs=runs, shares=shares))
    return tuple(rows)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}"


def table(rows) -> str:
    """The table (markdown): per case, pass / fail / undecided in % for every claim column."""
    head = ["family", "case", "sizes", "repeats"] + [name for name, _, _ in CLAIMS] + ["targets"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        c = row.case
        sizes = f"{c.sizes[0]:g}..{c.sizes[-1]:g} ({len(c.sizes)})"
        cells = [c.family, c.name, sizes, str(c.repeats)]
        cells += ["/".join(_pct(x) for x in row.shares[name]) for name, _, _ in CLAIMS]
        if not row.in_model:
            cells.append("outside the model")
        else:
            cells.append("met" if row.meets_targets else
                         f"NOT met (wrong pass {_pct(row.wrong_pass)} %, true fail {_pct(row.true_fail)} %)")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -- repeats="auto" ------------------------------------------------------------------------------------------
class _SimulatedMeter:
    """A stand-in for the user's function inside ``check_rate``'s auto mode: draws a case's errors, keeps a clock."""

    def __init__(self, c: RateCase, seed: int, run: int, cost=CALL_COST):
        self.case, self.seed, self.run = c, seed, run
        self.random = not c.deterministic
        self.label = c.name
        self.calls = 0
        self.seconds = 0.0
        self.cost = cost

    def now(self) -> float:
        return self.seconds

    def block(self, sizes, j0: int, j1: int, deadline=None) -> np.ndarray:
        r = (j1 - j0) if self.random else 1
        rng = child_rng(self.seed, "rate-auto", self.case.name, self.run, j0, *[int(n) for n in sizes])
        out = self.case.sample(rng, np.asarray(sizes), 1, r)
        errors = np.asarray(out[0] if isinstance(out, tuple) else out, dtype=float)[0]
        self.calls += len(sizes) * r
        self.seconds += r * sum(self.cost[0] + self.cost[1] * float(n) for n in sizes)
        return errors


#: the cases ``repeats="auto"`` is measured on: the Monte Carlo target (exponential draws at n = 10^3 ..
#: 6.4 x 10^4), the README's example, and noisy cases of other families; ``+sizes``: with the ladder
#: extended (sizes ending in "auto")
AUTO_CASES = ("exponential-mean", "readme-example", "normal-mean", "bernoulli-mean", "nested-mean", "audit-0.2-16",
              "audit-0.2-16+sizes", "audit-late", "half-gap", "gl-type", "heteroscedastic")


def _readme_case() -> RateCase:
    sizes = tuple(1000 * 2**k for k in range(7))
    return RateCase("readme-example", "monte-carlo", "the README's example: |mean of n uniforms - 1/2| at n = 1000 .. "
                    "64000 (its normal law)", sizes, 16, -0.5, uniform_mean)


def auto_case(name: str) -> RateCase:
    """A case of :data:`AUTO_CASES` by name (a trailing ``+sizes`` is the same case with the ladder extended)."""
    name = name.removesuffix("+sizes")
    if name == "readme-example":
        return _readme_case()

    return case(name)


@dataclasses.dataclass(frozen=True)
class AutoRow:
    """What ``repeats="auto"`` decided and spent on one case's true claim (and the claims off by 0.15)."""

    case: RateCase
    runs: int
    shares: dict
    repeats: tuple  # median and 90th percentile of the final repeats per size
    seconds: tuple  # median and 90th percentile of the simulated seconds
    budget: str
    name: str = ""  # the row's name (the case's, with "+sizes" when the ladder was extended)
    largest: tuple = ()  # median and largest final size


def auto_characteristics(names=AUTO_CASES, *, runs: int = 200, seed: int = 0, budget=None,
                         claims=(("true", 0.0, "equal"), ("-0.15", -0.15, "equal"), ("+0.15", 0.15, "equal"),
                                 ("bound -0.15", -0.15, "bound"))) -> tuple[AutoRow, ...]:
    """``repeats="auto"`` on ``runs`` simulated runs per case (the clock of :data:`CALL_COST`), per claim."""
    budget = DEFAULT_BUDGET if budget is None else budget
    unit, amount = parse_budget(budget)
    rows = []
    for name in names:
        c = auto_case(name)
        extend = name.endswith("+sizes")
        shares, reps, secs, sizes = {}, [], [], []
        for label, offset, kind in claims:
            v = np.empty(runs, dtype=int)
            for k in range(runs):
                meter = _SimulatedMeter(c, seed, k)
                options = dict(claimed=c.order + offset, kind=kind, confidence=0.95, tolerance=DEFAULT_TOLERANCE,
                               seed=seed, floor=1e-13, roundoff=c.roundoff or DEFAULT_ROUNDOFF,
                               log_power=c.log_power,
                               correction=rate_rule.Q_MIN)
                res = check_auto(meter, np.asarray(c.sizes), extend, options, unit, amount)
                v[k] = 1 if res.status == "pass" else -1 if res.status == "fail" else 0
                if label == "true":
                    reps.append(res.spent["repeats"])
                    secs.append(res.spent["seconds"])
                    sizes.append(res.spent["sizes"][-1])
            shares[label] = _shares(v)
        rows.append(AutoRow(case=c, runs=runs, shares=shares, name=name,
                            repeats=(float(np.median(reps)), float(np.quantile(reps, 0.9))),
                            seconds=(float(np.median(secs)), float(np.quantile(secs, 0.9))),
                            largest=(float(np.median(sizes)), float(np.max(sizes))), budget=f"{amount:g} {unit}"))
    return tuple(rows)


def auto_table(rows) -> str:
    """The auto-mode table (markdown)."""
    claims = list(rows[0].shares) if rows else []
    head = ["case", "sizes"] + claims + ["repeats (median, 90 %)", "seconds (median, 90 %)", "largest size"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        c = row.case
        cells = [row.name or c.name, f"{c.sizes[0]:g}..{c.sizes[-1]:g} ({len(c.sizes)})"]
        cells += ["/".join(_pct(x) for x in row.shares[name]) for name in claims]
        cells += [f"{row.repeats[0]:.0f}, {row.repeats[1]:.0f}", f"{row.seconds[0]:.2g}, {row.seconds[1]:.2g}",
                  f"{row.largest[0]:g} (max {row.largest[1]:g})" if row.largest else ""]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(rows) -> str:
    """Whether every case within the model meets the targets, the worst shares, and the cases outside it."""
    inside = [r for r in rows if r.in_model]
    worst_pass = max(r.wrong_pass for r in inside)
    worst_fail = max(r.true_fail for r in inside)
    missed = [r.case.name for r in inside if not r.meets_targets]
    text = (f"{len(inside)} cases within the model x {rows[0].runs} runs: a wrong claim passed in at most "
            f"{100 * worst_pass:.1f} % of runs, a true claim failed in at most {100 * worst_fail:.1f} % (targets "
            f"{100 * TARGET:g} %)" + (f"; NOT met in {', '.join(missed)}" if missed else "; every case meets them"))
    for r in rows:
        if not r.in_model:
            text += (f"\noutside the model: {r.case.name} ({r.case.outside_model}): a wrong claim passed in "
                     f"{100 * r.wrong_pass:.0f} %, the true claim failed in {100 * r.true_fail:.0f} %")
    return text


def _fmt_seconds(x: float) -> str:
    return f"{x:.3g}" if math.isfinite(x) else "nan"
