"""The figure of a rate check (``python -m verify.rate ... --plot PATH``, ``RateResult.plot(path)``).

Log-log axes: every measured error (one dot per repeat), the level of the error per size (the
power mean :mod:`verify.rates` decides on; the error itself when deterministic), the interval of the
asymptotic order that decides, drawn as a shaded wedge of slopes through the level at the largest
size (one line when only one side is known), the least-squares line over every size (dotted: informational, it mixes regimes), and the
claimed slope ``n^p`` through the same point. Sizes left out at a round-off floor are marked. The
title carries the verdict and the status; the legend gives the interval and the local orders. The
decision is :func:`verify.rate.decision` on the result's measured errors and parameters (no numerics
here).
"""

from __future__ import annotations

import math

import numpy as np

from figures._plotting import plain_log_ticks
from verify.core.quantities import from_plain
from verify.rate import decision
from verify.rate_rule import levels
from verify.rates import RateQuantities

__all__ = ["CHECK_FIGURES", "draw_rate"]


def _decision(result):
    q = result.quantities
    if not isinstance(q, RateQuantities):  # read back from JSON before verify.rate was imported
        q = from_plain(RateQuantities, q)
    return decision(q, result.parameters)


def draw_rate(result, ax):
    """Errors against n (log-log), the asymptotic order's interval as a wedge, the fit over all sizes, the claim."""
    res = _decision(result)
    q = res.quantities
    n = np.asarray(q.sizes, dtype=float)
    errors = np.asarray(q.errors, dtype=float)
    if res.log_power:  # the claim is on error / (log n)^k: drawn so, with the order's slopes
        errors = errors / np.log(n)[:, None] ** res.log_power
    shown = np.isfinite(errors) & (errors > 0)
    reps = np.broadcast_to(n[:, None], errors.shape)
    if errors.shape[1] > 1:
        ax.loglog(reps[shown], errors[shown], ".", color="0.7", ms=2.5, label=f"error, {errors.shape[1]} repeats")
    with np.errstate(divide="ignore", invalid="ignore"):
        level = np.exp(levels(np.where(np.isfinite(errors), errors, np.nan))[0])
    ok = np.isfinite(level) & (level > 0)
    what = "level per size (power mean 1/4)" if errors.shape[1] > 1 else "error"
    ax.loglog(n[ok], level[ok], "o", color="C0", ms=4, label=what)
    left = np.isin(n, np.asarray(res.left_out, dtype=float)) & ok
    if left.any():
        ax.loglog(n[left], level[left], "x", color="C1", ms=7, label="left out: round-off floor")
    kept = ok & ~left
    lo, hi = res.asymptotic_interval
    if kept.any():
        last = np.flatnonzero(kept)[-1]
        anchor_n, anchor = n[last], level[last]
        grid = np.geomspace(n[0], anchor_n, 50)
        level_text = f"({100 * res.confidence:g} %)"
        if math.isfinite(lo) and math.isfinite(hi) and lo <= hi:
            ax.fill_between(grid, anchor * (grid / anchor_n) ** lo, anchor * (grid / anchor_n) ** hi, color="C2",
                            alpha=0.25, lw=0, label=f"asymptotic order in [{lo:.3g}, {hi:.3g}] {level_text}")
        elif math.isfinite(lo) != math.isfinite(hi):  # one-sided: only the side monotone local orders give
            end, word = (hi, "<=") if math.isfinite(hi) else (lo, ">=")
            ax.loglog(grid, anchor * (grid / anchor_n) ** end, "-.", color="C2",
                      label=f"asymptotic order {word} {end:.3g} {level_text}")
        word = "claimed" if res.kind == "equal" else "bound"
        ax.loglog(n, anchor * (n / anchor_n) ** res.claimed, "--", color="C3",
                  label=f"{word}: n^{res.claimed:g} (tolerance {res.tolerance:g})")
    if math.isfinite(res.order):
        fit = np.exp(res.intercept) * n**res.order
        ax.loglog(n[kept], fit[kept], ":", color="0.3", lw=1,
                  label=f"fit over all sizes: {res.order:.3g} (mixes regimes)")
    if res.local_orders:
        ax.plot([], [], " ", label="local orders " + ", ".join(f"{v:.3g}" for v in res.local_orders))
    plain_log_ticks(ax)
    ax.set_xlabel("n")
    ax.set_ylabel("error" + (f" / (log n)^{res.log_power:g}" if res.log_power else ""))
    who = f" of {q.label}" if q.label else ""
    ax.set_title(f"rate{who}: {'PASS' if res.passed else 'FAIL'} ({res.status})", fontsize=8)
    ax.legend(fontsize=6.5)


CHECK_FIGURES = {"rate": draw_rate}
