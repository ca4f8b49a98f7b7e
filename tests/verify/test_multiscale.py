"""verify.multiscale (FNA-16..19): the bandwidth-dependent statements pass, the printed bandwidth-free
claim fails (under equal kappa the gap and hop orderings reverse)."""

import math
import re

import numpy as np
import pytest

from spectral.memory import DenseMemoryError
from spectral.validation import InputError
from verify import multiscale as check

MIB = 1 << 20

# A cheap setting that still holds every asserted statement (one data set, one d, n up to 128).
CHEAP = dict(datasets=("gaussian",), dims=(8,), draws=2, dm_dims=(8,), dm_n=200, alphas=(1.2, 2.0))


def test_default_passes(default_result):
    res = default_result("multiscale")
    assert res.passed, res.failures
    m = res.measured
    # the mechanism: FNA rows near-uniform, LA and DP not (FNA-16)
    assert m["entropy_fna_gaussian_d8_n128"] > m["entropy_local_gaussian_d8_n128"] > m["entropy_dp_gaussian_d8_n128"]
    # equal kappa: FNA's gap collapses (1.3e-2 at d = 8, 5.8e-12 at d = 32 for the reference token sets)
    assert m["gap_fna_equal_gaussian_d8"] < 0.05 and m["gap_fna_equal_gaussian_d32"] < 1e-8
    # most numbers are informational; the deciding ones carry their rationale
    deciding = [r for r in res.records if r.deciding]
    assert 40 < len(deciding) < len(res.records) / 2


def test_printed_claim_fails_under_equal_kappa():
    res = check.run(claim="printed", **CHEAP)
    assert not res.passed
    failed = [r.name for r in res.records if r.passed is False]
    assert failed and all("_equal_" in name for name in failed)  # paper and matched protocols still pass
    assert "frac_gap_fna_gt_local_equal_gaussian_d8" in failed
    assert "hops_fna_worst_n_equal_gaussian_d8" in failed
    assert all(f.startswith("(printed claim)") for f in res.failures)


def test_cheap_setting_passes():
    res = check.run(**CHEAP)
    assert res.passed, res.failures
    rev = res.record("frac_gap_fna_gt_local_equal_gaussian_d8")
    assert rev.sense == "at_most" and rev.measured <= rev.tolerance


def test_low_dimension_fails_and_says_why():
    # d = 4: FNA entropy 0.987 < 0.99 and worst hops 1.05 > 1.01 (distances do not concentrate)
    res = check.run(**{**CHEAP, "dims": (4,)})
    assert not res.passed
    assert all("d = 4 < 8" in f for f in res.failures), res.failures


def test_tokens_and_bandwidths():
    rng = np.random.default_rng(0)
    for data in check.DATASETS:
        x = check.tokens(data, 400, 8, rng)
        assert x.shape == (400, 8)
        # every token set has E|x|^2 about d (within 30 %)
        assert abs(np.mean(np.sum(x**2, axis=1)) / 8 - 1) < 0.3
    kf, kl = check.bandwidths("matched", 8, 1.2)
    # half maximum of (1 + r/kf)^-(d+alpha) equals that of exp(-(r/kl)^2)
    r = kf * (2 ** (1 / 9.2) - 1)
    assert math.isclose(math.exp(-((r / kl) ** 2)), 0.5, rel_tol=1e-12)
    assert check.bandwidths("equal", 8, 1.2) == (math.sqrt(8), math.sqrt(8))
    with pytest.raises(InputError, match="protocol"):
        check.bandwidths("wide", 8, 1.2)


def test_row_entropy_bounds():
    assert check.row_entropy(np.full((4, 4), 0.25)) == pytest.approx(1.0)
    assert check.row_entropy(np.eye(4)) == 0.0


@pytest.mark.parametrize("d", [8, 16])
def test_matrix_free_diffusion_maps_equal_dense(d):
    from manifolds import Euclidean
    from spectral import fna_kernel, paper_kappa

    x = check.tokens("sequence", 200, d, np.random.default_rng(d))
    for alpha, kappa in ((1.2, paper_kappa(d, 1.2) * math.sqrt(0.1)), (2.0, math.sqrt(0.1 * d))):
        dense = check.diffusion_spread(fna_kernel(Euclidean(d).distance(x), alpha=alpha, scale=kappa, dim=d))
        free = check.diffusion_spread(check._kernel_operator(x, alpha, kappa), rng=np.random.default_rng(0))
        # measured at dm_n = 200 / 500 (d = 8, 16): spread 3.3e-9-3.9e-9 relative, largest |eta| ~1e-15, the
        # coordinates (sign per column) 5e-8-1.3e-5 of their largest entry (block solver residual ~1.5e-8 / gap)
        assert free[0] == pytest.approx(dense[0], rel=1e-7)
        assert free[1] == pytest.approx(dense[1], rel=1e-12)
        flip = np.sign(np.sum(dense[2] * free[2], axis=0))
        assert np.max(np.abs(free[2] * flip - dense[2])) <= 1e-4 * np.max(np.abs(dense[2]))


def test_auto_takes_matrix_free_and_printed_claim_still_fails(available_memory):
    # CHEAP at dm_n = 200: dense estimate 18.4 MiB, matrix-free 8.5 MiB
    available_memory(12 * MIB)
    res = check.run(claim="printed", **CHEAP)
    assert res.parameters["method"] == "matrix-free"
    assert not res.passed
    failed = [r.name for r in res.records if r.passed is False]
    assert failed and all("_equal_" in name for name in failed)
    assert res.record("dm_spread_ratio_d8").passed and res.record("dm_ratio_vs_eta_log_d8").passed


def test_auto_takes_dense_when_it_fits(available_memory):
    available_memory(64 * MIB)
    assert check._choose_method("auto", 500) == "dense"


def test_dense_refusal_names_real_options(available_memory, command_options):
    available_memory(1 << 30)
    with pytest.raises(DenseMemoryError) as info:
        check.run(dm_n=5000, method="dense")
    message = str(info.value)
    assert "lower --dm-n (at most " in message and "--method matrix-free (needs " in message
    named = set(re.findall(r"--[a-z][a-z0-9-]*", message))
    assert named and named <= command_options("multiscale"), named - command_options("multiscale")
    fits = int(re.search(r"at most (\d+) fits", message).group(1))
    assert check._dm_bytes("dense", fits) <= 1 << 30 < check._dm_bytes("dense", fits + 1)
    assert check._choose_method("auto", 5000) == "matrix-free"


def test_matrix_free_refused_when_nothing_fits(available_memory):
    available_memory(4 * MIB)
    with pytest.raises(DenseMemoryError, match=r"matrix-free diffusion maps .* even --dm-n 32 does not fit now$"):
        check.run(method="matrix-free", **CHEAP)


@pytest.mark.slow
def test_full_protocol_passes():
    res = check.run(full=True)
    assert res.passed, res.failures
    assert res.parameters["sizes"] == (32, 64, 128, 256, 512) and res.parameters["draws"] == 20


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha": 2.0}, "alpha"), ({"dims": (1,)}, "dims"), ({"sizes": (64,)}, "sizes"),
    ({"sizes": (128, 64)}, "sizes"), ({"draws": 1}, "draws"), ({"datasets": ("x",)}, "datasets"),
    ({"alphas": (1.2,)}, "alphas"), ({"dm_eps": 0.0}, "dm_eps"), ({"claim": "ledger"}, "claim"),
    ({"dm_dims": (300,)}, "dm_dims"), ({"dm_n": 10}, "dm_n"), ({"dm_n": 60000}, "dm_n"), ({"method": "lanczos"}, "method"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
