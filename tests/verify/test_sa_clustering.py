"""verify.sa_clustering (SA-1): one cluster from uniform starts for d >= 3, energy non-decreasing, antipodes fixed.

Measured once at small settings; the assertions are held to altered quantities and to wrong dynamics:
a negative value matrix V = -I (tokens repel: no cluster forms) and a flow without the projection
(tokens leave the sphere). A negative beta is not a wrong dynamics here: the weights stay positive and
the tokens still move toward a weighted average, so they still cluster.
"""

import numpy as np
import spectral
from verify import sa_clustering as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, assert_same_records,
                            failed_records, measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(n=8, dims=(3,), betas=(0.0, 1.0), draws=3, t_max=64.0)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    assert_passes(CHECK, q, p)
    assert all(c.shape == (q.times.size, 3) for c in q.counts.values())
    assert all(np.all(c[0] == 8) for c in q.counts.values())  # uniform starts: every token its own cluster


def test_repelling_tokens_do_not_cluster(monkeypatch):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow",
                        lambda X0, **kw: real(X0, **{**kw, "value": -np.eye(X0.shape[-1])}))
    p, q = measured(CHECK, **{**SMALL, "betas": (1.0,), "t_max": 16.0})
    res = assert_fails(CHECK, q, p, {"draws_not_in_one_cluster", "largest_final_diameter"})
    assert "norm_error" not in failed_records(res)


def test_no_projection_leaves_the_sphere(monkeypatch):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow",
                        lambda X0, **kw: real(X0, **{**kw, "geometry": "euclidean"}))
    p, q = measured(CHECK, **{**SMALL, "betas": (0.0,), "t_max": 16.0})
    assert_fails(CHECK, q, p, "norm_error")


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    (lambda q: {"counts": {**q.counts, (3, 1.0, "softmax"): np.full((q.times.size, 3), 2)}},
     "draws_not_in_one_cluster"),
    (lambda q: {"final_diameter": {**q.final_diameter, (3, 0.0, "uniform"): np.array([0, 0, 0.1])}},
     "largest_final_diameter"),
    ({("energy_decrease", (3, 1.0, "uniform")): 1e-6}, "energy_relative_decrease"),
    ({"norm_error": 1e-9}, "norm_error"),
    ({"antipodal_speed": 1e-3}, "antipodal_speed"),
], only=True)


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, ("energy_decrease", (3, 0.0, "softmax")), "energy_relative_decrease")


def test_json_round_trip_and_full_tier(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.counts) == set(q.counts) and all(isinstance(k[0], int) for k in back.counts)
    full = CHECK.params(full=True)
    assert (full.n, full.dims) == (1024, (3, 16, 64))


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"dims": (1,)}, "dims"), ({"n": 1}, "n"), ({"tol": 0.0}, "tol"), ({"betas": (9.0,)}, "betas"),
    ({"betas": (-1.0,)}, "betas"),
])


def test_cli_exit_codes(capsys):
    assert check.main(["--n", "6", "--dims", "3", "--betas", "0", "--draws", "2", "--t-max", "32", "--quiet"]) == 0
    assert check.main(["--n", "6", "--dims", "3", "--betas", "0", "--draws", "2", "--t-max", "1", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--n", "1", "--quiet"]) == 2


def test_computes_in_the_given_namespace(strict_xp):
    """Declared for the GPU: the flows run in the namespace given (array_api_strict wraps NumPy: the same records)."""
    p, q = measured(CHECK, n=5, dims=(3,), betas=(1.0,), draws=2, t_max=32.0)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert "asarray" in strict_xp.used
    assert_same_records(CHECK.assess(q, p), got)
