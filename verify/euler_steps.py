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

import math

import numpy as np

from spectral.validation import InputError, check_int, check_option, check_real, check_reals
from verify.core.check import Check
from verify.core.memory import circle_pairs, require_memory
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread

__all__ = ["CHECK", "run", "main"]

CHECK = Check("euler_steps", claims=("DRIFT-5",))

#: drift coefficient c of dH/dt = H'' + c (log p)' H': Theorem 3 (corrected) and the Appendix-B proof (printed)
_DRIFT = {"corrected": 2.0, "printed": 1.0}


@CHECK.define
def run(*, claim="corrected", time_per_step=0.5, amplitude=0.5, n=4000, t_final=0.05,
        eps_grid=(0.001, 0.002, 0.004, 0.008), initial="smooth", seed=0, device="cpu"):
    """Error of L attention steps against the drift-diffusion PDE at t = L * time_per_step * eps.

    Parameters
    ----------
    claim : {"corrected", "printed"}
        PDE asserted: "corrected" dH/dt = H'' + 2 (log p)' H' (Theorem 3), or "printed" dH/dt =
        H'' + (log p)' H', the final PDE of the Appendix-B proof of Theorem 3 (fails).
    time_per_step : float
        PDE time per attention layer in units of eps, in [0.05, 5] (Theorem 3: 1/2; any other value,
        e.g. 1 for the time map t = L eps, is a negative control and fails).
    amplitude : float
        Density p ~ 1 + amplitude cos theta on S^1, in [0.1, 0.9] (at 0 the drift term vanishes and a
        wrong drift would pass).
    n : int
        Quantile-grid points on S^1, in [500, 100000]; the widest gap must not exceed sqrt(min eps).
    t_final : float
        PDE time T at which the error is measured, in [0.01, 1] (ledger: 0.05 and 0.2).
    eps_grid : tuple of float
        At least four eps values in [1e-4, 0.05]; L = round(T / (time_per_step eps)) layers each.
    initial : {"smooth", "step"}
        Initial condition H_0: "smooth" cos theta + 0.5 sin 2 theta + 0.3 cos 3 theta, or "step"
        1 on |theta| < pi/2 (the error then decays more slowly than eps at t <= 0.2; see the hint).
    seed : int
        Unused (deterministic grid); recorded for the common interface.
    device : {"cpu"}
        Array device; this check runs on the host only (sparse kernel).

    Returns
    -------
    CheckResult
        Passes when the max error at fixed t decays like eps^(1 +- 0.15) and is <= 2e-3 at the
        smallest eps.
    """
    check_option("claim", claim, tuple(_DRIFT))
    time_per_step = check_real("time_per_step", time_per_step, low=0.05, high=5.0)
    # amplitude 0 makes p uniform: the drift term vanishes and a wrong drift claim passes (measured:
    # drift 1 PASSED at amplitude 0; fails at 0.1 with error 0.0057 > 0.002), so p must vary
    amplitude = check_real("amplitude", amplitude, low=0.1, high=0.9)
    n = check_int("n", n, low=500, high=100000)
    t_final = check_real("t_final", t_final, low=0.01, high=1.0)
    eps_grid = check_reals("eps_grid", eps_grid, min_count=4, low=1e-4, high=0.05)
    check_option("initial", initial, ("smooth", "step"))
    # the quantile grid must resolve the smallest kernel: widest gap (2 pi / n) / (1 - amplitude) <= sqrt(eps)
    gap = 2 * np.pi / n / (1.0 - amplitude)
    if gap > math.sqrt(min(eps_grid)):
        raise InputError(f"n too small: widest grid gap {gap:.3g} > sqrt(min eps_grid) {math.sqrt(min(eps_grid)):.3g}; "
                         f"increase n or the smallest eps")
    # Memory first: the sparse kernel cut at 7 sqrt(eps) at the largest eps holds circle_pairs(...)
    # entries (within 1 % of the stored count at n = 4000); tracemalloc peaks 59.4 / 156.6 MiB at
    # n = 2000 / 4000 (the defaults otherwise) fit 27.0 MiB + 37.2 bytes per entry (cKDTree pairs, CSR,
    # the normalised operator); 44 bytes leave a margin.
    def peak(m):
        return (32 << 20) + 44 * circle_pairs(m, 7 * math.sqrt(max(eps_grid)), concentration=1 + amplitude**2 / 2)

    require_memory(peak, n, option="--n", low=500,
                   what=f"the sparse heat kernel (cut at 7 sqrt(eps)) at --n {n}, largest eps {max(eps_grid):g}",
                   other="smaller --eps-grid values (fewer neighbours within the cutoff)")
    from manifolds import CosineDensity, drift_pde_initial, drift_pde_solution
    from spectral import heat_markov
    from verify.core.fits import fit_power_law

    drift = _DRIFT[claim]
    rec = Recorder()
    dens = CosineDensity(amplitude)
    errors, steps = [], []
    with rec.timed("iterate"):
        x = dens.quantile_grid(n)
        theta = np.arctan2(x[:, 1], x[:, 0])
        h0 = drift_pde_initial(theta, initial)
        for j, eps in enumerate(eps_grid):
            L = max(1, int(round(t_final / (time_per_step * eps))))
            t = L * time_per_step * eps
            op = heat_markov(x, eps=eps, method="sparse", cutoff=7.0)
            h = h0.copy()
            for _ in range(L):
                h = op.apply(h)
            with single_blas_thread():  # one dense 512 x 512 eigensolve per density and drift (cached)
                ref = drift_pde_solution(theta, t, amplitude=amplitude, drift=drift, initial=initial)
            errors.append(float(np.max(np.abs(h - ref))))
            steps.append(L)
            if j == 0:  # the smallest-eps run, by angle, for DRIFT Fig. 2
                order = np.argsort(theta)
                first = {"theta": theta[order], "initial": h0[order], "attention": h[order], "pde": ref[order],
                         "time": t}
    fit = fit_power_law(eps_grid, errors)
    step_hint = ("a step H_0 is not smooth: at t <= 0.2 the error decays more slowly than eps (measured slopes "
                 "0.30, 0.54, 0.73 at t = 0.0125, 0.05, 0.2, n = 5000, eps 1e-3..8e-3)") if initial == "step" else ""
    rec.close("error_slope", fit.slope, 1.0, atol=0.15,
              why="ledger DRIFT-5 slope 1 +- 0.15; measured 0.990 +- 0.007 (T = 0.05) and 1.003 (T = 0.2) at "
                  "n = 4000; the t = L eps map and the printed drift give slopes near 0 (-0.02)",
              label=f"error does not decay like eps at fixed t = {t_final:g}", hint=step_hint)
    rec.info("error_slope_stderr", fit.slope_stderr)
    rec.at_most("min_error", min(errors), 2e-3,
                why="measured 8.0e-5 (T = 0.05) and 1.7e-4 (T = 0.2) at the smallest eps; the t = L eps map gives "
                    "0.084 and the printed drift 0.034",
                label=f"smallest-eps max error: attention does not follow dH/dt = H'' + {drift:g} (log p)' H' at "
                      f"t = L {time_per_step:g} eps")
    rec.info("max_error", max(errors))
    rec.info("rms_error_smallest_eps", float(np.sqrt(np.mean((first["attention"] - first["pde"]) ** 2))))
    rec.info("time_smallest_eps", first["time"])
    rec.array("eps", np.asarray(eps_grid))
    rec.array("errors", np.asarray(errors))
    rec.array("steps", np.asarray(steps))
    rec.array("theta", first["theta"])
    rec.array("density", (1 + amplitude * np.cos(first["theta"])) / (2 * np.pi))
    rec.array("initial", first["initial"])
    rec.array("attention", first["attention"])
    rec.array("pde", first["pde"])
    return rec.finish(f"{steps[0]} attention layers at eps = {eps_grid[0]:g} approximate dH/dt = H'' + "
                      f"{drift:g}(log p)'H' at t = L * {time_per_step:g} eps with error O(eps) (p ~ 1 + {amplitude:g} "
                      f"cos theta, quantile grid, {initial} H_0)")


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
