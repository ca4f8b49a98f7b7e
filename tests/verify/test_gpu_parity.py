"""GPU parity: every check declared for the GPU gives the host's verdict and numbers on a CUDA device.

Skipped (never failed) without CuPy and a CUDA device. The host draws every random number, so the
device runs see the same samples; only the order of floating-point reductions differs (float64 on
both sides), hence a relative tolerance of 1e-6 on every deciding record (informational records may
be ratios of round-off quantities, which are not reproducible). weyl has its own device tests.
That the same code runs on a namespace other than NumPy is proved here without a GPU: each check's
own test passes array_api_strict to ``CHECK.measure(p, xp=...)``.
"""

import pytest

from verify.core.claims import available_checks, load_check

GPU_CHECKS = sorted(name for name in available_checks()
                    if "gpu" in load_check(name).CHECK.devices and name != "weyl")


def test_the_gpu_checks_are_the_expected_ones():
    # a check that gains or loses the GPU must say so here (and in its own device test)
    assert GPU_CHECKS == ["clusters", "conformal", "density_normalisation", "drift_diffusion", "fna_rate",
                          "fractional_limit", "ga_conditions", "ga_moments", "gl_eps_knn", "gl_gaussian", "heat_rate",
                          "metric_attention", "ms_escape", "ms_growth", "ms_phase",
                          "nearest_point", "pde_causal", "pde_conservation", "pde_modes", "pde_smoothing", "sa_clustering", "sa_equiangular",
                          "sa_hemisphere", "sa_high_dimension", "sa_metastability", "sk_convergence", "sk_generator",
                          "sk_heat", "sk_rates", "sphere_softmax"]


HOST_ONLY = sorted(name for name in available_checks() if "gpu" not in load_check(name).CHECK.devices)


@pytest.mark.parametrize("name", HOST_ONLY)
def test_a_host_only_check_says_why(name):
    # the reason is shown in --help and in the refusal of --device gpu (before anything is computed)
    from spectral.floor.validation import InputError
    from verify.core.cli import build_check_parser

    check = load_check(name).CHECK
    assert len(check.host_only) >= 40, f"{name}: host_only must say what keeps it on the host"
    with pytest.raises(InputError) as info:
        check.params(device="gpu")
    assert f"{name} runs on the host only ({check.host_only}): device must be 'cpu', got 'gpu'" == str(info.value)
    # argparse re-wraps the help (and may break after a hyphen): compared without white space
    text = "".join(build_check_parser(check, prog=f"python -m verify.{name}").format_help().split())
    assert "".join(f"this check runs on the host only ({check.host_only})".split()) in text


def _assert_deciding_records_agree(ref, res):
    """The device run ``res`` has the host run's verdict, and each deciding record its measured value (rel 1e-6;
    informational records may be ratios of round-off quantities, clusters' gaps at 8 sigma)."""
    assert res.verdict == ref.verdict, res.failures
    for rec in (r for r in ref.records if r.deciding):
        got = res.record(rec.name).measured
        if isinstance(rec.measured, (bool, str)) or rec.measured is None:
            assert got == rec.measured, rec.name
        else:
            assert got == pytest.approx(rec.measured, rel=1e-6, abs=1e-12), rec.name


@pytest.mark.gpu
@pytest.mark.parametrize("name", GPU_CHECKS)
def test_gpu_matches_cpu(name, default_result):
    ref = default_result(name)
    res = load_check(name).run(device="gpu")
    _assert_deciding_records_agree(ref, res)
    assert [r.name for r in res.records] == [r.name for r in ref.records]


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
    assert res.parameters["method"] == "matrix-free"
    _assert_deciding_records_agree(ref, res)


def test_the_readme_names_the_gpu_checks():
    # README.md, "GPU and clusters": the checks that compute on a GPU, named in its first paragraph
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    paragraph = text.split("## GPU and clusters", 1)[1].split("\n\n", 2)[1]
    named = set(re.findall(r"`([a-z_0-9]+)`", paragraph))
    assert named == set(GPU_CHECKS) | {"weyl"}
