"""Theorem 4 (conformal rewriting) and the heat-conduction form with invariant measure p^2 (DRIFT).

Symbolic part (sympy, flat metric ``g = delta`` in ``R^n``, symbolic ``p = e^phi`` and ``u``):
``At u = Delta u + 2 <grad log p, grad u>`` equals ``f Delta_gt u`` with ``gt = f g`` and
``f = p^(4/(n-2))`` (the printed "p^(4/n-2)" read with the parenthesisation of the proof's
``lambda = 2 log p / (n-2)``) for n = 1, 3, 4; the literal reading ``p^(4/n - 2)`` fails; for n = 2
``f Delta_(f delta) = Delta`` for every ``f`` (conformal covariance), so no conformal form exists,
while the heat-conduction form ``At = p^-2 div(p^2 grad)`` holds for every n.
Numerical part (S^1, von Mises density): ``At`` is symmetric in ``L^2(p^2 dtheta)`` (quadrature);
``S = D^-1 W`` is reversible with ``pi_i ~ D_i``, and ``D_i / p(x_i)`` is flat, i.e. the stationary
density of the attention chain is proportional to ``p^2``.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

import manifolds
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError, UnavailableError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.params import Int, Real
from verify.core.result import Recorder
from verify.core.threads import single_blas_thread

CHECK = Check("conformal", devices=("cpu", "gpu"),
              printed='Theorem 4 with f = p^(4/n - 2), the formula as printed read literally (fails for n = 1, 3, 4)')

#: The measured tolerances (the symbolic identities, the quadrature and the reversibility are exact,
#: next to their assertions).
CALIBRATION = Calibration(
    Tolerance("s1_spectrum_relative_error", 1e-3, measured=1.4e-5,
              why="second differences on 4000 arclength cells: relative error ~ lambda_k h^2 / 12 for the 8 lowest "
                  "modes; the printed exponent (f = p^2) is off by 0.167"),
    # Resolution of the stationary-density test (quantile grid, kernel width sqrt(eps)), measured at
    # kappa in [0.5, 5], n in [1000, 20000], eps in [1e-5, 1e-2]: deviation <= 0.4 kappa^2 eps (kernel
    # bias; 1.0 % at kappa^2 eps = 0.027) while the widest grid gap 1/(n p_min) <= 1.71 sqrt(eps), but
    # 0.25-2.9 once it is >= 3.5 sqrt(eps) (e.g. 0.58 at kappa = 3, n = 4000, eps = 1e-3). Params.resolve
    # refuses those settings rather than report them as a failure of the claim.
    Tolerance("stationary_profile_deviation", 0.02, measured=7.1e-3, over={"eps": (1e-3, 3e-3, 1e-2)},
              valid={"kappa": (0.5, 5.0), "n": (1000, 20000), "eps": (1e-5, 1e-2)},
              why="DRIFT-8 tolerance 2 %: O(eps p''/p) kernel bias plus the grid's self-term "
                  "1/(n sqrt(2 pi eps) p), growing with eps, at n = 4000, kappa = 1, w = 2; w = 1 (density p) gives "
                  "1.08"),
)


@CHECK.parameters
class Params:
    weight_power: float = Real(2.0, "Power w of the invariant density p^w tested (DRIFT-8: w = 2; any other value "
                                    "is a negative control and fails)", low=-4, high=4)
    kappa: float = Real(1.0, "Von Mises concentration of the density p on S^1", low=0.0, high=5.0, low_open=True)
    n: int = Int(4000, "Points on S^1 for the reversibility (at most 2000 i.i.d.) and stationary-density (quantile "
                       "grid) tests; the widest grid gap must not exceed 2 sqrt(eps)", low=200, high=20000,
                 unit="points")
    eps: float = Real(1e-3, "Heat-kernel parameter of W = exp(-|x-y|^2/(2 eps)); kappa^2 eps <= 0.04", low=1e-5,
                      high=0.1)
    bins: int = Int(16, "Angular bins of the stationary-density profile, with n / bins >= 50", low=4, high=200)

    def resolve(self):
        """n / bins >= 50; the quantile grid resolves the kernel; the kernel bias stays inside the tolerance."""
        n, bins, eps, kappa = self.n, self.bins, self.eps, self.kappa
        if n / bins < 50:
            raise InputError(f"n / bins must be >= 50 for a stable profile, got n={n}, bins={bins}")
        p_min = float(manifolds.VonMises(mu=0.0, kappa=kappa).pdf(np.array([[-1.0, 0.0]]))[0])
        gap = 1.0 / (n * p_min)
        if gap > 2 * np.sqrt(eps):
            raise InputError(f"n too small for kappa and eps: widest quantile-grid gap 1/(n p_min) = {gap:.3g} "
                             f"exceeds 2 sqrt(eps) = {2 * np.sqrt(eps):.3g}; increase n or eps, or lower kappa")
        if kappa**2 * eps > 0.04:
            raise InputError(f"eps too large for kappa: kernel bias ~0.4 kappa^2 eps = {0.4 * kappa**2 * eps:.3g} "
                             f"must stay <= 0.016 (tolerance 0.02); lower eps or kappa")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What conformal measures (symbolic remainders as sympy's text, "0" when they simplify to zero)."""

    #: n -> At u - p^-2 div(p^2 grad u), simplified (n = 1..4)
    heat_form_remainder: dict[int, str]
    #: f Delta_(f delta) u - Delta u in n = 2 for a general conformal factor f, simplified
    n2_f_lap_minus_lap: str
    #: n -> |At u - f Delta_gt u| at a test point for concrete phi, u (exactly 0.0 when the symbolic
    #: remainder simplifies to 0), n = 1, 3, 4, with the exponent of p.claim
    theorem4_remainder: dict[int, float]
    #: max relative difference of the 8 lowest eigenvalues of f Delta_gt and At on S^1
    s1_spectrum_relative_error: float
    #: |<At u, v> - <u, At v>| / max in L^2(p^w dtheta), w = weight_power (trapezoid quadrature)
    at_asymmetry: float
    #: max |pi_i S_ij - pi_j S_ji| / max pi_i S_ij on i.i.d. samples
    reversibility_defect: float
    #: binned D_i / p(x_i)^(w - 1) on the quantile grid (bins with points), and its max relative deviation
    #: from its mean
    stationary_profile: np.ndarray
    stationary_profile_deviation: float


#: exponent of f = p^e in Theorem 4 at dimension n: corrected 4/(n-2), printed "p^(4/n-2)" read literally
_EXPONENT = {"corrected": lambda sp, n: sp.Rational(4, n - 2), "printed": lambda sp, n: sp.Rational(4, n) - 2}


@functools.lru_cache(maxsize=2)
def _symbolic(claim):
    """sympy differences ``At u - f Delta_gt u`` and ``At u - p^-2 div(p^2 grad u)`` per dimension."""
    try:
        import sympy as sp
    except ImportError:  # pragma: no cover - sympy is a dependency of the toolkit
        raise UnavailableError("verify.conformal needs sympy (pip install sympy)") from None

    out = {}
    for n in (1, 2, 3, 4):
        xs = sp.symbols(f"x1:{n + 1}", real=True)
        phi = sp.Function("phi")(*xs)
        u = sp.Function("u")(*xs)
        p = sp.exp(phi)
        lap = sum(sp.diff(u, x, 2) for x in xs)
        at = lap + 2 * sum(sp.diff(sp.log(p), x) * sp.diff(u, x) for x in xs)
        heat = p**-2 * sum(sp.diff(p**2 * sp.diff(u, x), x) for x in xs)
        out[f"heat_form_n{n}"] = sp.simplify(sp.expand(at - heat))
        if n == 2:
            # general conformal factor f = e^(2 lam): Delta_(f delta) u = f^(-n/2) div(f^((n-2)/2) grad u)
            lam = sp.Function("lam")(*xs)
            f = sp.exp(2 * lam)
            lg = f ** sp.Rational(-n, 2) * sum(sp.diff(f ** sp.Rational(n - 2, 2) * sp.diff(u, x), x) for x in xs)
            out["n2_f_lap_minus_lap"] = sp.simplify(sp.expand(f * lg - lap))
            continue
        f = p ** _EXPONENT[claim](sp, n)
        lg = f ** sp.Rational(-n, 2) * sum(sp.diff(f ** sp.Rational(n - 2, 2) * sp.diff(u, x), x) for x in xs)
        diff = sp.simplify(sp.expand(at - f * lg))
        # a nonzero symbolic remainder is confirmed numerically with concrete phi, u at a point
        concrete = {phi: sum((k + 1) * x / 3 for k, x in enumerate(xs)) + xs[0] ** 2 / 5,
                    u: sp.sin(xs[0]) + sum(x**2 for x in xs) / 2}
        value = diff.subs(concrete).doit()
        value = float(sp.N(value.subs({x: sp.Rational(3, 10) for x in xs})))
        out[f"theorem4_n{n}"] = (diff, value)
    return out


@functools.lru_cache(maxsize=2)
def _spectrum_comparison(claim, *, modes=8, cells=4000):
    """Relative difference of the lowest nonzero eigenvalues of At and of f Delta_gt on S^1 (n = 1).

    At = d^2/dtheta^2 + 2 (log p)' d/dtheta for p ~ 1 + 0.5 cos theta by Fourier collocation
    (spectrally accurate); f Delta_gt with gt = f dtheta^2 by second differences in the arclength
    s = int sqrt(f) dtheta of gt (Delta_gt = d^2/ds^2 in one dimension).
    """
    _, at = manifolds.drift_collocation_matrix(256, 0.5, 2.0)
    lam_at = np.sort(-np.real(np.linalg.eigvals(at)))[1:modes + 1]
    power = -4.0 if claim == "corrected" else 2.0  # 4/(n-2) vs 4/n - 2 at n = 1
    fine = np.linspace(0, 2 * np.pi, 2**16 + 1)
    sqrt_f = (1 + 0.5 * np.cos(fine)) ** (power / 2)
    s_cum = np.concatenate([[0.0], np.cumsum((sqrt_f[1:] + sqrt_f[:-1]) / 2 * np.diff(fine))])
    h = s_cum[-1] / cells
    theta_s = np.interp(h * np.arange(cells), s_cum, fine)
    f_vals = (1 + 0.5 * np.cos(theta_s)) ** power
    import scipy.sparse as sp
    from scipy.sparse.linalg import eigsh

    ones = np.ones(cells)
    lap = sp.diags_array([ones[:-1], -2 * ones, ones[:-1], [1.0], [1.0]], offsets=[-1, 0, 1, cells - 1, -(cells - 1)],
                         shape=(cells, cells), format="csc") / h**2
    sf = sp.diags_array(np.sqrt(f_vals))
    neg = -(sf @ lap @ sf).tocsc()  # similar to -diag(f) lap: symmetric positive semidefinite
    vals = eigsh(neg, k=modes + 1, sigma=-0.5, which="LM", v0=np.ones(cells), return_eigenvectors=False)
    lam_conf = np.sort(vals)[1:modes + 1]
    return float(np.max(np.abs(lam_conf / lam_at - 1.0)))


def _angles(x):
    return np.arctan2(x[:, 1], x[:, 0])


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Theorem 4 symbolically, the S^1 spectra, and the p^2 invariant measure numerically on S^1."""
    xp = ctx.xp
    eps, weight_power = p.eps, p.weight_power
    density = manifolds.VonMises(mu=0.0, kappa=p.kappa)

    with ctx.timed("sympy"):
        sym = _symbolic(p.claim)
    heat = {n: str(sym[f"heat_form_n{n}"]) for n in (1, 2, 3, 4)}
    theorem4 = {}
    for n in (1, 3, 4):
        diff, value = sym[f"theorem4_n{n}"]
        # the remainder simplifies to 0 exactly, so its value at the test point is exactly 0.0
        theorem4[n] = abs(value) if diff != 0 else 0.0

    # ---- DRIFT-7 numerically on S^1 (n = 1): spectrum of f Delta_(f g) against that of At
    # one BLAS thread: a 256 x 256 eig and a shift-invert eigsh oversubscribe a loaded machine (verify.core.threads)
    with ctx.timed("spectra"), single_blas_thread():
        spec_err = _spectrum_comparison(p.claim)

    # ---- DRIFT-8 on S^1: symmetry of At in L^2(p^w), reversibility, stationary density p^2
    m = 4096  # trapezoid on a periodic analytic integrand: error ~ I_m(kappa)-small (machine precision)
    th = 2 * np.pi * np.arange(m) / m
    xq = np.stack([np.cos(th), np.sin(th)], axis=1)
    pden = np.asarray(density.pdf(xq))
    logp_d = np.sum(np.asarray(density.grad_log_pdf(xq)) * np.stack([-xq[:, 1], xq[:, 0]], axis=1), axis=1)
    u, du, d2u = (np.cos(th) + 0.5 * np.sin(2 * th), -np.sin(th) + np.cos(2 * th), -np.cos(th) - 2 * np.sin(2 * th))
    v, dv, d2v = (np.sin(3 * th) + 0.3 * np.cos(th), 3 * np.cos(3 * th) - 0.3 * np.sin(th),
                  -9 * np.sin(3 * th) - 0.3 * np.cos(th))
    at_u = d2u + 2 * logp_d * du
    at_v = d2v + 2 * logp_d * dv
    wgt = pden**weight_power
    lhs = float(np.mean(at_u * v * wgt))
    rhs = float(np.mean(u * at_v * wgt))

    def kernel(xa, xb):
        # |x_i - x_j|^2 = 2 - 2 x_i.x_j on the unit circle (clipped at 0 against round-off)
        sq = xp.clip(2.0 - 2.0 * (xa @ xb.T), 0.0, None)
        return xp.exp(-sq / (2 * eps))

    def degrees(x):
        xd = xp.asarray(x)
        w = kernel(xd, xd)
        return w, xp.sum(w, axis=1)

    def row_sums(x):
        # the same rows as degrees(x), a block of rows at a time: at most 2^22 kernel entries (32 MiB)
        # and their temporaries alive, whatever n (the grid goes to n = 20000: 3.2 GB per n x n array)
        xd = xp.asarray(x)
        m = xd.shape[0]
        block = max(1, (1 << 22) // m)
        return xp.concat([xp.sum(kernel(xd[i:min(i + block, m), :], xd), axis=1) for i in range(0, m, block)])

    with ctx.timed("reversibility"):
        x_iid = density.sample(min(p.n, 2000), rng=child_rng(p.seed, "reversibility"))
        w, deg = degrees(x_iid)
        s = w / deg[:, None]
        pi = deg / xp.sum(deg)
        flow = pi[:, None] * s
        rev = float(to_numpy(xp.max(xp.abs(flow - flow.T)) / xp.max(flow)))

    # Stationary density: pi_i ~ D_i ~ N sqrt(2 pi eps) p(x_i), so the pi-mass per unit angle is
    # ~ p * p. Tested on the deterministic quantile grid theta_i = F^-1((i + 1/2)/n): on i.i.d. samples
    # the binned pi-mass carries the Poisson noise of the sample (measured 9-16 % at n = 4000 over
    # seeds 0-3), which hides the 2 % statement; the grid leaves only the O(eps) kernel bias.
    with ctx.timed("stationary"):
        x_grid = density.quantile_grid(p.n)
        deg_np = to_numpy(row_sums(x_grid))
    theta = _angles(x_grid)
    ratio = deg_np / np.asarray(density.pdf(x_grid)) ** (weight_power - 1.0)
    edges = np.linspace(-np.pi, np.pi, p.bins + 1)
    idx = np.clip(np.searchsorted(edges, theta, side="right") - 1, 0, p.bins - 1)
    # empty bins are left out; a bin whose mean is NaN stays (filtering non-finite means dropped it)
    prof = np.array([ratio[idx == b].mean() for b in range(p.bins) if np.any(idx == b)])
    return Quantities(heat_form_remainder=heat, n2_f_lap_minus_lap=str(sym["n2_f_lap_minus_lap"]),
                      theorem4_remainder=theorem4, s1_spectrum_relative_error=spec_err,
                      at_asymmetry=abs(lhs - rhs) / max(abs(lhs), abs(rhs)), reversibility_defect=rev,
                      stationary_profile=prof,
                      stationary_profile_deviation=float(np.max(np.abs(prof / np.mean(prof) - 1.0))))


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Every symbolic remainder zero, the S^1 spectra, symmetry in L^2(p^w), reversibility, the profile."""
    for n in (1, 2, 3, 4):
        val = q.heat_form_remainder[n]
        rec.holds(f"heat_form_n{n}_is_zero", val == "0",
                  why="exact symbolic identity (sympy simplifies the remainder to 0)",
                  label=f"heat-conduction form At = p^-2 div(p^2 grad) fails for n={n}: symbolic remainder {val}")
        if n == 2:
            val = q.n2_f_lap_minus_lap
            rec.holds("n2_f_lap_minus_lap_is_zero", val == "0",
                      why="exact symbolic identity (sympy simplifies the remainder to 0)",
                      label=f"no conformal form in n = 2: f Delta_(f delta) != Delta: symbolic remainder {val}")
            continue
        rec.at_most(f"theorem4_n{n}_remainder_at_point", q.theorem4_remainder[n], 0.0,
                    why="exact symbolic identity (sympy simplifies At u - f Delta_gt u to 0); the printed "
                        "exponent leaves a remainder > 0.1 at the test point",
                    label=f"Theorem 4 with f = p^({p.claim} exponent) fails for n={n} (At u - f Delta_gt u "
                          f"at a test point)")

    rec.at_most("s1_spectrum_relative_error", q.s1_spectrum_relative_error,
                CALIBRATION.get("s1_spectrum_relative_error", p),
                label=f"S^1: spectrum of f Delta_gt ({p.claim} exponent) differs from that of At (8 lowest modes)")
    rec.at_most("at_asymmetry_in_L2_p^w", q.at_asymmetry, 1e-10,
                why="trapezoid quadrature of a periodic analytic integrand is exact to round-off (measured ~1e-16 "
                    "for w = 2); w = 1 gives O(1)",
                label=f"At is not symmetric in L^2(p^{p.weight_power:g})")
    rec.at_most("reversibility_defect", q.reversibility_defect, 1e-14,
                why="exact algebra: pi_i S_ij = W_ij / sum(D); round-off ~ few eps(float64) relative (measured ~4e-16)",
                label="S = D^-1 W is not reversible w.r.t. pi ~ D")
    rec.at_most("stationary_profile_deviation", q.stationary_profile_deviation,
                CALIBRATION.get("stationary_profile_deviation", p),
                label=f"stationary density is not proportional to p^{p.weight_power:g} (binned "
                      f"D_i/p^{p.weight_power - 1:g})")
    return ("At = Delta + 2<grad log p, grad> = f Delta_(f g) with f = p^(4/(n-2)) for n = 1, 3, 4 (none "
            "for n = 2) and = p^-2 div(p^2 grad) for every n; At is symmetric in L^2(p^2) and the "
            "attention chain S = D^-1 W is reversible with stationary density ~ p^2")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
