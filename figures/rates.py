"""The figure of a rate check (``python -m verify.rate ... --plot PATH``, ``RateResult.plot(path)``).

Log-log axes: every measured error (one dot per repeat), the geometric mean per size, the fitted
order over all sizes with its confidence band (bootstrap over the repeats, or the fit's Student-t
band for a deterministic error), and the claimed slope ``n^p`` through the mean error at the largest
size. The title carries the verdict, the status of :mod:`verify.rates`'s rule and the order with its
interval; the legend gives the local orders. The decision is :func:`verify.rates.decide_rate` on the
result's measured errors and parameters (no numerics here).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["CHECK_FIGURES", "draw_rate"]


def _decision(result):
    from verify.core.quantities import from_plain
    from verify.rates import RateQuantities, decide_rate

    q = result.quantities
    if not isinstance(q, RateQuantities):  # read back from JSON before verify.rate was imported
        q = from_plain(RateQuantities, q)
    p = result.parameters
    return decide_rate(q, claimed=p["claimed"], kind=p["kind"], confidence=p["confidence"],
                       tolerance=p["tolerance"], seed=p["seed"], n_boot=p["n_boot"], floor=p["floor"])


def draw_rate(result, ax):
    """Errors against n (log-log), the fitted order with its confidence band, and the claimed slope."""
    from figures._plotting import plain_log_ticks

    res = _decision(result)
    q = res.quantities
    n = np.asarray(q.sizes, dtype=float)
    errors = np.asarray(q.errors, dtype=float)
    shown = np.isfinite(errors) & (errors > 0)
    reps = np.broadcast_to(n[:, None], errors.shape)
    if errors.shape[1] > 1:
        ax.loglog(reps[shown], errors[shown], ".", color="0.65", ms=3, label=f"error, {errors.shape[1]} repeats")
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.exp(np.mean(np.log(np.where(shown, errors, np.nan)), axis=1))
    ok = np.isfinite(mean)
    ax.loglog(n[ok], mean[ok], "o", color="C0", label="geometric mean per size" if errors.shape[1] > 1 else "error")
    if math.isfinite(res.order):
        lo, hi = res.interval
        ax.fill_between(n, res.band[:, 0], res.band[:, 1], color="C0", alpha=0.2, lw=0,
                        label=f"{100 * res.confidence:g} % band of the fit")
        ax.loglog(n, np.exp(res.intercept) * n**res.order, "-", color="C0",
                  label=f"fit: order {res.order:.3g} [{lo:.3g}, {hi:.3g}]")
    if ok.any():
        last = np.flatnonzero(ok)[-1]
        claimed = mean[last] * (n / n[last]) ** res.claimed
        word = "claimed" if res.kind == "equal" else "bound"
        ax.loglog(n, claimed, "--", color="C3", label=f"{word}: n^{res.claimed:g} (tolerance {res.tolerance:g})")
    if res.local_orders:
        ax.plot([], [], " ", label="local orders " + ", ".join(f"{v:.3g}" for v in res.local_orders))
    plain_log_ticks(ax)
    ax.set_xlabel("n")
    ax.set_ylabel("error")
    who = f" of {q.label}" if q.label else ""
    ax.set_title(f"rate{who}: {'PASS' if res.passed else 'FAIL'} ({res.status})", fontsize=8)
    ax.legend(fontsize=6.5)


CHECK_FIGURES = {"rate": draw_rate}
