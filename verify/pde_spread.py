"""How far information spreads under the PDE refinement, and how fast it decays with distance (PDE-8, 9, 12).

One explicit key-axis diffusion step convolves each attention row with ``[r, 1 - 2r, r]``
(``r = alpha dt / ds^2``), a kernel with mean 0 and variance ``2 r ds^2 = 2 alpha dt``. Away from the
ends, therefore:

PDE-8 (Thm. 1, D.1 item 1, E.1). ``Var_n = Var_0 + 2 alpha n dt`` exactly, the spread is
``sqrt(Var_0 + 2 alpha t)`` (slope 1/2 in t on log-log axes) and the support grows by exactly one token
per side and step; with zero-flux ends the variance saturates at ``(T^2 - 1) / 12`` (uniform row).
The paper's "propagation speed v_eff = Omega(t^(1/2))" has the wrong sign of the exponent: the
spread grows like ``t^(1/2)``, so its speed falls like ``t^(-1/2)``.

PDE-9 (Thm. D.1 item 2). After ``N_t`` steps a row started from a delta is exactly zero beyond ``N_t``
tokens (compact support); in the continuum limit it is the Gaussian
``exp(-s^2 / (4 alpha t)) / sqrt(4 pi alpha t)``, which decays faster than any exponential in the
distance s. The only power law is the peak height ``(4 pi alpha t)^(-1/2)`` in pseudo-time. Vanilla
softmax attention of random tokens without positional bias has no distance decay at all (the mean
weight is flat in ``|i - j|``), so there is no "exponential decay" to improve on.

PDE-12 (Thm. D.2 item 3). A linear range bound ``R(t) >= R(0) + k t`` holds for the support width
(``R_0 + 2n`` exactly) and for the wave front (speed c), not for the diffusive spread: extrapolating
its early rate overshoots at large t.

Rows are evolved through the factored path of :func:`spectral.evolve_attention` (each row is a
column of the key factor, so T = 1024 costs O(T) per step).

``claim="printed"`` asserts the printed statements: the spread speed grows like ``t^(1/2)``, PDE
attention decays polynomially in distance (positive weights everywhere, power-law shape), vanilla
attention decays exponentially with distance, and the diffusive range grows linearly. All fail.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import spectral
from manifolds.references import pde
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.fits import fit_linear, fit_power_law
from verify.core.params import Int, Real, Reals, check_resolved
from verify.core.reduce import count_bad
from verify.core.result import Recorder

CHECK = Check("pde_spread",
              host_only="rows evolve as key-factor columns of the factored step, O(T) per step for at most 65 "
                        "rows (T <= 8192); the vanilla profile averages 256 x 256 softmax matrices",
              printed="a growing spread speed, polynomial decay in distance, exponential decay of vanilla attention "
                      "and linear diffusive range growth, which fail")

#: The measured tolerances (the others are exact algebra or bounds computed from theory next to their assertion).
#: The delta row and the pulse are not random: every row is calibrated over the number of steps instead of the
#: seed, and holds from 32 steps on (the smallest accepted; also measured at 1000, 2000 and 4056 steps, size 8192).
_STEPS = {"over": {"steps": (32, 100, 200, 400)}, "valid": {"steps": (32, None)}}
CALIBRATION = Calibration(
    Tolerance("spread_speed_exponent", 0.02, measured=0.0030, **_STEPS,
              why="d/dt sqrt(2 alpha t) ~ t^(-1/2); finite differences on a geometric grid bias the fitted exponent "
                  "by < 0.01; the printed t^(1/2) is 1 away"),
    Tolerance("heat_kernel_second_order", 2.0, measured=1.012, **_STEPS,
              why="what the first-order lattice term (lattice_kernel_correction) leaves of profile / heat kernel - 1 "
                  "within 3 sigma is O(n^-2): times steps^2 it was 0.64-1.04 for every n in 16..4056 (r = 1/4, size "
                  "8192; largest at n = 18, 0.98 from n = 200 on); a step with r 1 % off leaves ~0.04 n^2"),
    Tolerance("peak_height_exponent", 0.01, measured=0.0053, **_STEPS,
              why="peak ~ (4 pi alpha t)^(-1/2) (1 - 1/(8t) + ...), fitted over t >= 16 (bias < 0.008); a power law "
                  "other than t^(-1/2) is off by more"),
    Tolerance("gaussian_over_exponential_r2", 0.01, measured=0.0549, **_STEPS,
              why="log a is quadratic in s (Gaussian, R^2 = 1.000), a linear (exponential) fit has R^2 0.94; an "
                  "exponential profile would give a negative difference"),
    Tolerance("linear_extrapolation_overshoot", 2.0, measured=5.66, **_STEPS,
              why="the spread is sqrt(2 alpha t): the early linear rate over-predicts the spread at t = n_max by a "
                  "large factor (r = 0.1, from a delta); a linear range growth would give <= 1"),
)


def _evolve_rows(rows: np.ndarray, steps: int, *, alpha: float, pde: str = "diffusion", c: float = 0.15,
                 boundary: str = "neumann") -> np.ndarray:
    """Evolve each row of ``rows`` (shape (m, T)) along its keys: the key factor of phi(Q) phi(K)^T."""
    key = np.ascontiguousarray(rows.T)
    fa = spectral.FactoredAttention(np.ones_like(key), key)
    res = spectral.evolve_attention(fa, pde=pde, steps=steps, alpha=alpha, c=c, boundary=boundary)
    return res.attention.key.T


def _moments(rows: np.ndarray):
    """Mean and variance of each row as a distribution over positions (centred to avoid cancellation)."""
    j = np.arange(rows.shape[1], dtype=float) - rows.shape[1] // 2
    mass = rows.sum(axis=1)
    mean = rows @ j / mass
    var = rows @ (j * j) / mass - mean * mean
    return mean, var


@CHECK.parameters
class Params:
    size: int = Int(1024, "Sequence length T; rows start at the centre and stay away from the ends for steps steps",
                    low=256, high=8192, unit="tokens")
    rates: tuple = Reals((0.1, 0.25, 0.5), "Mesh ratios r = alpha dt / ds^2 (dt = ds = 1)", low=0.0, high=0.5,
                         low_open=True)
    steps: int = Int(200, "Steps n (pseudo-time t = n), at most size / 2 - 40; at least 32: the peak height's exponent "
                     "is fitted over t in [16, steps], a factor 2 at least (its lattice bias 1/(8t) < 0.008 there)",
                     low=32, high=8192 // 2 - 40)
    random_rows: int = Int(4, "Random non-negative rows (support 65 tokens) besides the delta row", low=1, high=64)
    variance_rate: float = Real(2.0, "Claimed coefficient q in Var_n = Var_0 + q alpha n dt (2 is exact; other "
                                     "values are negative controls)", low=0.0, high=8.0, low_open=True)
    softmax_draws: int = Int(32, "Random softmax matrices (T = 256, d = 16) for the distance profile of vanilla "
                             "attention", low=8, high=256)

    def resolve(self):
        """The rule between parameters: the rows stay away from the ends for steps steps."""
        if self.steps > self.size // 2 - 40:
            raise InputError(f"steps must be an integer in [32, {self.size // 2 - 40}] (at most size / 2 - 40: the rows "
                             f"stay away from the ends), got {self.steps!r}")
        for r in self.rates:
            check_resolved("rates", r, "each mesh ratio r")
        return self


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What pde_spread measures (key axis, cell-centred Neumann, dt = ds = 1)."""

    #: the checkpoints n (a geometric grid up to steps)
    spread_steps: np.ndarray
    #: r -> spread (standard deviation) of the delta row at the checkpoints
    spread: dict[float, np.ndarray]
    #: variance of each row (the delta first) at n = 0, and r -> at the checkpoints (shape checkpoints x rows)
    initial_variance: np.ndarray
    variance: dict[float, np.ndarray]
    #: max |outermost non-zero token of the delta row - (centre -+ n)| over the n where r^n is a normal float
    support_extent_error: int
    #: r -> log-log slope of the spread against n, and of its speed (finite differences) against t
    spread_slope: dict[float, float]
    spread_speed_slope: dict[float, float]
    #: variance of a delta (T = 32) after 3000 steps at r = 1/2 with zero-flux ends
    saturated_variance: float
    #: non-zero entries of a delta beyond N_t tokens after N_t in {1, 2, 4} steps (r = 1/4), and its non-finite ones
    nonzero_beyond_steps: int
    #: the delta after steps steps at r = 1/4 within 3 sigma (s > 0) against the heat kernel
    profile_offsets: np.ndarray
    profile_discrete: np.ndarray
    profile_heat_kernel: np.ndarray
    heat_kernel_relative_error: float
    #: max |first-order lattice correction| over the window (lattice_kernel_correction), and
    #: steps^2 max |profile / heat kernel - 1 - that correction|
    heat_kernel_lattice_term: float
    heat_kernel_second_order: float
    #: R^2 of log a against s^2 (Gaussian), s (exponential) and log s (power law)
    gaussian_fit_r2: float
    exponential_fit_r2: float
    power_fit_r2: float
    #: log-log slope of the peak height against t >= 16
    peak_height_exponent: float
    #: vanilla softmax: mean weight per distance bin in units of 1/T, the largest |z| of a bin, log-slope fit
    vanilla_bin_means: np.ndarray
    vanilla_max_bin_z: float
    vanilla_log_slope_per_token: float
    vanilla_log_slope_stderr: float
    #: (spread at t_max from the early linear rate) / (spread at t_max), r = rates[0]
    linear_extrapolation_overshoot: float
    #: max |support width - (65 + 2 n)| of a random row at n in {10, 50, 100} (those above steps: steps)
    support_width_error: int
    #: the wave's front (argmax of the right pulse) against t, and its fitted speed
    wave_front_times: np.ndarray
    wave_front_positions: np.ndarray
    wave_front_speed: float


def lattice_kernel_correction(offsets, r: float, n: int) -> np.ndarray:
    """The first-order (Edgeworth) relative correction of the n-step ``[r, 1 - 2r, r]`` kernel to the heat kernel.

    One step moves a token by -1, 0, 1 with probabilities r, 1 - 2r, r: variance ``2 r``, fourth cumulant
    ``2 r - 12 r^2``, odd cumulants 0. After n steps the local limit theorem with its first correction reads
    ``p_n(s) = phi_sigma(s) (1 + K4 He4(s / sigma) / (24 sigma^4) + O(n^-2))``, ``sigma^2 = 2 r n``,
    ``K4 = n (2 r - 12 r^2)``, ``He4(x) = x^4 - 6 x^2 + 3``: a relative term ``(1 - 6 r) He4(x) / (48 r n)``
    (``-He4(x) / (24 n)`` at r = 1/4, 1.25 / n at the window's edge x = 3), whatever the rounding.
    """
    sigma2 = 2.0 * r * n
    x2 = np.asarray(offsets, dtype=float) ** 2 / sigma2
    return (1.0 - 6.0 * r) / (48.0 * r * n) * (x2 * x2 - 6.0 * x2 + 3.0)


#: the distance bins of the vanilla-attention profile
_BINS = 8
#: the wave speed of the front test (PDE Table 11)
_C = 0.15


def support_resolved_steps(r: float) -> int:
    """The steps n over which float64 shows the support of a delta row: its outermost entries are exactly r^n.

    Each step moves the outermost non-zero entry one token out with weight r, so after n steps it is r^n (one
    path); below the smallest normal float (2.2e-308) it loses digits and underflows, and the support stops
    growing in float64 (r = 0.01 leaves the normal range at n = 154). ``n <= log(tiny) / log(r)`` keeps r^n a
    normal number (every n <= 200 for r >= 0.1: r^n >= 1e-200).
    """
    tiny = float(np.finfo(np.float64).tiny)
    return int(math.floor(math.log(tiny) / math.log(r))) if r < 1.0 else np.iinfo(np.int64).max


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Exact variance growth, compact/Gaussian decay, range growth of the refinement."""
    T, centre, rates, steps = p.size, p.size // 2, p.rates, p.steps
    rng = child_rng(p.seed, "rows")
    rows0 = np.zeros((1 + p.random_rows, T))
    rows0[0, centre] = 1.0
    w = rng.random((p.random_rows, 65))
    rows0[1:, centre - 32:centre + 33] = w / w.sum(axis=1, keepdims=True)
    _, var0 = _moments(rows0)
    ns = np.unique(np.round(np.geomspace(1, steps, 24)).astype(int))
    support_err = 0
    spread, speed_slopes, variance = {}, {}, {}
    with ctx.timed("diffusion"):
        for r in rates:
            cur, done = rows0, 0
            std_delta, variances = [], []
            support_steps = support_resolved_steps(r)
            for n in ns:
                cur = _evolve_rows(cur, int(n - done), alpha=r)
                done = n
                _, var = _moments(cur)
                variances.append(var)
                if n <= support_steps:
                    nz = np.nonzero(cur[0])[0]
                    support_err = max(support_err, abs(int(nz[0]) - (centre - n)), abs(int(nz[-1]) - (centre + n)))
                std_delta.append(math.sqrt(var[0]))
            variance[r] = np.array(variances)
            spread[r] = np.array(std_delta)
            t_mid = np.sqrt(ns[1:] * ns[:-1])
            speed = np.diff(spread[r]) / np.diff(ns)
            speed_slopes[r] = fit_power_law(t_mid, speed).slope
    # saturation with zero-flux ends: T = 32, the variance reaches the uniform (T^2 - 1) / 12
    small = np.zeros((1, 32))
    small[0, 3] = 1.0
    _, var_sat = _moments(_evolve_rows(small, 3000, alpha=0.5))

    # PDE-9: compact support and Gaussian shape of the evolved delta
    with ctx.timed("decay"):
        beyond = 0
        for n in (1, 2, 4):
            prof = _evolve_rows(rows0[:1], n, alpha=0.25)[0]
            s = np.abs(np.arange(T) - centre)
            beyond += count_bad(prof, (s <= n) | (prof == 0))  # a NaN anywhere counts (it compares false)
        r_shape, n_shape = 0.25, steps
        prof = _evolve_rows(rows0[:1], n_shape, alpha=r_shape)[0]
        s = np.arange(T) - centre
        sigma = math.sqrt(2 * r_shape * n_shape)
        window = (s > 0) & (s <= 3 * sigma)
        heat = pde.heat_kernel_1d(s[window], r_shape * n_shape)
        heat_err = float(np.max(np.abs(prof[window] / heat - 1.0)))
        correction = lattice_kernel_correction(s[window], r_shape, n_shape)
        heat_residual = float(np.max(np.abs(prof[window] / heat - 1.0 - correction))) * n_shape ** 2
        logp = np.log(prof[window])
        gauss = fit_linear(s[window] ** 2, logp)
        expo = fit_linear(s[window], logp)
        power = fit_linear(np.log(s[window]), logp)
        peaks = []
        cur, done = rows0[:1], 0
        for n in ns:
            cur = _evolve_rows(cur, int(n - done), alpha=r_shape)
            done = n
            peaks.append(float(cur[0, centre]))
        late = ns >= 16
        peak_slope = fit_power_law(ns[late], np.array(peaks)[late]).slope
    # vanilla softmax: mean weight against |i - j| (random tokens, no positional bias)
    Ts, nb = 256, _BINS
    dists = np.abs(np.subtract.outer(np.arange(Ts), np.arange(Ts)))
    edges = np.linspace(1, Ts, nb + 1)
    bins = np.digitize(dists, edges) - 1
    per_draw = []
    for k in range(p.softmax_draws):
        a = pde.softmax_attention(child_rng(p.seed, "vanilla", k), Ts, 16)
        per_draw.append([a[(bins == b) & (dists > 0)].mean() for b in range(nb)])
    per_draw = np.array(per_draw) * Ts  # in units of the uniform weight 1/T
    means = per_draw.mean(axis=0)
    stderr = per_draw.std(axis=0, ddof=1) / math.sqrt(p.softmax_draws)
    z = float(np.max(np.abs(means - 1.0) / np.maximum(stderr, 1e-300)))
    trend = fit_linear(0.5 * (edges[1:] + edges[:-1]), np.log(means))

    # PDE-12: range growth laws
    with ctx.timed("range"):
        std = spread[rates[0]]
        t = ns.astype(float)
        early = t <= 10
        k_early = float(np.max((std[early] - 0.0) / t[early]))  # the best early linear rate
        overshoot = float((std[0] + k_early * (t[-1] - t[0])) / std[-1])
        widths = []
        cur, done = rows0[1:2], 0
        # at most steps steps: the support (65 + 2 n tokens around the centre) stays off the ends (size 256 and
        # n = 100 reached them: a wrong FAIL)
        width_steps = sorted({10, min(50, steps), min(100, steps)})
        for n in width_steps:
            cur = _evolve_rows(cur, n - done, alpha=0.25)
            done = n
            nz = np.nonzero(cur[0])[0]
            widths.append(int(nz[-1] - nz[0] + 1))
        width_err = max(abs(wd - (65 + 2 * n)) for wd, n in zip(widths, width_steps))
        pulse = np.exp(-0.5 * ((np.arange(T) - centre) / 8.0) ** 2)[None, :]

        fronts, wave_t = [], []
        key = np.ascontiguousarray(pulse.T)
        res = spectral.evolve_attention(spectral.FactoredAttention(np.ones_like(key), key), pde="wave", steps=0, c=_C)
        for n in range(200, min(2001, int((T / 2 - 60) / _C)), 200):
            res = spectral.evolve_attention(res.attention, pde="wave", steps=200, c=_C, velocity=res.velocity)
            right = res.attention.key[centre:, 0]
            # np.argmax returns a NaN's position, a finite front: a NaN front stops the speed fit (a failure)
            fronts.append(float(np.argmax(right)) if np.all(np.isfinite(right)) else math.nan)
            wave_t.append(float(n))
        front_speed = fit_linear(wave_t, fronts).slope
    return Quantities(
        spread_steps=ns, spread=spread, initial_variance=var0, variance=variance, support_extent_error=support_err,
        spread_slope={r: fit_power_law(ns, spread[r]).slope for r in rates}, spread_speed_slope=speed_slopes,
        saturated_variance=float(var_sat[0]), nonzero_beyond_steps=beyond, profile_offsets=s[window],
        profile_discrete=prof[window], profile_heat_kernel=heat, heat_kernel_relative_error=heat_err,
        heat_kernel_lattice_term=float(np.max(np.abs(correction))), heat_kernel_second_order=heat_residual,
        gaussian_fit_r2=gauss.r_squared, exponential_fit_r2=expo.r_squared, power_fit_r2=power.r_squared,
        peak_height_exponent=peak_slope, vanilla_bin_means=means, vanilla_max_bin_z=z,
        vanilla_log_slope_per_token=trend.slope, vanilla_log_slope_stderr=trend.slope_stderr,
        linear_extrapolation_overshoot=overshoot, support_width_error=width_err,
        wave_front_times=np.array(wave_t), wave_front_positions=np.array(fronts), wave_front_speed=front_speed)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """The variance identity, compact support, Gaussian decay, no vanilla decay, the range laws."""
    from scipy.special import stdtrit

    corrected = p.claim == "corrected"
    errors = []  # relative |Var_n - (Var_0 + variance_rate r n)| over the rows, rates and checkpoints
    for r, variances in q.variance.items():
        for n, var in zip(q.spread_steps, variances):
            expect = q.initial_variance + p.variance_rate * r * n
            errors.append(float(np.max(np.abs(var - expect) / expect)))
    var_err = np.max(errors)  # np.max: a NaN variance is not skipped
    rec.at_most("variance_identity_relative_error", var_err, 1e-12,
                why="each step convolves with [r, 1-2r, r] (variance 2r); exact up to rounding of sums of T terms "
                    "(centred positions; measured <= 1e-13)",
                label=f"Var_n is not Var_0 + {p.variance_rate:g} alpha n dt")
    rec.equal("support_extent_error", q.support_extent_error, 0,
              why="the three-point stencil moves the outermost non-zero entry (r^n) by exactly one token per step; "
                  "compared at the steps n where r^n is a normal float64 (n <= log(2.2e-308) / log r: every n <= "
                  "200 for r >= 0.1, n <= 153 for r = 0.01)",
              label="the support of a delta row does not grow by one token per side and step")
    rec.at_most("spread_slope_deviation", np.max([abs(q.spread_slope[r] - 0.5) for r in p.rates]), 1e-10,
                why="from a delta the spread is sqrt(2 alpha t) exactly: slope 1/2 to rounding",
                label="the spread does not grow like t^(1/2)")
    rec.close("saturated_variance", q.saturated_variance, (32 ** 2 - 1) / 12.0, rtol=1e-6,
              why="Neumann ends: the row tends to uniform at rate (1 - r mu_1)^n = e^-14 after 3000 steps "
                  "(measured relative 1e-8)",
              label="the variance does not saturate at (T^2 - 1)/12 with zero-flux ends")
    speed_exponent = float(np.mean(list(q.spread_speed_slope.values())))
    if corrected:
        rec.close("spread_speed_exponent", speed_exponent, -0.5, atol=CALIBRATION.get("spread_speed_exponent", p),
                  label="the spread speed does not fall like t^(-1/2)")
    else:
        rec.close("printed_spread_speed_exponent", speed_exponent, 0.5, atol=0.05,
                  why="Thm. D.1(1) as printed: v_eff = Omega(t^(1/2)), a speed growing like t^(1/2)",
                  label="Thm. D.1(1) as printed: the spread speed falls like t^(-1/2) instead of growing")

    rec.equal("nonzero_beyond_steps", q.nonzero_beyond_steps, 0,
              why="after N_t steps of a three-point stencil a delta is exactly 0 beyond N_t tokens",
              label="weights appear beyond N_t tokens")
    second = CALIBRATION.get("heat_kernel_second_order", p)
    rec.at_most("heat_kernel_second_order", q.heat_kernel_second_order, second,
                label="the evolved delta differs from the heat kernel by more than the lattice's first-order term "
                      "(1 - 6r) He4(s/sigma) / (48 r n) + O(n^-2)")
    heat_bound = q.heat_kernel_lattice_term + second.value / p.steps ** 2
    rec.at_most("heat_kernel_relative_error", q.heat_kernel_relative_error, heat_bound,
                why=f"the lattice's first-order term {q.heat_kernel_lattice_term:.3g} (1.25 / n at the window's edge, "
                    f"r = 1/4; lattice_kernel_correction) plus {second.value:g} / n^2 (heat_kernel_second_order); it "
                    "shrinks like 1/n; a step with r 1 % off is ~0.04 off at 3 sigma",
                label="the evolved delta is not the heat kernel exp(-s^2/(4 alpha t)) / sqrt(4 pi alpha t)")
    rec.info("gaussian_fit_r2", q.gaussian_fit_r2)
    rec.info("exponential_fit_r2", q.exponential_fit_r2)
    rec.info("power_fit_r2", q.power_fit_r2)
    rec.close("peak_height_exponent", q.peak_height_exponent, -0.5, atol=CALIBRATION.get("peak_height_exponent", p),
              label="the peak height does not decay like t^(-1/2)")
    rec.info("vanilla_log_slope_per_token", q.vanilla_log_slope_per_token)
    if corrected:
        rec.at_least("gaussian_over_exponential_r2", q.gaussian_fit_r2 - q.exponential_fit_r2,
                     CALIBRATION.get("gaussian_over_exponential_r2", p),
                     label="the decay in distance is not better described by a Gaussian than by an exponential")
        # family-wise level 1e-3 over the bins: Bonferroni with Student t (draws - 1 degrees of freedom);
        # stdtrit is the quantile function scipy.stats.t.ppf evaluates
        z_crit = float(stdtrit(p.softmax_draws - 1, 1.0 - 1e-3 / (2 * _BINS)))
        rec.at_most("vanilla_max_bin_z", q.vanilla_max_bin_z, z_crit,
                    why="no positional bias: keys are exchangeable, so E[A_ij] = 1/T for every |i - j|; 8 distance "
                        "bins, Student t over the draws at family-wise level 1e-3 (measured max 2.7 over seeds 0-29)",
                    label="vanilla softmax attention decays with distance without a positional bias")
    else:
        rec.at_least("printed_power_over_gaussian_r2", q.power_fit_r2 - q.gaussian_fit_r2, 0.0,
                     why="Thm. D.1(2) as printed: distant interactions decay polynomially (a power law fits best)",
                     label="Thm. D.1(2) as printed: the decay in distance is Gaussian (and exactly zero beyond N_t), "
                           "not polynomial")
        rec.at_most("printed_vanilla_log_slope", q.vanilla_log_slope_per_token, -3 * q.vanilla_log_slope_stderr,
                    why="Thm. D.1(2) as printed: vanilla attention decays exponentially with distance "
                        "(a negative log-slope beyond 3 standard errors)",
                    label="Thm. D.1(2) as printed: vanilla attention without positional bias does not decay with "
                          "distance")

    rec.equal("support_width_error", q.support_width_error, 0,
              why="support width R_0 + 2n exactly (linear in n, trivially)",
              label="the support width does not grow by 2 per step")
    rec.close("wave_front_speed", q.wave_front_speed, _C, rtol=0.02,
              why="discrete group velocity c cos(kappa/2) / sqrt(1 - nu^2 sin^2(kappa/2)) ~ c (1 - 0.002) for a "
                  "pulse of width 8 tokens; argmax on the integer grid (measured 0.1497)",
              label="the wave front does not move at speed c")
    if corrected:
        rec.at_least("linear_extrapolation_overshoot", q.linear_extrapolation_overshoot,
                     CALIBRATION.get("linear_extrapolation_overshoot", p),
                     label="the diffusive spread grows linearly")
        return ("Var_n = Var_0 + 2 alpha n dt exactly and the support grows by one token per side and step; the spread "
                "is sqrt(Var_0 + 2 alpha t) (its speed falls like t^(-1/2)); influence is exactly zero beyond N_t "
                "tokens and Gaussian in distance, only the peak decays polynomially (t^(-1/2)); vanilla attention has "
                "no distance decay; range grows linearly for the support and the wave front, not for the diffusive "
                "spread")
    rec.at_most("printed_linear_range_ratio", q.linear_extrapolation_overshoot, 1.0,
                why="Thm. D.2(3) as printed: R(t) >= R(0) + k_r t with the rate k_r of the early steps",
                label="Thm. D.2(3) as printed: the diffusive spread falls below R(0) + k_r t (it grows like t^(1/2))")
    return ("the spread speed grows like t^(1/2), PDE attention decays polynomially in distance while vanilla "
            "attention decays exponentially, and the range grows linearly (PDE-8, 9, 12 as printed)")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
