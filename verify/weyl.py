"""Weyl law of fractional neural attention (FNA paper Fig. 2a, eq. 22): the generator spectrum
-log(eta_k)/t of the FNA attention matrix on S^1 (or S^2) against its exact continuum spectrum.

The discrete spectrum comes from the toolkit (spectral.fna_kernel, the circulant FFT on the equispaced
circle grid, spectral.markov_spectrum on random points and on the sphere); the reference is the exact
finite-scale continuum spectrum of the same kernel at the same scale (manifolds.kernel_spectra:
Gauss-Legendre quadrature on S^1, Funk-Hecke on S^2), computed independently. The check compares
shapes (log-log slope and scale-free log error over the fit window) and recovers alpha by fitting the
continuum family; the exact s -> 0 limit m(k)/M0 and the naive slope of Fig. 2a against the raw
eigen-index j are reported as information: both are biased at finite scale (the relative bias decays
only like (k s)^(2 - alpha), FNA-13), so neither is a fair target for a slope at s = 2 h.

At Fig. 2a's own setting (``paper_setting``: n = 500, s = 0.01, h/s = 1.26) the check asserts what
FNA-10 states there: the slope over the fit window lies in [alpha - 0.15, alpha + 0.05], and, on a
sweep of scales s = 1e-2 ... 1e-5 with resolving grids (h <= s/8), it approaches its s -> 0 limit
monotonically; the comparison with the same-scale continuum uses tolerances measured at that coarse
grid, and the same kernel on a resolving grid at the paper's scale is shown next to it.

Memory first: the peak of the whole request (points, kernel, copies, eigensolver) is estimated before
anything is allocated (on ``--device gpu`` against the GPU's free memory); a path that would not fit
is refused with the estimate and the options of this command that would (``--method matrix-free``:
kernel tiles recomputed in every block product of the block eigensolver, memory O(n); a smaller
``--n``), and ``auto`` takes the matrix-free path itself when the stored kernel does not fit.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.validation import InputError, check_int, check_option, check_real, child_rng
from verify.core.check import Check
from verify.core.fits import fit_power_law
from verify.core.result import Recorder

CHECK = Check("weyl", claims=("FNA-10", "FNA-11"), devices=("cpu", "gpu"))

MANIFOLDS = ("circle", "sphere")
POINTS = ("grid", "random")
KERNELS = ("fna", "softmax")
DISTANCES = ("geodesic", "chordal")
METHODS = ("auto", "circulant", "dense", "lanczos", "matrix-free")

#: Fig. 2a of the FNA paper (Methods, "Markov chain diagonalization"): n = 500 equispaced points,
#: kappa = sqrt(eps), eps = 1e-4, t = eps^(alpha/2).
PAPER_N = 500
PAPER_SCALE = math.sqrt(1e-4)
#: FNA-10 at the paper setting: the slope over the fit window lies in [alpha - 0.15, alpha + 0.05]
#: (2.00 +- 0.02 for alpha = 2), and moves monotonically as the scale shrinks on grids with h = s/8.
PAPER_WINDOW = (-0.15, 0.05)
PAPER_WINDOW_GAUSSIAN = 0.02
SWEEP_SCALES = (1e-2, 1e-3, 1e-4, 1e-5)
SWEEP_H_OVER_S = 1.0 / 8.0
#: Slack of the monotone approach: at h = s/8 the discrete slope over k = 2..10 equals the continuum
#: slope at the same scale within 1e-4 (measured 0.9964 / 0.9964, 1.1367 / 1.1368, 1.3442 / 1.3443 at
#: s = 0.01 for alpha = 1, 1.2, 1.5), so a rise of the distance to the limit below 1e-4 is grid noise.
SWEEP_SLACK = 1e-4

# ------------------------------------------------------------------------------------ tolerances
# Each tolerance bounds a statistic of the measured spectrum against the exact continuum reference at
# the same scale: (tolerance, where it comes from), per setting (manifold, points). The measured values
# are the toolkit's own (python -m verify.weyl ...); tests/verify/test_weyl.py holds the table.
_TOLERANCES = {
    # S^1, equispaced grid, h/s = 1/2 (n = 2000 default), fit k = 2..10, alpha in {1, 1.2, 1.5, 1.8, 2}
    # (circulant path; the dense path agrees to round-off). Wrong kernels fail by >= 1.8x: kernel alpha
    # 1.25 claimed as 1.2 gives 0.037 / 0.036 / 0.049, kernel 1.21 as 1.2 gives best-fit 1.209 (|diff|
    # 0.009 > 0.005), softmax claimed as 1.5 gives shape 0.022 (its slope gap 0.014 alone would pass:
    # both statistics are needed).
    ("circle", "grid"): {
        "slope_gap": (0.02, "S^1 grid, h/s = 1/2, k = 2..10, alpha 1-2: measured <= 0.0009 (20x); kernel alpha "
                            "1.25 claimed as 1.2 gives 0.037"),
        "shape_error": (0.01, "S^1 grid, h/s = 1/2, k = 2..10, alpha 1-2: measured <= 0.0007 (14x); kernel alpha "
                              "1.25 claimed as 1.2 gives 0.036, softmax claimed as 1.5 gives 0.022"),
        "best_fit_alpha": (0.005, "S^1 grid, h/s = 1/2, k = 2..10, alpha 1-2: measured |diff| <= 0.0012 (4x); kernel "
                                  "alpha 1.21 claimed as 1.2 gives 0.009"),
    },
    # S^1, i.i.d. uniform points, n = 4000, h/s = 1/4 (1/16 for alpha = 2), diagonal dropped, k = 2..10:
    # seeds 0..7 at alpha = 1.2 and seed 0 at alpha = 1.0, 1.8 gave slope gap <= 0.0113, shape error
    # <= 0.032, |best-fit alpha - alpha| <= 0.040, pair splitting <= 0.16; alpha = 2 (s = 16 h, seeds
    # 0, 1): gap <= 0.022, shape <= 0.054. Kernel 1.5 claimed as 1.2 gives 0.21 / 0.20 / 1.49; kernel
    # 1.9 claimed as 2 gives 0.52 / 0.49. A kernel-alpha error of 0.05 is within the noise at this n
    # (only the grid resolves it).
    ("circle", "random"): {
        "slope_gap": (0.05, "S^1 i.i.d., n = 4000, h/s = 1/4: seeds 0-7 gave <= 0.0113 (alpha 1.2), <= 0.022 "
                            "(alpha 2, s = 16 h); kernel 1.5 claimed as 1.2 gives 0.21"),
        "shape_error": (0.1, "S^1 i.i.d., n = 4000, h/s = 1/4: seeds 0-7 gave <= 0.032 (alpha 1.2), <= 0.054 "
                             "(alpha 2, s = 16 h); kernel 1.5 claimed as 1.2 gives 0.20"),
        "best_fit_alpha": (0.1, "S^1 i.i.d., n = 4000, h/s = 1/4: seeds 0-7 gave |diff| <= 0.040 (2.5x); kernel 1.5 "
                                "claimed as 1.2 gives 0.29"),
    },
    # S^1, equispaced grid at the paper's Fig. 2a setting: n = 500, s = 0.01 (h/s = 1.26), k = 2..10, alpha in
    # {1, 1.2, 1.5, 1.8, 2} (circulant path). The coarse grid's own discretisation error against the
    # continuum spectrum at the same scale: slope gap 0.0049-0.0067, shape error 0.0040-0.0054, best-fit
    # alpha low by 0.0076-0.0096 (alpha < 2; 1e-4 at alpha = 2); tolerances ~2.2x the largest. Kernel alpha
    # 1.25 claimed as 1.2 gives 0.030 / 0.031 / 0.042, 1.15 gives 0.041 / 0.040 / 0.059 (both fail by 2x);
    # 1.21 gives 0.0012 / 0.0024 / 0.0017 (passes: 0.01 is below this grid's resolution).
    ("circle", "grid", "paper"): {
        "slope_gap": (0.015, "S^1 grid at the paper setting (n = 500, s = 0.01, h/s = 1.26), k = 2..10, alpha 1-2: "
                             "the grid's discretisation error is <= 0.0067 (2.2x); kernel alpha 1.25 claimed as 1.2 "
                             "gives 0.030"),
        "shape_error": (0.012, "S^1 grid at the paper setting, k = 2..10, alpha 1-2: discretisation error <= 0.0054 "
                               "(2.2x); kernel alpha 1.25 claimed as 1.2 gives 0.031, softmax claimed as 1.5 0.021"),
        "best_fit_alpha": (0.02, "S^1 grid at the paper setting, alpha 1-2: the grid biases the fit low by <= 0.0096 "
                                 "(2.1x); kernel alpha 1.25 claimed as 1.2 gives |diff| 0.042"),
    },
    # S^2, Fibonacci grid, n = 5000, s = 8 h (h = sqrt(4 pi / n)), degrees l = 1..6, alpha in
    # {1, 1.2, 1.5, 1.8, 2}: slope gap and shape error <= 0.0010, best-fit alpha low by 0.0049-0.0066
    # (alpha < 2; 0 at alpha = 2), shell spread <= 0.0001. Kernels 0.1 away (alpha -+ 0.1 for every alpha,
    # 1.9 claimed as 2) give gap >= 0.0144, shape >= 0.0153, |best fit - alpha| >= 0.093; 0.05 away (1.25
    # and 1.15 claimed as 1.2) 0.0069 / 0.0074 / 0.045 and 0.0084 / 0.0087 / 0.055: all fail. The
    # remaining bias of the best fit is the self score Phi(0) = 1 of each node, a point mass where the
    # continuum has the mean of Phi over the node's cell: with that mean on the diagonal the best fit is
    # 1.203 (n = 5000, s = 6 h) and 1.211 (n = 2000, s = 3 h) instead of 1.193 and 1.165. More points shrink
    # it: with the block solver (--method matrix-free) at n = 20000, s = 8 h the best fit is 1.1986 (gap
    # 0.0003) and kernel 1.3 gives 1.2985 (gap 0.020), 36-39 s each here. (Before: n = 2000, s = 3 h, best fit
    # 1.165 and tolerance 0.1; kernel 1.3 claimed as 1.2 passed with 1.263.)
    ("sphere", "grid"): {
        "slope_gap": (0.004, "S^2 Fibonacci grid, n = 5000, s = 8 h, l = 1..6, alpha 1-2: measured <= 0.0010 (4x); "
                             "kernels 0.1 away give >= 0.0144"),
        "shape_error": (0.004, "S^2 Fibonacci grid, n = 5000, s = 8 h, l = 1..6, alpha 1-2: measured <= 0.0010 (4x); "
                               "kernels 0.1 away give >= 0.0153"),
        "best_fit_alpha": (0.03, "S^2 Fibonacci grid, n = 5000, s = 8 h, alpha 1-2: measured |diff| <= 0.0066 (the "
                                 "self score Phi(0) biases the fit low; 4.5x); kernels 0.1 away give >= 0.093"),
        "shell_spread": (0.001, "S^2 Fibonacci grid, n = 5000, l = 1..6: measured relative spread <= 0.0001 within a "
                                "shell (10x)"),
    },
    # S^2, i.i.d. points, n = 3000, h/s = 1/4, diagonal dropped, degrees l = 1..6: ensemble of seeds
    # 0..9 (alpha = 1.2) and 0..2 (alpha = 1.0, 1.5, 1.8, 2.0); random points cluster by 2l+1 only
    # barely. Kernel alpha 1.5 claimed as 1.2 gives slope gap 0.059-0.062, shape 0.062 (near the
    # tolerances) and best-fit 1.52-1.55: the family fit is what rejects it here.
    ("sphere", "random"): {
        "slope_gap": (0.06, "S^2 i.i.d., n = 3000, h/s = 1/4: seeds 0-9 gave <= 0.0104 (alpha < 2), <= 0.033 "
                            "(alpha 2); ~2x the maxima"),
        "shape_error": (0.07, "S^2 i.i.d., n = 3000, h/s = 1/4: seeds 0-9 gave <= 0.0130 (alpha < 2), <= 0.039 "
                              "(alpha 2); ~2x the maxima"),
        "best_fit_alpha": (0.15, "S^2 i.i.d., n = 3000: seeds 0-9 gave |diff| <= 0.063 (2.4x); kernel 1.5 claimed "
                                 "as 1.2 gives 0.32-0.35"),
        "shell_spread": (0.5, "S^2 i.i.d., n = 3000: seeds 0-9 gave <= 0.167 (alpha < 2), <= 0.284 (alpha 2)"),
    },
}


# ------------------------------------------------------------------------------- the parameters


def _settings(*, alpha, manifold, n, scale, points, modes, fit_range, distance, reference_distance,
              kernel_alpha, dim, kernel, temperature, method, paper_setting):
    """Validate the inputs and fill the per-setting defaults; returns a dict of resolved parameters."""
    check_option("manifold", manifold, MANIFOLDS)
    check_option("points", points, POINTS)
    check_option("kernel", kernel, KERNELS)
    check_option("distance", distance, DISTANCES)
    check_option("method", method, METHODS)
    if reference_distance is None:
        reference_distance = distance
    check_option("reference_distance", reference_distance, DISTANCES)
    alpha = check_real("alpha", alpha, low=0, high=2, low_open=True)
    kernel_alpha = alpha if kernel_alpha is None else check_real("kernel_alpha", kernel_alpha, low=0, high=2,
                                                                 low_open=True)
    intrinsic = 1 if manifold == "circle" else 2
    dim = intrinsic if dim is None else check_real("dim", dim, low=1)
    if manifold == "sphere":
        if distance != "geodesic" or reference_distance != "geodesic":
            raise InputError("distance must be 'geodesic' on the sphere (the Funk-Hecke reference is geodesic)")
        if method == "circulant":
            raise InputError("method='circulant' needs the equispaced circle grid (manifold='circle')")
    if points == "random" and method == "circulant":
        raise InputError("method='circulant' needs points='grid' (an equispaced circle grid)")
    if paper_setting:
        if manifold != "circle" or points != "grid":
            raise InputError("paper_setting reproduces Fig. 2a: it needs manifold='circle' and points='grid'")
        # the recorded parameters of a paper_setting run hold n = 500, scale = 0.01: rerunning them is allowed
        if n not in (None, PAPER_N) or scale not in (None, PAPER_SCALE):
            raise InputError(f"paper_setting fixes n = {PAPER_N} and scale = {PAPER_SCALE}; do not pass another n or "
                             "scale with it")
        n, scale = PAPER_N, PAPER_SCALE
    if n is None:
        n = {("circle", "grid"): 2000, ("circle", "random"): 4000, ("sphere", "grid"): 5000,
             ("sphere", "random"): 3000}[(manifold, points)]
    n = check_int("n", n, low=8)
    h = 2 * math.pi / n if manifold == "circle" else math.sqrt(4 * math.pi / n)
    if scale is None:
        # S^1 grid: h/s = 1/2; S^2 Fibonacci grid: h/s = 1/8 (best-fit bias of alpha = 1.2 at n = 5000:
        # -0.016 at 3 h, -0.011 at 4 h, -0.007 at 6 h, -0.005 at 8 h; at n = 2000 -0.035 at 3 h, while a kernel
        # 0.1 away moves the best fit by 0.099 at every setting); random points: h/s = 1/4.
        scale = (4.0 if points == "random" else 2.0 if manifold == "circle" else 8.0) * h
        if points == "random" and manifold == "circle" and alpha == 2:
            # The local Gaussian kernel sees only ~8 neighbours within s = 4 h: on i.i.d. points its
            # generator is then dominated by sampling noise (slope gap 0.16, shape 0.135, pair splitting
            # 0.47 measured at n = 4000, seed 0; the variance grows like (n s^3)^-1/2, Singer). Its
            # continuum spectrum k^2/4 holds at every scale, so take s = 16 h (gap <= 0.022, shape <= 0.054).
            scale = 16.0 * h
    scale = check_real("scale", scale, low=0, low_open=True)
    if temperature is not None:
        temperature = check_real("temperature", temperature, low=0, low_open=True)
        if kernel != "softmax":
            raise InputError(f"temperature applies to kernel='softmax' only, got kernel={kernel!r}")
    if kernel == "softmax" and temperature is None:
        temperature = math.sqrt(intrinsic + 1)  # sqrt(ambient dimension): softmax(Q K^T / sqrt(d))
    if modes is None:  # 20 (k <= 10) on S^1, 48 (l <= 6) on S^2, fewer for tiny n
        modes = min(20 if manifold == "circle" else 48, n - 3)
    modes = check_int("modes", modes, low=2, high=n - 3)  # Lanczos needs modes + 1 <= n - 2
    if manifold == "circle":
        top = modes // 2
        unit = "frequencies k (paired modes)"
    else:
        top = int(math.isqrt(modes + 1)) - 1  # complete shells l = 1..L hold L (L + 2) eigenvalues
        unit = "degrees l (complete shells of 2l+1)"
    if fit_range is None:
        lo, hi = (2, 10) if manifold == "circle" else (1, 6)
        fit_range = (min(lo, max(top - 1, 1)), min(hi, top))
    if not (isinstance(fit_range, (tuple, list)) and len(fit_range) == 2 and all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
            and math.isfinite(v) and float(v).is_integer() for v in fit_range)):
        raise InputError(f"fit_range must be two integers (lo, hi), got {fit_range!r}")
    lo, hi = (int(v) for v in fit_range)
    if not 1 <= lo < hi <= top:
        raise InputError(f"fit_range must satisfy 1 <= lo < hi <= {top} ({unit} available with modes={modes}), got "
                         f"{fit_range!r}")
    return dict(alpha=alpha, manifold=manifold, n=n, scale=scale, points=points, modes=modes, fit_range=(lo, hi),
                distance=distance, reference_distance=reference_distance, kernel_alpha=kernel_alpha, dim=float(dim),
                kernel=kernel, temperature=temperature, method=method, paper_setting=bool(paper_setting), h=h,
                intrinsic=intrinsic)


# ------------------------------------------------------------------------------ memory and method
# Peak memory of each path, estimated before anything is allocated. Measured on this machine (VmHWM of
# a child process minus its start, and tracemalloc; numpy, one BLAS thread):
#: circulant path (circle grid): the points, one kernel row and its FFT; tracemalloc peak 40.0 bytes per
#: point at n = 5e5 and 2e6
CIRCULANT_BYTES_PER_POINT = 48
#: stored dense path: distances and kernel, the conjugate, eigenvectors, LAPACK workspace; measured
#: 6.1-6.2 n^2 float64 at n = 3000 (circle grid, circle i.i.d., Fibonacci sphere)
DENSE_COPIES = 6.5
#: stored Lanczos path: kernel and stored conjugate; measured 2.1-2.2 n^2 float64 at n = 3000
LANCZOS_COPIES = 2.5
#: i.i.d. points drop the diagonal, so min(C) = 0 and the component count reads the stored matrix in row
#: tiles: no copy when only the diagonal is zero (FNA power law: Lanczos measured 2.02 n^2 float64 in all
#: at n = 2000 and 3000, as with the diagonal), int32 edge indices when a softmax kernel underflows off the
#: diagonal (0.56-0.64 n^2 float64 more, tracemalloc at n = 2000 and 3000). It was 3.0 while the count
#: built a sparse graph of all n^2 entries (5.0 n^2 in all).
DROPPED_DIAGONAL_COPIES = 0.7
#: matrix-free path: the block solver's basis (spectral.block_workspace_bytes) plus about 24 floats per
#: point (points in two precisions, degrees, scalings) and the kernel tiles (4 x 4 MiB)
MATRIX_FREE_BYTES_PER_POINT = 24 * 8
TILE_BYTES = 16 << 20
#: Time of the matrix-free path, growing like n^2 (17-25 block products, each evaluating the kernel on
#: half the n^2 pairs): measured 5.6 s at n = 5000 on the Fibonacci S^2 (49 modes; 16 float32 + 1 float64
#: products; S^2 geodesic tiles cost 12 ns per pair in float32, 41 in float64) on this shared 2-core machine
MATRIX_FREE_SECONDS_PER_N2 = 2.5e-7
#: "auto" takes the matrix-free path, when the stored kernel does not fit, up to this n (about 10 minutes)
AUTO_MATRIX_FREE_MAX_N = 50_000
#: Residual target of the matrix-free solve: eigenvalues within ~1e-12 of a solve to machine precision
#: (measured 7.7e-13 at n = 5000 on S^2), far below the 1e-3 level of the statistics; one float64
#: product after the float32 iterations instead of four
MATRIX_FREE_TOL = 1e-6
#: on --device gpu the kernel and the solver live on the GPU and are compared with its free memory; the host
#: keeps the points made there before they move (tracemalloc peak 72.0 bytes per point making the Fibonacci
#: S^2 grid at n = 2e5; 40-64 for the S^1 grid and i.i.d. points) and the few eigenvalues brought back
HOST_BYTES_PER_POINT_ON_GPU = 80


def _path_bytes(p, method: str) -> int:
    """Estimated peak bytes of the whole request on ``method`` (points, kernel, copies, eigensolver)."""
    from spectral import block_workspace_bytes

    n, k = p["n"], p["modes"] + 1
    if method == "circulant":
        largest = max([n] + ([_sweep_n(s) for s in SWEEP_SCALES] if p["paper_setting"] else []))
        return CIRCULANT_BYTES_PER_POINT * largest
    if method == "matrix-free":
        return block_workspace_bytes(n, k) + MATRIX_FREE_BYTES_PER_POINT * n + TILE_BYTES
    copies = DENSE_COPIES if method == "dense" else LANCZOS_COPIES
    if p["points"] == "random":
        copies += DROPPED_DIAGONAL_COPIES
    return int(copies * n * n * 8)


def _stored_max_n(p, method: str, limit: int) -> int:
    copies = (DENSE_COPIES if method == "dense" else LANCZOS_COPIES) + (
        DROPPED_DIAGONAL_COPIES if p["points"] == "random" else 0.0)
    return int(math.sqrt(limit / (copies * 8)))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.2g} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.2g} minutes"
    return f"{seconds / 3600:.2g} hours"


def _choose_method(p, device: str | None = None) -> str:
    """The eigensolver path, chosen and checked against the memory available before anything is allocated.

    ``auto``: the circulant FFT on the circle grid; otherwise the stored kernel (Lanczos, dense for
    n <= 200) when it fits, else the matrix-free block solver (up to ``AUTO_MATRIX_FREE_MAX_N``). A path
    that does not fit is refused (``DenseMemoryError``) with its estimate and the options of this
    command that would fit. On ``device="gpu"`` (default: the running check's device) the paths are
    compared with the GPU's free memory, and the points made on the host with the host's.
    """
    from spectral import DenseMemoryError, available_memory_bytes, check_memory, format_bytes
    from spectral.memory import device_memory_bytes, memory_label
    from verify.core.check import current_device

    n, k = p["n"], p["modes"] + 1
    device = current_device() if device is None else device
    where = (f"n = {n} {'equispaced' if p['points'] == 'grid' else 'i.i.d.'} points on "
             f"{'S^1' if p['manifold'] == 'circle' else 'S^2'}")
    if device == "gpu":
        check_memory(HOST_BYTES_PER_POINT_ON_GPU * n, what=f"making the {where} on the host before they move to "
                     f"the gpu (~{HOST_BYTES_PER_POINT_ON_GPU} bytes per point)", alternative="use a smaller --n")
        limit = device_memory_bytes()
    else:
        limit = available_memory_bytes()
    label = memory_label(device)
    method = p["method"]
    circle_grid = p["manifold"] == "circle" and p["points"] == "grid"
    if method == "auto" and circle_grid:
        method = "circulant"
    if method == "circulant":
        need = _path_bytes(p, "circulant")
        fits_n = int(limit // CIRCULANT_BYTES_PER_POINT)
        check_memory(need, what=f"the circulant path on {where} (~{CIRCULANT_BYTES_PER_POINT} bytes per point: "
                                "points, one kernel row, its FFT)",
                     alternative=f"use a smaller --n (up to about {fits_n} fits here)", device=device)
        return method
    stored = "lanczos" if n > 200 and k <= n - 2 else "dense"
    candidates = [stored, "matrix-free"] if method == "auto" else [method]
    needs = {m: _path_bytes(p, m) for m in ("dense", "lanczos", "matrix-free")}
    for cand in candidates:
        if needs[cand] <= limit and not (method == "auto" and cand == "matrix-free" and n > AUTO_MATRIX_FREE_MAX_N):
            return cand
    # refused: say what the path needs and which options of this command would fit
    asked = candidates[0]
    what = {"dense": "the dense path (distances and kernel, conjugate, eigenvectors, LAPACK workspace: about "
                     f"{needs['dense'] / (8 * n * n):.2g} n^2 float64)",
            "lanczos": "the stored-kernel Lanczos path (kernel and stored conjugate"
                       + (", and the component count of a kernel without its diagonal" if p["points"] == "random"
                          else "") + f": about {needs['lanczos'] / (8 * n * n):.2g} n^2 float64)",
            "matrix-free": "the matrix-free path (block eigensolver basis, kernel tiles)"}[asked]
    duration = _duration(MATRIX_FREE_SECONDS_PER_N2 * n * n)
    options = []
    if asked != "matrix-free" and needs["matrix-free"] <= limit:
        options.append(f"--method matrix-free (needs {format_bytes(needs['matrix-free'])}, about {duration} here)")
    if asked == "dense" and needs["lanczos"] <= limit and k <= n - 2:
        options.append(f"--method lanczos (needs {format_bytes(needs['lanczos'])})")
    if asked in ("dense", "lanczos"):
        options.append(f"a smaller --n (this path fits up to n = {_stored_max_n(p, asked, limit)} here)")
    else:
        options.append("a smaller --n")
    why = ""
    if method == "auto" and needs["matrix-free"] <= limit:
        why = (f" (auto takes the matrix-free path only up to n = {AUTO_MATRIX_FREE_MAX_N}: here it would take "
               f"about {duration})")
    raise DenseMemoryError(f"{what} on {where} needs an estimated {format_bytes(needs[asked])}, over the {label}: "
                           f"{format_bytes(limit)}{why}; use " + " or ".join(options))


# ---------------------------------------------------------------------------- discrete spectrum


def _scores(x, y, p, manifold_obj):
    """Score block C[x, y] of the kernel under test (toolkit code)."""
    from spectral import dot_product_scores, fna_kernel

    if p["kernel"] == "softmax":
        return dot_product_scores(x, y=y, temperature=p["temperature"])
    if p["distance"] == "geodesic":
        d = manifold_obj.distance(x, y)
    else:
        d = manifold_obj.chordal_distance(x, y)
    return fna_kernel(d, alpha=p["kernel_alpha"], scale=p["scale"], dim=p["dim"])


def _markov_eigenvalues(xp, p, seed, rec):
    """The modes + 1 largest eigenvalues eta_0 = 1 >= eta_1 >= ... of A = D^-1 C and the solver used.

    Points are made on the host (the same seed gives the same points on every device) and moved to
    the namespace ``xp`` of the check's device, where the scores and the spectrum are computed; the
    eigenvalues come back to the host once.
    """
    from manifolds import Circle, Sphere
    from spectral import circulant_spectrum, markov_spectrum
    from spectral.backend import to_numpy

    man = Circle() if p["manifold"] == "circle" else Sphere(2)
    with rec.timed("points"):
        if p["points"] == "grid":
            x = man.grid(p["n"])
        else:
            x = man.sample(p["n"], rng=child_rng(seed, "points"))
        x = xp.asarray(x)
    k = p["modes"] + 1
    method = p["method"]  # resolved by _choose_method: circulant, dense, lanczos or matrix-free
    with rec.timed("kernel"):
        if method == "circulant":
            # the first row is all we need: C[i, j] = c[(j - i) mod n] on the equispaced grid
            c = _scores(x[:1, :], x, p, man)[0, :]
        elif method == "matrix-free":
            C = _operator(x, p, man)
        else:
            C = _scores(x, x, p, man)
            if p["points"] == "random":
                # The self score Phi(0) = 1 is an atom that biases every eigenvalue by a factor ~1/(1+x),
                # x = 2 pi / (n Z) (0.15 at n = 4000, s = 4 h): drop it.
                if xp is np:
                    np.fill_diagonal(C, 0.0)
                else:
                    C = C * (1.0 - xp.eye(p["n"], dtype=C.dtype))
    with rec.timed("spectrum"):
        if method == "circulant":
            spec = circulant_spectrum(c, k)
        else:
            # Lanczos (ARPACK) for the few leading eigenvalues of a stored kernel: 1.7 s at n = 2000 here
            # against 4 s for a dense eigvalsh; the matrix-free block solver never stores C
            tol = MATRIX_FREE_TOL if method == "matrix-free" else 0.0
            spec = markov_spectrum(C, k, method=method, rng=child_rng(seed, "lanczos"), tol=tol)
    return np.sort(np.asarray(to_numpy(spec.eigenvalues), dtype=float))[::-1], spec.method


def _operator(x, p, man):
    """The kernel under test as a matrix-free operator (toolkit code; the diagonal dropped on i.i.d. points)."""
    import functools

    from spectral import KernelOperator, dot_product_scores, fna_kernel

    if p["kernel"] == "softmax":
        temperature = p["temperature"]

        def scores(xa, xb):
            return dot_product_scores(xa, y=xb, temperature=temperature)

        return KernelOperator(x, kernel=_identity, distance=scores, zero_diagonal=p["points"] == "random")
    distance = man.distance if p["distance"] == "geodesic" else man.chordal_distance
    kernel = functools.partial(fna_kernel, alpha=p["kernel_alpha"], scale=p["scale"], dim=p["dim"])
    return KernelOperator(x, kernel=kernel, distance=distance, zero_diagonal=p["points"] == "random")


def _identity(c):
    return c


def _generator(eta_modes, t):
    """lambda = -log(eta) / t for eta in (0, 1); non-positive eta give NaN (reported as failures)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(eta_modes > 0, -np.log(np.where(eta_modes > 0, eta_modes, 1.0)) / t, np.nan)


# ------------------------------------------------------------------------------------ statistics


def _shape_error(lam, ref) -> float:
    """max_k |log lam_k - log ref_k - mean_k(log lam - log ref)|: scale-free shape mismatch."""
    r = np.log(lam) - np.log(ref)
    return float(np.max(np.abs(r - np.mean(r))))


def _best_fit_alpha(lam, family) -> float:
    """The alpha whose continuum spectrum ``family(alpha)`` best matches ``lam`` in shape.

    A scan over (0.05, 1.999] plus the Gaussian endpoint alpha = 2 (the family is discontinuous
    there: Phi jumps from the power law to exp(-z^2)), then bounded Brent refinement around the best
    scanned power-law value. Returns the minimiser of :func:`_shape_error`.
    """
    from scipy.optimize import minimize_scalar

    def err(a):
        # at large scales the continuum family of some alphas has eta_l <= 0 (no generator): never the best fit
        with np.errstate(invalid="ignore", divide="ignore"):
            ref = family(a)
        if not np.all(np.isfinite(ref) & (ref > 0)):
            return np.inf
        return _shape_error(lam, ref)

    grid = np.linspace(0.05, 1.999, 40)
    errs = np.array([err(a) for a in grid])
    i = int(np.argmin(errs))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(err, bounds=(lo, hi), method="bounded", options={"xatol": 1e-5})
    best, best_err = (float(res.x), float(res.fun)) if res.fun <= errs[i] else (float(grid[i]), float(errs[i]))
    if err(2.0) < best_err:
        return 2.0
    return best


def _circle_statistics(lam_j, p, ks):
    """Paired frequencies k, measured lambda_k and the continuum references on S^1."""
    lam_pairs = lam_j[: 2 * (p["modes"] // 2)].reshape(-1, 2)
    lam_k = lam_pairs.mean(axis=1)
    split = np.abs(lam_pairs[:, 1] - lam_pairs[:, 0]) / lam_k
    k = np.arange(1, lam_k.size + 1)

    def family(a):
        return ks.circle_generator_eigenvalues(k, alpha=a, scale=p["scale"], dim=p["intrinsic"],
                                               distance=p["reference_distance"], time=p["scale"] ** p["alpha"])

    return k, lam_k, split, family


def _sphere_statistics(lam_j, p, ks):
    """Shell means (degrees l = 1..L, 2l+1 eigenvalues each) and the Funk-Hecke references on S^2."""
    top = int(math.isqrt(p["modes"] + 1)) - 1
    means, spreads, start = [], [], 0
    for l in range(1, top + 1):
        shell = lam_j[start : start + 2 * l + 1]
        start += 2 * l + 1
        means.append(shell.mean())
        spreads.append((shell.max() - shell.min()) / shell.mean())
    l = np.arange(1, top + 1)

    def family(a):
        return ks.sphere_generator_eigenvalues(l, alpha=a, scale=p["scale"], dim=p["intrinsic"],
                                               time=p["scale"] ** p["alpha"])

    return l, np.array(means), np.array(spreads), family


# --------------------------------------------------------------------------------- paper setting


def _sweep_n(scale: float) -> int:
    """Grid size of the scale sweep: h <= s/8, rounded up to a size with small prime factors (a real FFT of
    5026549 points took 1.6 s here, of the 5-smooth 5038848 points 0.1 s)."""
    from scipy.fft import next_fast_len

    return int(next_fast_len(math.ceil(2 * math.pi / (SWEEP_H_OVER_S * scale)), real=True))


def _paper_slope_window(rec, slope, p, what):
    """FNA-10 at Fig. 2a's setting: the log-log slope over the fit window within the ledger's window."""
    alpha = p["alpha"]
    if alpha == 2:
        window = (2.0 - PAPER_WINDOW_GAUSSIAN, 2.0 + PAPER_WINDOW_GAUSSIAN)
        why = "FNA-10, Fig. 2a (alpha = 2): slope 2.00 +- 0.02 at the paper setting"
    else:
        window = (alpha + PAPER_WINDOW[0], alpha + PAPER_WINDOW[1])
        why = ("FNA-10, Fig. 2a: slope 1.1-1.2 at alpha = 1.2 (window-dependent), accepted in [alpha - 0.15, "
               "alpha + 0.05]; measured 1.131 over k = 2..10")
    hint = ""
    if 1.4 <= alpha < 2:
        hint = (f"near alpha = 2 the finite-scale slope approaches alpha only like (k s)^(2 - alpha) = (k s)^"
                f"{2 - alpha:.2g} (FNA-13): at s = {p['scale']:g} it is still far below alpha")
    rec.within("slope", slope, window, why=why, label=f"log-log slope of lambda_k over {what} at the paper setting",
               hint=hint)


def _paper_sweep(rec, xp, p, seed, idx, window, paper_slope, paper_best, best_tol, family, ks):
    """The monotone approach of FNA-10 (scale sweep at h = s/8) and the resolved setting at the paper's scale.

    The slope over the fit window is measured at s = 1e-2 ... 1e-5 on grids with h <= s/8; its distance to
    the slope of the exact s -> 0 spectrum m(k)/M0 must not grow as s shrinks. The first point is the
    paper's scale on a resolving grid: its statistics are shown next to the paper grid's, and their
    difference is the paper grid's discretisation error.
    """
    alpha = p["alpha"]
    if alpha < 2:
        limit = fit_power_law(idx[window], ks.limit_generator_eigenvalues(idx, alpha=alpha)[window]).slope
    else:
        limit = 2.0  # the Gaussian's generator spectrum is k^2/4 at every scale
    scratch = Recorder()  # the sweep's own phase timings stay out of the check's
    slopes, sizes = [], []
    resolved = None
    for s_k in SWEEP_SCALES:
        n_k = _sweep_n(s_k)
        q = dict(p, n=n_k, scale=s_k, h=2 * math.pi / n_k, method="circulant")
        eta, _ = _markov_eigenvalues(xp, q, seed, scratch)
        lam_j = _generator(eta[1 : q["modes"] + 1], s_k ** alpha)
        _, lam, _, fam = _circle_statistics(lam_j, q, ks)
        slopes.append(fit_power_law(idx[window], lam[window]).slope)
        sizes.append(n_k)
        if resolved is None:
            ref = fam(alpha)
            resolved = dict(slope=slopes[-1], slope_gap=abs(slopes[-1] - fit_power_law(idx[window], ref[window]).slope),
                            shape=_shape_error(lam[window], ref[window]),
                            best=_best_fit_alpha(lam[window], lambda a: fam(a)[window]), n=n_k)
    slopes = np.array(slopes)
    gaps = np.abs(slopes - limit)
    rise = float(np.max(np.diff(gaps)))
    rec.array("sweep_scale", np.array(SWEEP_SCALES))
    rec.array("sweep_n", np.array(sizes))
    rec.array("sweep_slope", slopes)
    listed = ", ".join(f"{v:.4f}" for v in slopes)
    scales = ", ".join(f"{v:g}" for v in SWEEP_SCALES)
    rec.at_most("monotone_approach", rise, SWEEP_SLACK,
                why="FNA-10: the slope must move monotonically toward its limit as the scale shrinks; slack 1e-4 = "
                    "the slope noise of a grid with h = s/8 (discrete and continuum slopes agree within 1e-4)",
                label=f"largest rise of |slope - limit slope {limit:.4f}| as s shrinks ({scales}, h = s/8: slopes "
                      f"{listed})")
    rec.info("sweep_slope_smallest_scale", float(slopes[-1]))
    rec.info("resolved_n", resolved["n"])
    rec.info("resolved_slope", resolved["slope"])
    rec.info("resolved_slope_gap", resolved["slope_gap"])
    rec.info("resolved_shape_error", resolved["shape"])
    rec.info("resolved_best_fit_alpha", resolved["best"])
    bias = paper_best - resolved["best"]
    rec.info("grid_bias_best_fit", bias)
    rec.note(f"resolved setting next to the paper's: the same kernel and scale s = {p['scale']:g} on {resolved['n']} "
             f"points (h/s = {2 * math.pi / resolved['n'] / p['scale']:.3g}) give slope {resolved['slope']:.4f} and "
             "best-fit alpha "
             f"{resolved['best']:.4f}, against {paper_slope:.4f} and {paper_best:.4f} on the paper's {p['n']} points: "
             f"the paper grid's discretisation error is {paper_slope - resolved['slope']:+.4f} in slope and "
             f"{bias:+.4f} in best-fit alpha (the paper-setting tolerances are ~2x its largest value over alpha 1-2)")
    reach = best_tol + abs(bias)
    told = reach < 0.05
    rec.note(f"resolution at the paper setting: on the paper's grid the best-fit test accepts a kernel alpha within "
             f"about tolerance + |grid bias| = {best_tol:g} + {abs(bias):.4f} = {reach:.3f} of the claim, so it "
             + (f"tells alpha = {alpha:g} from {alpha + 0.05:g} (kernels 0.05 apart fail) but not from "
                f"{alpha + 0.01:g}" if told else f"cannot tell alpha = {alpha:g} from {alpha + 0.05:g}")
             + "; the scale sweep runs on resolving grids and is finer")
    toward = np.abs(slopes - alpha)
    if alpha < 2 and np.any(np.diff(toward) > SWEEP_SLACK):
        rec.note(f"the slope approaches the s -> 0 spectrum m(k)/M0 of the circle, whose slope over the window is "
                 f"{limit:.4f}, not alpha = {alpha:g}: |slope - alpha| = "
                 + ", ".join(f"{v:.3f}" for v in toward)
                 + f" at s = {scales} is not monotone (the kernel is not periodised on S^1: its low modes differ "
                   "from k^alpha, FNA-12)")


# ------------------------------------------------------------------------------------------ run


@CHECK.define
def run(*, alpha=1.2, manifold="circle", n=None, scale=None, points="grid", modes=None, fit_range=None,
        distance="geodesic", reference_distance=None, kernel_alpha=None, dim=None, kernel="fna",
        temperature=None, method="auto", paper_setting=False, seed=0, device="cpu"):
    """Check the Weyl law of FNA: discrete generator spectrum against the exact continuum spectrum.

    Parameters
    ----------
    alpha : float
        Claimed order alpha in (0, 2] of the Weyl law lambda_k ~ k^alpha (FNA eqs. 9-10, 22; 2 =
        Gaussian kernel).
    manifold : {"circle", "sphere"}
        S^1 ("circle", Fig. 2a) or S^2 ("sphere", FNA-11: lambda_j ~ j^(alpha/2)).
    n : int, optional
        Number of points, >= 8 (automatic: 2000 on the circle grid, 4000 random on the circle, 5000 on
        the sphere grid, 3000 random on the sphere).
    scale : float, optional
        Kernel scale kappa > 0 (FNA eq. 13); automatic: 2 h on the circle grid, 8 h on the sphere grid,
        4 h on random points (16 h for alpha = 2 on the circle), h = 2 pi / n on S^1, sqrt(4 pi / n) on S^2.
    points : {"grid", "random"}
        "grid" (equispaced S^1 / Fibonacci S^2) or "random" (i.i.d. uniform; the diagonal self score
        Phi(0) is then dropped: it is an atom that biases every eigenvalue by ~1/(1 + 2 pi/(n Z))).
    modes : int, optional
        Number of nontrivial eigenvalues lambda_1..lambda_modes used, in [2, n - 3] (automatic: 20 on
        S^1 = k <= 10 paired modes, 48 on S^2 = degrees l <= 6).
    fit_range : tuple of int, optional
        Window (lo, hi) of the fits: frequencies k on S^1 (automatic 2,10), degrees l on S^2 (1,6).
    distance : {"geodesic", "chordal"}
        Distance inside Phi: "geodesic" or "chordal" (|x - y|, the paper's eq. 13 on S^1 points).
    reference_distance : {"geodesic", "chordal"}, optional
        Distance of the continuum reference (automatic: the same as distance).
    kernel_alpha : float, optional
        Alpha used to BUILD the kernel, in (0, 2] (automatic: the claimed alpha; another value is a
        negative control).
    dim : float, optional
        Exponent dimension d_M >= 1 of Phi = (1+z)^-(d_M+alpha) (automatic: intrinsic, 1 on S^1, 2 on
        S^2; 2 on S^1 is the ambient-dimension trap of FNA-10).
    kernel : {"fna", "softmax"}
        "fna" (Phi_alpha, FNA eqs. 9-10) or "softmax" (dot-product exp(x.y/T), a negative control).
    temperature : float, optional
        Softmax temperature T > 0, kernel="softmax" only (automatic: sqrt(2) = sqrt of the ambient
        dimension of S^1 points, the dot-product baseline of FNA Assumptions 1+2).
    method : {"auto", "circulant", "dense", "lanczos", "matrix-free"}
        Eigensolver: "auto" (circulant FFT on the circle grid; else Lanczos on the stored kernel for
        n > 200 and dense below, or, when the stored kernel would not fit in memory, the matrix-free
        block solver up to n = 50000), "circulant", "dense", "lanczos" or "matrix-free" (kernel tiles
        recomputed in every block product, memory O(n)); recorded as the solver used. The peak memory
        of the request is estimated first and a path that would not fit is refused.
    paper_setting : bool
        The Fig. 2a setting: n = 500, kappa = sqrt(1e-4) = 0.01 (h/kappa = 1.26); circle grid only.
    seed : int
        Seed of the random points (stream "points") and of the Lanczos start vector (stream "lanczos").
    device : {"cpu", "gpu"}
        Array device of the scores and the eigensolver (points are made on the host and moved).

    Returns
    -------
    CheckResult
        Passes when the log-log slope gap, the shape error and |best-fit alpha - alpha| (and on S^2 the
        spread within each shell of 2l+1 eigenvalues) are within the tolerances of the setting.
    """
    from manifolds import kernel_spectra as ks

    p = _settings(alpha=alpha, manifold=manifold, n=n, scale=scale, points=points, modes=modes,
                  fit_range=fit_range, distance=distance, reference_distance=reference_distance,
                  kernel_alpha=kernel_alpha, dim=dim, kernel=kernel, temperature=temperature, method=method,
                  paper_setting=paper_setting)
    from verify.core.check import device_namespace  # looked up at run time (tests stand in array_api_strict)

    p["method"] = _choose_method(p)  # memory first: refused here, before any point or kernel exists
    xp = device_namespace(device)
    rec = Recorder()
    for key in ("n", "scale", "modes", "fit_range", "reference_distance", "kernel_alpha", "dim", "temperature"):
        rec.resolve(key, p[key])
    eta, solver = _markov_eigenvalues(xp, p, seed, rec)
    rec.resolve("method", solver)
    if p["points"] == "random":
        rec.note("diagonal self score Phi(0) dropped (i.i.d. points)")
    elif p["manifold"] == "sphere":
        rec.note("on the Fibonacci grid the best-fit alpha is biased low (by 0.005-0.007 for alpha < 2 at the default "
                 "n = 5000, s = 8 h): the self score Phi(0) of each node is a point mass where the continuum has the "
                 "mean of Phi over the node's cell; it shrinks as s/h grows (0.035 at n = 2000, s = 3 h)")
    t = p["scale"] ** p["alpha"]  # generator time t = kappa^alpha = eps^(alpha/2) (FNA Methods)
    lam_j = _generator(eta[1 : p["modes"] + 1], t)
    lo, hi = p["fit_range"]
    tol = _TOLERANCES[(p["manifold"], p["points"]) + (("paper",) if p["paper_setting"] else ())]
    with rec.timed("reference"):
        if p["manifold"] == "circle":
            idx, lam, spread, family = _circle_statistics(lam_j, p, ks)
        else:
            idx, lam, spread, family = _sphere_statistics(lam_j, p, ks)
        ref = family(p["alpha"])
    window = (idx >= lo) & (idx <= hi)
    bad = ~(np.isfinite(lam_j) & (lam_j > 0))
    for name, value in (("index", idx), ("lambda", lam), ("reference", ref), ("lambda_j", lam_j)):
        rec.array(name, value)
    letter = "k" if p["manifold"] == "circle" else "l"
    what = f"{letter} = {lo}..{hi}"
    if np.any(bad):
        min_eta = float(np.min(eta[1 : p["modes"] + 1]))
        rec.holds("diffusion_spectrum", False,
                  why="a diffusion generator has 0 < eta_k < 1, i.e. finite lambda_k > 0",
                  label=f"{int(bad.sum())} of the {p['modes']} leading nontrivial Markov eigenvalues are <= 0 or give "
                        f"no finite generator eigenvalue (min eta = {min_eta:.3g}): not a diffusion generator spectrum")
        rec.info("min_eta", min_eta)
        best = None
    else:
        with rec.timed("fits"):
            fit = fit_power_law(idx[window], lam[window])
            fit_ref = fit_power_law(idx[window], ref[window])
            shape = _shape_error(lam[window], ref[window])
            best = _best_fit_alpha(lam[window], lambda a: family(a)[window])
            naive = fit_power_law(np.arange(1, p["modes"] + 1), lam_j).slope
        calibrated = {"circle": 0.5, "sphere": 1 / 8}[p["manifold"]] if p["points"] == "grid" else 0.25
        if p["paper_setting"]:
            calibrated = (2 * math.pi / PAPER_N) / PAPER_SCALE  # the paper tolerances were measured there
        ratio = p["h"] / p["scale"]
        # outside the calibrated resolution a failure may be the grid's, not the kernel's: say so
        hints = []
        if ratio > calibrated * 1.001:
            hints.append(f"h/s = {ratio:.3g} > {calibrated:.3g}, where these tolerances were measured: the points do "
                         "not resolve the kernel core")
        # the calibration runs fit modes with k h <= 0.063 (k = 10 at n = 1000); far beyond that the
        # discrete spectrum bends away from the continuum one near the grid's Nyquist mode
        if p["manifold"] == "circle" and hi * p["h"] > 0.1 and not p["paper_setting"]:
            hints.append(f"highest fitted mode k = {hi} has k h = {hi * p['h']:.3g} > 0.1: the points do not resolve "
                         "it; use a larger n")
        hint = "; ".join(hints)
        if p["paper_setting"]:
            _paper_slope_window(rec, fit.slope, p, what)
        else:
            rec.info("slope", fit.slope)
        rec.info("slope_reference", fit_ref.slope)
        rec.at_most("slope_gap", abs(fit.slope - fit_ref.slope), tol["slope_gap"][0], why=tol["slope_gap"][1],
                    label=f"log-log slope over {what} is {fit.slope:.4f}, the continuum reference's "
                          f"{fit_ref.slope:.4f}",
                    hint=hint)
        rec.at_most("shape_error", shape, tol["shape_error"][0], why=tol["shape_error"][1],
                    label=f"shape error max|log lambda - log ref - mean| over {what}", hint=hint)
        rec.close("best_fit_alpha", best, p["alpha"], atol=tol["best_fit_alpha"][0], why=tol["best_fit_alpha"][1],
                  label="best-fit alpha of the continuum family", hint=hint)
        if p["manifold"] == "circle":
            rec.info("pair_splitting", float(np.max(spread)))
            if p["alpha"] < 2:
                limit = ks.limit_generator_eigenvalues(idx, alpha=p["alpha"])
                rec.info("limit_slope", fit_power_law(idx[window], limit[window]).slope)
                rec.info("limit_ratio_k_hi", float(lam[window][-1] / limit[window][-1]))
                rec.array("limit", limit)
                rec.array("asymptote", ks.limit_asymptote(idx, alpha=p["alpha"]))
            else:
                rec.info("limit_slope", 2.0)  # lambda_k -> k^2/4 exactly (Gaussian)
                rec.info("limit_ratio_k_hi", float(lam[window][-1] / (idx[window][-1] ** 2 / 4.0)))
            rec.info("naive_slope_j", naive)  # Fig. 2a read against j = 1..modes (biased below alpha)
            if p["paper_setting"]:
                with rec.timed("scale_sweep"):
                    _paper_sweep(rec, xp, p, seed, idx, window, fit.slope, best, tol["best_fit_alpha"][0], family, ks)
        else:
            rec.at_most("shell_spread", float(np.max(spread[window])), tol["shell_spread"][0],
                        why=tol["shell_spread"][1],
                        label=f"eigenvalues do not cluster in shells of 2l+1 (largest relative spread within a shell "
                              f"l in {lo}..{hi})")
            jw = np.arange(lo * lo, (hi + 1) ** 2)  # j over the shells l = lo..hi (lambda_j, j = l^2..l^2+2l)
            ref_j = np.repeat(ref, 2 * idx + 1)
            rec.info("slope_j", fit_power_law(jw, lam_j[jw - 1]).slope)
            rec.info("slope_j_reference", fit_power_law(jw, ref_j[jw - 1]).slope)
            rec.info("naive_slope_j", naive)  # alpha/2 only asymptotically (FNA-11)

    where = (f"S^1, {p['n']} {'equispaced' if p['points'] == 'grid' else 'i.i.d. uniform'} points"
             if p["manifold"] == "circle" else
             f"S^2, {p['n']} {'Fibonacci' if p['points'] == 'grid' else 'i.i.d. uniform'} points")
    if p["kernel"] == "fna":
        built = f"Phi_{p['kernel_alpha']:g} (d_M = {p['dim']:g}, {p['distance']} distance)"
    else:
        built = f"dot-product softmax exp(x.y / {p['temperature']:.4g})"
    statement = (
        f"FNA Weyl law: on {where}, kernel {built} at scale {p['scale']:.4g} (h/s = {p['h'] / p['scale']:.3g}), "
        f"-log(eta)/t has the shape of the exact continuum spectrum of Phi_{p['alpha']:g} "
        f"({p['reference_distance']}, same scale) over {what}"
        + (f"; best-fit alpha {best:.4f}" if best is not None else "")
        + ("; at Fig. 2a's setting the slope lies in the FNA-10 window and approaches its s -> 0 limit "
           "monotonically as s shrinks (1e-2 to 1e-5 on grids with h = s/8)" if p["paper_setting"] and best is not None
           else "")
    )
    return rec.finish(statement)


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
