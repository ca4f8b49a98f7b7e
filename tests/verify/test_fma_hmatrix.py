"""verify.fma_hmatrix (FMA-7, 9): default passes; a dense matrix and the printed per-level claim fail."""

import pytest

from spectral.validation import InputError
from verify import fma_hmatrix as check


def test_default_passes(default_result):
    res = default_result("fma_hmatrix")
    assert res.passed, res.failures
    assert res.measured["far_blocks_tested"] > 0
    assert res.measured["max_far_block_rank_minus_p"] == 0  # rank p is attained, not just bounded
    # keys constant on blocks of r only: the joint variant is not exact at L = 3
    assert res.measured["joint_deviation_keys_constant_on_base_blocks_n64_r8"] > 0.05


def test_dense_softmax_matrix_fails_the_rank_test():
    res = check.run(n=128, ranks=(1,), matrix="full")
    failed = {r.name for r in res.records if r.passed is False}
    assert {"max_far_block_rank_minus_p", "max_relative_reconstruction_error"} <= failed


def test_printed_per_level_is_not_exact():
    res = check.run(n=128, ranks=(2,), claim="printed")
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"per_level_deviation_group_constant_keys"}
    assert res.record("per_level_deviation_group_constant_keys").measured > 0.5


@pytest.mark.parametrize("kwargs, match", [
    ({"n": 32}, "n"), ({"r": 4}, "r"), ({"r": 64, "n": 256}, "r"), ({"ranks": (9,)}, "ranks"),
    ({"ranks": (0,)}, "ranks"), ({"d": 1}, "d"), ({"matrix": "dense"}, "matrix"),
    ({"claim": "paper"}, "claim"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
