"""Jump lengths of the FNA attention random walk have tail exponent alpha inside s << r << diameter (FNA-20).

The walk moves from token i to J ~ A[i, :], A = N_R(Phi(d/s)) with the intrinsic exponent d_M.
Two geometries: the equispaced circle grid (d_M = 1, geodesic distance) and i.i.d. uniform points on
the flat 2-torus [0, 1)^2 (d_M = 2, periodic distance). Statistics: (1) the exact law of one jump
from a uniformly chosen token, (1/n) sum_ij A_ij [d_ij in bin], on log bins (geometric in r + s)
inside the window; the log-log slope of the bin masses is -alpha (on S^1 the law of R + s is an
exact truncated Pareto; on the torus the continuum law u (u+s)^-(2+alpha) adds an O(s/r) term,
whose exact slope on the same bins is reported and compared too); (2) on the circle, sampled jumps
(graphs.walks.jump_lengths) and the truncated-Pareto MLE of graphs.walks.tail_exponent on the same
window (Hill's estimator is biased upward for alpha > 1.5). alpha = 2 (Gaussian profile): the
window carries no mass (light tail). Negative control: the ambient exponent d_M + 1 (the FNA-10
trap, `--dim-offset 1`) gives tail exponent alpha + 1 and fails.

Memory first: ``method="dense"`` stores both geometries' n x n distances, kernels and attention
matrices (about 32 circle_n^2 + 48 torus_n^2 bytes: 1.3 GB at 4000 and 4000); ``method="matrix-free"``
never stores an n x n array: it sweeps row blocks of A (whole rows, so each block's row sums are
complete), adds up their weighted histograms of distances and draws the sampled jumps by the inverse
CDF of graphs.sample_next from the block holding each source (the same draws as the dense path); its
peak is about 16 MiB plus 43 bytes per sampled jump, its time ~1.2e-6 (circle_n^2 + torus_n^2) seconds
here (19 s at 4000 and 4000). ``method="auto"`` (the default) takes the dense path when its estimate
fits the memory available now, else the matrix-free one; the result records the path used. A request
that does not fit is refused before anything is allocated, naming the options that would fit.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

import graphs
import spectral
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.fits import fit_power_law
from verify.core.memory import PathNeed
from verify.core.params import Int, Real, Reals
from verify.core.result import Recorder

CHECK = Check("levy_jumps", methods=("auto", "dense", "matrix-free"),
              host_only="the jump laws are weighted histograms of the n x n pair distances and the sampled jumps "
                        "come from graphs.jump_lengths, both NumPy code; --method matrix-free keeps the memory linear "
                        "in n (time ~1.2e-6 (circle_n^2 + torus_n^2) s)")

_BINS = 12  # log bins of the window
#: entries of one row block of the matrix-free path (2 MiB of float64 per block-sized array)
BLOCK_ENTRIES = 1 << 18
# Matrix-free peak (tracemalloc, after a first run, which adds ~23 MiB of one-off allocations): 15.6 MiB at
# (circle_n, torus_n) = (2000, 2000) and (4000, 4000) with 5e4 jumps -- the row blocks' working set (distances,
# the torus's coordinate differences, kernel, A rows, weights, cumulative sums, histogram buffers) does not
# grow with n -- and 21.8 MiB with 2e5 jumps: 43 bytes per jump (sources, uniforms, order, successors, lengths).
# The points hold 40 bytes per point. 64 MiB, 64 bytes per jump and per point leave a margin.
MATRIX_FREE_BASE = 64 << 20
MATRIX_FREE_PER_JUMP = 64
MATRIX_FREE_PER_POINT = 64

_SEEDS = {"seed": (0, 1, 2, 3, 4)}
_LIGHT = "alpha = 2: the Gaussian profile's window mass is negligible (0 on S^1); a power law puts >= 1e-3 there"
_CIRCLE = ("exact S^1 bin-mass slope (R + s is an exact truncated Pareto): only the grid term remains (grid h/s = "
           "0.063); the ambient exponent d_M + 1 gives alpha + 1")
_TORUS = "the continuum O(s/r) term shifts the torus slope by about -0.05; the ambient exponent gives alpha + 1"
_CONTINUUM = "against the exact continuum slope on the same bins only the configuration noise of the points remains"

#: The measured tolerances (the sampled exponent's is its MLE's standard error, next to its assertion).
CALIBRATION = Calibration(
    Tolerance("circle_window_mass_a2", 1e-10, measured=0.0, over=_SEEDS, why=_LIGHT),
    Tolerance("torus_window_mass_a2", 1e-10, measured=0.0, over=_SEEDS, why=_LIGHT),
    *(Tolerance(f"circle_exponent_a{a:g}", 0.02, measured=m, over=_SEEDS, why=_CIRCLE)
      for a, m in ((1.2, 6.9e-4), (1.5, 6.4e-4))),
    *(Tolerance(f"torus_exponent_a{a:g}", 0.1, measured=0.0541, over=_SEEDS, why=_TORUS) for a in (1.2, 1.5)),
    *(Tolerance(f"torus_minus_continuum_a{a:g}", 0.02, measured=4.75e-3, over=_SEEDS, why=_CONTINUUM)
      for a in (1.2, 1.5)),
)

#: torus_n at which the torus rows were calibrated (the default torus_n); below it both are widened by the
#: configuration noise.
TORUS_N_CALIBRATED = 2000
# The torus slope minus the exact continuum slope is the configuration noise of the i.i.d. points; its worst over
# seeds 0-4 and alpha 1.2, 1.5 (x86-64 AVX-512) falls like 1/torus_n: 0.065 at torus_n = 200, 0.034 at 350,
# 0.015 at 700 and the row's measured value at TORUS_N_CALIBRATED (the bin masses average n rows of ~1/sqrt(n)
# noise). A fixed row value was a wrong FAIL at torus_n = 200 (0.064, seed 0); the row's value times
# TORUS_N_CALIBRATED / torus_n keeps a margin >= 3 at every measured size.


def torus_noise_factor(torus_n: int) -> float:
    """How much wider the torus tolerances are at ``torus_n`` than at :data:`TORUS_N_CALIBRATED` points (never
    narrower): max(1, TORUS_N_CALIBRATED / torus_n)."""
    return max(1.0, TORUS_N_CALIBRATED / torus_n)


#: Fewest sampled jumps the exact one-jump law must put in the S^1 window for the sampled estimate to be made:
#: graphs.tail_exponent needs 20 and its stderr ~ alpha / sqrt(count) is then 0.27 (circle_scale = 1e-3 put
#: 19 of 5e4 jumps there: the measurement stopped, a wrong FAIL).
MIN_EXPECTED_IN_WINDOW = 100


def _window_rule(name, window, scale, scale_name, top_text):
    """A tail window (r_min, r_max) must have 5 scale <= r_min < r_max.

    The window must sit in the power-law regime, well outside the kernel core: measured PASS at
    r_min / scale = 5, 6 (circle default), 10 (torus default), 15; FAIL at 3 (circle_scale 0.1: the
    alpha = 2 Gaussian still has 2e-5 mass in the window) and 3.3 (torus_scale 0.03: exponents
    1.05 / 1.35 for 1.2 / 1.5). The 1e-9 slack absorbs round-off of the product.
    """
    if not 5 * scale - 1e-9 <= window[0] < window[1]:
        raise InputError(f"{name} must be (r_min, r_max) with 5 {scale_name} <= r_min < r_max <= {top_text} "
                         f"(tail regime), got {window!r} with {scale_name}={scale!r}")


@CHECK.parameters
class Params:
    alphas: tuple = Reals((1.2, 1.5, 2.0), "FNA orders alpha (FNA eqs. 9-10; Fig. 1 'Levy dynamics', heavy-tailed "
                          "jumps)", low=0.5, high=2.0)
    circle_n: int = Int(2000, "Equispaced points on S^1 (the dense path stores n x n matrices)", low=200,
                        high=100_000, unit="points")
    circle_scale: float = Real(0.05, "Kernel scale s on S^1 (grid spacing / s = 2 pi / (n s))", low=1e-3, high=0.3)
    circle_window: tuple = Reals((0.3, 3.0), "Power-law window (r_min, r_max) on S^1 with 5 circle_scale <= r_min < "
                                 "r_max <= pi", low=0, high=math.pi, min_len=2, max_len=2)
    torus_n: int = Int(TORUS_N_CALIBRATED, f"I.i.d. uniform points on the 2-torus [0, 1)^2 (below "
                       f"{TORUS_N_CALIBRATED} the torus tolerances widen by {TORUS_N_CALIBRATED} / torus_n: their "
                       "configuration noise ~ 1/torus_n)", low=200, high=100_000, unit="points")
    torus_scale: float = Real(0.01, "Kernel scale s on the torus", low=1e-3, high=0.1)
    torus_window: tuple = Reals((0.1, 0.45), "Power-law window on the torus with 5 torus_scale <= r_min < r_max <= 1/2 "
                                "(discs inside the unit cell)", low=0, high=0.5, min_len=2, max_len=2)
    jumps: int = Int(50_000, "Sampled jumps per alpha on S^1 (graphs.jump_lengths); 0 skips the sampled estimate",
                     low=0, high=10**7)
    dim_offset: float = Real(0.0, "Added to the intrinsic exponent d_M (0 = the FNA-10 convention; 1 = the ambient "
                             "exponent, a negative control giving tail exponent alpha + 1)", low=0.0, high=3.0)

    def resolve(self):
        """The windows must sit in the tail regime of their kernel scale."""
        _window_rule("circle_window", self.circle_window, self.circle_scale, "circle_scale", "pi")
        _window_rule("torus_window", self.torus_window, self.torus_scale, "torus_scale", "0.5")
        return self


@dataclasses.dataclass(frozen=True)
class JumpLaw:
    """The one-jump law of one alpha on S^1 and the 2-torus, on log bins of the windows."""

    #: bin centres (geometric in r + s) and bin masses (1/n) sum_ij A_ij [d_ij in bin] on S^1
    circle_r: np.ndarray
    circle_mass: np.ndarray
    #: the same on the torus
    torus_r: np.ndarray
    torus_mass: np.ndarray
    #: minus the log-log slopes of the bin masses (alpha < 2; None for alpha = 2, whose window is empty)
    circle_exponent: float | None = None
    torus_exponent: float | None = None
    #: minus the slope of the exact continuum law u (u+s)^-(d_M+alpha) on the torus bins
    torus_continuum_exponent: float | None = None
    #: truncated-Pareto MLE of sampled S^1 jumps on the window: exponent, standard error, jumps in the window
    #: (None when jumps = 0 or alpha = 2)
    sampled_exponent: float | None = None
    sampled_stderr: float | None = None
    sampled_in_window: int | None = None


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What levy_jumps measures: the jump law of each alpha."""

    laws: dict[float, JumpLaw]


def _dense_bytes(circle_n: int, torus_n: int) -> float:
    """Peak bytes of the dense path.

    The circle's and the torus's n x n distances, kernels and window weights are alive together;
    tracemalloc peaks 247.3 MiB at the defaults (2000, 2000), 573.5 at circle_n 4000 and 764.2 at
    torus_n 4000 give 28.5 bytes per circle pair and 45.2 per torus pair (its coordinate differences);
    32 and 48 leave a margin (the sum over-counts: the parts' peaks do not coincide).
    """
    return (16 << 20) + 32 * circle_n * circle_n + 48 * torus_n * torus_n


def _matrix_free_bytes(circle_n: int, torus_n: int, jumps: int) -> float:
    """Peak bytes of the matrix-free path (the constants are measured, see above)."""
    return MATRIX_FREE_BASE + MATRIX_FREE_PER_POINT * (circle_n + torus_n) + MATRIX_FREE_PER_JUMP * jumps


@CHECK.memory
def needs(p: Params) -> dict:
    """The memory of each path, checked before anything n x n exists.

    "auto" is dense when its estimate fits, else matrix-free; a path that does not fit is refused
    (``DenseMemoryError``, exit 2) with its estimate and options of this command that would fit.
    """
    circle_n, torus_n, jumps = p.circle_n, p.torus_n, p.jumps
    return {
        "dense": PathNeed(lambda c: _dense_bytes(c, torus_n), circle_n, "--circle-n", 200,
                          f"the dense jump laws at --circle-n {circle_n}, --torus-n {torus_n}", "a smaller --torus-n"),
        "matrix-free": PathNeed(lambda j: _matrix_free_bytes(circle_n, torus_n, j), jumps, "--jumps", 0,
                                f"the matrix-free jump laws at --circle-n {circle_n}, --torus-n {torus_n}, "
                                f"--jumps {jumps} (row blocks, points, sampled jumps)"),
    }


def _window_edges(lo, hi, shift):
    """Bin edges of the window, geometric in r + shift."""
    return np.geomspace(lo + shift, hi + shift, _BINS + 1) - shift


def _centres(edges, shift):
    return np.sqrt((edges[:-1] + shift) * (edges[1:] + shift))


def _bin_masses(weights, dist, edges):
    """sum of ``weights`` over the pairs whose distance falls in each bin; all NaN when a weight is not finite.

    (A NaN attention entry outside the window would otherwise never reach a bin: the law is not measured then.)
    """
    if not np.all(np.isfinite(weights)):
        return np.full(len(edges) - 1, np.nan)
    mass, _ = np.histogram(dist.ravel(), bins=edges, weights=weights.ravel())
    return mass


def _circle_distance(ta, tb):
    """Geodesic distances between angles ``ta`` (b,) and ``tb`` (m,) on S^1: a (b, m) block."""
    d = np.abs(ta[:, None] - tb[None, :])
    return np.minimum(d, 2 * math.pi - d)


def _torus_distance(xa, xb):
    """Periodic distances between points ``xa`` (b, 2) and ``xb`` (m, 2) of [0, 1)^2: a (b, m) block."""
    diff = np.abs(xa[:, None, :] - xb[None, :, :])
    diff = np.minimum(diff, 1 - diff)
    return np.sqrt(np.sum(diff * diff, axis=-1))


def _matrix_free_law(points, distance, kernel, edges, sample):
    """Bin masses of the one-jump law and sampled successors, row block by row block of A = N_R(C).

    The masses are (1/n) sum_ij A_ij [d_ij in bin]: each block of ``BLOCK_ENTRIES`` entries holds
    whole rows, so its row sums (and the rows of A) are complete; the histograms of the blocks add up.
    ``sample`` = (sources, uniforms) gives the successors of graphs.sample_next: inverse-CDF, J = #{k :
    cumsum(A[i])_k < U sum(A[i])}, clipped to n - 1, from the block holding row i. Memory O(n * block).
    """
    n = len(points)
    block = max(1, BLOCK_ENTRIES // n)
    mass = np.zeros(len(edges) - 1)
    successors = None
    if sample is not None:
        sources, uniforms = sample
        order = np.argsort(sources, kind="stable")
        sorted_sources = sources[order]
        successors = np.empty(len(sources), dtype=np.int64)
    for start in range(0, n, block):
        stop = min(n, start + block)
        dist = distance(points[start:stop], points)
        attn = spectral.row_normalize(kernel(dist))
        mass += _bin_masses(attn / n, dist, edges)
        del dist
        if sample is None:
            continue
        lo, hi = np.searchsorted(sorted_sources, [start, stop])
        if lo == hi:
            continue
        cum = np.cumsum(attn, axis=1)
        rows, first = np.unique(sorted_sources[lo:hi], return_index=True)
        bounds = np.append(first, hi - lo) + lo
        for row, j0, j1 in zip(rows, bounds[:-1], bounds[1:]):
            jobs = order[j0:j1]
            cum_row = cum[row - start]
            successors[jobs] = np.searchsorted(cum_row, uniforms[jobs] * cum_row[-1], side="left")
    if successors is not None:
        np.minimum(successors, n - 1, out=successors)
    return mass, successors


def _torus_continuum_mass(edges, alpha, s, dim):
    """Exact continuum bin masses of the density ~ u (u+s)^-(dim+alpha) (2-D, uniform points)."""
    p = dim + alpha

    def prim(u):  # antiderivative of u (u+s)^-p
        v = u + s
        return v ** (2 - p) / (2 - p) - s * v ** (1 - p) / (1 - p)

    return prim(edges[1:]) - prim(edges[:-1])


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """The one-jump law of each alpha on S^1 and the torus (bin masses, slopes) and the sampled S^1 jumps."""
    method = p.method
    circle_n, torus_n, jumps = p.circle_n, p.torus_n, p.jumps
    theta = 2 * math.pi * np.arange(circle_n) / circle_n
    circle_pts = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    x = child_rng(p.seed, "torus").random((torus_n, 2))
    if method == "dense":
        dc = _circle_distance(theta, theta)
        dt = _torus_distance(x, x)

    def geodesic(a, b):
        return np.arctan2(np.abs(a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]), np.sum(a * b, axis=1))

    laws = {}
    for alpha in p.alphas:
        circle_kernel = functools.partial(spectral.fna_kernel, alpha=alpha, scale=p.circle_scale,
                                          dim=1.0 + p.dim_offset)
        torus_kernel = functools.partial(spectral.fna_kernel, alpha=alpha, scale=p.torus_scale, dim=2.0 + p.dim_offset)
        c_edges = _window_edges(*p.circle_window, p.circle_scale)
        t_edges = _window_edges(*p.torus_window, p.torus_scale)
        sample = None
        if method == "matrix-free" and jumps and alpha < 2:
            # the draws of graphs.jump_lengths on the same stream, in its order: sources, then uniforms
            gen = child_rng(p.seed, "jumps", alpha)
            sample = (gen.integers(0, circle_n, size=jumps), gen.random(jumps))
        if method == "dense":
            with ctx.timed("circle"):
                a_c = spectral.row_normalize(circle_kernel(dc))
                mass = _bin_masses(a_c / circle_n, dc, c_edges)
            with ctx.timed("torus"):
                t_mass = _bin_masses(spectral.row_normalize(torus_kernel(dt)) / torus_n, dt, t_edges)
        else:
            with ctx.timed("circle"):
                mass, successors = _matrix_free_law(theta, _circle_distance, circle_kernel, c_edges, sample)
            with ctx.timed("torus"):
                t_mass, _ = _matrix_free_law(x, _torus_distance, torus_kernel, t_edges, None)
        law = JumpLaw(circle_r=_centres(c_edges, p.circle_scale), circle_mass=mass,
                      torus_r=_centres(t_edges, p.torus_scale), torus_mass=t_mass)
        if alpha >= 2:  # the window carries no mass: nothing to fit
            laws[alpha] = law
            continue
        cont = fit_power_law(law.torus_r, _torus_continuum_mass(t_edges, alpha, p.torus_scale, 2.0 + p.dim_offset))
        law = dataclasses.replace(law, circle_exponent=-fit_power_law(law.circle_r, mass).slope,
                                  torus_exponent=-fit_power_law(law.torus_r, t_mass).slope,
                                  torus_continuum_exponent=-cont.slope)
        expected_in_window = jumps * float(np.sum(mass))
        if jumps and expected_in_window < MIN_EXPECTED_IN_WINDOW:
            ctx.note(f"alpha = {alpha:g}: the exact one-jump law puts {expected_in_window:.3g} of the {jumps} sampled "
                     f"jumps in the S^1 window (< {MIN_EXPECTED_IN_WINDOW}): no sampled estimate; the exact laws decide "
                     f"(raise --jumps to {math.ceil(MIN_EXPECTED_IN_WINDOW * jumps / max(expected_in_window, 1e-300)):d} "
                     "or widen --circle-window for one)")
        elif jumps:
            with ctx.timed("sampled"):
                if method == "dense":
                    r = np.asarray(graphs.jump_lengths(a_c, circle_pts, size=jumps,
                                                       rng=child_rng(p.seed, "jumps", alpha), metric=geodesic))
                else:
                    r = geodesic(circle_pts[sample[0]], circle_pts[successors])
                fit = graphs.tail_exponent(r, r_min=p.circle_window[0], r_max=p.circle_window[1],
                                           method="truncated-pareto",
                                           shift=p.circle_scale)
            law = dataclasses.replace(law, sampled_exponent=float(fit.alpha), sampled_stderr=float(fit.stderr),
                                      sampled_in_window=int(fit.count))
        laws[alpha] = law
    return Quantities(laws=laws)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Window slopes equal -alpha (alpha < 2); the window carries no mass for alpha = 2."""
    label = "FNA-20: jump-length tail exponent"
    for alpha in p.alphas:
        tag = f"{alpha:g}"
        law = q.laws[alpha]
        if alpha >= 2:
            rec.at_most(f"circle_window_mass_a{tag}", float(np.sum(law.circle_mass)),
                        CALIBRATION.borrow(f"circle_window_mass_a{alpha:g}", p, "circle_window_mass_a", at=alpha),
                        label="FNA-20: the alpha = 2 walk on S^1 should have Gaussian (light) tails")
            rec.at_most(f"torus_window_mass_a{tag}", float(np.sum(law.torus_mass)),
                        CALIBRATION.borrow(f"torus_window_mass_a{alpha:g}", p, "torus_window_mass_a", at=alpha),
                        label="FNA-20: the alpha = 2 walk on the torus should have Gaussian (light) tails")
            continue
        rec.close(f"circle_exponent_a{tag}", law.circle_exponent, alpha,
                  atol=CALIBRATION.borrow(f"circle_exponent_a{alpha:g}", p, "circle_exponent_a", at=alpha),
                  label=f"{label} on S^1 (exact one-jump law)")
        noise = torus_noise_factor(p.torus_n)
        row = CALIBRATION.borrow(f"torus_minus_continuum_a{alpha:g}", p, "torus_minus_continuum_a", at=alpha)
        widen = row.value * (noise - 1.0)  # the configuration noise beyond the calibrated one
        scaled = f" (x {noise:.3g}: configuration noise ~ 1/torus_n below {TORUS_N_CALIBRATED})" if noise > 1 else ""
        t_row = CALIBRATION.borrow(f"torus_exponent_a{alpha:g}", p, "torus_exponent_a", at=alpha)
        rec.close(f"torus_exponent_a{tag}", law.torus_exponent, alpha,
                  atol=dataclasses.replace(t_row, value=t_row.value + widen,
                                           why=t_row.why + (f"; plus {widen:.3g} of configuration noise at torus_n = "
                                                            f"{p.torus_n}" if widen else "")),
                  label=f"{label} on the 2-torus (exact one-jump law)")
        rec.close(f"torus_minus_continuum_a{tag}", law.torus_exponent - law.torus_continuum_exponent, 0.0,
                  atol=dataclasses.replace(row, value=row.value * noise, why=row.why + scaled),
                  label=f"{label} on the 2-torus minus the continuum slope")
        rec.info(f"torus_continuum_exponent_a{tag}", law.torus_continuum_exponent)
        if p.jumps and law.sampled_exponent is not None:  # None: the window was too empty to sample (a note says)
            rec.close(f"sampled_exponent_a{tag}", law.sampled_exponent, alpha, atol=4 * law.sampled_stderr + 0.02,
                      why="4 stderr of the truncated-Pareto MLE on (R + s) (Fisher information; 0.03-0.06 at 5e4 "
                          "jumps) plus the 0.02 grid term of the exact slope",
                      label=f"{label} of sampled S^1 jumps (truncated-Pareto MLE, {law.sampled_in_window} in the "
                            "window)")
            rec.info(f"sampled_in_window_a{tag}", law.sampled_in_window)
    return ("one-step jumps of the FNA attention walk (intrinsic d_M) have P(R > r) ~ r^-alpha for "
            "s << r << diameter on S^1 and the 2-torus, and Gaussian tails for alpha = 2")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
