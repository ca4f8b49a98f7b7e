"""Cost of the PDE refinement and where it can act: dense, banded, factored, outputs (PDE-16, PDE-18).

PDE-16 (D.0.5 Complexity: "the N_t light PDE steps add O(N_t N) flops, so overall runtime remains
near-linear"). One explicit three-point step touches every stored entry a constant number of times
(counted here as 5 flops per entry: 3 multiplications, 2 additions). Hence:

* dense ``A(0)`` (the paper's main experiments use dense softmax): ``5 T^2`` per step, quadratic;
* banded ``A(0)`` of width w with g global rows and columns (Longformer-style surrogate): the key-axis
  step widens every band by one token per side, so after n steps a row holds ``w + 2n`` entries and
  ``nnz = T (w + 2n) + O(g T)``: linear in T (checked against a boolean dilation of the pattern);
* kernel attention ``A = phi(Q) phi(K)^T``: the key-axis operator acts on ``phi(K)`` (``A (I + r L)^T =
  phi(Q) ((I + r L) phi(K))^T``), ``O(T m)`` per step with no ``T x T`` matrix; row normalisation has to be
  redone where ``1^T L != 0`` (ghost reflection).

So the refinement is near-linear only for sparse or factored ``A(0)``.

PDE-18 (bridge to the public code, which diffuses hidden states). Along the query axis
``(I + r L)^N_t A V = (I + r L)^N_t (A V)``: diffusing the attention matrix and then multiplying by V is
the same as diffusing the outputs; along the key axis ``A (I + r L^T)^N_t V`` is a different operation.

``claim="printed"`` asserts D.0.5 as printed, O(N_t T) flops for the dense refinement, which fails
(PDE-16 holds only for sparse or factored A(0)). PDE-18 holds as printed (the ledger's verdict), so the
printed run asserts it as the corrected run does: the query-axis identity, and a key-axis map that
differs from diffusing the outputs (no one prints that output diffusion is PDE attention on the key
axis too: PDE-18 itself says the two differ there).
"""

from __future__ import annotations

import dataclasses

import numpy as np

import spectral
from manifolds.references import pde
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.fits import fit_linear, fit_power_law
from verify.core.memory import PathNeed
from verify.core.params import Int, Ints
from verify.core.reduce import count_bad, least, worst
from verify.core.result import Recorder

CHECK = Check("pde_cost",
              host_only="exact flop and entry counts: the banded refinement is scipy.sparse (CSR), its fill-in "
                        "checked against a boolean dilation of the T x T pattern; dense steps run at T <= 2048 "
                        "only to be counted",
              printed="D.0.5's O(N_t T) flops for the dense refinement (PDE-16, which fails); PDE-18 holds as "
                      "printed and is asserted as in the corrected run")

#: The measured tolerances (the others are exact counts or rounding next to their assertion).
CALIBRATION = Calibration(
    Tolerance("key_axis_output_difference", 0.05, measured=0.147, over={"seed": (0, 1, 2, 3, 4)},
              why="A (I + r L^T)^n V smooths the values' index, not the outputs': a different map, smallest relative "
                  "difference over the five boundaries and n = 1..8 (3x margin); the identity would give <= 1e-13"),
)

_FLOPS_PER_ENTRY = 5


def _band_pattern(T: int, half_width: int, n_global: int) -> np.ndarray:
    i, j = np.indices((T, T))
    return (np.abs(i - j) <= half_width) | (i < n_global) | (j < n_global)


def _dilate_columns(pattern: np.ndarray, n: int) -> np.ndarray:
    """Boolean dilation by n tokens along each row (no wrap-around): the reference fill-in."""
    out = pattern.copy()
    for s in range(1, n + 1):
        out[:, s:] |= pattern[:, :-s]
        out[:, :-s] |= pattern[:, s:]
    return out


@CHECK.parameters
class Params:
    sizes: tuple = Ints((256, 512, 1024, 2048), "Sequence lengths T (at least 3 distinct); dense runs stop at 2048",
                        low=64, high=8192, unit="tokens")
    steps: int = Int(4, "Refinement steps N_t (the paper uses N_t <= 4)", low=1, high=16)
    band: int = Int(33, "Width w of the band of the sparse surrogate (odd)", low=3, high=257, unit="tokens")
    n_global: int = Int(4, "Global tokens g (dense rows and columns) of the sparse surrogate", low=0, high=32)
    features: int = Int(16, "Random features m of the kernel attention phi(Q) phi(K)^T", low=2, high=256)
    value_dim: int = Int(8, "Columns of V in the output-diffusion identity (PDE-18)", low=1, high=64)

    def resolve(self):
        """The rules between parameters: three distinct sizes (a log-log slope), an odd band."""
        if len(set(self.sizes)) < 3:
            raise InputError(f"sizes must hold at least 3 distinct values (a log-log slope), got {self.sizes}")
        if self.band % 2 == 0:
            raise InputError(f"band must be odd (a symmetric band), got {self.band}")
        return self


@CHECK.memory
def needs(p: Params) -> dict[str, PathNeed]:
    """The banded surrogate is built and checked through dense T x T arrays at the largest size.

    Random values, the normalised band, the sparsity patterns: tracemalloc peaks 186.7 / 546.7 MiB with
    the largest size 2048 / 4096 (dense runs stop at 2048): about 34 bytes per entry of the largest
    T x T; 44 bytes and 32 MiB leave a margin.
    """
    largest = max(p.sizes)
    return {"dense": PathNeed(lambda t: (32 << 20) + 44 * t * t, largest, option="--sizes", low=64,
                              what=f"the dense T x T pattern checks at the largest of --sizes, {largest}")}


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What pde_cost measures (flops: 5 per stored entry and step, summed over N_t steps)."""

    #: T -> flops of the refinement of a dense A(0) (T <= 2048), of the band surrogate, of phi(Q) phi(K)^T
    dense_flops: dict[int, int]
    banded_flops: dict[int, int]
    factored_flops: dict[int, int]
    #: log-log slopes of the flops against T
    dense_flop_exponent: float
    banded_flop_exponent: float
    factored_flop_exponent: float
    #: affine fit a T + b of the banded flops: its slope and max relative residual
    banded_flops_per_token: float
    banded_flops_affine_residual: float
    #: entries where the stored sparse pattern differs from the band pattern dilated by one token per side and step,
    #: and stored entries that are not finite
    fill_in_pattern_mismatches: int
    #: max |width of an interior band row - (w + 2 N_t)|
    band_width_error: int
    #: max relative difference factored vs dense refinement (T = 256; Neumann, reflect, periodic)
    factored_vs_dense_relative: float
    #: max |row sum - 1| of the factored refinement with ghost reflection, without and with renormalisation
    reflect_factored_row_sum_deviation: float
    factored_renormalised_row_sum_deviation: float
    #: max relative |query-axis diffusion of A, times V - diffused outputs| and min relative key-axis difference
    query_axis_output_identity: float
    key_axis_output_difference: float


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Flop and storage counts of dense, banded and factored refinement; query-axis = output diffusion."""
    import scipy.sparse as sp

    sizes, steps, band, n_global, features = tuple(sorted(set(p.sizes))), p.steps, p.band, p.n_global, p.features
    h = band // 2
    dense_flops, banded_flops, factored_flops = {}, {}, {}
    pattern_mismatch, width_err = 0, 0
    with ctx.timed("counts"):
        for T in sizes:
            rng = child_rng(p.seed, "counts", T)
            if T <= 2048:
                a = rng.random((T, T))
                total = 0
                for _ in range(steps):
                    a = spectral.evolve_attention(a, steps=1).attention
                    total += _FLOPS_PER_ENTRY * a.size
                dense_flops[T] = total
            pat = _band_pattern(T, h, n_global)
            vals = np.where(pat, rng.random((T, T)) + 0.1, 0.0)
            s = sp.csr_array(vals / vals.sum(axis=1, keepdims=True))
            total = 0
            ref = pat
            for _ in range(steps):
                s = spectral.evolve_attention(s, steps=1, boundary="neumann").attention
                total += _FLOPS_PER_ENTRY * s.nnz
                ref = _dilate_columns(ref, 1)
                got = np.zeros((T, T), dtype=bool)
                got[s.nonzero()] = True
                # a stored NaN is non-zero, so it sat in the pattern: count it as a mismatch (entries are positive)
                pattern_mismatch += int(np.count_nonzero(got != ref)) + count_bad(s.data, True)
            row = T // 2  # an interior band row, away from the global columns and the ends
            cols = s[[row], :].nonzero()[1]
            cols = cols[cols >= n_global + steps]  # leave out the dilated global columns
            width_err = max(width_err, abs(int(cols.max() - cols.min() + 1) - (band + 2 * steps)))
            banded_flops[T] = total
            phi_k = np.exp(rng.standard_normal((T, features)) / 4)
            phi_q = np.exp(rng.standard_normal((T, features)) / 4)
            fa = spectral.FactoredAttention(phi_q / (phi_q @ phi_k.sum(axis=0))[:, None], phi_k)
            total = 0
            for _ in range(steps):
                fa = spectral.evolve_attention(fa, steps=1).attention
                total += _FLOPS_PER_ENTRY * fa.key.size
            factored_flops[T] = total
    ts = np.array(sizes, dtype=float)
    fb = np.array([banded_flops[T] for T in sizes], dtype=float)
    affine = fit_linear(ts, fb)
    resid = float(np.max(np.abs(fb - (affine.intercept + affine.slope * ts)) / fb))

    # factored = dense on the same matrix; renormalisation where 1^T L != 0
    T = 256
    rng = child_rng(p.seed, "factored-check")
    phi_k = np.exp(rng.standard_normal((T, features)) / 4)
    phi_q = np.exp(rng.standard_normal((T, features)) / 4)
    phi_q = phi_q / (phi_q @ phi_k.sum(axis=0))[:, None]
    fa = spectral.FactoredAttention(phi_q, phi_k)
    diffs = []
    for b in ("neumann", "reflect", "periodic"):
        got = spectral.evolve_attention(fa, steps=steps, boundary=b).attention.dense()
        ref = spectral.evolve_attention(phi_q @ phi_k.T, steps=steps, boundary=b).attention
        diffs.append(float(np.max(np.abs(got - ref)) / np.max(np.abs(ref))))
    reflect = spectral.evolve_attention(fa, steps=steps, boundary="reflect").attention
    renorm = spectral.evolve_attention(fa, steps=steps, boundary="reflect", renormalize=True).attention

    # PDE-18: query-axis diffusion of A then A V equals diffusing A V (brute-force output diffusion)
    with ctx.timed("outputs"):
        Tq = 64
        a = pde.softmax_attention(child_rng(p.seed, "outputs"), Tq)
        v = child_rng(p.seed, "values").standard_normal((Tq, p.value_dim))
        r = 0.1
        q_err, k_diff = 0.0, np.inf
        for b in ("periodic", "neumann", "reflect", "dirichlet", "fixed"):
            step = np.eye(Tq) + r * pde.stencil_matrix(Tq, b)
            h_out = a @ v
            for n in range(1, 9):
                h_out = step @ h_out  # the public code: hidden states diffused along the sequence
                aq = spectral.evolve_attention(a, steps=n, alpha=r, axis="query", boundary=b).attention
                ak = spectral.evolve_attention(a, steps=n, alpha=r, axis="key", boundary=b).attention
                scale = float(np.linalg.norm(h_out))
                q_err = worst(q_err, float(np.linalg.norm(aq @ v - h_out)) / scale)
                k_diff = least(k_diff, float(np.linalg.norm(ak @ v - h_out)) / scale)
    return Quantities(
        dense_flops=dense_flops, banded_flops=banded_flops, factored_flops=factored_flops,
        dense_flop_exponent=fit_power_law(list(dense_flops), list(dense_flops.values())).slope,
        banded_flop_exponent=fit_power_law(list(banded_flops), list(banded_flops.values())).slope,
        factored_flop_exponent=fit_power_law(list(factored_flops), list(factored_flops.values())).slope,
        banded_flops_per_token=affine.slope, banded_flops_affine_residual=resid,
        fill_in_pattern_mismatches=pattern_mismatch, band_width_error=width_err,
        factored_vs_dense_relative=worst(diffs),
        reflect_factored_row_sum_deviation=float(np.max(np.abs(reflect.row_sums() - 1.0))),
        factored_renormalised_row_sum_deviation=float(np.max(np.abs(renorm.row_sums() - 1.0))),
        query_axis_output_identity=q_err, key_axis_output_difference=float(k_diff))


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """The counting laws, factored = dense, and the query-axis output identity."""
    steps, h = p.steps, p.band // 2
    for T in sorted(q.banded_flops):
        rec.info(f"banded_flops_T{T}", q.banded_flops[T])
    rec.equal("fill_in_pattern_mismatches", q.fill_in_pattern_mismatches, 0,
              why="after n key-axis steps the stored pattern is the band pattern dilated by n tokens per side "
                  "(positive entries for r <= 1/2, no cancellation)",
              label="PDE-16: the sparse fill-in differs from the pattern dilated by one token per side and step")
    rec.equal("band_width_error", q.band_width_error, 0,
              why="an interior band row holds w + 2 N_t entries after N_t steps",
              label="PDE-16: the band does not widen by 2 per step")
    rec.info("banded_flop_exponent", q.banded_flop_exponent)
    rec.info("banded_flops_per_token", q.banded_flops_per_token)
    rec.at_most("banded_flops_affine_residual", q.banded_flops_affine_residual, 1e-12,
                why="once T > 2 (w/2 + N_t) + g + N_t every interior row holds w + 2n entries and the rows near "
                    "the ends and the global rows/columns contribute a T-independent deficit or g T: the count "
                    "is exactly a T + b (rounding of the fit only)",
                label="PDE-16: the banded refinement cost is not affine (linear) in T",
                hint="the sizes must exceed 2 (band/2 + steps) + n_global + steps"
                if min(p.sizes) <= 2 * (h + steps) + p.n_global + steps else "")
    rec.close("factored_flop_exponent", q.factored_flop_exponent, 1.0, atol=1e-9,
              why="the key factor phi(K) has T m entries: exactly linear",
              label="PDE-16: the factored refinement is not linear in T")
    rec.at_most("factored_vs_dense_relative", q.factored_vs_dense_relative, 1e-13,
                why="phi(Q) ((I + r L) phi(K))^T = phi(Q) phi(K)^T (I + r L)^T: same numbers up to rounding "
                    "(measured <= 6e-16)",
                label="PDE-16: the factored refinement differs from the dense one")
    rec.info("reflect_factored_row_sum_deviation", q.reflect_factored_row_sum_deviation)
    rec.at_most("factored_renormalised_row_sum_deviation", q.factored_renormalised_row_sum_deviation, 1e-13,
                why="rescaling phi(Q) by the row sums phi(Q) (phi(K)^T 1) restores row-stochasticity in O(T m)",
                label="PDE-16: renormalising the factored attention did not restore unit row sums")
    corrected = p.claim == "corrected"
    if corrected:
        mism = [T for T, f in q.dense_flops.items() if f != _FLOPS_PER_ENTRY * steps * T * T]
        rec.equal("dense_flops_mismatches", len(mism), 0,
                  why="a dense T x T matrix: every step updates all T^2 entries, 5 N_t T^2 flops (exact count)",
                  label=f"PDE-16: the dense refinement does not touch T^2 entries per step at T = {mism}")
        rec.info("dense_flop_exponent", q.dense_flop_exponent)
    else:
        rec.close("printed_dense_flop_exponent", q.dense_flop_exponent, 1.0, atol=0.1,
                  why="D.0.5 as printed: the refinement adds O(N_t N) flops (the main experiments refine dense "
                      "softmax attention)",
                  label="PDE-16, D.0.5 as printed: refining a dense A(0) costs 5 N_t T^2 flops, quadratic in T")
    rec.at_most("query_axis_output_identity", q.query_axis_output_identity, 1e-13,
                why="(I + r L)^n A V = (I + r L)^n (A V) by associativity; rounding of n <= 8 steps "
                    "(measured <= 4e-16)",
                label="PDE-18: query-axis diffusion of A followed by A V differs from diffusing A V")
    rec.at_least("key_axis_output_difference", q.key_axis_output_difference,
                 CALIBRATION.get("key_axis_output_difference", p),
                 label="PDE-18: key-axis diffusion coincided with diffusing the outputs")
    if corrected:
        return ("one refinement step costs 5 stored entries' worth of flops: quadratic for dense A(0), linear for a "
                "band (which widens by 2 per step) and for factored phi(Q) phi(K)^T (acting on phi(K)); query-axis "
                "diffusion of A followed by A V equals diffusing the outputs A V, key-axis diffusion does not")
    return ("the refinement adds O(N_t N) flops to dense attention (PDE-16 as printed); query-axis diffusion of A "
            "followed by A V equals diffusing the outputs A V, key-axis diffusion does not (PDE-18, which holds as "
            "printed)")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
