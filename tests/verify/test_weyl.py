"""verify.weyl (FNA-10, FNA-11): passes for the right kernel and fails for each wrong one.

Measured statistics (python -m verify.weyl ..., circle grid n = 2000, s = 2h, k = 2..10):

=====================================  ======  ==========  =======  =========  ========
setting                                 slope  continuum   gap      shape err  best fit
=====================================  ======  ==========  =======  =========  ========
alpha 1.0                               1.0087  1.0096      0.0009   0.0007     0.9988
alpha 1.2                               1.1575  1.1582      0.0007   0.0006     1.1990
alpha 1.5                               1.3766  1.3772      0.0005   0.0005     1.4992
alpha 1.8                               1.5734  1.5738      0.0004   0.0004     1.7993
alpha 2.0                               2.0000  2.0000      0.0000   0.0000     2.0000
kernel 1.25 claimed 1.2 (FAIL)          1.1947  1.1582      0.0365   0.0364     1.2491
kernel 1.5 claimed 1.2 (FAIL)           1.3766  1.1582      0.2184   0.2168     1.4992
kernel 1.9 claimed 2.0 (FAIL)           1.6311  2.0000      0.3689   0.3454     1.8992
softmax T = sqrt 2 claimed 1.2 (FAIL)   1.3635  1.1582      0.2053   0.1950     1.4785
softmax T = sqrt 2 claimed 1.5 (FAIL)   1.3635  1.3772      0.0136   0.0223     1.4785
chordal vs geodesic ref. (FAIL)         1.1094  1.1582      0.0488   0.0584     1.1321
d_M = 2 on S^1, claimed 1.2 (FAIL)      1.7745  1.1582      0.6163   0.6089     1.9990
kernel 1.21 claimed 1.2 (FAIL)          1.1649  1.1582      0.0067   0.0068     1.2090
=====================================  ======  ==========  =======  =========  ========

At the paper setting (n = 500, s = 0.01, h/s = 1.26; tolerances measured there, ~2x the grid's own error):

=====================================  ======  ==========  =======  =========  ========  =========
setting                                 slope  continuum   gap      shape err  best fit  sweep rise
=====================================  ======  ==========  =======  =========  ========  =========
alpha 1.0                               0.9898  0.9964      0.0067   0.0054     0.9904    -0.0016
alpha 1.2                               1.1309  1.1368      0.0059   0.0048     1.1917    -0.0038
alpha 1.5 (FAIL: slope window)          1.3392  1.3443      0.0051   0.0042     1.4924    -0.0119
alpha 1.8 (FAIL: slope window)          1.5279  1.5328      0.0049   0.0040     1.7916    -0.0282
alpha 2.0                               1.9999  2.0000      0.0001   0.0001     2.0000     0.0
kernel 1.25 claimed 1.2 (FAIL)          1.1663  1.1368      0.0295   0.0306     1.2419     0.0211
kernel 1.15 claimed 1.2 (FAIL)          1.0955  1.1368      0.0413   0.0399     1.1414    -0.0031
kernel 1.21 claimed 1.2 (FAIL: sweep)   1.1380  1.1368      0.0012   0.0024     1.2017     0.0039
=====================================  ======  ==========  =======  =========  ========  =========

The naive slope against the eigen-index j = 1..20 (Fig. 2a read literally) is 1.041 at alpha = 1.2
(1.022 at the paper setting); the exact s -> 0 limit m(k)/M0 has slope 1.230 over k = 2..10.
"""

import math

import numpy as np
import pytest

from spectral import DenseMemoryError
from spectral.validation import InputError
from verify import weyl

ALPHAS = (1.0, 1.5, 1.8, 2.0)  # and 1.2, the default


@pytest.fixture(scope="module")
def grid_results(default_result):
    out = {a: weyl.run(alpha=a) for a in ALPHAS}
    out[1.2] = default_result("weyl")
    return out


def _failed(result):
    return {r.name for r in result.records if r.passed is False}


@pytest.mark.parametrize("alpha", (1.2,) + ALPHAS)
def test_grid_passes_and_recovers_alpha(grid_results, alpha):
    r = grid_results[alpha]
    assert r.passed, r.failures
    best = r.record("best_fit_alpha")
    assert best.expected == alpha and abs(best.measured - alpha) <= best.tolerance
    # measured |best fit - alpha| <= 0.0012 (module docstring table): far inside the tolerance
    assert abs(best.measured - alpha) <= best.tolerance / 4
    assert r.parameters["method"] == "circulant"
    assert r.measured["pair_splitting"] == pytest.approx(0.0, abs=1e-9)  # cos/sin pairs are exactly degenerate


def test_naive_slope_is_biased_below_alpha(grid_results):
    # Fig. 2a read against the raw index j = 1..20 gives a slope well below alpha
    for alpha in (1.2, 1.5, 1.8):
        assert grid_results[alpha].measured["naive_slope_j"] < alpha - 0.1
        assert not grid_results[alpha].record("naive_slope_j").deciding


def test_limit_slope_is_reported(grid_results):
    # the exact s -> 0 limit m(k)/M0 over k = 2..10 has slope 1.230 at alpha = 1.2
    assert grid_results[1.2].measured["limit_slope"] == pytest.approx(1.230, abs=5e-4)
    assert grid_results[2.0].measured["limit_slope"] == 2.0


@pytest.mark.parametrize(
    "kwargs, failing",
    [
        (dict(alpha=1.2, kernel_alpha=1.25), {"slope_gap", "shape_error", "best_fit_alpha"}),
        (dict(alpha=1.2, kernel_alpha=1.5), {"slope_gap", "shape_error", "best_fit_alpha"}),
        (dict(alpha=2.0, kernel_alpha=1.9), {"slope_gap", "shape_error", "best_fit_alpha"}),
        (dict(alpha=1.2, kernel="softmax"), {"slope_gap", "shape_error", "best_fit_alpha"}),
        (dict(alpha=1.5, kernel="softmax"), {"shape_error", "best_fit_alpha"}),  # slope gap alone would pass
        (dict(alpha=1.2, distance="chordal", reference_distance="geodesic"),
         {"slope_gap", "shape_error", "best_fit_alpha"}),
        (dict(alpha=1.2, dim=2), {"slope_gap", "shape_error", "best_fit_alpha"}),  # FNA-10: ambient dimension trap
        (dict(alpha=1.2, kernel_alpha=1.21), {"best_fit_alpha"}),  # sensitivity: 0.01 in alpha is seen
    ],
)
def test_wrong_kernels_fail(kwargs, failing):
    r = weyl.run(**kwargs)
    assert not r.passed and _failed(r) == failing, r.failures
    assert r.final_line().startswith("FAIL weyl")
    assert not any("h/s" in f for f in r.failures)  # a resolved grid: the kernel is wrong, not the points


def test_softmax_states_its_temperature():
    r = weyl.run(alpha=1.2, kernel="softmax", n=400)
    assert r.parameters["temperature"] == pytest.approx(math.sqrt(2))
    assert "exp(x.y / 1.414)" in r.statement


def test_chordal_kernel_passes_against_its_own_reference():
    r = weyl.run(alpha=1.0, distance="chordal")
    assert r.passed, r.failures
    assert r.parameters["reference_distance"] == "chordal"


def test_dense_eigensolver_agrees_with_circulant():
    a = weyl.run(alpha=1.2, n=400)
    b = weyl.run(alpha=1.2, n=400, method="dense")
    assert b.parameters["method"] == "dense"
    np.testing.assert_allclose(b.arrays["lambda"], a.arrays["lambda"], rtol=1e-9)


@pytest.fixture(scope="module")
def paper_result():
    return weyl.run(alpha=1.2, paper_setting=True)


def test_paper_setting_is_fig_2a(paper_result):
    r = paper_result
    assert r.passed, r.failures
    assert r.parameters["n"] == 500 and r.parameters["scale"] == pytest.approx(0.01)
    assert "h/s = 1.26" in r.statement and "FNA-10 window" in r.statement
    # h/s = 1.26: the naive j-slope is ~1.02 (Fig. 2a read literally)
    assert r.measured["naive_slope_j"] == pytest.approx(1.02, abs=0.01)
    # the ledger's window for the slope, [alpha - 0.15, alpha + 0.05]; measured 1.131 over k = 2..10
    slope = r.record("slope")
    assert slope.tolerance == (pytest.approx(1.05), pytest.approx(1.25)) and slope.deciding
    # the paper-setting tolerances are ~2x the coarse grid's own discretisation error (measured there)
    assert r.record("best_fit_alpha").tolerance == 0.02 and r.record("slope_gap").tolerance == 0.015
    assert abs(r.measured["best_fit_alpha"] - 1.2) > 0.005  # outside the resolved-grid tolerance: 1.1917


def test_paper_setting_shows_the_resolved_setting_and_the_grid_error(paper_result):
    r = paper_result
    # the same kernel and scale on h <= s/8 (5120 points): the continuum spectrum within 1e-4
    assert r.measured["resolved_n"] == 5120
    assert r.measured["resolved_best_fit_alpha"] == pytest.approx(1.2, abs=0.001)
    assert r.measured["resolved_slope_gap"] < 1e-3 < r.measured["slope_gap"]
    # the paper grid's discretisation error, paper minus resolved: -0.0082 in best-fit alpha
    bias = r.measured["grid_bias_best_fit"]
    assert bias == pytest.approx(r.measured["best_fit_alpha"] - r.measured["resolved_best_fit_alpha"])
    assert -0.01 < bias < -0.006
    assert any("resolved setting next to the paper's" in note for note in r.notes)
    # the resolution in words: 0.02 + 0.0082 < 0.05, so 1.2 is told from 1.25
    assert any("tells alpha = 1.2 from 1.25" in note for note in r.notes)


def test_paper_setting_monotone_approach(paper_result):
    r = paper_result
    slopes = r.arrays["sweep_slope"]
    assert list(r.arrays["sweep_scale"]) == [1e-2, 1e-3, 1e-4, 1e-5]
    # h <= s/8, rounded up to sizes with small prime factors (fast FFTs)
    assert list(r.arrays["sweep_n"]) == [5120, 50625, 506250, 5038848]
    # the slope rises toward the s -> 0 limit slope 1.2304 over k = 2..10 (ledger: 1.09 -> ... -> 1.22 on k = 2..20)
    assert np.all(np.diff(slopes) > 0)
    assert abs(slopes[-1] - r.measured["limit_slope"]) < 1e-3
    assert r.measured["monotone_approach"] <= r.record("monotone_approach").tolerance
    # toward the limit, not toward alpha: |slope - 1.2| is 0.063, 0.007, 0.026, 0.030 (the ledger's
    # "monotonically toward alpha" holds for the limit spectrum of the circle, FNA-12); said in words
    gaps = np.abs(slopes - 1.2)
    assert np.any(np.diff(gaps) > 0)
    assert any("not alpha = 1.2" in note and "not monotone" in note for note in r.notes)


@pytest.mark.parametrize(
    "kwargs, failing",
    [
        (dict(kernel_alpha=1.25), {"slope_gap", "shape_error", "best_fit_alpha", "monotone_approach"}),
        (dict(kernel_alpha=1.15), {"slope_gap", "shape_error", "best_fit_alpha"}),
        pytest.param(dict(kernel_alpha=1.5), {"slope", "slope_gap", "shape_error", "best_fit_alpha",
                                              "monotone_approach"}, marks=pytest.mark.slow),
        (dict(alpha=2.0, kernel_alpha=1.9), {"slope", "slope_gap", "shape_error", "best_fit_alpha"}),
        pytest.param(dict(kernel="softmax"), {"slope", "slope_gap", "shape_error", "best_fit_alpha"},
                     marks=pytest.mark.slow),
        (dict(alpha=1.5, kernel="softmax"), {"slope_gap", "shape_error", "best_fit_alpha"}),
        (dict(distance="chordal", reference_distance="geodesic"), {"slope_gap", "shape_error", "best_fit_alpha"}),
        (dict(dim=2), {"slope", "slope_gap", "shape_error", "best_fit_alpha", "monotone_approach"}),
        # 0.01 off: the coarse grid's best fit accepts it (1.2017), the sweep on resolving grids does not
        (dict(kernel_alpha=1.21), {"monotone_approach"}),
    ],
)
def test_paper_setting_wrong_kernels_fail(kwargs, failing):
    r = weyl.run(**{"alpha": 1.2, **kwargs}, paper_setting=True)
    assert not r.passed and _failed(r) == failing, r.failures
    assert not any("h/s" in f for f in r.failures)  # the tolerances were measured at this grid


@pytest.mark.parametrize("alpha, passes", [pytest.param(1.0, True, marks=pytest.mark.slow), (2.0, True), (1.5, False),
                                            pytest.param(1.8, False, marks=pytest.mark.slow)])
def test_paper_setting_other_alphas(alpha, passes):
    r = weyl.run(alpha=alpha, paper_setting=True)
    assert r.passed is passes, r.failures
    if not passes:
        # near alpha = 2 the finite-scale slope is far below alpha at s = 0.01 (FNA-13): the slope window
        # fails and says why, while the comparison with the same-scale continuum holds
        assert _failed(r) == {"slope"}
        assert "(k s)^(2 - alpha)" in r.failures[0] and "FNA-13" in r.failures[0]
    again = weyl.run(**{k: v for k, v in r.parameters.items()})  # the recorded parameters rerun it
    assert again.records == r.records


def test_generator_time_and_statement(grid_results):
    r = grid_results[1.2]
    assert r.parameters["scale"] == pytest.approx(4 * math.pi / 2000)
    assert "best-fit alpha" in r.statement and "Phi_1.2" in r.statement


# ----------------------------------------------------------------------------------- sphere


@pytest.fixture(scope="module")
def sphere_result():
    return weyl.run(manifold="sphere", alpha=1.2)


def test_sphere_passes_and_clusters_by_multiplicity(sphere_result):
    r = sphere_result
    assert r.passed, r.failures
    assert r.measured["shell_spread"] <= r.record("shell_spread").tolerance
    lam = r.arrays["lambda_j"]
    # the gap between consecutive shells is far larger than the spread inside a shell
    assert lam[3] / lam[2] > 1.5 and lam[8] / lam[7] > 1.2
    assert r.parameters["n"] == 5000 and r.parameters["method"] == "lanczos"
    assert r.parameters["scale"] == pytest.approx(8 * math.sqrt(4 * math.pi / 5000))
    # issue 14 item 3: a best-fit tolerance of at most 0.03 on S^2; the right kernel fits 1.1947 (the self
    # score biases it low by ~0.005)
    best = r.record("best_fit_alpha")
    assert best.tolerance <= 0.03 and -0.01 < best.measured - 1.2 < 0
    assert any("self score" in note for note in r.notes)


def test_sphere_tells_kernels_0_1_apart():
    # `python -m verify.weyl --manifold sphere --kernel-alpha 1.3` passed before (best fit 1.263 against 0.1)
    r = weyl.run(manifold="sphere", alpha=1.2, kernel_alpha=1.3)
    assert _failed(r) == {"slope_gap", "shape_error", "best_fit_alpha"}, r.failures
    assert r.measured["best_fit_alpha"] == pytest.approx(1.2945, abs=0.002)


@pytest.mark.slow
@pytest.mark.parametrize("alpha, kernel_alpha", [(1.2, 1.1), (1.2, 1.5), (1.2, 1.25), (1.0, 1.1), (1.5, 1.4),
                                                 (1.8, 1.9), (2.0, 1.9)])
def test_sphere_wrong_kernels_fail(alpha, kernel_alpha):
    r = weyl.run(manifold="sphere", alpha=alpha, kernel_alpha=kernel_alpha)
    assert {"slope_gap", "shape_error", "best_fit_alpha"} <= _failed(r), r.failures


@pytest.mark.slow
def test_sphere_with_the_block_solver_at_n_20000():
    # about 40 s each: the matrix-free block solver (S^2 geodesic tiles) on four times the default n
    right = weyl.run(manifold="sphere", n=20000, method="matrix-free")
    assert right.passed and right.parameters["method"] == "matrix-free", right.failures
    assert abs(right.measured["best_fit_alpha"] - 1.2) < 0.003  # measured 1.1986: the self-score bias shrinks
    wrong = weyl.run(manifold="sphere", n=20000, method="matrix-free", kernel_alpha=1.3)
    assert {"slope_gap", "shape_error", "best_fit_alpha"} <= _failed(wrong)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", (1.0, 1.5, 1.8, 2.0))
def test_sphere_other_alphas_pass(alpha):
    r = weyl.run(manifold="sphere", alpha=alpha)
    assert r.passed, r.failures


# ------------------------------------------------------------------------------ random points


# The tolerances for i.i.d. points come from a seed ensemble (seeds 0..7 at alpha = 1.2, seed 0 at
# 1.0, 1.8, 2.0 on S^1; seeds 0..9 / 0..2 on S^2; see verify.weyl._TOLERANCES). The slow tests use a
# seed outside it. A run at n = 4000 takes 15-50 s on this (shared, 2-core) machine: Lanczos on a
# clustered spectrum. Softmax (T = sqrt 2) on i.i.d. points is left out: its eta_k fall below the
# sampling noise by k ~ 5 (a negative eta_k = -4e-4 at n = 4000; it fails, but Lanczos takes ~10 min).


@pytest.mark.slow
@pytest.mark.parametrize("alpha", (1.2, 1.8, 2.0))
def test_random_points_pass(alpha):
    r = weyl.run(alpha=alpha, points="random", seed=11)
    assert r.passed, r.failures
    assert any("dropped" in note for note in r.notes) and r.parameters["n"] == 4000


@pytest.mark.slow
@pytest.mark.parametrize("kwargs", [dict(alpha=1.2, kernel_alpha=1.5), dict(alpha=2.0, kernel_alpha=1.9)])
def test_random_points_wrong_kernel_fails(kwargs):
    assert not weyl.run(points="random", seed=11, **kwargs).passed


@pytest.mark.slow
@pytest.mark.parametrize("kwargs, passes", [(dict(alpha=1.2), True), (dict(alpha=2.0), True),
                                            (dict(alpha=1.2, kernel_alpha=1.5), False)])
def test_random_sphere(kwargs, passes):
    r = weyl.run(manifold="sphere", points="random", seed=11, **kwargs)
    assert r.passed is passes, r.failures


def test_random_points_cheap_negative_control():
    # default tier: a small i.i.d. run exercises the eigensolver path with the diagonal dropped; a
    # kernel-alpha error of 0.3 (slope gap ~0.2 at n = 4000) is far outside the noise even at n = 800
    r = weyl.run(alpha=1.2, kernel_alpha=1.5, points="random", n=800, seed=11)
    assert any("dropped" in note for note in r.notes) and r.parameters["method"] == "lanczos"
    assert "slope_gap" in _failed(r)


def test_random_points_come_from_the_points_stream():
    # the same seed gives the same points (and spectrum); another seed other points (n = 150: dense solver)
    a = weyl.run(alpha=1.2, points="random", n=150, seed=3)
    b = weyl.run(alpha=1.2, points="random", n=150, seed=3)
    c = weyl.run(alpha=1.2, points="random", n=150, seed=4)
    np.testing.assert_array_equal(a.arrays["lambda_j"], b.arrays["lambda_j"])
    assert not np.allclose(a.arrays["lambda_j"], c.arrays["lambda_j"])


# ------------------------------------------------------------------------------------ devices


@pytest.mark.parametrize("kwargs", [dict(), dict(n=400, method="dense"), dict(manifold="sphere", n=300, modes=15)])
def test_computes_in_the_device_namespace(device_spy, kwargs):
    ref = weyl.run(**kwargs)
    spy = device_spy.install()
    res = weyl.run(**kwargs)
    assert "asarray" in spy.used
    assert res.parameters["method"] == ref.parameters["method"]
    # array_api_strict wraps numpy: the same eigenvalues (ARPACK on the host copy for the sphere)
    np.testing.assert_allclose(res.arrays["lambda_j"], ref.arrays["lambda_j"], rtol=1e-12)
    assert res.passed == ref.passed


@pytest.mark.gpu
def test_gpu_matches_cpu(grid_results):
    r = weyl.run(alpha=1.2, device="gpu")
    assert r.passed, r.failures
    np.testing.assert_allclose(r.arrays["lambda"], grid_results[1.2].arrays["lambda"], rtol=1e-9)


# ------------------------------------------------------------------------- memory and matrix-free


def test_matrix_free_agrees_with_the_stored_paths():
    # S^2 (49 modes, shells l <= 6) and i.i.d. S^1 points (diagonal dropped in the operator's tiles)
    for kwargs in (dict(manifold="sphere", n=600), dict(points="random", n=600, seed=3)):
        stored = weyl.run(**kwargs)
        free = weyl.run(**kwargs, method="matrix-free")
        assert stored.parameters["method"] == "lanczos" and free.parameters["method"] == "matrix-free"
        # block solver to a residual of 1e-6: eigenvalues within ~1e-12 (measured 7.7e-13 on S^2 at n = 5000)
        np.testing.assert_allclose(free.arrays["lambda_j"], stored.arrays["lambda_j"], rtol=1e-9)
        assert [(r.name, r.passed) for r in free.records] == [(r.name, r.passed) for r in stored.records]
    # negative control: other i.i.d. points (seed 4) move the spectrum far beyond that tolerance
    other = weyl.run(points="random", n=600, seed=4, method="matrix-free")
    assert np.max(np.abs(other.arrays["lambda_j"] / free.arrays["lambda_j"] - 1)) > 1e-3


def test_auto_goes_matrix_free_when_the_stored_kernel_does_not_fit(monkeypatch):
    import spectral

    p = dict(n=1500, modes=48, points="grid", manifold="sphere", paper_setting=False)
    free, stored = weyl._path_bytes(p, "matrix-free"), weyl._path_bytes(p, "lanczos")
    assert free < stored  # 27 MiB (basis and tiles) against 43 MiB (2.5 n^2 float64)
    monkeypatch.setattr(spectral, "available_memory_bytes", lambda: (free + stored) // 2)
    r = weyl.run(manifold="sphere", n=1500)
    assert r.parameters["method"] == "matrix-free" and r.passed, r.failures
    # an explicit stored path is refused instead, before anything is computed
    with pytest.raises(DenseMemoryError, match=r"^the stored-kernel Lanczos path .* needs an estimated .* MiB, over "
                                               r"the memory available now: .*; use --method matrix-free"):
        weyl.run(manifold="sphere", n=1500, method="lanczos")


def _cli_options():
    from verify.core.cli import build_parser

    parser = build_parser(weyl.run, prog="python -m verify.weyl")
    return {opt: action for action in parser._actions for opt in action.option_strings}


# The refusals of issue 14 item 1: each command exits 2 with one line that states the estimate, under an
# address-space limit (it used to grow to 14-15 GB first).
REFUSED = [
    ["--n", "1000000", "--points", "random"],
    ["--manifold", "sphere", "--n", "30000", "--method", "dense"],
    ["--n", "1000000000"],
]


@pytest.mark.parametrize("args", REFUSED, ids=lambda a: " ".join(a))
def test_refused_cleanly_under_a_memory_limit(args):
    import re
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    proc = subprocess.run([sys.executable, "-m", "verify.weyl", *args], preexec_fn=limit, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and proc.stdout == "", proc.stderr[-2000:]
    line = lines[0]
    assert line.startswith("python -m verify.weyl: memory: ") and "needs an estimated" in line
    assert re.search(r"needs an estimated [\d.]+ (MiB|GiB|TiB), over the memory available now: [\d.]+ (MiB|GiB)", line)
    # every option the message names is an option of this command, with a valid value
    options = _cli_options()
    named = re.findall(r"(--[a-z][a-z-]*)(?: ([a-z-]+))?", line)
    assert named
    for opt, value in named:
        assert opt in options, opt
        choices = options[opt].choices
        if choices and value and value not in ("or",):
            assert value in choices, (opt, value)


def test_refusals_name_real_options_without_a_limit(monkeypatch):
    import re

    import spectral

    monkeypatch.setattr(spectral, "available_memory_bytes", lambda: 8 << 30)  # the same on any machine
    options = _cli_options()
    for args in REFUSED:
        kwargs = {}
        it = iter(args)
        for key, value in zip(it, it):
            kwargs[key[2:].replace("-", "_")] = int(value) if value.isdigit() else value
        with pytest.raises(DenseMemoryError) as info:
            weyl.run(**kwargs)
        msg = str(info.value)
        for opt, value in re.findall(r"(--[a-z][a-z-]*)(?: ([a-z-]+))?", msg):
            assert opt in options and (not options[opt].choices or value in options[opt].choices + ("or",))
        assert "matrix-free" not in msg or "--method matrix-free" in msg  # never the old, unknown spellings
        assert "--matrix-free" not in msg and "method='matrix-free'" not in msg


# ---------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(manifold="torus"), "manifold"),
        (dict(points="halton"), "points"),
        (dict(kernel="relu"), "kernel"),
        (dict(distance="manhattan"), "distance"),
        (dict(reference_distance="manhattan"), "reference_distance"),
        (dict(method="qr"), "method"),
        (dict(alpha=0.0), "alpha"),
        (dict(alpha=2.5), "alpha"),
        (dict(kernel_alpha=3.0), "kernel_alpha"),
        (dict(dim=0.5), "dim"),
        (dict(n=7), "n"),
        (dict(n=100.5), "n"),
        (dict(scale=0.0), "scale"),
        (dict(scale=-0.1), "scale"),
        (dict(modes=1), "modes"),
        (dict(fit_range=(0, 5)), "fit_range"),
        (dict(fit_range=(2, 11)), "fit_range"),
        (dict(fit_range=(5, 3)), "fit_range"),
        (dict(modes=10, fit_range=(2, 6)), "fit_range"),
        (dict(kernel="softmax", temperature=float("nan")), "temperature"),
        (dict(kernel="softmax", temperature=-1.0), "temperature"),
        (dict(temperature=2.0), "temperature"),
        (dict(points="random", method="circulant"), "circulant"),
        (dict(manifold="sphere", method="circulant"), "circulant"),
        (dict(manifold="sphere", distance="chordal"), "geodesic"),
        (dict(paper_setting=True, points="random"), "paper_setting"),
        (dict(paper_setting=True, n=1000), "paper_setting"),
    ],
)
def test_bad_input(kwargs, word):
    with pytest.raises(InputError, match=word):
        weyl.run(**kwargs)
