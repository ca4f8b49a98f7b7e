"""verify.fma_hmatrix (FMA-7, 9): far blocks of rank <= p; a dense matrix and the printed per-level claim fail.

The measurement runs once at small settings (n = 64, r = 8: three levels); the assertions are held to
those quantities, to the printed claim and to quantities a wrong matrix would give.
"""

import dataclasses

import numpy as np
import pytest

from verify import fma_hmatrix as check
from verify.testing import (assert_fails, assert_passes, assert_printed_agrees, assert_round_trip, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
small = measurement_fixture(CHECK, n=64)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.measured["far_blocks_tested"] > 0
    assert res.measured["max_far_block_rank_minus_p"] == 0  # rank p is attained, not just bounded
    assert {rank for (rank_p, rank) in q.block_ranks if rank_p == 4} == {4}
    # keys constant on blocks of r only: the joint variant is not exact at L = 3
    assert res.measured["joint_deviation_keys_constant_on_base_blocks_n64_r8"] > 0.05
    assert q.fig7_matrix.shape == (64, 64) and int(q.fig7_levels.max()) == 3


def test_dense_softmax_matrix_fails_the_rank_test():
    p, q = measured(CHECK, n=64, ranks=(1,), matrix="full")
    assert_fails(CHECK, q, p, {"max_far_block_rank_minus_p", "max_relative_reconstruction_error"})


def test_printed_per_level_is_not_exact(small):
    p, q = small
    res = assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), "per_level_deviation_group_constant_keys",
                       only=True)
    assert res.record("per_level_deviation_group_constant_keys").measured > 0.5


def test_printed_run_agrees_with_the_ledger(small):
    # FMA-9 is partly false as printed (group-constant keys are exact only with the joint softmax, not with the
    # per-level normalisation of eqs. 4 and 6), FMA-7 holds as printed: only FMA-9's printed part fails
    p, q = small
    res = assert_printed_agrees(CHECK, q, p, holding=("FMA-7",))
    assert "[paper: FMA-7 holds as printed; FMA-9 partly false as printed]" in res.final_line()


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"max_far_block_rank_minus_p": 1}, "max_far_block_rank_minus_p"),
    ({"max_relative_reconstruction_error": 1e-10}, "max_relative_reconstruction_error"),
    ({"n16_r8_max_deviation": 1e-6}, "n16_r8_max_deviation"),
    ({"n24_r8_joint_deviation": 1e-3}, "n24_r8_joint_deviation"),
    ({"joint_deviation_group_constant_keys": 1e-6}, "joint_deviation_group_constant_keys"),
    ({"per_level_deviation_group_constant_keys": 1e-3}, "per_level_deviation_group_constant_keys"),
    ({"max_relative_reconstruction_error": float("nan")}, "max_relative_reconstruction_error"),
    ({"n24_r8_joint_deviation": float("nan")}, "n24_r8_joint_deviation"),
])


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert back.block_ranks == q.block_ranks and np.array_equal(back.fig7_matrix, q.fig7_matrix)


test_bad_input = refusals(check.run, [
    ({"n": 32}, "n"), ({"r": 4}, "r"), ({"r": 64, "n": 256}, "r"), ({"ranks": (9,)}, "ranks"),
    ({"ranks": (0,)}, "ranks"), ({"d": 1}, "d"), ({"matrix": "dense"}, "matrix"), ({"claim": "paper"}, "claim"),
])


@pytest.mark.parametrize("call, part, failed", [
    (3, "far_blocks", {"max_relative_reconstruction_error"}),   # p = 2, joint (after finite errors)
    (1, "exactness", {"n16_r8_max_deviation"}),                # m = 16, joint
    (5, "exactness", {"n24_r8_joint_deviation"}),              # m = 32, joint: min(x, nan) kept x
    (11, "exactness", {"joint_deviation_group_constant_keys"}),  # (100, 5), not causal, joint
])
def test_a_nan_from_fma_attention_fails(small, inject_nan, call, part, failed):
    p, q = small
    poisoned = inject_nan("spectral.fma_attention", call=call, at=7)
    parts = {"far_blocks": lambda: check._far_blocks(p), "exactness": lambda: check._exactness(p.n, p.r, p.d, p.seed)}
    changes = parts[part]()  # measure() runs these parts in turn
    assert poisoned == [call]
    assert_fails(CHECK, q, p, failed, only=True, **changes)
