"""The normalisation contract of hierarchical attention (FMA-8), for the toolkit's FMA or your own FMA-type function.

FMA is presented as a drop-in replacement for softmax attention, i.e. each output is a convex
combination of the values. Eqs. (4) and (6) normalise the near field and every level's groups
separately, so with ``V = 1`` the output is ``1 + (number of non-empty levels)`` (when the value
aggregation vectors sum to one): as printed, FMA is not a normalised attention. One softmax over the
near keys and all groups, with the logit of a group corrected by ``+ log|G|`` and the group mean as
its value (the toolkit's ``normalisation="joint"``), restores row sums 1.

What this contract is not: a check that a function computes softmax attention. It asserts the
structure FMA must keep (rows of one, nonnegative weights, linearity in the values, causality), which
every normalised attention has, right or wrong: an attention without the ``1/sqrt(d)`` scale, with a
temperature of 10, normalised over the wrong axis, with values shifted against their keys, mean
pooling that ignores ``q`` and ``k``, or one that overflows only at large logits all pass it. To hold
an attention to the exact mechanism ``softmax(q k^T / sqrt(d)) v``, use ``python -m
verify.attention_contract --implementation mymod:f``; to hold an approximation (FMA among them) to a
claimed error rate against it, ``verify.attention_contract --approximate --claimed-rate P --in rank``.

The contract. An implementation is a function ``f(q, k, v) -> out``: ``q`` and ``k`` are float64
NumPy arrays of shape ``(n, d)``, ``v`` a float64 array of shape ``(n, m)`` with any ``m >= 1`` (the
probe passes blocks of up to 256 value columns), and ``out`` an array of shape ``(n, m)`` and dtype
float64 or float32 (anything ``numpy.asarray`` converts: a CPU torch tensor does). ``f`` must not
change its arguments. On ``draws`` Gaussian draws of ``q, k`` (standard deviation ``scale``) and
``v``, the check asserts:

1. every output entry is finite (NaN or inf never passes);
2. ``V = 1``: every output entry is 1 up to ``n eps`` (rounding of a softmax over <= n terms; ``eps``
   of the output's dtype);
3. the effective weights ``W = f(q, k, I)`` (the identity's columns, in blocks) are ``>= -n eps``;
4. ``f`` is the linear map ``W``: ``max |f(q, k, v) - W v| <= n eps max |v|``;
5. the arguments are unchanged after every call;
6. with ``causal=True`` (a causal implementation): ``W_ij = 0`` for ``j > i`` (up to ``n eps``), and
   the outputs of tokens ``<= c`` do not change when the queries, keys and values of the tokens
   ``> c`` are redrawn, at 8 random cuts ``c`` per draw (up to ``n eps max |v|``).

A function that raises, runs past ``timeout`` seconds per call, or returns something of another shape
or dtype, is the user's code failing, not the contract: one line naming the function and what it did,
exit 2. A third party's run ends with
the contract's verdict on that function (``PASS fma_contract [contract on mymod:f: holds]``), not the
ledger's verdict on the paper.

``implementation`` picks the toolkit's FMA ("fma": joint normalisation for ``claim="corrected"``,
per-level as printed for ``claim="printed"``, which fails), a known wrong construction
("summed-coarse": coarse values summed over the group while the denominator counts each coarse key
once, as seen in public hierarchical-attention code; fails), or a third party's function given as
``package.module:function``. ``r`` (the base cell) and ``claim`` configure the built-in FMA and are
refused with a third party's function. For the toolkit's FMA the check also verifies the exact
row-sum law of the per-level variant, ``1 + #{l : G_l(i) non-empty}``, causal and not, against the
definition-based sets.

Time: one draw makes ``ceil((n + 1) / 256) + 1`` calls (``+ 8`` when causal); the toolkit's FMA takes
about 4-8 s per draw at ``n = 4096, d = 256`` here (2 shared cores), so ``--draws 20`` runs minutes.
A third party's function runs at its own speed: the check reports each finished draw with its time
on stderr (``--quiet`` silences it), so the first line tells how long the rest will take.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import spectral
from manifolds.references import fma
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration
from verify.core.check import Check, Context
from verify.core.implementation import CountedCalls, Implementation, hold_to_contract, is_reference, load
from verify.core.params import Flag, Int, Real, Text
from verify.core.progress import progress
from verify.core.reduce import least as _least, worst as _worst
from verify.core.result import Recorder

CHECK = Check("fma_contract",
              printed="the per-level softmax of eqs. (4)/(6) as printed (implementation 'fma'), which fails: rows "
                      "sum to 1 + the number of non-empty levels",
              host_only="the contract is for implementations f(q, k, v) taking and returning NumPy arrays")

#: No measured tolerances: the contract's bounds are n eps (rounding of a normalised sum) and an exact law.
CALIBRATION = Calibration()

BUILTIN = ("fma", "summed-coarse")
#: value columns per call of the weight probe (the columns of [1 | I_n] in blocks)
BLOCK = 256
#: cuts per draw of the causal probe (one call each)
CUTS = 8
#: base cell of the built-in implementations when r is not given
DEFAULT_R = 16
#: seconds per call of a third party's function: a dense NumPy attention at n = 4096, d = 256 with a block of 256
#: value columns takes about 1 s here (2 shared cores); 60 s leaves 60x, and a hung function ends the run in a minute
DEFAULT_TIMEOUT = 60.0


@CHECK.parameters
class Params:
    implementation: str = Text("fma", '"fma" (spectral.fma_attention, normalisation chosen by claim), '
                                      '"summed-coarse" (a known wrong construction: must fail), or '
                                      '"package.module:function" for your f(q, k, v): q, k of shape (n, d), v of '
                                      "shape (n, m), returning (n, m) float64 or float32 NumPy arrays")
    n: int = Int(1024, "Sequence length", low=16, high=4096, unit="tokens")
    r: int = Int(None, "Base cell of the built-in implementations, at most n", low=1, high=4096, unit="tokens",
                 auto="16 for 'fma' and 'summed-coarse'; refused with a third-party function (it has its own)")
    d: int = Int(32, "Query and key dimension", low=1, high=256)
    scale: float = Real(1.0, "Standard deviation of the Gaussian queries and keys (sets the logit range)", low=0.0,
                        high=4.0, low_open=True)
    draws: int = Int(2, "Independent (q, k, v) draws", low=1, high=20)
    timeout: float = Real(DEFAULT_TIMEOUT, "Seconds one call of a third party's function may take (a dense NumPy "
                                           "attention with 256 value columns takes about 1 s at n = 4096 here)",
                          low=0.0, high=86400.0, low_open=True, unit="s")
    causal: bool = Flag(False, "The implementation is causal (token i attends to j <= i): the contract also asserts "
                               "that outputs of token i do not change when tokens > i change; 'fma' then runs "
                               "causal; not for 'summed-coarse'")

    def resolve(self):
        """r applies to the built-ins only (at most n); claim to 'fma' only; the implementation loads."""
        if is_reference(self.implementation):
            if self.r is not None:
                raise InputError(f"r is the base cell of the built-in implementations {BUILTIN}; it does not apply "
                                 f"to a third-party function ({self.implementation!r}): leave it out")
            if self.claim != "corrected":
                raise InputError("claim picks the normalisation of the built-in 'fma'; it does not apply to a "
                                 f"third-party function ({self.implementation!r}): leave it out")
            load(self.implementation, parameter="implementation", builtins=BUILTIN)
            return self
        if self.implementation not in BUILTIN:
            load(self.implementation, parameter="implementation", builtins=BUILTIN)  # raises: names the forms
        r = DEFAULT_R if self.r is None else self.r
        if r > self.n:
            raise InputError(f"r must be an integer in [1, {self.n}] (at most n), got {r}")
        if self.implementation == "summed-coarse":
            if self.causal:
                raise InputError("causal applies to 'fma' and third-party functions; 'summed-coarse' is not causal")
            if self.claim != "corrected":
                raise InputError("claim picks the normalisation of 'fma'; it does not apply to 'summed-coarse'")
        return dataclasses.replace(self, r=r)


def summed_coarse_attention(q, k, v, *, r):
    """A wrong hierarchical attention: FMA's sets, group-mean keys, but values **summed** over each group
    and each group counted **once** in the softmax denominator (no ``+ log|G|``).

    With ``V = 1`` a row equals ``(Z_near + sum_G e^(s_G) |G|) / (Z_near + sum_G e^(s_G))``, between 1
    and the largest group size. Kept as a negative control of the contract (it must fail).
    """
    n, d = q.shape
    levels = spectral.fma_levels(n, r=r)
    logits = q @ k.T / np.sqrt(d)
    num = np.zeros((n, v.shape[1]))
    den = np.zeros((n, 1))
    near = levels == 0
    shift = np.max(np.where(near, logits, -np.inf), axis=1, keepdims=True)
    e = np.where(near, np.exp(logits - shift), 0.0)
    num += e @ v
    den += e.sum(axis=1, keepdims=True)
    for lev in range(1, int(levels.max()) + 1):
        g = r * 2 ** (lev - 1)
        groups = np.arange(n) // g
        onehot = (groups[:, None] == np.arange(groups.max() + 1)[None, :]).astype(float)  # (n, M)
        kbar = (onehot.T @ k) / onehot.sum(axis=0)[:, None]
        vsum = onehot.T @ v
        member = (levels == lev).astype(float) @ onehot > 0  # (n, M): group m lies in F_l(i)
        eg = np.where(member, np.exp(q @ kbar.T / np.sqrt(d) - shift), 0.0)
        num += eg @ vsum
        den += eg.sum(axis=1, keepdims=True)
    return num / den


def _implementation(p) -> tuple[Implementation, str]:
    """The function ``f(q, k, v)`` named by ``implementation`` and its label."""
    if p.implementation == "fma":
        norm = "joint" if p.claim == "corrected" else "per-level"

        def toolkit(q, k, v):
            return spectral.fma_attention(q, k, v, r=p.r, normalisation=norm, causal=p.causal)

        label = f"toolkit FMA ({norm}{', causal' if p.causal else ''})"
        return Implementation("fma", toolkit, user=False), label
    if p.implementation == "summed-coarse":
        return Implementation("summed-coarse", lambda q, k, v: summed_coarse_attention(q, k, v, r=p.r),
                              user=False), "summed coarse values"
    return (load(p.implementation, parameter="implementation", builtins=BUILTIN, timeout=p.timeout),
            p.implementation)


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What fma_contract measures on the implementation (NaN-propagating: a non-finite output shows in each)."""

    #: the implementation in words ("toolkit FMA (joint)", "summed coarse values", "package.module:function")
    label: str
    #: the coarsest dtype the implementation returned ("float64" or "float32"): its eps sets the rounding bounds
    output_dtype: str
    #: calls of the implementation and output entries read
    calls: int
    output_entries: int
    #: NaN or inf entries among all outputs
    non_finite_outputs: int
    #: max |f(q, k, 1) - 1| over the draws, and the range of f(q, k, 1)
    max_row_deviation_from_1_with_v_ones: float
    row_min_with_v_ones: float
    row_max_with_v_ones: float
    #: the smallest effective weight (V = columns of the identity, in blocks of BLOCK)
    min_effective_weight: float
    #: max |f(q, k, v) - W v| with W the effective weights and v Gaussian; max |v|
    linearity_error: float
    value_scale: float
    #: calls after which an argument differed from what was passed, and which ("q", "k", "v")
    mutating_calls: int
    mutated: tuple[str, ...]
    #: f(q, k, 1)[:, 0] of the first draw
    row_sums_v_ones: np.ndarray
    #: causal runs: the largest |W_ij|, j > i, and the largest change of the outputs of tokens <= c when the
    #: tokens > c are redrawn (None when not causal)
    future_weight: float | None = None
    causal_perturbation: float | None = None
    #: toolkit FMA only: max |per-level row sum - (1 + non-empty levels)| at n = min(n, 256), causal and not, and
    #: the largest per-level row sum (None for other implementations)
    per_level_row_sum_law_error: float | None = None
    per_level_row_sum_max: float | None = None


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """f(q, k, 1), the effective weights, linearity, argument changes and (causal) the cuts, over the draws."""
    fn, label = _implementation(p)
    n, d = p.n, p.d
    calls = CountedCalls(fn)

    def probe(q, k, v, what: str) -> np.ndarray:
        return calls(q, k, v, shape=(n, v.shape[1]), what=f"{what} (v of shape {v.shape})")

    stats = dict(row_dev=0.0, row_lo=np.inf, row_hi=-np.inf, min_w=np.inf, lin=0.0, vmax=0.0)
    future = perturbation = 0.0
    first = None
    # a non-finite output is counted and carried by the statistics (NaN-propagating), not warned about
    with ctx.timed("contract"), np.errstate(invalid="ignore", over="ignore"):
        # one line per finished draw on stderr (silenced by --quiet): a third party's function runs at its own speed
        for t in progress(range(p.draws), desc="fma_contract", label=lambda t: f"draw {t + 1}"):
            q, k = p.scale * child_rng(p.seed, "draw", t).standard_normal((2, n, d))
            v = child_rng(p.seed, "values", t).standard_normal((n, d))
            out_v = probe(q, k, v, "Gaussian values")
            wv = np.zeros((n, d))
            for start in range(0, n + 1, BLOCK):  # columns start.. of E = [1 | I_n]
                width = min(BLOCK, n + 1 - start)
                cols = np.zeros((n, width))
                if start == 0:
                    cols[:, 0] = 1.0
                rows = np.arange(max(start, 1) - 1, start + width - 1)  # tokens j of the identity columns here
                cols[rows, rows - (start - 1)] = 1.0
                out = probe(q, k, cols, "V = [1 | I] columns")
                w = out[:, rows - (start - 1)]  # (n, len(rows)): W[:, j] for the tokens j of this block
                if start == 0:
                    ones = out[:, 0]
                    first = ones if first is None else first
                    stats["row_dev"] = _worst(stats["row_dev"], float(np.max(np.abs(ones - 1.0))))
                    stats["row_lo"] = _least(stats["row_lo"], float(np.min(ones)))
                    stats["row_hi"] = _worst(stats["row_hi"], float(np.max(ones)))
                if w.size:
                    stats["min_w"] = _least(stats["min_w"], float(np.min(w)))
                    wv += w @ v[rows]
                    if p.causal:
                        ahead = rows[None, :] > np.arange(n)[:, None]
                        future = _worst(future, float(np.max(np.abs(np.where(ahead, w, 0.0)))))
            stats["lin"] = _worst(stats["lin"], float(np.max(np.abs(out_v - wv))))
            stats["vmax"] = _worst(stats["vmax"], float(np.max(np.abs(v))))
            if p.causal:
                crng = child_rng(p.seed, "cuts", t)
                for c in np.sort(crng.choice(n - 1, size=min(CUTS, n - 1), replace=False)):
                    q2, k2, v2 = q.copy(), k.copy(), v.copy()
                    later = slice(int(c) + 1, None)
                    q2[later], k2[later] = p.scale * crng.standard_normal((2, n - int(c) - 1, d))
                    v2[later] = crng.standard_normal((n - int(c) - 1, d))
                    out_c = probe(q2, k2, v2, f"tokens > {int(c)} redrawn")
                    perturbation = _worst(perturbation, float(np.max(np.abs(out_c[: int(c) + 1] - out_v[: int(c) + 1]))))
    law = {}
    if p.implementation == "fma":
        with ctx.timed("row_sum_law"):
            law = _row_sum_law(n, p.r, d, p.scale, p.seed)
    if calls.non_finite:
        ctx.note(f"{label} returned {calls.non_finite} non-finite entries (NaN or inf) in {calls.entries}")
    return Quantities(
        label=label, output_dtype=str(calls.coarsest), calls=calls.calls, output_entries=calls.entries,
        non_finite_outputs=calls.non_finite, max_row_deviation_from_1_with_v_ones=stats["row_dev"],
        row_min_with_v_ones=stats["row_lo"], row_max_with_v_ones=stats["row_hi"],
        min_effective_weight=stats["min_w"], linearity_error=stats["lin"], value_scale=stats["vmax"],
        mutating_calls=calls.mutating, mutated=calls.mutated_in_order(), row_sums_v_ones=first,
        future_weight=future if p.causal else None, causal_perturbation=perturbation if p.causal else None, **law)


def _row_sum_law(n, r, d, scale, seed) -> dict:
    """FMA-8: per-level row sums of the toolkit's FMA against 1 + the non-empty levels of the definition-based sets."""
    m = min(n, 256)
    h = fma.hierarchy_1d(m, min(r, m))
    q, k = scale * child_rng(seed, "law").standard_normal((2, m, d))
    worst_law, top = 0.0, 0.0
    for causal in (False, True):
        levels = np.zeros(m)
        for lev in range(1, h.depth):
            for i in range(m):
                members = h.group_members[lev - 1]
                live = [g for g in h.groups[lev - 1][i] if not causal or members[g][-1] < i]
                levels[i] += bool(live)
        rows = spectral.fma_attention(q, k, np.ones((m, 1)), r=min(r, m), normalisation="per-level",
                                      causal=causal)[:, 0]
        worst_law = _worst(worst_law, float(np.max(np.abs(rows - (1.0 + levels)))))
        top = _worst(top, float(rows.max()))
    return dict(per_level_row_sum_law_error=worst_law, per_level_row_sum_max=top)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Finite outputs, rows of f(q, k, 1) = 1, weights >= 0, linearity, unchanged arguments, causality; the
    per-level law for the toolkit's FMA."""
    eps = float(np.finfo(np.dtype(q.output_dtype)).eps)
    tol = p.n * eps
    label = q.label
    third = hold_to_contract(rec, p.implementation, q, label,
                             why="an attention output is a convex combination of finite values: NaN or inf never "
                                 "passes")
    rec.at_most("max_row_deviation_from_1_with_v_ones", q.max_row_deviation_from_1_with_v_ones, tol,
                why=f"softmax contract: rounding of a normalised sum of <= n positive terms is <= n eps = {tol:.2g} "
                    f"({q.output_dtype}; the joint FMA measured <= 4e-16)",
                label=f"{label}: with V = 1 the output rows are not 1 (range [{q.row_min_with_v_ones:.4g}, "
                      f"{q.row_max_with_v_ones:.4g}])",
                hint="rows above 1 by a level-dependent amount: each level normalised separately (FMA-8) or coarse "
                     "values summed while each coarse key is counted once; use one softmax with + log|G| and "
                     "group means" if q.row_min_with_v_ones > 1 else "")
    rec.at_least("min_effective_weight", q.min_effective_weight, -tol,
                 why="a convex combination has nonnegative weights; -n eps allows rounding",
                 label=f"{label}: negative effective attention weights")
    lin_tol = tol * max(q.value_scale, 1.0)
    rec.at_most("linearity_error", q.linearity_error, lin_tol,
                why="attention is linear in the values: f(q, k, v) = W v with W = f(q, k, I); rounding of a weighted "
                    f"sum of <= n values is <= n eps max|v| = {lin_tol:.2g} (the joint FMA measured <= 2e-15)",
                label=f"{label}: f(q, k, v) is not W v for the weights W = f(q, k, I)")
    rec.holds("arguments_unchanged", q.mutating_calls == 0,
              why="the contract: f(q, k, v) must not change its arguments (a caller reuses them)",
              label=f"{label} changed its argument(s) {', '.join(q.mutated)} in {q.mutating_calls} of {q.calls} calls")
    if p.causal:
        rec.at_most("future_weight", q.future_weight, tol,
                    why="causal attention gives token i no weight on tokens j > i; n eps allows rounding",
                    label=f"{label}: causal outputs put weight on later tokens (largest |W_ij|, j > i)")
        rec.at_most("causal_perturbation", q.causal_perturbation, lin_tol,
                    why=f"causal: the outputs of tokens <= c do not depend on the queries, keys or values of tokens "
                        f"> c ({CUTS} random cuts per draw); n eps max|v| allows rounding",
                    label=f"{label}: the outputs of earlier tokens changed when only later tokens changed (not causal)")
    rec.info("row_min_with_v_ones", q.row_min_with_v_ones)
    rec.info("row_max_with_v_ones", q.row_max_with_v_ones)
    rec.info("calls", q.calls)
    if q.per_level_row_sum_law_error is not None:
        rec.at_most("per_level_row_sum_law_error", q.per_level_row_sum_law_error, 1e-12,
                    why="FMA-8 exact: each non-empty level's softmax sums to 1 and the group-mean pi^v sums to 1 "
                        "(n = min(n, 256), causal and not; measured <= 1e-15)",
                    label="FMA-8: per-level row sums differ from 1 + number of non-empty levels")
        rec.info("per_level_row_sum_max", q.per_level_row_sum_max)
    causal = "; causal: outputs of token i do not depend on tokens > i" if p.causal else ""
    if third:
        return (f"contract of {label}: a normalised attention: finite, f(q, k, 1) = 1, weights W = f(q, k, I) >= 0, "
                f"f(q, k, v) = W v, arguments unchanged{causal}")
    return f"{label} is a normalised attention: f(q, k, 1) = 1 and its weights are >= 0{causal}"


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
