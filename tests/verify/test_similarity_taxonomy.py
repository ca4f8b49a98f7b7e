"""verify.similarity_taxonomy (DRIFT-2): Table-1 compositions and the FCM centre-update discrepancy.

The measurement runs once at small settings; the assertions are held to those quantities, to the
printed FCM claim, to wrong compositions and to altered quantities.
"""

import dataclasses

import numpy as np
import pytest

from verify import similarity_taxonomy as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"n": 60, "fcm_m": (1.05, 2.0)}
small = measurement_fixture(CHECK, **SMALL)


def test_operators_small_example():
    m = np.array([[1.0, 3.0], [2.0, 2.0]])
    assert np.allclose(check.op_Nr(m).sum(axis=1), 1) and np.allclose(check.op_Nc(m).sum(axis=0), 1)
    assert check.op_Ng(m).sum() == pytest.approx(1.0)
    assert np.allclose(check.op_gamma(m, -1), -1 / m)
    assert np.allclose(check.op_N2(m), m / np.outer(m.sum(1), m.sum(1)))
    assert np.allclose(check.op_M(m, 3), m @ m @ m)


def test_compositions_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    gap = res.record("fcm_centre_gap_m2")
    assert gap.measured > 10 * gap.tolerance  # the printed update is not Bezdek's ...
    assert res.measured["fcm_centre_gap_m1.05"] < 0.01  # ... except in the k-means limit
    assert list(q.composition_error) == ["diffusion_map", "sne", "tsne_low_dim", "umap_union", "knn", "mcl",
                                         "fcm_memberships"]


@pytest.mark.parametrize("perturb, record", [
    ("dmap_without_N2", "diffusion_map_error"), ("tsne_gamma_-2", "tsne_low_dim_error"),
    ("umap_plain_sum", "umap_union_error"),
])
def test_wrong_compositions_fail(perturb, record):
    p, q = measured(CHECK, perturb=perturb, **SMALL)
    res = assert_fails(CHECK, q, p, record, only=True)
    assert record.removesuffix("_error") in res.failures[0]


def test_printed_fcm_update_fails(small):
    p, q = small
    res = assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), "fcm_centre_gap_m2", only=True)
    assert "Bezdek" in res.failures[0]


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("composition_error", "mcl"): 1e-10}, "mcl_error"),
    ({("composition_error", "knn"): float("nan")}, "knn_error"),
    ({("fcm_centre_gap", 2.0): 0.01}, "fcm_centre_gap_m2"),
    ({("fcm_centre_gap", 2.0): float("nan")}, "fcm_centre_gap_m2"),
    ({("fcm_to_kmeans", 1.05): 0.2}, "fcm_to_kmeans_m1.05"),
    ({("fcm_to_kmeans", 1.05): float("nan")}, "fcm_to_kmeans_m1.05"),
], only=True)


def test_another_smallest_m_keeps_the_calibrated_bound(small):
    p, q = small
    moved = dataclasses.replace(q, fcm_to_kmeans={1.1: q.fcm_to_kmeans[1.05], 2.0: q.fcm_to_kmeans[2.0]},
                                fcm_centre_gap={1.1: q.fcm_centre_gap[1.05], 2.0: q.fcm_centre_gap[2.0]})
    rec = assert_passes(CHECK, moved, dataclasses.replace(p, fcm_m=(1.1, 2.0))).record("fcm_to_kmeans_m1.1")
    assert rec.tolerance == 0.08 and "smallest m is 1.1" in rec.why


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)  # float keys of the FCM dictionaries typed again


test_bad_input = refusals(check.run, [({"fcm_m": (1.5, 3.0)}, "fcm_m"), ({"fcm_m": (1.05, 1.5)}, "fcm_m"),
                                      ({"fcm_m": (1.0, 2.0)}, "fcm_m"), ({"perturb": "q"}, "perturb"),
                                      ({"perturb": "fcm_equal"}, "perturb"), ({"claim": "x"}, "claim"),
                                      ({"n": 3}, "n must be")])


@pytest.mark.parametrize("call, failed", [
    # _fcm runs Bezdek's update then the printed one per m (1.05, 2): the printed centres at m = 1.05 (call 1)
    # entered Python's max after Bezdek's finite distance to k-means; at m = 2 (call 3) the matching refused them
    (1, "fcm_to_kmeans_m1.05"),
    (3, "fcm_centre_gap_m2"),
    # Bezdek's centres at m = 1.05: k-means refused to start from them (ValueError, a traceback)
    (0, "fcm_to_kmeans_m1.05"),
])
def test_a_nan_fcm_centre_fails(small, inject_nan, call, failed):
    p = small[0]
    poisoned = inject_nan("verify.similarity_taxonomy._fcm", call=call, at=2)
    q = CHECK.measure(p)
    assert poisoned == [call]
    assert np.isnan(assert_fails(CHECK, q, p, failed, only=True).measured[failed])
