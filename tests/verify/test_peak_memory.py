"""Memory first: every check that can build an n x n (or n x n x d, or very long) array refuses an
oversized request before allocating it, with the estimate and options that exist in that command."""

import dataclasses
import re
import resource
import subprocess
import sys

import pytest

from spectral.floor.memory import DenseMemoryError
from verify.core import memory as peak_memory
from verify.core.claims import load_check

GIB = 1 << 30

#: (check, keyword arguments far beyond one GiB, the option the advice must name); checks with
#: --method ask for the dense path (``auto`` switches to the matrix-free one instead of refusing)
OVERSIZED = [
    ("density_normalisation", dict(n=6000, method="dense"), "--n"),
    ("metric_scaling", dict(n=100000, eps=1e-2), "--n"),
    ("euler_steps", dict(n=100000), "--n"),
    ("metric_attention", dict(triples=10**7, dim=64), "--triples"),
    ("levy", dict(n_samples=10**8), "--n-samples"),
    ("levy_jumps", dict(circle_n=6000, torus_n=2000, method="dense"), "--circle-n"),
    ("fractional_limit", dict(n=5_000_000), "--n"),
    ("drift_diffusion", dict(grid_n=200_000), "--grid-n"),
    ("neural_cost", dict(memory_n=2048, hidden=1, d_prime=(2, 64)), "--memory-n"),  # C alone: 4 GiB
    ("pde_cost", dict(sizes=(256, 512, 8192)), "--sizes"),
    ("clusters", dict(cluster_counts=(2, 10), points_per_cluster=500, method="dense"), "--points-per-cluster"),
    ("nearest_point", dict(candidates=5_000_000, dim=16), "--candidates"),
    ("fma_structure", dict(lengths=(8192,), cells=(16,)), "--lengths"),
    ("fma_counts", dict(max_exponent=22), "--max-exponent"),
    ("multiscale", dict(dm_n=5000, method="dense"), "--dm-n"),
    ("pde_convergence", dict(p=200, rank=150), "--rank"),
    ("sa_clustering", dict(n=4096, draws=64), "--n"),
    ("sa_hemisphere", dict(n=1024, draws=1024), "--draws"),
    ("sa_metastability", dict(draws=100000, phase_n=256), "--draws"),
    ("sa_high_dimension", dict(n=64, dims=(64, 128, 65536)), "--dims"),
]

#: checks whose largest request stays below 1 GiB: (check, largest request, option, MiB it is refused at)
OVERSIZED_BELOW_ONE_GIB = [
    ("similarity_taxonomy", dict(n=2000), "--n", 256),  # about 588 MiB
    ("neural_rank", dict(n=1024, hidden=(256,)), "--n", 128),  # about 184 MiB
]


@pytest.fixture
def one_gib(available_memory):
    available_memory(GIB)


@pytest.mark.parametrize("name, kwargs, option", OVERSIZED, ids=[c[0] for c in OVERSIZED])
def test_refused_before_allocating_with_real_options(one_gib, name, kwargs, option, command_options):
    _refused_and_the_advice_fits(name, kwargs, option, "1 GiB", command_options)


@pytest.mark.parametrize("name, kwargs, option, mib", OVERSIZED_BELOW_ONE_GIB,
                         ids=[c[0] for c in OVERSIZED_BELOW_ONE_GIB])
def test_a_largest_request_below_one_gib_is_refused_below_its_estimate(name, kwargs, option, mib, available_memory,
                                                                       command_options):
    available_memory(mib << 20)
    _refused_and_the_advice_fits(name, kwargs, option, f"{mib} MiB", command_options)


def _refused_and_the_advice_fits(name, kwargs, option, available, command_options):
    with pytest.raises(DenseMemoryError) as info:
        load_check(name).run(**kwargs)
    message = str(info.value)
    assert "needs an estimated" in message and f"over the memory available now: {available}" in message
    assert f"lower {option} (at most " in message
    named = set(re.findall(r"--[a-z][a-z0-9-]*", message))
    assert named and named <= command_options(name), named - command_options(name)
    # the advice is the boundary: its value's estimate fits (largest_that_fits, tested below) and one more
    # is refused again
    fits = int(re.search(rf"lower {option} \(at most (\d+) fits", message).group(1))
    key = option[2:].replace("-", "_")
    value = fits + 1 if not isinstance(kwargs[key], tuple) else kwargs[key][:-1] + (fits + 1,)
    bigger = dict(kwargs, **{key: value})
    with pytest.raises(DenseMemoryError):
        load_check(name).run(**bigger)


def test_a_grid_set_by_a_float_option_advises_the_float_that_fits(one_gib, command_options):
    # fna_rate's grid holds 2 pi h_ratio / scale_min points: 8.0e7 at --scale-min 5e-6 (about 2.4 GiB)
    with pytest.raises(DenseMemoryError) as info:
        load_check("fna_rate").run(scale_min=5e-6)
    message = str(info.value)
    assert "over the memory available now: 1 GiB" in message
    named = set(re.findall(r"--[a-z][a-z0-9-]*", message))
    assert named == {"--scale-min", "--h-ratio"} and named <= command_options("fna_rate")
    fits = float(re.search(r"raise --scale-min \(at least ([0-9.e+-]+) fits now\)", message).group(1))
    assert 5e-6 < fits < 1e-4
    with pytest.raises(DenseMemoryError):  # the advice is the boundary: 1 % finer is refused again
        load_check("fna_rate").run(scale_min=0.99 * fits)


def test_a_check_whose_largest_request_fits_in_one_gib_still_refuses_beyond_the_memory_available(available_memory):
    # heat_rate's largest request is about 1 GiB (1000 test points x 64000 samples): refused at 256 MiB
    available_memory(256 << 20)
    with pytest.raises(DenseMemoryError, match=r"lower --test-points \(at most 229 fits now\)$"):
        load_check("heat_rate").run(test_points=1000)


def test_when_even_the_smallest_value_does_not_fit_the_advice_names_another_option(one_gib):
    # the 512 x 512 x dim token differences alone exceed 1 GiB at dim = 256
    with pytest.raises(DenseMemoryError, match=r"even --triples 100 does not fit now: use a smaller --dim$"):
        load_check("metric_attention").run(triples=10**7, dim=256)


def test_largest_that_fits_and_circle_pairs():
    assert peak_memory.largest_that_fits(lambda v: v * v, 1, 1000, limit=1e4) == 100
    assert peak_memory.largest_that_fits(lambda v: v * v, 200, 1000, limit=1e4) is None
    # every pair of a circle within a chord of its diameter; a tenth of the circle's angle otherwise
    assert peak_memory.circle_pairs(100, 2.0) == 100 * 100
    assert peak_memory.circle_pairs(100, 2 * 0.30901699437494745) == pytest.approx(0.2 * 100 * 100 + 100)
    assert peak_memory.circle_pairs(100, 2 * 0.30901699437494745, concentration=1.5) == pytest.approx(3100)


def _limited(megabytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return apply


#: commands that would take tens to hundreds of GiB; under a 2 GiB address-space limit each must
#: stop at the estimate: exit 2, one line, no traceback (a MemoryError would print a traceback)
COMMANDS = [
    ["metric_scaling", "--n", "100000", "--eps", "1e-2"],
    ["euler_steps", "--n", "100000"],
    ["metric_attention", "--triples", "10000000", "--dim", "256"],
    ["levy", "--n-samples", "1e8"],
    ["drift_diffusion", "--grid-n", "200000"],
    ["neural_cost", "--memory-n", "2048", "--hidden", "1", "--d-prime", "2,64"],
    ["fma_counts", "--max-exponent", "22"],
]


#: one fresh interpreter under the limit runs every command of COMMANDS as ``python -m`` does (runpy, its
#: ``__main__`` block, ``sys.argv``) and reports each exit code and what it wrote on stderr; an exception that
#: escapes a command is reported with its traceback (the test then fails on it); what a command prints on
#: stdout is dropped
_RUN_COMMANDS = """
import contextlib, io, json, runpy, sys, traceback
out = []
for argv in json.loads(sys.argv[1]):
    err, table = io.StringIO(), io.StringIO()
    sys.argv = ["python -m verify." + argv[0], *argv[1:]]
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(table):
            runpy.run_module("verify." + argv[0], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        code, err = None, io.StringIO(traceback.format_exc())
    out.append({"argv": argv, "code": code, "stderr": err.getvalue()})
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def refusals_under_a_limit():
    """argv[0] -> (exit code, stderr) of each command of COMMANDS, all run in one interpreter under 2 GiB."""
    import json

    proc = subprocess.run([sys.executable, "-c", _RUN_COMMANDS, json.dumps(COMMANDS)], capture_output=True,
                          text=True, timeout=300, preexec_fn=_limited(2048))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {row["argv"][0]: (row["code"], row["stderr"]) for row in json.loads(proc.stdout)}


@pytest.mark.parametrize("argv", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_clean_refusal_under_an_address_space_limit(argv, refusals_under_a_limit):
    code, stderr = refusals_under_a_limit[argv[0]]
    assert code == 2, stderr[-2000:]
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[-2000:]
    assert lines[0].startswith(f"python -m verify.{argv[0]}: memory: ") and "needs an estimated" in lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("argv", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_clean_refusal_under_an_address_space_limit_in_its_own_interpreter(argv):
    proc = subprocess.run([sys.executable, "-m", f"verify.{argv[0]}", *argv[1:]], capture_output=True, text=True,
                          timeout=120, preexec_fn=_limited(2048))
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert lines[0].startswith(f"python -m verify.{argv[0]}: memory: ") and "needs an estimated" in lines[0]


def test_choose_path_auto_dense_matrix_free_and_the_advice(one_gib):
    dense = peak_memory.PathNeed(lambda v: v * GIB // 4, 8, "--n", 1, "dense at --n 8", "a smaller --dim")
    free = peak_memory.PathNeed(lambda v: v * (1 << 20), 8, "--n", 1, "matrix-free at --n 8")
    assert peak_memory.choose_path("auto", dense=dense, matrix_free=free) == "matrix-free"  # 2 GiB > 1 GiB
    assert peak_memory.choose_path("matrix-free", dense=dense, matrix_free=free) == "matrix-free"
    small = dataclasses.replace(dense, value=2)  # 512 MiB fits
    assert peak_memory.choose_path("auto", dense=small, matrix_free=free) == "dense"
    with pytest.raises(DenseMemoryError, match=r"^dense at --n 8 needs an estimated 2 GiB, .*; lower --n \(at most 4 "
                                               r"fits now\), or use --method matrix-free \(needs 8 MiB\), or a smaller "
                                               r"--dim$"):
        peak_memory.choose_path("dense", dense=dense, matrix_free=free)
    huge = dataclasses.replace(free, estimate=lambda v: 2 * GIB)  # no path fits: the dense advice has no --method
    with pytest.raises(DenseMemoryError, match=r"fits now\), or use a smaller --dim$"):
        peak_memory.choose_path("dense", dense=dense, matrix_free=huge)
    with pytest.raises(DenseMemoryError, match=r"^matrix-free at --n 8 .* even --n 1 does not fit now$"):
        peak_memory.choose_path("auto", dense=dense, matrix_free=huge)
