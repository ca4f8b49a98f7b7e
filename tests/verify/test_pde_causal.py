"""verify.pde_causal (PDE-15, PDE-17): the causal leak, re-masking, arithmetic, the causal stencil."""

import pytest

from spectral.validation import InputError
from verify import pde_causal as check


def test_default_passes(default_result):
    res = default_result("pde_causal")
    assert res.passed, res.failures
    assert res.measured["oracle_perplexity_leaky"] < 1.2 and res.measured["oracle_perplexity_remasked_value"] == \
        pytest.approx(64)
    assert res.measured["eq4_ppl_pde_at_10_percent"] == pytest.approx(-38.21, abs=0.01)


def test_printed_fails_on_each_statement():
    res = check.run(claim="printed", size=64)
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_future_mass", "printed_arithmetic_inconsistencies",
                      "printed_causal_stencil_max_amplification"}


def test_small_settings_pass():
    res = check.run(size=64, steps=(1, 3), vocab=16, stencil_steps=50)
    assert res.passed, res.failures


def test_causal_stencil_loop():
    import numpy as np

    x = np.random.default_rng(0).standard_normal(12)
    assert np.allclose(check._causal_stencil(x, 0.1, 3), check._causal_stencil_fast(x, 0.1, 3), rtol=0, atol=1e-14)


@pytest.mark.parametrize("kwargs, match", [({"alpha": 0.3}, "alpha"), ({"steps": (0,)}, "steps"),
                                           ({"vocab": 2}, "vocab"), ({"stencil_alphas": (0.0,)}, "stencil_alphas"),
                                           ({"size": 16}, "size")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
