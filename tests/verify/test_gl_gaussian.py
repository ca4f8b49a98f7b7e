"""verify.gl_gaussian (GL-6, GL-7, GL-8): Gaussian-kernel eigen-convergence on S^1, both schedules, one-sided.

Measured once at small sizes; the assertions are held to those quantities, to a steeper claim, to wrong
constructions (a wrong m_2, the wrong dimension in L_un, no density correction) and to altered quantities.
"""

import dataclasses

import numpy as np

import spectral.graph_laplacians as gl
from verify import gl_gaussian as check
from verify.testing import assert_passes, failed_records, measurement_fixture, refusals

CHECK = check.CHECK
SMALL = {"sizes": (128, 256, 512, 1024, 2048), "repeats": 8}
CHEAP = {"sizes": (128, 256, 512), "repeats": 2}  # for constructions off by factors
RATES = {f"{cid}_{kind}_rate" for cid in check.RUNS for kind in ("eigenvalue", "eigenvector")}


small = measurement_fixture(CHECK, **SMALL)


def test_small_sizes_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    for name in RATES:
        assert res.measured[name.replace("_rate", "_order")] < -0.3
    # the eigenvalue bound is attained: a bias of order eps alone, and the errors sit above it
    for run in (q.schedule_eigenvalue, q.schedule_both):
        assert np.all(np.mean(run.eigenvalue_rms(), axis=1) > run.bias_rms())


def test_a_steeper_claim_fails(small):
    p, q = small
    res = CHECK.assess(q, dataclasses.replace(p, claimed_order=-0.9))
    assert failed_records(res) == RATES


def test_wrong_m2_fails(monkeypatch):
    """m_2 = 1: L_rw = (I - D^-1 W) / (eps / 2) doubles every eigenvalue, the error plateaus near 1."""
    monkeypatch.setattr(gl, "gaussian_moments", lambda m: (1.0, 1.0))
    p = CHECK.params(**CHEAP)
    res = CHECK.assess(CHECK.measure(p), p)
    assert {"GL-6_eigenvalue_rate", "GL-7_eigenvalue_rate", "GL-8_eigenvalue_rate"} <= failed_records(res)


def test_wrong_dimension_in_the_unnormalised_laplacian_fails(monkeypatch):
    real = check._laplacian
    monkeypatch.setattr(check, "_laplacian", lambda x, **kw: real(x, **{**kw, "m": 2}))
    p = CHECK.params(normalization="unnormalized", **CHEAP)
    res = CHECK.assess(CHECK.measure(p), p)
    assert {"GL-6_eigenvalue_rate", "GL-7_eigenvalue_rate"} <= failed_records(res)


def test_without_the_density_correction_gl8_fails(monkeypatch):
    """GL-8 measured with the plain L_rw (the correction dropped): it converges to the weighted operator.

    Its eigenvalue error stalls; its eigenvector error still falls in this window (0.5 -> 0.4 at N = 128 ..
    2048, towards the nonzero distance between the weighted operator's eigenfunctions and cos, sin), so the
    eigenvalue rate and the comparison with the corrected Laplacian are what catch it.
    """
    real = check._laplacian

    def plain(x, **kw):
        if kw["normalization"] == "density_corrected":
            kw = {**kw, "normalization": "random_walk"}
        return real(x, **kw)

    monkeypatch.setattr(check, "_laplacian", plain)
    p = CHECK.params(sizes=(256, 512, 1024), repeats=2)
    res = CHECK.assess(CHECK.measure(p), p)
    assert {"GL-8_eigenvalue_rate", "GL-8_correction_helps"} <= failed_records(res)


def _with(q, name, **changes):
    return dataclasses.replace(q, **{name: dataclasses.replace(getattr(q, name), **changes)})


def test_each_assertion_fails_on_a_wrong_quantity(small):
    p, q = small
    lam = q.schedule_both.eigenvalues.copy()
    lam[0, 1, 3] = np.nan
    assert CHECK.assess(_with(q, "schedule_both", eigenvalues=lam), p).record("GL-7_eigenvalue_rate").passed is False
    vec = {k: np.broadcast_to(v[:1], v.shape).copy() for k, v in q.schedule_eigenvalue.eigenvector.items()}
    assert CHECK.assess(_with(q, "schedule_eigenvalue", eigenvector=vec), p).record(
        "GL-6_eigenvector_rate").passed is False  # a plateau
    good = _with(q, "uncorrected", eigenvalues=q.density_corrected.eigenvalues)  # no worse than the corrected one
    res = CHECK.assess(good, p)
    assert {"GL-8_uncorrected_eigenvalue_error", "GL-8_correction_helps"} <= failed_records(res)


test_bad_input = refusals(check.run, [({"sizes": (512, 256, 1024)}, "sizes"), ({"scale": 0.0}, "scale"),
                                           ({"normalization": "symmetric"}, "normalization"),
                                           ({"claimed_order": -4.0}, "claimed_order"), ({"path": "sparse"}, "path")])


def test_memory_is_refused_before_sampling(monkeypatch, capsys):
    from verify.core import memory

    monkeypatch.setattr(memory, "available_memory_bytes", lambda device=None: 100 << 20)
    assert check.main(["--sizes", "1000,2000,100000", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Gaussian kernel" in err and "--path streamed" in err and err.count("\n") == 1


def test_the_device_namespace_computes_the_kernels(strict_xp):
    """On a device the kernels live in the device's namespace (array_api_strict stands in for CuPy)."""
    for path in ("dense", "streamed"):
        p = CHECK.params(sizes=(96, 128, 160), repeats=2, path=path)
        want = CHECK.measure(p)
        got = CHECK.measure(p, xp=strict_xp)
        assert "asarray" in strict_xp.used
        for name in ("schedule_eigenvalue", "schedule_both", "density_corrected", "uncorrected"):
            np.testing.assert_allclose(getattr(got, name).eigenvalues, getattr(want, name).eigenvalues, rtol=1e-9,
                                       atol=1e-9)
