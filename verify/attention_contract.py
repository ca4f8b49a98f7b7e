"""Your attention held to the exact mechanism: f(q, k, v) against softmax(q k^T / sqrt(d)) v in float64.

``python -m verify.attention_contract --implementation mymod:attention [--causal] [--mask]
[--dtype float32]`` calls ``f(q, k, v)`` on a ladder of inputs and compares every output with
softmax attention computed independently in float64 (``manifolds.references.attention``: row
maximum subtracted, row blocks), within a rounding-error bound derived from the precision of
``--dtype``. Properties that any normalised attention has (rows summing to one, nonnegative
weights) are not enough: an attention without the ``1/sqrt(d)`` scale, with a wrong temperature,
normalised over the wrong axis, with values shifted against their keys or that ignores ``q`` and
``k`` altogether has them all. This contract compares with the mechanism itself, and names the
property a wrong implementation violates.

The contract. ``f(q, k, v) -> out``: ``q`` and ``k`` NumPy arrays of shape ``(n, d)``, ``v`` of
shape ``(n, dv)`` (``dv = d`` on every case but ``value-width``), all of dtype ``--dtype``; ``out``
of shape ``(n, dv)`` in that dtype or a wider one (anything ``numpy.asarray`` converts). ``--causal``: ``f`` is causal
(query ``i`` attends to keys ``j <= i``, the diagonal included). ``--mask``: ``f`` takes a keyword
``mask``, a boolean ``(n, n)`` array true where query ``i`` may attend to key ``j`` (every row allows
at least its diagonal). ``f`` must not change its arguments.

The cases (each compared with the exact output):

* lengths ``n`` in ``lengths`` (default 1, 2, 3, 64, 255, 1024, 1500, 4096) at ``d = 64`` and logit
  standard deviation 1;
* head dims ``d`` in ``dims`` (1, 16, 64, 128) at ``n = 256``;
* logit scales in ``logit_scales`` (standard deviation of ``q.k / sqrt(d)``: 1, 8, 40, 300) at
  ``n = 256, d = 64``: the largest logits pass the overflow threshold of ``exp`` in float16 (11.1),
  float32 (88.7) and float64 (709.8), where an implementation without max-subtraction overflows;
* adversarial inputs at ``n = 256, d = 16`` (``adversarial``): ``ties`` (one key repeated: every row
  uniform), ``repeated-keys`` (four distinct keys, logit scale 40: the maximum shared by a quarter
  of the keys), ``query-equals-key`` (``q = k``, scale 40), ``large-negative`` (every logit near
  -1000: an implementation without max-subtraction divides 0 by 0), ``value-width`` (values of width
  ``dv = 3 d / 2``: an implementation that takes the scale from ``v``'s width fails);
* with ``--mask``: a random mask on every case (each key kept with probability 1/2, the diagonal
  always), and at ``n = 256`` a band ``|i - j| <= 3`` and the diagonal alone.

The tolerance: a first-order rounding-error bound of softmax attention, derived for an
implementation whose stored numbers (logits, weights, output) have unit roundoff ``u_s`` (half the
``eps`` of ``--dtype``) and whose sums have unit roundoff ``u_a`` (``u_s``; float32's for float16,
which every half-precision kernel accumulates in). With ``t_ij = q_i.k_j / sqrt(d)`` the exact
logits, ``p_ij`` the exact weights, ``m_i = max_j t_ij`` and ``n_i`` the keys query ``i`` may attend to:

* the unnormalised weight ``exp(s_ij - m_i)`` carries a relative error of at most ``eps_ij = (d u_a
  + 2 u_s) sum_l |q_il k_jl| / sqrt(d)`` (the dot product; ``q`` or ``k`` scaled in storage) ``+ 3
  u_s |t_ij|`` (the scale, its product, the stored logit) ``+ u_s (m_i - t_ij)`` (``exp``'s rounded
  argument) ``+ 2 u_s`` (``exp``'s result);
* relative errors ``eps_j`` of the unnormalised weights move the normalised ones by ``p_j (eps_j -
  ebar)``, ``ebar = sum_j p_j eps_j`` (to first order), so the output by at most ``sum_j p_j eps_j
  |v_j| + ebar sum_j p_j |v_j|``;
* the normalising sum and the weighted sum of the values add ``2 n_i u_a sum_j p_j |v_j|`` (worst
  case, any order of summation), the stored weights, the division and the output ``3 u_s sum_j p_j
  |v_j|``.

So ``|out_ic - exact_ic| <= 2 [sum_j p_ij eps_ij |v_jc| + (ebar_i + 2 n_i u_a + 3 u_s) sum_j p_ij
|v_jc|]`` (:func:`exact_and_bound`), where the leading 2 absorbs the second-order terms and
``exp``'s last-bit error, times ``1 + u64 / min(u_s, u_a)`` for the float64 reference's own rounding.
It holds for every correct implementation on every input (a worst case: blocked, pairwise,
online-softmax and naive summation alike) and is computed per entry from the exact weights. Measured
(:data:`MEASURED`) on correct implementations written five ways (normalising before or after the
value product, the log-sum-exp form, an online softmax over key blocks, ``q`` and ``k`` scaled
before their product; causal and masked variants; NumPy's own float16 arithmetic) over the default
cases: the largest error is at most 0.023 of the bound in float64, 0.048 in float32 and 0.046 in
float16 (0.048 on AVX2 too). The six wrong attentions below exceed it by factors of 1e13 to 5e15
(float64), 5e4 to 2e7 (float32) and 140 to 4e4 (float16); ``no-max-subtraction`` returns NaN.

The records, in the order a failure is reported:

1. ``non_finite_outputs``: no output is NaN or inf (overflow: the message names the first case and
   the largest logit there against the overflow threshold of ``exp``);
2. ``output_precision``: the outputs are in ``--dtype`` or wider;
3. ``arguments_unchanged``;
4. the weights probe (``n = 64, d = 16``, logit scale 1/2; ``W = f(q, k, I)`` in blocks of ``d``
   columns): ``row_sum_error`` (rows: each row of ``W`` sums to 1), ``min_weight`` (nonnegative),
   ``query_dependence`` and ``key_dependence`` (dependence on q/k: the output changes when the
   queries, resp. the keys, are redrawn, by more than rounding could), ``implied_logit_residual``
   (the implied logits ``log W`` are ``c q.k / sqrt(d)`` plus a row constant; when not, the message
   says whether ``W`` is the softmax over the wrong axis (row axis) or its values are shifted against
   the keys (key-value alignment)), ``logit_scale`` (``c = 1``: ``c = sqrt(d)`` is the missing
   ``1/sqrt(d)`` scale, another ``c`` a temperature ``1/c``). Their tolerances follow from the same
   rounding analysis applied to each weight (a relative error bound ``rho_ij``);
5. with ``--causal``: ``future_weight`` (no weight on keys ``j > i``) and ``causal_perturbation``
   (the outputs of tokens ``<= c`` do not change when the tokens ``> c`` are redrawn, 8 cuts; twice
   the bound); with ``--mask``: ``masked_weight``;
6. ``error_over_bound``: the largest ``|out_i - exact_i| / bound_i`` over all cases is at most 1;
   the message names the worst case.

A function that raises, runs past ``--timeout`` seconds, or returns another shape or a non-float
dtype is the user's code failing, not the contract: one line naming the function, exit 2. The final
line states the contract's verdict on the function (``[contract on mymod:f: holds]``).

Approximate mechanisms (``--approximate --claimed-rate P --in n|rank|levels``). An approximation
is not held to the rounding bound; it declares how its error decays and is checked through
:mod:`verify.rates` against the exact output. The error is the relative RMS error
``|f(q, k, v) - exact|_F / |v|_F``. With ``--in n`` the function is ``f(q, k, v)`` called at the
lengths of ``--ladder``; with ``--in rank`` (``levels``) it is ``f(q, k, v, rank=x)``
(``levels=x``) at ``n = --n``, for ``x`` in ``--ladder``. A function with a parameter named ``rng``
is random: it is called with ``rng=`` a seeded NumPy generator, ``--repeats`` times per ladder value.
The claim ``error ~ x^P`` (``--rate-kind equal``) or ``O(x^P)`` (``bound``) is decided by
:func:`verify.rates.check_rate` with ``--rate-tolerance``; ``--claimed-error E`` also asserts that
the mean error at the largest ladder value is at most ``E``. Built in: ``fma`` (the toolkit's FMA,
``spectral.fma_attention`` with the joint normalisation, base cell ``n // 8`` and ``rank`` group
summaries: error = O(rank^-2) on smooth tokens, the midpoint rule, steepening as the rank nears the
base cell, so that the bound decides and an equality stays pre-asymptotic) and ``random-features`` (positive
random features, Choromanski et al. 2021: ``rank`` features, error ~ rank^-1/2).

Built-in implementations: ``numpy`` (plain softmax attention in ``--dtype``: the positive control)
and six wrong attentions that must fail, each for its own property: ``unscaled`` (no ``1/sqrt(d)``),
``mean-pooling`` (ignores q and k), ``wrong-axis`` (softmax over the queries, transposed),
``hot-temperature`` (temperature 10), ``rolled-values`` (values shifted by one position against the
keys), ``no-max-subtraction`` (``exp`` of the raw logits: overflows).

Time: the default run makes 29 calls (38 causal). At ``n = 4096, d = 64`` a plain NumPy float64
attention takes about 1 s here (2 shared cores) and the reference with its bound about 3 s (one pass
over the logits: the weights, ``|q| |k|^T`` and two value products); the whole default run of the
built-in takes 5-7 s. NumPy's float16 matrix product has no BLAS path (8 s per product at ``n =
4096, d = 64``); a float16 implementation that uses it needs the default ``--timeout`` of 120 s per
call.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import sys

import numpy as np

import spectral
from manifolds.references.attention import exact_attention, exact_weights, weight_blocks
from spectral.floor.validation import InputError, child_rng
from verify import rates
from verify.core.check import Check, Context
from verify.core.implementation import (CountedCalls, Implementation, ImplementationError, hold_to_contract,
                                        is_reference, load)
from verify.core.params import Choice, Flag, Int, Ints, Options, Real, Reals, Text
from verify.core.progress import progress
from verify.core.reduce import worst as _worst
from verify.core.result import Recorder

__all__ = ["CHECK", "run", "main", "Quantities", "weight_relative_bound", "softmax_attention",
           "unscaled_attention", "mean_pooling_attention", "wrong_axis_attention", "hot_temperature_attention",
           "rolled_values_attention", "no_max_subtraction_attention", "random_feature_attention", "smooth_tokens",
           "MEASURED", "DEFAULT_TIMEOUT", "exact_and_bound"]

CHECK = Check("attention_contract",
              host_only="the contract is for implementations f(q, k, v) taking and returning NumPy arrays")

DTYPES = ("float64", "float32", "float16")
ADVERSARIAL = ("ties", "repeated-keys", "query-equals-key", "large-negative", "value-width")
VARIABLES = ("n", "rank", "levels")
TOKENS = ("gaussian", "smooth")
RATE_KINDS = ("equal", "bound")
#: the outputs read: any float dtype (one narrower than --dtype fails output_precision)
OUTPUT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.float16))

#: unit roundoff (half of eps) of the stored numbers, and of the sums: float16 is accumulated in float32
UNIT_ROUNDOFF = {name: float(np.finfo(name).eps) / 2 for name in DTYPES}
ACCUMULATION = {"float64": "float64", "float32": "float32", "float16": "float32"}
#: the first-order bound is doubled: second-order terms and exp's last-bit error
SAFETY = 2.0
#: ln(largest finite number): exp overflows above it
EXP_OVERFLOW = {name: float(np.log(np.finfo(name).max)) for name in DTYPES}

#: the largest error / bound measured on correct implementations over the default cases (seed 0, AVX-512; AVX2 gave
#: at most 0.048 as well): five
#: ways of writing softmax attention, causal and masked variants, NumPy's own float16 arithmetic (module docstring;
#: tests/verify/test_adversarial_attention.py has the implementations)
MEASURED = {"float64": 0.023, "float32": 0.048, "float16": 0.046}

#: seconds one call of a user's function may take: an attention on NumPy's float16 matrix product (no BLAS path: 8 s
#: per product at n = 4096, d = 64 here) takes about 20 s per call; 120 s leaves 6x, and a hung function ends the
#: run within two minutes
DEFAULT_TIMEOUT = 120.0

DEFAULT_LENGTHS = (1, 2, 3, 64, 255, 1024, 1500, 4096)
DEFAULT_DIMS = (1, 16, 64, 128)
DEFAULT_SCALES = (1.0, 8.0, 40.0, 300.0)
#: the sizes of the dims, scales and adversarial cases; the weights probe
MID_N, BASE_D, ADVERSARIAL_D = 256, 64, 16
PROBE_N, PROBE_D, PROBE_SCALE = 64, 16, 0.5
#: cuts of the causal perturbation probe
CUTS = 8
#: temperature of the built-in 'hot-temperature' control
HOT = 10.0
#: the logits of the 'large-negative' case
LARGE_NEGATIVE = -1000.0

CONTROLS = ("unscaled", "mean-pooling", "wrong-axis", "hot-temperature", "rolled-values", "no-max-subtraction")
APPROXIMATIONS = ("fma", "random-features")
BUILTIN = ("numpy", *CONTROLS, *APPROXIMATIONS)
#: default ladders of the built-in approximations (values of rank)
BUILTIN_LADDERS = {"fma": (4, 8, 16, 32), "random-features": (64, 256, 1024, 4096)}
BUILTIN_TOKENS = {"fma": "smooth", "random-features": "gaussian"}
#: the logit scale of the random-features demo: the estimator's variance grows like exp(|q|^2 / sqrt(d)), and at
#: logit std 0.5 (d = 16) the local orders are still -0.16 to -0.33 at 64-4096 features
BUILTIN_LOGIT_STD = {"random-features": 0.125}


@CHECK.parameters
class Params:
    implementation: str = Text("numpy", '"numpy" (plain softmax attention in --dtype: holds), a wrong attention that '
                                        "must fail (" + ", ".join(CONTROLS) + "), an approximation (fma, "
                                        'random-features; with --approximate), or "package.module:function": your '
                                        "f(q, k, v) -> (n, dv) array")
    dtype: str = Choice("float64", DTYPES, "dtype of q, k, v passed to the implementation; its precision sets the "
                                           "rounding bound (float16 assumes float32 accumulation)")
    causal: bool = Flag(False, "The implementation is causal: query i attends to keys j <= i (the diagonal included)")
    mask: bool = Flag(False, "The implementation takes mask=: a boolean (n, n) array, true where query i may attend "
                             "to key j (every row allows at least its diagonal)")
    lengths: tuple = Ints(None, "Sequence lengths n of the length ladder (d = 64, logit scale 1)", low=1, high=16384,
                          unit="tokens", auto=", ".join(map(str, DEFAULT_LENGTHS)) + "; not with --approximate")
    dims: tuple = Ints(None, "Head dims d of the dims ladder (n = 256)", low=1, high=1024,
                       auto=", ".join(map(str, DEFAULT_DIMS)) + "; not with --approximate")
    logit_scales: tuple = Reals(None, "Standard deviations of the logits q.k / sqrt(d) (n = 256, d = 64); the "
                                      "defaults pass the exp overflow of float16, float32 and float64",
                                low=0.0, high=2000.0, low_open=True,
                                auto=", ".join(f"{s:g}" for s in DEFAULT_SCALES) + "; not with --approximate")
    adversarial: tuple = Options(None, ADVERSARIAL, "Adversarial inputs (n = 256, d = 16)",
                                 auto="all of them; not with --approximate")
    timeout: float = Real(DEFAULT_TIMEOUT, "Seconds one call of your function may take (an attention on NumPy's "
                                           "float16 products takes about 20 s at n = 4096 here)", low=0.0,
                          high=86400.0, low_open=True, unit="s")
    approximate: bool = Flag(False, "The implementation is an approximation: its error against the exact output is "
                                    "held to --claimed-rate through verify.rates instead of the rounding bound")
    claimed_rate: float = Real(None, "Claimed order P of the error ~ x^P in the variable --in (--approximate)",
                               low=-20.0, high=20.0, auto="required with --approximate")
    variable: str = Choice(None, VARIABLES, "The variable x of the claimed rate (also --in): n (f(q, k, v) at the "
                                            "lengths of --ladder), rank (f(q, k, v, rank=x)), levels "
                                            "(f(q, k, v, levels=x))", auto="required with --approximate")
    ladder: tuple = Ints(None, "Increasing values of the variable x (at least 3) (--approximate)", low=1, high=16384,
                         min_len=3, auto="fma: 4,8,16,32; random-features: 64,256,1024,4096; required for your "
                                         "function")
    rate_kind: str = Choice(None, RATE_KINDS, 'equal: error ~ x^P within --rate-tolerance; bound: error = O(x^P) '
                                              "(--approximate)", auto="equal with --approximate")
    rate_tolerance: float = Real(None, "Half-width of the band around P (verify.rates' tolerance) (--approximate)",
                                 low=0.0, high=5.0, low_open=True, auto="0.1 with --approximate")
    repeats: int = Int(None, "Repeats per ladder value of a random approximation (one taking rng) (--approximate)",
                       low=2, high=10000, auto="as many as the decision needs (verify.rates' repeats='auto', within its "
                                               "budget)")
    claimed_error: float = Real(None, "Claimed bound of the mean relative RMS error at the largest ladder value "
                                      "(--approximate)", low=0.0, low_open=True, auto="not asserted")
    n: int = Int(None, "Sequence length of --approximate with --in rank or levels", low=2, high=16384,
                 unit="tokens", auto="1024 with --approximate --in rank|levels; 256 for random-features")
    d: int = Int(None, "Head dim of --approximate", low=1, high=1024, auto="16 with --approximate")
    tokens: str = Choice(None, TOKENS, "Inputs of --approximate: gaussian (i.i.d. q, k, v) or smooth (sinusoids of "
                                       "the position)", auto="smooth for fma, gaussian otherwise, with --approximate")
    logit_std: float = Real(None, "Standard deviation of the logits of gaussian tokens (--approximate)", low=0.0,
                            high=100.0, low_open=True, auto="0.125 for random-features, 0.5 otherwise, with "
                                                            "--approximate")

    def resolve(self):
        """Exact or approximate mode: fill the automatic values and refuse the options of the other mode."""
        name = self.implementation
        if is_reference(name) or name not in BUILTIN:
            load(name, parameter="implementation", builtins=BUILTIN)  # refuses a malformed or missing name
        if not self.approximate:
            return self._exact()
        return self._approximate()

    def _exact(self):
        given = [k for k in ("claimed_rate", "variable", "ladder", "rate_kind", "rate_tolerance", "repeats",
                             "claimed_error", "n", "d", "tokens", "logit_std") if getattr(self, k) is not None]
        if given:
            raise InputError(f"{given[0]} applies to --approximate only (an approximation's claimed rate); the exact "
                             "contract is held by lengths, dims, logit_scales and adversarial")
        if self.implementation in APPROXIMATIONS:
            raise InputError(f"implementation {self.implementation!r} is an approximation: run it with --approximate "
                             "--claimed-rate P --in rank")
        return dataclasses.replace(
            self, lengths=DEFAULT_LENGTHS if self.lengths is None else self.lengths,
            dims=DEFAULT_DIMS if self.dims is None else self.dims,
            logit_scales=DEFAULT_SCALES if self.logit_scales is None else self.logit_scales,
            adversarial=ADVERSARIAL if self.adversarial is None else self.adversarial)

    def _approximate(self):
        name = self.implementation
        given = [k for k in ("lengths", "dims", "logit_scales", "adversarial") if getattr(self, k) is not None]
        if given:
            raise InputError(f"{given[0]} belongs to the exact contract; with --approximate the error is measured "
                             "along --ladder")
        if name == "numpy" or name in CONTROLS:
            raise InputError(f"implementation {name!r} is exact (or a wrong exact attention): --approximate is for "
                             "approximations (fma, random-features or your function)")
        for key in ("claimed_rate", "variable"):
            if getattr(self, key) is None:
                raise InputError(f"{key} must be given with --approximate (--claimed-rate P --in n|rank|levels)")
        ladder = self.ladder
        if name in APPROXIMATIONS:
            if self.variable != "rank":
                raise InputError(f"implementation {name!r} is approximate in its rank (summaries per group for fma, "
                                 f"features for random-features): --in rank, got {self.variable!r}")
            if self.mask or (self.causal and name == "random-features"):
                raise InputError(f"implementation {name!r} takes no "
                                 f"{'mask' if self.mask else 'causal mask'}: leave --{'mask' if self.mask else 'causal'}"
                                 " out")
            if name == "fma" and self.dtype == "float16":
                raise InputError("dtype float16 does not apply to 'fma' (spectral.fma_attention computes in float32 or "
                                 "float64): use --dtype float32 or float64")
            ladder = BUILTIN_LADDERS[name] if ladder is None else ladder
        elif ladder is None:
            raise InputError("ladder must be given with --approximate and your function: at least 3 increasing values "
                             "of the variable (--ladder 16,32,64,128)")
        if any(b <= a for a, b in zip(ladder, ladder[1:])):
            raise InputError(f"ladder must increase, got {','.join(map(str, ladder))}")
        n = self.n
        if self.variable == "n":
            if n is not None:
                raise InputError("n is the length of --in rank|levels; with --in n the lengths are --ladder")
            if ladder[0] < 2:
                raise InputError(f"ladder values are lengths with --in n: each at least 2, got {ladder[0]}")
        else:
            n = (256 if name == "random-features" else 1024) if n is None else n
        if name == "fma" and max(ladder) > n // 8:
            raise InputError(f"ladder must be at most the base cell n // 8 = {n // 8} for 'fma' (its rank p is at "
                             f"most r), got {max(ladder)}")
        return dataclasses.replace(
            self, ladder=ladder, n=n, d=16 if self.d is None else self.d,
            tokens=BUILTIN_TOKENS.get(name, "gaussian") if self.tokens is None else self.tokens,
            logit_std=BUILTIN_LOGIT_STD.get(name, 0.5) if self.logit_std is None else self.logit_std,
            rate_kind="equal" if self.rate_kind is None else self.rate_kind,
            rate_tolerance=0.1 if self.rate_tolerance is None else self.rate_tolerance,
            repeats=self.repeats)  # None: as many as verify.rates' auto mode needs, within its budget


# -- the rounding bound -------------------------------------------------------------------------------------------
def _units(dtype: str) -> tuple[float, float, float]:
    """``u_s``, ``u_a`` of ``dtype`` and the factor that adds the float64 reference's own rounding.

    Every term of the bound is linear in ``u_s`` and ``u_a``, each at least float64's unit roundoff, so the same
    bound in float64 is at most ``u64 / min(u_s, u_a)`` times it.
    """
    us, ua = UNIT_ROUNDOFF[dtype], UNIT_ROUNDOFF[ACCUMULATION[dtype]]
    return us, ua, 1.0 + UNIT_ROUNDOFF["float64"] / min(us, ua)


def _epsilon(d, logits, absolute, allowed, us, ua):
    """Per allowed key, the bound of the relative error of the unnormalised weight ``exp(s_ij - m_i)`` (0 elsewhere).

    ``(d u_a + 2 u_s) sum_l |q_il k_jl| / sqrt(d)`` (the dot product; q or k scaled in storage),
    ``3 u_s |t_ij|`` (the scale, its product, the stored logit), ``u_s (m_i - t_ij)`` (exp's rounded
    argument) and ``2 u_s`` (exp's result). Computed in place of ``absolute``.
    """
    eps = absolute
    eps *= d * ua + 2 * us
    part = np.abs(logits)
    part *= 3 * us
    eps += part
    top = (np.max(logits, axis=1, keepdims=True) if allowed is None else
           np.max(np.where(allowed, logits, -np.inf), axis=1, keepdims=True))
    np.subtract(top, logits, out=part)
    part *= us
    eps += part
    eps += 2 * us
    if allowed is not None:
        eps[~allowed] = 0.0
    return eps


def _blocks_with_bounds(q, k, *, dtype: str, causal: bool = False, mask=None):
    """Yields ``(rows, weights, allowed, eps, ebar, sums)``: the exact weights, the per-key bound ``eps``, its
    weighted mean ``ebar_i = sum_j p_ij eps_ij`` and the bound of the sums ``2 n_i u_a + 3 u_s`` per row."""
    us, ua, _ = _units(dtype)
    q64, k64 = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    d, n_keys = q64.shape[1], k64.shape[0]
    absq, absk = np.abs(q64), np.abs(k64)
    for rows, logits, weights, allowed in weight_blocks(q64, k64, causal=causal, mask=mask):
        absolute = absq[rows] @ absk.T
        absolute /= math.sqrt(d)
        eps = _epsilon(d, logits, absolute, allowed, us, ua)
        ebar = np.einsum("ij,ij->i", weights, eps)[:, None]
        count = n_keys if allowed is None else allowed.sum(axis=1, keepdims=True)
        yield rows, weights, allowed, eps, ebar, 2 * count * ua + 3 * us


def exact_and_bound(q, k, v, *, dtype: str, causal: bool = False, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """The exact output (float64, ``manifolds.references.attention``) and, per entry, the rounding bound of a correct
    attention in ``dtype``.

    ``|out_ic - exact_ic| <= 2 [sum_j p_ij eps_ij |v_jc| + (ebar_i + 2 n_i u_a + 3 u_s) sum_j p_ij |v_jc|]`` with
    ``eps`` of :func:`_epsilon` and ``ebar_i = sum_j p_ij eps_ij`` (module docstring), times ``1 + u64 / min(u_s,
    u_a)`` for the reference's own rounding.

    Parameters
    ----------
    q, k : arrays of shape (n, d)
        The queries and keys the implementation was given.
    v : array of shape (n, dv)
        The values.
    dtype : {"float64", "float32", "float16"}
        The contract's precision.
    causal, mask
        As in :func:`manifolds.references.attention.exact_attention`.

    Returns
    -------
    tuple of ndarray of shape (n, dv)
        The exact output and the bound.
    """
    _, _, ref = _units(dtype)
    v64 = np.asarray(v, dtype=np.float64)
    dv = v64.shape[1]
    absv = np.abs(v64)
    both = np.concatenate([v64, absv], axis=1)
    exact = np.empty((np.shape(q)[0], dv))
    bound = np.empty_like(exact)
    for rows, weights, _, eps, ebar, sums in _blocks_with_bounds(q, k, dtype=dtype, causal=causal, mask=mask):
        products = weights @ both  # the exact output and sum_j p_ij |v_jc|
        exact[rows] = products[:, :dv]
        eps *= weights
        bound[rows] = SAFETY * ref * (eps @ absv + (ebar + sums) * products[:, dv:])
    return exact, bound


def weight_relative_bound(q, k, *, dtype: str, causal: bool = False, mask=None) -> np.ndarray:
    """Per weight, the bound ``rho_ij`` of the relative error of ``W_ij = f(q, k, e_j)_i`` of a correct attention.

    ``2 (eps_ij + ebar_i + 2 n_i u_a + 3 u_s)`` times the reference factor (0 on keys that are not allowed).
    """
    _, _, ref = _units(dtype)
    out = np.zeros((np.shape(q)[0], np.shape(k)[0]))
    for rows, _, allowed, eps, ebar, sums in _blocks_with_bounds(q, k, dtype=dtype, causal=causal, mask=mask):
        out[rows] = SAFETY * ref * (eps + ebar + sums)
        if allowed is not None:
            out[rows][~allowed] = 0.0
    return out


# -- the built-in implementations ---------------------------------------------------------------------------------
def _working(q):
    """The storage dtype of ``q`` and its accumulation dtype (float32 for float16)."""
    dt = np.asarray(q).dtype
    return dt, (np.dtype(np.float32) if dt == np.float16 else dt)


def _logits(q, k, *, scale=True):
    """``q k^T / sqrt(d)`` accumulated in the working precision, stored in the inputs' dtype."""
    dt, acc = _working(q)
    s = np.asarray(q, dtype=acc) @ np.asarray(k, dtype=acc).T
    if scale:
        s = s / acc.type(math.sqrt(q.shape[1]))
    return s.astype(dt)


def _masked(s, causal, mask):
    if causal:
        s = np.where(np.tri(*s.shape, dtype=bool), s, -np.inf).astype(s.dtype)
    if mask is not None:
        s = np.where(mask, s, -np.inf).astype(s.dtype)
    return s


def _softmax_rows(s, *, subtract_max=True, axis=1):
    dt = s.dtype
    acc = np.dtype(np.float32) if dt == np.float16 else dt
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(s - s.max(axis=axis, keepdims=True) if subtract_max else s).astype(dt)
        return (e.astype(acc) / e.astype(acc).sum(axis=axis, keepdims=True)).astype(dt)


def _weighted(w, v):
    dt, acc = _working(v)
    with np.errstate(over="ignore", invalid="ignore"):
        return (np.asarray(w, dtype=acc) @ np.asarray(v, dtype=acc)).astype(dt)


def softmax_attention(q, k, v, *, causal=False, mask=None):
    """Plain softmax attention ``softmax(q k^T / sqrt(d)) v`` in the inputs' dtype (the contract's positive control).

    Logits, weights and output are stored in the dtype of ``q``; products and sums are accumulated in
    it (float32 for float16, as half-precision kernels do). The row maximum is subtracted before exp.
    """
    return _weighted(_softmax_rows(_masked(_logits(q, k), causal, mask)), v)


def unscaled_attention(q, k, v, *, causal=False, mask=None):
    """Wrong: ``softmax(q k^T) v``, the ``1/sqrt(d)`` scale missing (a negative control: fails ``logit_scale``)."""
    return _weighted(_softmax_rows(_masked(_logits(q, k, scale=False), causal, mask)), v)


def mean_pooling_attention(q, k, v, *, causal=False, mask=None):
    """Wrong: the mean of the allowed values, ignoring q and k (fails ``query_dependence``, ``key_dependence``)."""
    zeros = np.zeros((q.shape[0], k.shape[0]), dtype=np.asarray(q).dtype)
    return _weighted(_softmax_rows(_masked(zeros, causal, mask)), v)


def wrong_axis_attention(q, k, v, *, causal=False, mask=None):
    """Wrong: the softmax normalised over the queries (axis 0), then transposed (fails ``implied_logit_residual``).

    Its rows sum to one: ``softmax(s, axis=0)^T = softmax(s^T, axis=1)``, keys attending to queries.
    """
    w = _softmax_rows(_masked(_logits(q, k), causal, mask), axis=0)
    return _weighted(w.T, v)


def hot_temperature_attention(q, k, v, *, causal=False, mask=None):
    """Wrong: ``softmax(q k^T / (10 sqrt(d))) v``, a temperature of 10 (fails ``logit_scale``)."""
    s = _logits(q, k)
    return _weighted(_softmax_rows(_masked((s / s.dtype.type(HOT)).astype(s.dtype), causal, mask)), v)


def rolled_values_attention(q, k, v, *, causal=False, mask=None):
    """Wrong: the weight of key ``j`` applied to the value of token ``j + 1`` (fails ``implied_logit_residual``)."""
    return _weighted(_softmax_rows(_masked(_logits(q, k), causal, mask)), np.roll(v, -1, axis=0))


def no_max_subtraction_attention(q, k, v, *, causal=False, mask=None):
    """Wrong: ``exp`` of the raw logits, no row maximum subtracted (overflows: fails ``non_finite_outputs``)."""
    return _weighted(_softmax_rows(_masked(_logits(q, k), causal, mask), subtract_max=False), v)


_CONTROL_FUNCTIONS = {"numpy": softmax_attention, "unscaled": unscaled_attention,
                      "mean-pooling": mean_pooling_attention, "wrong-axis": wrong_axis_attention,
                      "hot-temperature": hot_temperature_attention, "rolled-values": rolled_values_attention,
                      "no-max-subtraction": no_max_subtraction_attention}


def random_feature_attention(q, k, v, *, rank, rng, causal=False):
    """Softmax attention approximated by ``rank`` positive random features (Performer's FAVOR+, Choromanski et al.
    2021, Lemma 1): ``exp(x.y) = E_w[phi(x) phi(y)]``, ``phi(x) = exp(w.x - |x|^2 / 2)``, ``w ~ N(0, I)``, with
    ``x = q / d^(1/4)``, ``y = k / d^(1/4)``. Unbiased numerator and denominator: error ~ rank^-1/2.
    """
    if causal:
        raise ValueError("random_feature_attention is not causal")
    dt = np.asarray(q).dtype
    q64, k64, v64 = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    d = q64.shape[1]
    w = rng.standard_normal((int(rank), d))

    def features(x, axis):
        z = (x / d**0.25) @ w.T - np.sum((x / d**0.25) ** 2, axis=1, keepdims=True) / 2
        return np.exp(z - np.max(z, axis=axis, keepdims=True))  # a row (query) / global (key) constant cancels

    fq, fk = features(q64, 1), features(k64, None)
    return ((fq @ (fk.T @ v64)) / (fq @ fk.sum(axis=0))[:, None]).astype(dt)


def smooth_tokens(n: int, d: int, dv: int, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries, keys and values that are smooth functions of the position: ``sqrt(2) sin(2 pi nu i / n + phi)`` per
    coordinate, ``nu`` uniform in [0.25, 2] cycles per sequence, ``phi`` uniform (the tokens on which summaries of
    groups of neighbours converge; FMA-11)."""
    i = np.arange(n)[:, None] / n
    out = []
    for width in (d, d, dv):
        nu, phase = rng.uniform(0.25, 2.0, width), rng.uniform(0.0, 2 * np.pi, width)
        out.append(np.sqrt(2.0) * np.sin(2 * np.pi * nu * i + phase))
    return tuple(out)


def _fma(q, k, v, *, rank, causal=False):
    n = q.shape[0]
    return spectral.fma_attention(q, k, v, r=max(n // 8, 1), p=int(rank), normalisation="joint", causal=causal)


def _implementation(p) -> Implementation:
    """The function f named by ``implementation`` (built-ins wrapped with the run's causal flag)."""
    name = p.implementation
    if name in _CONTROL_FUNCTIONS:
        base = _CONTROL_FUNCTIONS[name]
        return Implementation(name, lambda q, k, v, **kw: base(q, k, v, causal=p.causal, **kw), user=False)
    if name == "fma":
        return Implementation(name, lambda q, k, v, *, rank: _fma(q, k, v, rank=rank, causal=p.causal), user=False)
    if name == "random-features":
        return Implementation(name, random_feature_attention, user=False)
    return load(name, parameter="implementation", builtins=BUILTIN, timeout=p.timeout)


# -- the cases -------------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Case:
    """One input of the exact contract."""

    group: str  # "lengths", "dims", "scales", "adversarial", "masks"
    n: int
    d: int
    scale: float  # standard deviation of the logits of Gaussian tokens
    kind: str = "gaussian"  # or one of ADVERSARIAL
    mask: str = "random"  # with --mask: "random", "band", "diagonal"

    @property
    def label(self) -> str:
        kind = "" if self.kind == "gaussian" else f" {self.kind}"
        return f"{self.group}: n={self.n} d={self.d} logit std {self.scale:g}{kind}"


def _cases(p) -> list[Case]:
    cases = [Case("lengths", n, BASE_D, 1.0) for n in p.lengths]
    cases += [Case("dims", MID_N, d, 1.0) for d in p.dims]
    cases += [Case("scales", MID_N, BASE_D, s) for s in p.logit_scales]
    scale = {"ties": 8.0, "repeated-keys": 40.0, "query-equals-key": 40.0, "large-negative": 1.0, "value-width": 1.0}
    cases += [Case("adversarial", MID_N, ADVERSARIAL_D, scale[kind], kind) for kind in p.adversarial]
    if p.mask:
        cases += [Case("masks", MID_N, ADVERSARIAL_D, 1.0, mask=m) for m in ("band", "diagonal")]
    return cases


def _inputs(case: Case, seed: int, dtype: str):
    """q, k, v of a case in the contract's dtype (float64 draws rounded once)."""
    rng = child_rng(seed, "case", case.group, case.n, case.d, str(case.scale), case.kind, case.mask)
    n, d = case.n, case.d
    sigma = math.sqrt(case.scale)
    q = sigma * rng.standard_normal((n, d))
    k = sigma * rng.standard_normal((n, d))
    if case.kind == "ties":
        k[:] = k[0]
    elif case.kind == "repeated-keys":
        k = k[rng.integers(0, 4, n)]
    elif case.kind == "query-equals-key":
        q = k.copy()
    elif case.kind == "large-negative":
        u = rng.standard_normal(d)
        u *= math.sqrt(d) / np.linalg.norm(u)  # |u|^2 = d
        c = math.sqrt(-LARGE_NEGATIVE / math.sqrt(d))  # q.k / sqrt(d) = -c^2 |u|^2 / sqrt(d) = LARGE_NEGATIVE
        q = -c * u + 0.1 * rng.standard_normal((n, d))
        k = c * u + 0.1 * rng.standard_normal((n, d))
    v = rng.standard_normal((n, d + d // 2 if case.kind == "value-width" else d))
    return tuple(np.asarray(a, dtype=dtype) for a in (q, k, v))


def _random_mask(seed: int, n: int, *keys) -> np.ndarray:
    """Each key kept with probability 1/2, the diagonal always (every query attends to at least itself)."""
    return (child_rng(seed, *keys).random((n, n)) < 0.5) | np.eye(n, dtype=bool)


def _mask_of(case: Case, seed: int) -> np.ndarray:
    n = case.n
    i, j = np.indices((n, n))
    if case.mask == "band":
        return np.abs(i - j) <= 3
    if case.mask == "diagonal":
        return i == j
    return _random_mask(seed, n, "mask", case.group, n, case.d, str(case.scale), case.kind)


def _allowed(n: int, causal: bool, mask) -> np.ndarray:
    allowed = np.ones((n, n), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    return allowed & np.tri(n, dtype=bool) if causal else allowed


# -- calling the implementation -------------------------------------------------------------------------------------
class _Calls(CountedCalls):
    """The implementation's calls: ``mask=`` passed when given, any float output accepted (``output_precision``
    judges it), the statistics of :class:`~verify.core.implementation.CountedCalls`."""

    def __call__(self, q, k, v, *, what: str, mask=None, **options) -> np.ndarray:
        if mask is not None:
            options["mask"] = mask
        return super().__call__(q, k, v, shape=(q.shape[0], v.shape[1]), what=what, dtypes=OUTPUT_DTYPES, **options)


def _largest_logit(q, k) -> float:
    q64, k64 = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    step = max(1, (1 << 22) // max(k64.shape[0], 1))
    return max(float(np.max(q64[s:s + step] @ k64.T)) for s in range(0, q64.shape[0], step)) / math.sqrt(q64.shape[1])


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What attention_contract measures (NaN-propagating: a non-finite output shows in every statistic)."""

    #: the implementation ("numpy", a control, or "package.module:function") and the contract's dtype
    label: str
    dtype: str
    #: "exact" or "approximate"
    mode: str
    #: calls of the implementation, output entries read, NaN or inf entries among them, the case where the first one
    #: came back ("" if none) and the largest logit of that case
    calls: int
    output_entries: int
    non_finite_outputs: int
    first_non_finite: str
    first_non_finite_logit: float
    #: the coarsest dtype the implementation returned
    output_dtype: str
    #: calls after which an argument differed from what was passed, and which ("q", "k", "v")
    mutating_calls: int
    mutated: tuple[str, ...]
    #: exact mode, per case label: the largest |out - exact| / bound over the entries, and the error and the bound at
    #: that entry
    case_errors: dict[str, float] = dataclasses.field(default_factory=dict)
    case_bounds: dict[str, float] = dataclasses.field(default_factory=dict)
    case_ratios: dict[str, float] = dataclasses.field(default_factory=dict)
    #: the weights probe: max_i |sum_j W_ij - 1| and its bound; min W_ij and its (negative) bound
    row_sum_error: float | None = None
    row_sum_bound: float | None = None
    min_weight: float | None = None
    min_weight_bound: float | None = None
    #: |f(q', k, v) - f(q, k, v)|_F / |exact(q') - exact(q)|_F when the queries (keys) are redrawn, and the share
    #: that rounding alone could give (2 |bound|_F / |exact change|_F)
    query_dependence: float | None = None
    key_dependence: float | None = None
    query_rounding_share: float | None = None
    key_rounding_share: float | None = None
    #: the implied logits log W fitted by c q.k / sqrt(d) + row constants: c, the relative residual, and the bound
    #: of both (|rho|_F / |centred logits|_F)
    logit_scale: float | None = None
    implied_logit_residual: float | None = None
    implied_logit_bound: float | None = None
    #: when the fit fails: the best other reading ("row axis", "key-value alignment (shift s)", "") and its residual
    diagnosis: str = ""
    diagnosis_residual: float | None = None
    #: causal: the largest |W_ij|, j > i, and the largest change of outputs of tokens <= c over twice their bound;
    #: mask: the largest |W_ij| on masked keys; both against the absolute bound of a weight (None when not asked)
    future_weight: float | None = None
    causal_perturbation: float | None = None
    masked_weight: float | None = None
    weight_bound: float | None = None
    #: approximate mode: the ladder, the errors (ladder values x repeats), whether the function is random, and the
    #: decision of verify.rates (status, passed, message, order, interval)
    ladder: tuple[int, ...] = ()
    errors: np.ndarray | None = None
    random: bool = False
    rate_status: str = ""
    rate_passed: bool = False
    rate_message: str = ""
    rate_order: float | None = None
    rate_interval: tuple[float, float] | None = None


# -- the measurement ------------------------------------------------------------------------------------------------
@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Every case against the exact output, the weights probe and (causal) the cuts; or the rate of an approximation."""
    fn = _implementation(p)
    calls = _Calls(fn)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if p.approximate:
            extra = _measure_rate(p, ctx, fn, calls)
        else:
            extra = _measure_exact(p, ctx, calls)
    logit = math.nan
    if calls.first_non_finite and not p.approximate:
        case = next((c for c in _cases(p) if c.label == calls.first_non_finite), None)
        if case is not None:
            q, k, _ = _inputs(case, p.seed, p.dtype)
            logit = _largest_logit(q, k)
    if calls.non_finite:
        ctx.note(f"{fn.name} returned {calls.non_finite} non-finite entries (NaN or inf) in {calls.entries}")
    return Quantities(label=fn.name, dtype=p.dtype, mode="approximate" if p.approximate else "exact",
                      calls=calls.calls, output_entries=calls.entries, non_finite_outputs=calls.non_finite,
                      first_non_finite=calls.first_non_finite, first_non_finite_logit=logit,
                      output_dtype=str(calls.coarsest), mutating_calls=calls.mutating,
                      mutated=calls.mutated_in_order(), **extra)


def _measure_exact(p, ctx, calls) -> dict:
    errors, bounds, ratios = {}, {}, {}
    for case in progress(_cases(p), desc="attention_contract", label=lambda c: c.label):
        q, k, v = _inputs(case, p.seed, p.dtype)
        mask = _mask_of(case, p.seed) if p.mask else None
        with ctx.timed("implementation"):
            out = calls(q, k, v, what=case.label, mask=mask)
        with ctx.timed("reference"):
            exact, bound = exact_and_bound(q, k, v, dtype=p.dtype, causal=p.causal, mask=mask)
        ratio = np.abs(out - exact) / bound
        at = np.unravel_index(int(np.argmax(np.where(np.isnan(ratio), np.inf, ratio))), ratio.shape)
        errors[case.label] = float(abs(out[at] - exact[at]))
        bounds[case.label] = float(bound[at])
        ratios[case.label] = float(np.max(ratio))
    with ctx.timed("weights_probe"):
        probe = _weights_probe(p, calls)
    if p.causal:
        with ctx.timed("causal_probe"):
            probe["causal_perturbation"] = _causal_probe(p, calls)
    return dict(case_errors=errors, case_bounds=bounds, case_ratios=ratios, **probe)


def _probe_inputs(seed: int, dtype: str, what: str):
    rng = child_rng(seed, "probe", what)
    sigma = math.sqrt(PROBE_SCALE)
    q, k = sigma * rng.standard_normal((2, PROBE_N, PROBE_D))
    return np.asarray(q, dtype=dtype), np.asarray(k, dtype=dtype), np.asarray(rng.standard_normal((PROBE_N, PROBE_D)),
                                                                               dtype=dtype)


def _weights(calls, q, k, mask, what: str) -> np.ndarray:
    """W = f(q, k, I), the identity's columns passed in blocks of d (dv = d, as on every case)."""
    n, d = q.shape[0], q.shape[1]
    w = np.empty((n, n))
    for start in range(0, n, d):
        cols = np.zeros((n, min(d, n - start)), dtype=q.dtype)
        cols[np.arange(start, start + cols.shape[1]), np.arange(cols.shape[1])] = 1
        w[:, start:start + cols.shape[1]] = calls(q, k, cols, what=f"{what}: V = identity columns {start}..", mask=mask)
    return w


def _fit(logw, t, allowed):
    """Least-squares c of log W = c t + row constants on the allowed entries: c and the residual relative to |t_c|."""
    cnt = allowed.sum(axis=1, keepdims=True)
    lc = np.where(allowed, logw - np.where(allowed, logw, 0.0).sum(axis=1, keepdims=True) / cnt, 0.0)
    tc = np.where(allowed, t - np.where(allowed, t, 0.0).sum(axis=1, keepdims=True) / cnt, 0.0)
    norm = float(np.sum(tc * tc))
    c = float(np.sum(lc * tc) / norm)
    return c, float(np.linalg.norm(lc - c * tc) / math.sqrt(norm)), math.sqrt(norm)


def _weights_probe(p, calls) -> dict:
    """The properties of the effective weights W = f(q, k, I) (module docstring, records 4-5)."""
    q, k, v = _probe_inputs(p.seed, p.dtype, "weights")
    n, d = q.shape
    mask = _random_mask(p.seed, n, "probe-mask") if p.mask else None
    allowed = _allowed(n, p.causal, mask)
    w = _weights(calls, q, k, mask, "weights probe")
    t = np.asarray(q, np.float64) @ np.asarray(k, np.float64).T / math.sqrt(d)
    exact = exact_weights(q, k, causal=p.causal, mask=mask)
    rho = weight_relative_bound(q, k, dtype=p.dtype, causal=p.causal, mask=mask)
    weight_bound = float(np.max(exact_and_bound(q, k, np.ones((n, 1)), dtype=p.dtype, causal=p.causal, mask=mask)[1]))
    out: dict = {}
    out["row_sum_error"] = float(np.max(np.abs(w.sum(axis=1) - 1.0)))
    out["row_sum_bound"] = float(np.max(np.sum(np.where(allowed, rho * exact, 0.0), axis=1))) + n * 2.0**-52
    out["min_weight"] = float(np.min(w))
    out["min_weight_bound"] = -float(np.max(rho * exact))
    # dependence on q and k: redraw one of them, compare the change with the exact change
    for who in ("query", "key"):
        q2, k2, _ = _probe_inputs(p.seed, p.dtype, f"redrawn-{who}")
        qa, ka = (q2, k) if who == "query" else (q, k2)
        base = calls(q, k, v, what="weights probe: Gaussian values", mask=mask)
        moved = calls(qa, ka, v, what=f"weights probe: {who}s redrawn", mask=mask)
        exact_a, bound_a = exact_and_bound(qa, ka, v, dtype=p.dtype, causal=p.causal, mask=mask)
        exact_0, bound_0 = exact_and_bound(q, k, v, dtype=p.dtype, causal=p.causal, mask=mask)
        ref_change = float(np.linalg.norm(exact_a - exact_0))
        # |change - exact change| <= |bound(q, k)|_F + |bound(qa, ka)|_F (every output within its bound)
        noise = float(np.linalg.norm(bound_a) + np.linalg.norm(bound_0))
        out[f"{who}_dependence"] = float(np.linalg.norm(moved - base)) / ref_change
        out[f"{who}_rounding_share"] = noise / ref_change
    # the implied logits
    bound = float(np.linalg.norm(np.where(allowed, rho, 0.0)))
    if np.all(w[allowed] > 0):
        logw = np.log(np.where(allowed, w, 1.0))
        c, resid, tnorm = _fit(logw, t, allowed)
        out["logit_scale"], out["implied_logit_residual"] = c, resid
        out["implied_logit_bound"] = bound / tnorm
        if not resid <= bound / tnorm and not (p.causal or p.mask):
            reading, fitted = _diagnose(logw, t, allowed)
            if fitted <= bound / tnorm:  # another reading explains W up to rounding
                out["diagnosis"], out["diagnosis_residual"] = reading, fitted
    else:
        out["logit_scale"], out["implied_logit_residual"] = math.nan, math.nan
        out["implied_logit_bound"] = math.nan
        out["diagnosis"] = "rows: a weight of an allowed key is zero, negative or not finite (log W is undefined)"
    if p.causal:
        out["future_weight"] = float(np.max(np.abs(np.where(np.tri(n, dtype=bool), 0.0, w))))
    if p.mask:
        out["masked_weight"] = float(np.max(np.abs(np.where(mask, 0.0, w))))
    out["weight_bound"] = weight_bound
    return out


def _diagnose(logw, t, allowed) -> tuple[str, float]:
    """The best other reading of the implied logits and its residual: the same weights for every query (q ignored),
    the transposed logits (the softmax over the queries) or the logits shifted by s positions against the values
    (value j + s weighted by the score of key j)."""
    n = t.shape[0]
    lc = logw - logw.mean(axis=1, keepdims=True)
    tc = t - t.mean(axis=1, keepdims=True)
    same = float(np.linalg.norm(lc - lc.mean(axis=0, keepdims=True)) / np.linalg.norm(tc))
    best, best_resid = ("dependence on q/k: the weights are the same for every query (they ignore q: log W_ij depends "
                        "on j only)"), same
    readings = [("row axis: W is the softmax over the queries (axis 0), transposed: key i weights query j by "
                 "k_i.q_j", t.T)]
    for s in range(1, n):
        shift = s if s <= n // 2 else s - n
        readings.append((f"key-value alignment: the value of token j {'+' if shift > 0 else '-'} {abs(shift)} gets "
                         f"the weight of key j (values shifted by {shift} against the keys)", np.roll(t, s, axis=1)))
    for text, cand in readings:
        _, resid, _ = _fit(logw, cand, allowed)
        if resid < best_resid:
            best, best_resid = text, resid
    return best, best_resid


def _causal_probe(p, calls) -> float:
    """The largest change of the outputs of tokens <= c when the tokens > c are redrawn, over twice their bound."""
    q, k, v = _probe_inputs(p.seed, p.dtype, "causal")
    n, d = q.shape
    mask = _random_mask(p.seed, n, "causal-mask") if p.mask else None
    base = calls(q, k, v, what="causal probe", mask=mask)
    worst = 0.0
    rng = child_rng(p.seed, "cuts")
    for c in np.sort(rng.choice(n - 1, size=min(CUTS, n - 1), replace=False)):
        c = int(c)
        q2, k2, v2 = (a.astype(np.float64) for a in (q, k, v))
        q2[c + 1:], k2[c + 1:] = math.sqrt(PROBE_SCALE) * rng.standard_normal((2, n - c - 1, d))
        v2[c + 1:] = rng.standard_normal((n - c - 1, d))
        q2, k2, v2 = (a.astype(p.dtype) for a in (q2, k2, v2))
        out = calls(q2, k2, v2, what=f"causal probe: tokens > {c} redrawn", mask=mask)
        bound = (exact_and_bound(q, k, v, dtype=p.dtype, causal=True, mask=mask)[1]
                 + exact_and_bound(q2, k2, v2, dtype=p.dtype, causal=True, mask=mask)[1])
        change = np.abs(out[: c + 1] - base[: c + 1]) / bound[: c + 1]
        worst = _worst(worst, float(np.max(change)))
    return worst


# -- approximate mode -----------------------------------------------------------------------------------------------
def _takes_rng(function) -> bool:
    try:
        return "rng" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _approximate_inputs(p, n: int, rng):
    if p.tokens == "smooth":
        q, k, v = smooth_tokens(n, p.d, p.d, rng)
    else:
        sigma = math.sqrt(p.logit_std)
        q, k = sigma * rng.standard_normal((2, n, p.d))
        v = rng.standard_normal((n, p.d))
    return tuple(np.asarray(a, dtype=p.dtype) for a in (q, k, v))


def _measure_rate(p, ctx, fn, calls) -> dict:
    """The relative RMS error along the ladder, decided by verify.rates.check_rate."""
    random = _takes_rng(fn.function)
    cache: dict[int, tuple] = {}
    failure: list[BaseException] = []

    def setting(x: int):
        n = x if p.variable == "n" else p.n
        if n not in cache:
            q, k, v = _approximate_inputs(p, n, child_rng(p.seed, "approximate", n))
            mask = _random_mask(p.seed, n, "approximate-mask", n) if p.mask else None
            with ctx.timed("reference"):
                exact = exact_attention(q, k, v, causal=p.causal, mask=mask)
            cache[n] = (q, k, v, mask, exact)
        return cache[n]

    def measured(x: int, rng=None) -> float:
        q, k, v, mask, exact = setting(x)
        options = {} if p.variable == "n" else {p.variable: int(x)}
        if rng is not None:
            options["rng"] = rng
        try:
            with ctx.timed("implementation"):
                out = calls(q, k, v, what=f"{p.variable} = {x}", mask=mask, **options)
        except ImplementationError as exc:  # the user's code: re-raised as it is after the rate engine returns
            failure.append(exc)
            raise
        return float(np.linalg.norm(out - exact) / np.linalg.norm(np.asarray(v, dtype=np.float64)))

    if random:
        def error(x, rng):
            return measured(x, rng)
    else:
        def error(x):
            return measured(x)

    try:
        res = rates.check_rate(error, list(p.ladder), claimed=p.claimed_rate, kind=p.rate_kind,
                               repeats="auto" if p.repeats is None else p.repeats, seed=p.seed,
                               tolerance=p.rate_tolerance)
    except Exception:
        if failure:
            raise failure[0] from None
        raise
    message = str(getattr(res, "message", ""))
    label = f"{error.__module__}:{error.__qualname__}: "  # the rate engine names the error function first
    message = message[len(label):] if message.startswith(label) else message
    quantities = getattr(res, "quantities", None)
    errors = np.asarray(getattr(quantities, "errors", np.full((len(p.ladder), 1), np.nan)), dtype=float)
    interval = getattr(res, "interval", (math.nan, math.nan))
    return dict(ladder=tuple(p.ladder), errors=errors, random=random, rate_status=str(getattr(res, "status", "")),
                rate_passed=bool(res.passed), rate_message=message,
                rate_order=float(getattr(res, "order", math.nan)),
                rate_interval=(float(interval[0]), float(interval[1])))


# -- the assertions -------------------------------------------------------------------------------------------------
@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Exact mode: finite, precision, unchanged arguments, the weights' properties, causality, the error bound.
    Approximate mode: finite, unchanged arguments, the claimed rate (and error)."""
    name = q.label
    overflow = ""
    if q.first_non_finite:
        where = f" (first at {q.first_non_finite}"
        if math.isfinite(q.first_non_finite_logit):
            limit = EXP_OVERFLOW[q.output_dtype] if q.output_dtype in EXP_OVERFLOW else math.nan
            where += (f": largest logit {q.first_non_finite_logit:.4g}; exp overflows in {q.output_dtype} above "
                      f"{limit:.4g}")
        overflow = where + ")"
    third = is_reference(p.implementation)
    hold_to_contract(rec, p.implementation, q, f"{name}: overflow/non-finite{overflow}",
                     why="softmax attention of finite inputs is a convex combination of finite values: NaN or inf "
                         "never passes (exp of logits above ln(max float) overflows unless the row maximum is "
                         "subtracted first)")
    if q.mode == "approximate":
        return _assess_rate(q, p, rec)
    wanted = np.dtype(p.dtype)
    rec.holds("output_precision", np.finfo(np.dtype(q.output_dtype)).eps <= np.finfo(wanted).eps,
              why=f"the contract: outputs in {p.dtype} or wider (the rounding bound is stated for {p.dtype})",
              label=f"{name}: precision: it returned {q.output_dtype} for {p.dtype} inputs")
    _arguments_unchanged(q, rec, name)
    _assess_weights(q, p, rec, name)
    worst_case = max(q.case_ratios, key=lambda c: (math.isnan(q.case_ratios[c]), q.case_ratios[c]))
    ratio = _worst(list(q.case_ratios.values()))
    rec.at_most("error_over_bound", ratio, 1.0,
                why=f"|out_i - exact_i| <= 2 V [2 (d u_a + 3 u_s) A_i + 2 u_s ln n + 2 n u_a + 7 u_s] (+ the same in "
                    f"float64 for the reference): first-order rounding of softmax attention in {p.dtype} (u_a of "
                    f"{ACCUMULATION[p.dtype]}), doubled; correct implementations measured <= "
                    f"{MEASURED[p.dtype]:.2g} of it",
                label=f"{name}: the output differs from softmax(q k^T / sqrt(d)) v (exact, float64) by more than "
                      f"rounding; worst at {worst_case}: error {q.case_errors[worst_case]:.3g} where the bound is "
                      f"{q.case_bounds[worst_case]:.3g}")
    for group in ("lengths", "dims", "scales", "adversarial", "masks"):
        values = [r for c, r in q.case_ratios.items() if c.startswith(group + ":")]
        if values:
            rec.info(f"error_over_bound_{group}", _worst(values))
    rec.info("cases", len(q.case_ratios))
    rec.info("calls", q.calls)
    what = f"softmax(q k^T / sqrt(d)) v within the rounding bound of {p.dtype}"
    extra = "".join(["; causal" if p.causal else "", "; masked" if p.mask else ""])
    ladder = (f"n = {', '.join(map(str, p.lengths))}; d = {', '.join(map(str, p.dims))}; logit std "
              f"{', '.join(f'{s:g}' for s in p.logit_scales)}; {', '.join(p.adversarial)}")
    if third:
        return f"contract of {name}: {what}{extra} ({ladder}), finite, arguments unchanged"
    return f"{name} attention is {what}{extra} ({ladder})"


def _arguments_unchanged(q, rec, name):
    rec.holds("arguments_unchanged", q.mutating_calls == 0,
              why="the contract: f(q, k, v) must not change its arguments (a caller reuses them)",
              label=f"{name} changed its argument(s) {', '.join(q.mutated)} in {q.mutating_calls} of {q.calls} calls")


def _assess_weights(q, p, rec, name):
    rec.at_most("row_sum_error", q.row_sum_error, q.row_sum_bound,
                why="each weight W_ij = f(q, k, e_j)_i is within rho_ij (relative) of the exact softmax weight, so a "
                    "row sums to 1 within sum_j rho_ij p_ij",
                label=f"{name}: rows: the weights W = f(q, k, I) of a row do not sum to 1 (not a row softmax)")
    rec.at_least("min_weight", q.min_weight, q.min_weight_bound,
                  why="softmax weights are positive; rounding moves W_ij by at most rho_ij p_ij",
                  label=f"{name}: rows: negative attention weights")
    bound = q.implied_logit_bound
    fit_ok = q.implied_logit_residual <= bound
    # W = softmax(c q.k / sqrt(d)) with c clearly not 0: it depends on q and k, and c decides (a weak dependence, a
    # temperature, moves the output by less than rounding may in float16, so the redraws cannot tell it from none)
    through_c = fit_ok and abs(q.logit_scale) > bound
    dependent = True
    for who, letter in (("query", "q"), ("key", "k")):
        share, measured = getattr(q, f"{who}_rounding_share"), getattr(q, f"{who}_dependence")
        dependent = dependent and measured >= share
        if through_c:
            rec.info(f"{who}_dependence", measured)
            continue
        rec.at_least(f"{who}_dependence", measured, share,
                     why=f"redrawing the {who}s moves the exact output; an implementation that uses {letter} moves "
                         f"by more than twice its rounding bound ({share:.2g} of the exact change)",
                     label=f"{name}: dependence on q/k: the output does not change when the "
                           f"{'keys' if who == 'key' else 'queries'} are redrawn (it ignores {letter})")
    if dependent or through_c:
        if q.diagnosis:
            prop, _, reading = q.diagnosis.partition(": ")
            text = f"{prop}: {reading}" + (f" (that reading leaves {q.diagnosis_residual:.2g})"
                                           if q.diagnosis_residual is not None else "")
        else:
            text = "weights: the implied logits log W are not c q.k / sqrt(d) plus a row constant for any c"
        rec.at_most("implied_logit_residual", q.implied_logit_residual, bound,
                    why="log W_ij is within rho_ij of the exact logit plus a row constant; the least-squares fit of "
                        "c q.k / sqrt(d) + row constants leaves at most |rho|_F / |centred logits|_F",
                    label=f"{name}: {text}")
    else:
        rec.info("implied_logit_residual", q.implied_logit_residual)
    if fit_ok and (dependent or through_c):
        c, d = q.logit_scale, PROBE_D
        if abs(c - math.sqrt(d)) <= 0.1 * math.sqrt(d):
            why_c = f"scale: c = {c:.4g} = sqrt(d) (d = {d}): the logits are not divided by sqrt(d)"
        elif abs(c - 1 / math.sqrt(d)) <= 0.1 / math.sqrt(d):
            why_c = f"scale: c = {c:.4g} = 1/sqrt(d) (d = {d}): the logits are divided by sqrt(d) twice"
        else:
            why_c = f"temperature: c = {c:.4g}: the logits are multiplied by c (a temperature of {1 / c:.4g})"
        rec.close("logit_scale", c, 1.0, atol=bound,
                  why="the implied logits are q.k / sqrt(d) up to rounding: c = 1 within |rho|_F / |centred logits|_F",
                  label=f"{name}: {why_c}")
    else:
        rec.info("logit_scale", q.logit_scale)
    if q.future_weight is not None:
        rec.at_most("future_weight", q.future_weight, q.weight_bound,
                    why="causal attention gives query i no weight on keys j > i; the bound of an output with V = 1",
                    label=f"{name}: causality: weight on later tokens (largest |W_ij|, j > i)")
    if q.causal_perturbation is not None:
        rec.at_most("causal_perturbation", q.causal_perturbation, 1.0,
                    why=f"causal: the outputs of tokens <= c depend on tokens <= c only ({CUTS} random cuts); two "
                        "outputs within the bound of the same exact output differ by at most twice it",
                    label=f"{name}: causality: the outputs of earlier tokens changed when only later tokens changed "
                          "(it peeks at the future)")
    if q.masked_weight is not None:
        rec.at_most("masked_weight", q.masked_weight, q.weight_bound,
                    why="a masked key gets no weight; the bound of an output with V = 1",
                    label=f"{name}: masking: weight on masked keys (largest |W_ij| where mask[i, j] is false)")


def _assess_rate(q, p, rec) -> str:
    name = q.label
    _arguments_unchanged(q, rec, name)
    what = f"error ~ {p.variable}^{p.claimed_rate:g}" if p.rate_kind == "equal" else \
        f"error = O({p.variable}^{p.claimed_rate:g})"
    rec.holds("claimed_rate", q.rate_passed,
              why=f"verify.rates.check_rate: the order of the relative RMS error against the exact attention along "
                  f"{p.variable} = {', '.join(map(str, q.ladder))}, tolerance {p.rate_tolerance:g}",
              label=f"{name}: the claimed rate {what} is not established ({q.rate_status}): {q.rate_message}")
    rec.info("rate_status", q.rate_status)
    rec.info("rate_order", q.rate_order)
    rec.info("rate_interval", q.rate_interval)
    means = np.mean(q.errors, axis=1)
    rec.info("mean_errors", tuple(float(e) for e in means))
    if p.claimed_error is not None:
        rec.at_most("error_at_largest", float(means[-1]), p.claimed_error,
                    why=f"the claimed error at {p.variable} = {q.ladder[-1]} (mean over the repeats)",
                    label=f"{name}: the error at {p.variable} = {q.ladder[-1]} exceeds the claimed {p.claimed_error:g}")
    rec.note(q.rate_message)
    tail = f" and at most {p.claimed_error:g} at {p.variable} = {q.ladder[-1]}" if p.claimed_error is not None else ""
    return (f"{'contract of ' if is_reference(p.implementation) else ''}{name}: the relative RMS error against "
            f"softmax(q k^T / sqrt(d)) v (exact, float64) has {what}{tail} ({p.variable} = "
            f"{', '.join(map(str, q.ladder))}, {p.tokens} tokens)")


run = CHECK.run


def main(argv=None) -> int:
    """The command line; ``--in`` is accepted for ``--variable``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    argv = ["--variable" if a == "--in" else ("--variable=" + a[5:] if a.startswith("--in=") else a) for a in argv]
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
