"""verify.fma_lowrank (FMA-11): the low-rank premise holds for smooth tokens only; the printed premise fails.

The measurement runs once at small settings (n = 256, d = 32, smooth tokens of at most 2 cycles); the
assertions are held to those quantities, to the printed claim and to altered quantities.
"""

import dataclasses

from verify import fma_lowrank as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"n": 256, "d": 32, "block_sizes": (16, 32, 64), "max_frequency": 2.0}
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    m = res.measured
    assert m["eps_rank_iid_s64_eps1e-06"] == 64
    assert m["eps_rank_smooth_s64_eps1e-06"] <= res.record("smooth_eps_rank_1e-6_largest_block").tolerance
    assert m["tv_block_svd_smooth_p4"] < m["tv_uniform_smooth_p4"] < m["tv_uniform_smooth_p1"]
    assert m["tv_uniform_iid_p4"] > m["tv_uniform_mix_p4"] > m["tv_uniform_smooth_p4"]


def test_printed_premise_fails_on_iid_tokens(small):
    p, q = small
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"),
                 {"iid_eps_rank_1e-3_over_block_size", "iid_block_svd_error_p4"}, only=True)


def test_rough_smooth_tokens_are_not_compressible():
    # wavelengths down to n / 64 tokens: separated blocks of 64 are no longer low rank
    p, q = measured(CHECK, **{**SMALL, "max_frequency": 64.0})
    assert_fails(CHECK, q, p, "smooth_eps_rank_1e-6_largest_block")


def test_records_follow_the_ranks_outside_the_calibrated_range(small):
    # the ratio tolerances were calibrated for p = 4 against p = 1: other ranks are named and noted as outside
    p, q = small
    res = CHECK.assess(q, dataclasses.replace(p, ranks=(1, 2)))
    names = {r.name for r in res.records}
    assert {"smooth_block_svd_error_ratio_p2_over_p1", "smooth_uniform_error_ratio_p2_over_p1",
            "iid_block_svd_error_p2"} <= names
    assert any("outside the calibrated range" in note for note in res.notes)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("eps_rank", ("smooth", 64, 1e-6)): 9}, "smooth_eps_rank_1e-6_largest_block"),
    ({("eps_rank", ("iid", 32, 1e-3)): 16}, "iid_eps_rank_1e-3_over_block_size"),
    (lambda q: {"tv_block_svd": {**q.tv_block_svd, ("smooth", 4): q.tv_block_svd[("smooth", 1)] / 2}},
     "smooth_block_svd_error_ratio_p4_over_p1"),
    (lambda q: {"tv_uniform": {**q.tv_uniform, ("smooth", 4): q.tv_uniform[("smooth", 1)]}},
     "smooth_uniform_error_ratio_p4_over_p1"),
    ({("tv_block_svd", ("iid", 4)): 0.1}, "iid_block_svd_error_p4"),
    ({("tv_block_svd", ("iid", 4)): float("nan")}, "iid_block_svd_error_p4"),
])


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert back.eps_rank == q.eps_rank and back.tv_block_svd == q.tv_block_svd


def test_ranks_and_block_sizes_are_sorted_without_repeats():
    p = CHECK.params(ranks=(4, 1, 4), block_sizes=(64, 16, 16))
    assert p.ranks == (1, 4) and p.block_sizes == (16, 64)


test_bad_input = refusals(check.run, [
    ({"n": 100}, "n"), ({"d": 4}, "d"), ({"r": 2}, "r"), ({"r": 200}, "r"), ({"ranks": (0,)}, "ranks"),
    ({"ranks": (32,)}, "ranks"), ({"block_sizes": (2,)}, "block_sizes"), ({"block_sizes": (512,)}, "block_sizes"),
    ({"noise": -1.0}, "noise"), ({"max_frequency": 0.1}, "max_frequency"), ({"claim": "paper"}, "claim"),
])


def test_a_nan_iid_rank_fails(small):
    # min(..., nan) drops a NaN that comes after a finite ratio: the i.i.d. rank record passed with it
    p, q = small
    ranks = dict(q.eps_rank)
    ranks[("iid", 64, 1e-3)] = float("nan")
    assert_fails(CHECK, q, p, "iid_eps_rank_1e-3_over_block_size", eps_rank=ranks)
