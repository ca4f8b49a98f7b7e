"""Tolerances hold on both x86-64 classes: the deciding checks, run again in a process that computes as an AVX2 machine.

A tolerance calibrated on an AVX-512 machine can fail on an AVX2-only one (sa_equiangular's gram_error did:
1.8e-8 against a 1e-8 calibrated at 7e-10), because NumPy and OpenBLAS pick other kernels there and round
differently. Here a child process gets :func:`verify.core.cpu.avx2_environment` (NumPy's AVX-512 dispatch
groups disabled, named from the running NumPy; OpenBLAS told a Haswell core) and runs the checks whose
deciding records were found to depend on the class; it must report the AVX2 class and a different rounding
fingerprint (so the limitation took effect), and every check must pass. On a machine without AVX-512 the
environment changes nothing: the child still runs the same checks on the machine's own class.

Default tier: the small settings of the class-sensitive checks (a few seconds, most of it the child's
imports). Slow tier: ``python -m verify --all`` (every check at its defaults) in the limited child.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verify.core.cpu import AVX2, AVX512, avx2_environment, cpu_class, rounding_fingerprint

ROOT = Path(__file__).resolve().parents[2]

#: check -> a small setting of the records found to depend on the CPU class (their tests' own small settings)
SMALL = {
    # gram_error: 1.8e-8 on AVX2 against 1.6e-9 on AVX-512 with the reference read off DOP853's dense output
    "sa_equiangular": dict(betas=(0.0, 4.0), sizes=(4,), t_max=2.0, rtol=1e-10, gram_n=4),
}

CHILD = r"""
import json, sys
from verify.core.claims import load_check
from verify.core.cpu import cpu_class, rounding_fingerprint
from verify.core.progress import silenced

out = {"cpu": cpu_class(), "fingerprint": rounding_fingerprint(), "results": {}}
with silenced(True):
    for name, params in json.loads(sys.argv[1]).items():
        res = load_check(name).run(**params)
        out["results"][name] = {"passed": res.passed, "failures": list(res.failures), "line": res.final_line()}
print(json.dumps(out))
"""


def _limited(argv, *, timeout):
    """Run ``python argv`` from the repository root as an AVX2 machine (one BLAS thread; NumPy refuses a wrong
    feature name under ``-W error::ImportWarning``, so the names must be the running NumPy's)."""
    env = {**os.environ, **avx2_environment(), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-W", "error::ImportWarning", *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _assert_limited(child_cpu, child_fingerprint):
    """The child computed as an AVX2 machine where this one has AVX-512, else on this machine's own class."""
    env = avx2_environment()
    if not env:  # another architecture, or x86-64 without AVX2: nothing to limit, the same checks on this class
        assert child_cpu == cpu_class()
    elif cpu_class() == AVX512 and env.get("NPY_DISABLE_CPU_FEATURES"):
        assert child_cpu == AVX2, f"the limited child still computes as {child_cpu} (environment {env})"
        assert child_fingerprint != rounding_fingerprint(), "the limited child rounds as this process does"
    else:  # an AVX2 machine (or a NumPy without AVX-512 kernels): the child computes as AVX2 at most
        assert child_cpu != AVX512, f"the limited child computes as {child_cpu} (environment {env})"


def test_the_class_sensitive_checks_pass_when_this_machine_computes_as_an_avx2_one():
    proc = _limited(["-c", CHILD, json.dumps(SMALL)], timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    _assert_limited(out["cpu"], out["fingerprint"])
    assert set(out["results"]) == set(SMALL)
    failed = {name: r["failures"] for name, r in out["results"].items() if not r["passed"]}
    assert not failed, f"on {out['cpu']}: {failed}"


def test_the_environment_names_only_what_this_numpy_dispatches():
    """The feature names come from the running NumPy: a name outside its dispatch targets would stop the import."""
    from verify.core.cpu import avx512_groups

    env = avx2_environment()
    groups = env.get("NPY_DISABLE_CPU_FEATURES", "").split()
    assert groups == list(avx512_groups())
    assert all(g == "X86_V4" or g.startswith("AVX512") for g in groups)
    if env:
        assert env["OPENBLAS_CORETYPE"] == "Haswell"


@pytest.mark.slow
def test_every_check_passes_at_its_defaults_when_this_machine_computes_as_an_avx2_one(tmp_path):
    """``python -m verify --all`` in the limited child (about a minute on 2 cores, more on a loaded machine)."""
    out = tmp_path / "all.json"
    proc = _limited(["-m", "verify", "--all", "--quiet", "--json", str(out)], timeout=1800)
    data = json.loads(out.read_text())
    results = data["results"]
    cpus = {r["versions"]["cpu"] for r in results}
    assert len(cpus) == 1
    probe = _limited(["-c", "from verify.core.cpu import rounding_fingerprint as f; print(f())"], timeout=120)
    _assert_limited(cpus.pop(), probe.stdout.strip())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
