"""verify.similarity_taxonomy (DRIFT-2): Table-1 compositions and the FCM centre-update discrepancy."""

import numpy as np
import pytest

from spectral.validation import InputError
from verify import similarity_taxonomy as check


def test_compositions_pass(default_result):
    res = default_result("similarity_taxonomy")
    assert res.passed, res.failures
    gap = res.record("fcm_centre_gap_m2")
    assert gap.measured > 10 * gap.tolerance  # the printed update is not Bezdek's ...
    assert res.measured["fcm_centre_gap_m1.05"] < 0.01  # ... except in the k-means limit


@pytest.mark.parametrize("perturb, record", [
    ("dmap_without_N2", "diffusion_map_error"), ("tsne_gamma_-2", "tsne_low_dim_error"),
    ("umap_plain_sum", "umap_union_error"),
])
def test_wrong_compositions_fail(perturb, record):
    res = check.run(n=60, perturb=perturb, fcm_m=(1.05, 2.0))
    assert [r.name for r in res.records if r.passed is False] == [record]
    assert record.removesuffix("_error") in res.failures[0]


def test_printed_fcm_update_fails():
    res = check.run(n=60, claim="printed", fcm_m=(1.05, 2.0))
    assert [r.name for r in res.records if r.passed is False] == ["fcm_centre_gap_m2"]
    assert "Bezdek" in res.failures[0]


def test_operators_small_example():
    m = np.array([[1.0, 3.0], [2.0, 2.0]])
    assert np.allclose(check.op_Nr(m).sum(axis=1), 1) and np.allclose(check.op_Nc(m).sum(axis=0), 1)
    assert check.op_Ng(m).sum() == pytest.approx(1.0)
    assert np.allclose(check.op_gamma(m, -1), -1 / m)
    assert np.allclose(check.op_N2(m), m / np.outer(m.sum(1), m.sum(1)))
    assert np.allclose(check.op_M(m, 3), m @ m @ m)


@pytest.mark.parametrize("kwargs, match", [({"fcm_m": (1.5, 3.0)}, "fcm_m"), ({"fcm_m": (1.05, 1.5)}, "fcm_m"),
                                           ({"fcm_m": (1.0, 2.0)}, "fcm_m"), ({"perturb": "q"}, "perturb"),
                                           ({"perturb": "fcm_equal"}, "perturb"), ({"claim": "x"}, "claim"),
                                           ({"n": 3}, "n must be")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
