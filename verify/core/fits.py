"""Least-squares fits with standard errors: power laws in log-log coordinates and straight lines.

Rates in the checks are fitted slopes compared with their expected value within ``k`` standard
errors plus a floor (tolerances of kind (c) in the method notes).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from spectral.floor.validation import InputError

__all__ = ["PowerLawFit", "fit_linear", "fit_power_law"]



@dataclasses.dataclass(frozen=True)
class PowerLawFit:
    """Least-squares fit ``log y = intercept + slope log x`` with standard errors.

    ``slope_stderr`` is the usual OLS standard error (residual variance with n - 2 degrees of
    freedom); it is 0 for an exact two-point fit and ``nan`` when undefined.
    """

    slope: float
    intercept: float
    slope_stderr: float
    intercept_stderr: float
    r_squared: float
    n_points: int

    def predict(self, x):
        return np.exp(self.intercept) * np.asarray(x, dtype=float) ** self.slope

    def slope_interval(self, level: float = 0.95) -> tuple[float, float]:
        """Two-sided confidence interval for the slope (Student t, n - 2 degrees of freedom)."""
        from scipy.special import stdtrit  # = scipy.stats.t.ppf (what it evaluates), without importing scipy.stats

        if self.n_points <= 2 or not math.isfinite(self.slope_stderr):
            return (self.slope, self.slope)
        q = stdtrit(self.n_points - 2, 0.5 + level / 2)
        return (self.slope - q * self.slope_stderr, self.slope + q * self.slope_stderr)


def fit_linear(x, y) -> PowerLawFit:
    """Ordinary least squares ``y = intercept + slope x`` with standard errors (no logs)."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape or x.size < 2:
        raise InputError(f"fit needs at least two (x, y) pairs of equal length, got {x.size} and {y.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise InputError("fit data must be finite")
    n = x.size
    xm, ym = x.mean(), y.mean()
    sxx = float(np.sum((x - xm) ** 2))
    if sxx == 0:
        raise InputError("fit needs at least two distinct x values")
    slope = float(np.sum((x - xm) * (y - ym)) / sxx)
    intercept = float(ym - slope * xm)
    resid = y - (intercept + slope * x)
    sst = float(np.sum((y - ym) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / sst if sst > 0 else 1.0
    if n > 2:
        s2 = float(np.sum(resid**2)) / (n - 2)
        se_slope = math.sqrt(s2 / sxx)
        se_int = math.sqrt(s2 * (1.0 / n + xm**2 / sxx))
    else:
        se_slope = se_int = 0.0
    return PowerLawFit(slope, intercept, se_slope, se_int, r2, n)


def fit_power_law(x, y) -> PowerLawFit:
    """Fit ``y = exp(intercept) x^slope`` by least squares in log-log coordinates.

    Raises
    ------
    ValueError
        If any x or y is not strictly positive (a power law cannot be fitted through them).
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if np.any(~(x > 0)) or np.any(~(y > 0)):
        raise InputError("power-law fit needs strictly positive, finite x and y")
    return fit_linear(np.log(x), np.log(y))
