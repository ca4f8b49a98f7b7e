"""verify.sphere_softmax (DRIFT-1): the corrected Example-1 identity holds, the printed one fails.

The measurement runs once at small settings; the assertions are held to those quantities, to the
printed width and unequal key norms (measured again: the width enters the measurement) and to
altered quantities.
"""

import pytest

from verify import sphere_softmax as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"n": 64, "dims": (3, 8)}
small = measurement_fixture(CHECK, **SMALL)


def test_corrected_identity_passes(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    for name in ("max_error_sphere", "max_error_ellipsoid"):
        assert res.record(name).measured <= res.record(name).tolerance
    # taus + sqrt(d) for each d
    assert set(q.case_errors) == {(d, t) for d in (3, 8) for t in (0.1, 1.0, d**0.5)}


@pytest.mark.parametrize("kwargs", [{"claim": "printed"},       # -x.y = -2 + |x-y|^2: width tau, not 2 tau
                                    {"key_norms": "unequal"}])  # hypothesis of the identity violated
def test_printed_identity_and_unequal_norms_fail(kwargs):
    p, q = measured(CHECK, **SMALL, **kwargs)
    res = assert_fails(CHECK, q, p, {"max_error_sphere", "max_error_ellipsoid"})
    for name in ("max_error_sphere", "max_error_ellipsoid"):
        rec = res.record(name)
        assert rec.measured > 1e10 * rec.tolerance  # O(1), not round-off
    assert any(f.startswith("sphere:") for f in res.failures)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"max_error_sphere": 1e-9}, "max_error_sphere"),
    ({"max_error_ellipsoid": 1e-9}, "max_error_ellipsoid"),
    ({"max_error_sphere": float("nan")}, "max_error_sphere"),
    ({"max_error_ellipsoid": float("nan")}, "max_error_ellipsoid"),
], only=True)


def test_computes_in_the_given_namespace(small, strict_xp):
    p, q = small
    got = CHECK.measure(p, xp=strict_xp)
    assert {"asarray", "exp", "sum", "max"} <= strict_xp.used
    assert got == q  # array_api_strict wraps numpy: the same numbers


def test_json_round_trip(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p)
    assert back.quantities == q  # (d, tau) keys and (sphere, ellipsoid) pairs typed again


test_bad_input = refusals(check.run, [
    ({"taus": (0.0,)}, "taus"), ({"dims": (1,)}, "dims"), ({"dims": ()}, "dims"), ({"claim": "paper"}, "claim"),
    ({"key_norms": "x"}, "key_norms"), ({"n": 1}, "n must"),
])


def test_memory_stays_near_n_squared():
    # direct differences as one n x n x d array took 2 x 151 MB here (2 GB at n = 2048, d = 64); the
    # coordinate-wise squared distances and the row blocks keep every temporary at n x n doubles or less
    # (measured peak 28 MB)
    import tracemalloc

    p = CHECK.params(n=384, dims=(128,), taus=(1.0,))  # resolved before the measurement is traced
    tracemalloc.start()
    try:
        q = CHECK.measure(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert CHECK.assess(q, p).passed
    assert peak < 120e6, peak


@pytest.mark.parametrize("call", [0, 3])  # the first comparison, and one after finite errors were kept
def test_a_nan_distance_fails(inject_nan, call):
    # one NaN squared distance (the toolkit's manifolds.pairwise_sq_distance) gives a NaN error in that row
    # block: the worst error must keep it (Python's max(0.0, nan) is 0.0) and fail the sphere record
    poisoned = inject_nan("manifolds.pairwise_sq_distance", call=call)
    p, q = measured(CHECK, n=16, dims=(3,))
    assert poisoned == [call]
    assert_fails(CHECK, q, p, "max_error_sphere" if call % 2 == 0 else "max_error_ellipsoid", only=True)
