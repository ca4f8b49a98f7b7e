"""verify.multiscale (FNA-16..19): the bandwidth-dependent statements pass, the printed bandwidth-free
claim fails (under equal kappa the gap and hop orderings reverse).

The measurement runs once at small settings; the assertions are held to those quantities, to the
printed claim, and to quantities a wrong implementation would give.
"""

import dataclasses
import math
import re

import numpy as np
import pytest

from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import InputError
from verify import multiscale as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, changed_fields, failed_records, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
MIB = 1 << 20

# A cheap setting that still holds every asserted statement (one data set, one d, n up to 128): the memory examples.
CHEAP = dict(datasets=("gaussian",), dims=(8,), draws=2, dm_dims=(8,), dm_n=200, alphas=(1.2, 2.0))
#: the measurement of this module: n up to 64 and 100 diffusion-map tokens still hold every asserted statement
SMALL = dict(CHEAP, sizes=(32, 64), dm_n=100)
small = measurement_fixture(CHECK, **SMALL, method="dense")


def test_cheap_setting_passes(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    rev = res.record("frac_gap_fna_gt_local_equal_gaussian_d8")
    assert rev.sense == "at_most" and rev.measured <= rev.tolerance
    m = res.measured
    # the mechanism: FNA rows near-uniform, LA and DP not (FNA-16)
    assert m["entropy_fna_gaussian_d8_n64"] > m["entropy_local_gaussian_d8_n64"] > m["entropy_dp_gaussian_d8_n64"]
    # equal kappa: FNA's gap collapses
    assert m["gap_fna_equal_gaussian_d8"] < 0.05
    # most numbers are informational; the deciding ones carry their rationale
    deciding = [r for r in res.records if r.deciding]
    assert 5 < len(deciding) < len(res.records) / 2 and all(r.why for r in deciding)
    assert q.examples["paper"].hops["dp"].shape == (64, 64) and q.gap_vs_alpha[("gaussian", 8)].paper.shape == (2, 2)


def test_printed_claim_fails_under_equal_kappa(small):
    p, q = small
    res = assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"),
                       {"frac_gap_fna_gt_local_equal_gaussian_d8", "hops_fna_worst_n_equal_gaussian_d8"})
    assert all("_equal_" in name for name in failed_records(res))  # paper and matched protocols still pass
    assert all(f.startswith("(printed claim)") for f in res.failures)


def test_low_dimension_fails_and_says_why():
    # d = 4: FNA entropy 0.987 < 0.99 and worst hops 1.05 > 1.01 (distances do not concentrate)
    p, q = measured(CHECK, **{**SMALL, "dims": (4,)})
    res = CHECK.assess(q, p)
    assert not res.passed and all("d = 4 < 8" in f for f in res.failures), res.failures
    # off the calibrated grid (d = 4, n = 64) each record takes its family's row under its own name
    assert "was not calibrated" in res.record("entropy_fna_gaussian_d4_n64").why


def _graph(n, protocol, kernel, statistic):
    """The path to a statistic of the graphs of the Gaussian tokens in d = 8."""
    return "graphs", ("gaussian", 8, n, protocol, kernel), statistic


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({_graph(64, "paper", "fna", "entropy"): np.full(2, 0.98)}, "entropy_fna_gaussian_d8_n64"),
    ({_graph(32, "paper", "fna", "hops_mean"): np.full(2, 1.05)}, "hops_fna_worst_n_paper_gaussian_d8"),
    ({_graph(32, "paper", "local", "hops_mean"): np.full(2, 1.0), _graph(64, "paper", "local", "hops_mean"):
      np.full(2, 1.0)}, "hops_local_paper_gaussian_d8"),
    ({_graph(32, "paper", "fna", "gap"): np.zeros(2)}, "frac_gap_fna_gt_local_paper_gaussian_d8"),
    ({_graph(32, "equal", "fna", "gap"): np.ones(2)}, "frac_gap_fna_gt_local_equal_gaussian_d8"),
    ({_graph(32, "equal", "fna", "hops_mean"): np.ones(2)}, "frac_hops_fna_gt_local_equal_gaussian_d8"),
    (lambda q: changed_fields(q, {("diffusion_maps", 8, "spread_fna"): 2 * q.diffusion_maps[8].spread_local}),
     "dm_spread_ratio_d8"),
    (lambda q: changed_fields(q, {("diffusion_maps", 8, "eta_fna"): 0.5 * q.diffusion_maps[8].eta_fna}),
     "dm_ratio_vs_eta_log_d8"),
    ({"fna16_identity_error": 1e-6}, "fna16_identity_error"),
    ({"fna16_identity_error": float("nan")}, "fna16_identity_error"),
])


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.graphs) == set(q.graphs) and type(back.diffusion_maps[8]) is check.DiffusionMap
    ex = back.examples["paper"]
    assert ex.pair == q.examples["paper"].pair and isinstance(ex.pair[0], int)
    np.testing.assert_array_equal(ex.paths["dp"], q.examples["paper"].paths["dp"])
    np.testing.assert_array_equal(back.hops_vs_n("gaussian", 8, "equal", "fna", p.sizes),
                                  q.hops_vs_n("gaussian", 8, "equal", "fna", p.sizes))


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


def test_auto_takes_matrix_free_and_printed_claim_still_fails(small, available_memory):
    # dm_n = 100: dense estimate 16.6 MiB, matrix-free 8.3 MiB
    _, q = small
    available_memory(12 * MIB)
    free = CHECK.choose(CHECK.params(**SMALL, claim="printed"))
    assert free.method == "matrix-free"
    res = CHECK.assess(dataclasses.replace(q, diffusion_maps=check._diffusion_maps(free)), free)
    assert res.parameters["method"] == "matrix-free" and not res.passed
    failed = failed_records(res)
    assert failed and all("_equal_" in name for name in failed)
    assert res.record("dm_spread_ratio_d8").passed and res.record("dm_ratio_vs_eta_log_d8").passed


def test_auto_takes_dense_when_it_fits(available_memory):
    available_memory(64 * MIB)
    assert CHECK.choose(CHECK.params(dm_n=500)).method == "dense"


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
    assert CHECK.choose(CHECK.params(dm_n=5000)).method == "matrix-free"


def test_matrix_free_refused_when_nothing_fits(available_memory):
    available_memory(4 * MIB)
    with pytest.raises(DenseMemoryError, match=r"matrix-free diffusion maps .* even --dm-n 32 does not fit now$"):
        check.run(method="matrix-free", **CHEAP)


def test_full_protocol_resolves_sizes_and_draws():
    p = CHECK.params(full=True)
    assert p.sizes == (32, 64, 128, 256, 512) and p.draws == 20


def test_datasets_from_the_command_line():
    from verify.core.cli import build_check_parser

    ns = build_check_parser(CHECK, prog="multiscale").parse_args(["--datasets", "gaussian,sequence"])
    assert CHECK.params(datasets=ns.datasets).datasets == ("gaussian", "sequence")
    assert CHECK.params().datasets == check.DATASETS


@pytest.mark.slow
def test_full_protocol_passes():
    res = check.run(full=True)
    assert res.passed, res.failures
    assert res.parameters["sizes"] == (32, 64, 128, 256, 512) and res.parameters["draws"] == 20


test_bad_input = refusals(check.run, [
    ({"alpha": 2.0}, "alpha"), ({"dims": (1,)}, "dims"), ({"sizes": (64,)}, "sizes"), ({"sizes": (128, 64)}, "sizes"),
    ({"draws": 1}, "draws"), ({"datasets": ("x",)}, "datasets"), ({"datasets": ()}, "datasets"),
    ({"alphas": (1.2,)}, "alphas"), ({"dm_eps": 0.0}, "dm_eps"), ({"claim": "ledger"}, "claim"),
    ({"dm_dims": (300,)}, "dm_dims"), ({"dm_n": 10}, "dm_n"), ({"dm_n": 60000}, "dm_n"),
    ({"method": "lanczos"}, "method"),
])


def test_a_nan_gap_fails(small, inject_nan):
    # graphs.spectral_gap NaN for FNA under equal kappa (n = 32, second token set): "NaN > gap LA" is false, which
    # lowered the fraction and passed the reversal's at_most
    p, q = small
    poisoned = inject_nan("graphs.spectral_gap", call=10, field="gap")
    graphs, _ = check._graphs(p)
    assert poisoned == [10]  # measure() runs this part first
    assert_fails(CHECK, q, p, "frac_gap_fna_gt_local_equal_gaussian_d8", only=True, graphs=graphs)


def test_a_nan_profile_value_fails(small, inject_nan):
    # fna_profile NaN at the second dimension, after a finite first one: Python's max kept the first
    p, q = small
    poisoned = inject_nan("spectral.fna_profile", call=1)
    error = check._identity_error(p.alpha, (8, 32))
    assert poisoned == [1]
    assert_fails(CHECK, q, p, "fna16_identity_error", only=True, fna16_identity_error=error)
