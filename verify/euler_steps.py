"""Attention layers are Euler steps of the drift-diffusion PDE (DRIFT Theorem 3, Fig. 2).

On S^1 with density ``p ~ 1 + a cos theta`` (deterministic quantile grid), ``L`` heat-kernel
attention steps ``H <- S_eps H`` (``W = exp(-|x-y|^2/(2 eps))``, ``S = D^-1 W``) approximate the
solution of ``dH/dt = H'' + 2 (log p)' H'`` at ``t = L eps / 2`` (one layer = one Euler step of length
``eps/2``). The reference is ``manifolds.drift_pde_solution``: Fourier collocation on 512 equispaced
points, exact in time, evaluated at the sample angles by trigonometric interpolation (independent of
the kernel code).
At fixed ``t`` the error decreases like ``eps^1``. The printed claim (the PDE of the Appendix-B proof,
without the factor 2 on the drift) fails, and so does the negative control ``t = L eps`` (one layer =
one step of length ``eps``). The result carries, for the smallest eps, the initial condition, the
attention iterate and the PDE solution by angle (what DRIFT Fig. 2 draws).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import manifolds
import spectral
from spectral.floor.validation import InputError
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.fits import fit_power_law
from verify.core.memory import PathNeed, circle_pairs
from verify.core.params import Choice, Int, Real, Reals
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread
from verify.rates import record_rate

__all__ = ["CALIBRATION", "CHECK", "main", "run"]

CHECK = Check("euler_steps",
              printed="dH/dt = H'' + (log p)' H', the final PDE of the Appendix-B proof of Theorem 3, which fails",
              host_only="sparse kernel on a quantile grid (k-d tree)")

#: The measured tolerances (T = t_final; deterministic grid: the seed is unused).
CALIBRATION = Calibration(
    Tolerance("error_slope", 0.15, measured=0.0103, over={"t_final": (0.05, 0.2)},
              why="ledger DRIFT-5 slope 1 +- 0.15: the fitted slope at n = 4000; the t = L eps map and the printed "
                  "drift give slopes near 0 (-0.02)"),
    Tolerance("min_error", 2e-3, measured=1.72e-4, over={"t_final": (0.05, 0.2)},
              why="the error at the smallest eps, larger at T = 0.2 than at 0.05; the t = L eps map gives 0.084 and "
                  "the printed drift 0.034"),
)

#: drift coefficient c of dH/dt = H'' + c (log p)' H': Theorem 3 (corrected) and the Appendix-B proof (printed)
_DRIFT = {"corrected": 2.0, "printed": 1.0}


@CHECK.parameters
class Params:
    time_per_step: float = Real(0.5, "PDE time per attention layer in units of eps (Theorem 3: 1/2; any other value, "
                                     "e.g. 1 for the time map t = L eps, is a negative control and fails)",
                                low=0.05, high=5.0)
    # amplitude 0 makes p uniform: the drift term vanishes and a wrong drift claim passes (measured: drift 1
    # PASSED at amplitude 0; fails at 0.1 with error 0.0057 > 0.002), so p must vary
    amplitude: float = Real(0.5, "Density p ~ 1 + amplitude cos theta on S^1 (at 0 the drift term vanishes and a "
                                 "wrong drift would pass)", low=0.1, high=0.9)
    n: int = Int(4000, "Quantile-grid points on S^1; the widest gap must not exceed sqrt(min eps)", low=500,
                 high=100000, unit="points")
    t_final: float = Real(0.05, "PDE time T at which the error is measured (ledger: 0.05 and 0.2)", low=0.01, high=1.0)
    eps_grid: tuple = Reals((0.001, 0.002, 0.004, 0.008), "eps values; L = round(T / (time_per_step eps)) layers each",
                            low=1e-4, high=0.05, min_len=4)
    initial: str = Choice("smooth", ("smooth", "step"),
                          "Initial condition H_0: smooth cos theta + 0.5 sin 2 theta + 0.3 cos 3 theta, or step 1 on "
                          "|theta| < pi/2 (the error then decays more slowly than eps at t <= 0.2)")

    def resolve(self):
        """The quantile grid must resolve the smallest kernel: widest gap (2 pi / n) / (1 - amplitude) <= sqrt(eps)."""
        gap = 2 * np.pi / self.n / (1.0 - self.amplitude)
        if gap > math.sqrt(min(self.eps_grid)):
            raise InputError(f"n too small: widest grid gap {gap:.3g} > sqrt(min eps_grid) "
                             f"{math.sqrt(min(self.eps_grid)):.3g}; increase n or the smallest eps")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """Max errors of L attention layers against the asserted PDE (p.claim's drift) at t = L time_per_step eps."""

    eps: np.ndarray  # the eps grid
    errors: np.ndarray  # max |H_L - H_PDE(t)| per eps
    steps: np.ndarray  # L per eps
    error_slope: float  # fitted exponent of errors in eps
    error_slope_stderr: float
    time_smallest_eps: float  # t = L time_per_step eps at the first eps
    #: the first eps's run by angle (what DRIFT Fig. 2 draws): angle, density p, H_0, attention iterate, PDE solution
    theta: np.ndarray
    density: np.ndarray
    initial: np.ndarray
    attention: np.ndarray
    pde: np.ndarray
    rms_error_smallest_eps: float  # RMS(attention - pde) at the first eps


@CHECK.memory
def needs(p) -> dict:
    """The sparse kernel cut at 7 sqrt(eps) at the largest eps."""
    # circle_pairs(...) is within 1 % of the stored count at n = 4000; tracemalloc peaks 59.4 / 156.6 MiB at
    # n = 2000 / 4000 (the defaults otherwise) fit 27.0 MiB + 37.2 bytes per entry (cKDTree pairs, CSR, the
    # normalised operator); 44 bytes leave a margin.
    chord, concentration = 7 * math.sqrt(max(p.eps_grid)), 1 + p.amplitude**2 / 2

    def peak(m):
        return (32 << 20) + 44 * circle_pairs(m, chord, concentration=concentration)

    return {"sparse": PathNeed(peak, p.n, option="--n", low=500,
                               what=f"the sparse heat kernel (cut at 7 sqrt(eps)) at --n {p.n}, largest eps "
                                    f"{max(p.eps_grid):g}",
                               other="smaller --eps-grid values (fewer neighbours within the cutoff)")}


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """L attention steps H <- S_eps H against the PDE of p.claim's drift, per eps."""
    drift = _DRIFT[p.claim]
    dens = manifolds.CosineDensity(p.amplitude)
    errors, steps = [], []
    with ctx.timed("iterate"):
        x = dens.quantile_grid(p.n)
        theta = np.arctan2(x[:, 1], x[:, 0])
        h0 = manifolds.drift_pde_initial(theta, p.initial)
        for j, eps in enumerate(p.eps_grid):
            L = max(1, int(round(p.t_final / (p.time_per_step * eps))))
            t = L * p.time_per_step * eps
            op = spectral.heat_markov(x, eps=eps, method="sparse", cutoff=7.0)
            h = h0.copy()
            for _ in range(L):
                h = op.apply(h)
            with single_blas_thread():  # one dense 512 x 512 eigensolve per density and drift (cached)
                ref = manifolds.drift_pde_solution(theta, t, amplitude=p.amplitude, drift=drift, initial=p.initial)
            errors.append(float(np.max(np.abs(h - ref))))
            steps.append(L)
            if j == 0:  # the smallest-eps run, by angle, for DRIFT Fig. 2
                order = np.argsort(theta)
                first = {"theta": theta[order], "initial": h0[order], "attention": h[order], "pde": ref[order],
                         "time": t}
    fit = fit_power_law(p.eps_grid, errors)
    return Quantities(
        eps=np.asarray(p.eps_grid), errors=np.asarray(errors), steps=np.asarray(steps), error_slope=fit.slope,
        error_slope_stderr=fit.slope_stderr, time_smallest_eps=first["time"], theta=first["theta"],
        density=(1 + p.amplitude * np.cos(first["theta"])) / (2 * np.pi), initial=first["initial"],
        attention=first["attention"], pde=first["pde"],
        rms_error_smallest_eps=float(np.sqrt(np.mean((first["attention"] - first["pde"]) ** 2))))


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """First order in eps at fixed t, and a small error at the smallest eps."""
    drift = _DRIFT[p.claim]
    step_hint = ("a step H_0 is not smooth: at t <= 0.2 the error decays more slowly than eps (measured slopes "
                 "0.30, 0.54, 0.73 at t = 0.0125, 0.05, 0.2, n = 5000, eps 1e-3..8e-3)") if p.initial == "step" else ""
    record_rate(rec, "error_slope", q.error_slope, 1.0, atol=CALIBRATION.get("error_slope", p), x=q.eps,
                errors=q.errors, asymptote="small", label=f"error does not decay like eps at fixed t = {p.t_final:g}",
                hint=step_hint)
    rec.info("error_slope_stderr", q.error_slope_stderr)
    rec.at_most("min_error", float(np.min(q.errors)), CALIBRATION.get("min_error", p),
                label=f"smallest-eps max error: attention does not follow dH/dt = H'' + {drift:g} (log p)' H' at "
                      f"t = L {p.time_per_step:g} eps")
    rec.info("max_error", float(np.max(q.errors)))
    rec.info("rms_error_smallest_eps", q.rms_error_smallest_eps)
    rec.info("time_smallest_eps", q.time_smallest_eps)
    return (f"{int(q.steps[0])} attention layers at eps = {p.eps_grid[0]:g} approximate dH/dt = H'' + "
            f"{drift:g}(log p)'H' at t = L * {p.time_per_step:g} eps with error O(eps) (p ~ 1 + {p.amplitude:g} "
            f"cos theta, quantile grid, {p.initial} H_0)")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
