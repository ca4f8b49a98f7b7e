"""GPU parity: every check declared for the GPU gives the host's verdict and numbers on a CUDA device.

Skipped (never failed) without CuPy and a CUDA device. The host draws every random number, so the
device runs see the same samples; only the order of floating-point reductions differs (float64 on
both sides), hence a relative tolerance of 1e-6 on every record. weyl has its own device tests.
That the same code runs on a namespace other than NumPy is proved here without a GPU: each check's
own test stands array_api_strict in for ``verify.core.check.device_namespace``.
"""

import pytest

from verify.core.claims import available_checks, load_check

GPU_CHECKS = sorted(name for name in available_checks()
                    if "gpu" in load_check(name).CHECK.devices and name != "weyl")


def test_the_gpu_checks_are_the_expected_ones():
    # a check that gains or loses the GPU must say so here (and in its own device test)
    assert GPU_CHECKS == ["clusters", "conformal", "density_normalisation", "drift_diffusion", "fna_rate",
                          "fractional_limit", "gl_eps_knn", "gl_gaussian", "heat_rate", "metric_attention",
                          "nearest_point", "sphere_softmax"]


@pytest.mark.gpu
@pytest.mark.parametrize("name", GPU_CHECKS)
def test_gpu_matches_cpu(name, default_result):
    ref = default_result(name)
    res = load_check(name).run(device="gpu")
    assert res.verdict == ref.verdict, res.failures
    for rec in ref.records:
        got = res.record(rec.name).measured
        if isinstance(rec.measured, (bool, str)) or rec.measured is None:
            assert got == rec.measured, rec.name
        else:
            assert got == pytest.approx(rec.measured, rel=1e-6, abs=1e-12), rec.name


#: the matrix-free paths of the GPU checks that have one, at small settings (host and device compared)
MATRIX_FREE = [
    ("density_normalisation", dict(n=600, alphas=(1.2,), densities=("cosine",))),
    ("clusters", dict(cluster_counts=(2, 3), draws=1, points_per_cluster=30, separations=(8.0,))),
]


@pytest.mark.gpu
@pytest.mark.parametrize("name, kwargs", MATRIX_FREE, ids=[m[0] for m in MATRIX_FREE])
def test_gpu_matrix_free_matches_cpu(name, kwargs):
    check = load_check(name)
    ref = check.run(method="matrix-free", **kwargs)
    res = check.run(method="matrix-free", device="gpu", **kwargs)
    assert res.verdict == ref.verdict and res.parameters["method"] == "matrix-free", res.failures
    # the deciding records; informational ones include ratios of round-off (clusters' gaps at 8 sigma)
    for rec in (r for r in ref.records if r.deciding):
        got = res.record(rec.name).measured
        if isinstance(rec.measured, (bool, str)) or rec.measured is None:
            assert got == rec.measured, rec.name
        else:
            assert got == pytest.approx(rec.measured, rel=1e-6, abs=1e-12), rec.name
