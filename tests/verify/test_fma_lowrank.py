"""verify.fma_lowrank (FMA-11): the premise holds for smooth tokens only; the printed premise fails."""

import pytest

from spectral.validation import InputError
from verify import fma_lowrank as check


def test_default_passes(default_result):
    res = default_result("fma_lowrank")
    assert res.passed, res.failures
    m = res.measured
    assert m["eps_rank_iid_s128_eps1e-06"] == 128
    assert m["eps_rank_smooth_s128_eps1e-06"] <= res.record("smooth_eps_rank_1e-6_largest_block").tolerance
    assert m["tv_block_svd_smooth_p4"] < m["tv_uniform_smooth_p4"] < m["tv_uniform_smooth_p1"]
    assert m["tv_uniform_iid_p4"] > m["tv_uniform_mix_p4"] > m["tv_uniform_smooth_p4"]


def test_printed_premise_fails_on_iid_tokens():
    res = check.run(claim="printed")
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"iid_eps_rank_1e-3_over_block_size", "iid_block_svd_error_p4"}


def test_rough_smooth_tokens_are_not_compressible():
    # wavelengths down to n / 64 tokens: separated blocks of 128 are no longer low rank
    res = check.run(max_frequency=64.0)
    assert not res.passed
    assert res.record("smooth_eps_rank_1e-6_largest_block").passed is False


@pytest.mark.parametrize("kwargs, match", [
    ({"n": 100}, "n"), ({"d": 4}, "d"), ({"r": 2}, "r"), ({"ranks": (0,)}, "ranks"), ({"ranks": (32,)}, "ranks"),
    ({"block_sizes": (2,)}, "block_sizes"), ({"block_sizes": (512,)}, "block_sizes"), ({"noise": -1.0}, "noise"),
    ({"max_frequency": 0.1}, "max_frequency"), ({"claim": "paper"}, "claim"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
