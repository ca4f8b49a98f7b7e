"""verify.sweep: grid expansion, independent child seeds, typed records in the output, serial/Dask parity.

Default tier: Dask's local "synchronous" and "threads" schedulers, and a real dask.distributed scheduler
reached by its tcp address with one in-process worker (the Client, futures and run-log path), all on a
toy check; the command line on pde_modes (deterministic, 0.02 s a run). Slow tier: a LocalCluster of two
worker processes running real checks (metric_attention, appendix_c) pickled to other interpreters.
"""

import dataclasses
import functools
import json

import pytest

from spectral.floor.validation import ConvergenceError, InputError, child_rng
from verify import sweep as sw
from verify.core.check import Check
from verify.core.params import Flag, Int, Real

TOY = Check("toy", claims=("FNA-10",))


@TOY.parameters
class ToyParams:
    alpha: float = Real(1.2, "Asserted to be at most 1.5", low=0)
    n: int = Int(8, "Unused size", low=1)
    stall: bool = Flag(False, "Raise ConvergenceError (a point whose numerics did not converge)")
    noise: bool = Flag(True, "Record a random draw (False: the check does not use its seed)")


@dataclasses.dataclass(frozen=True)
class ToyQuantities:
    alpha: float
    draw: float | None


@TOY.measurement
def toy_measure(p: ToyParams, ctx) -> ToyQuantities:
    if p.stall:
        raise ConvergenceError("toy iteration stalled; raise the iteration limit")
    draw = float(child_rng(p.seed, "draw").standard_normal()) if p.noise else None
    return ToyQuantities(p.alpha, draw)


@TOY.assertions
def toy_assess(q: ToyQuantities, p: ToyParams, rec) -> str:
    if q.draw is not None:
        rec.info("draw", q.draw)
    rec.at_most("alpha", q.alpha, 1.5, why="toy bound", label="alpha too large")
    return "toy"


toy_run = TOY.run


def test_points_product_and_spawned_seeds():
    points = sw.sweep_points({"alpha": [1.0, 1.2], "n": [8, 16, 32]}, repeats=2, seed=5)
    assert len(points) == 12
    assert [p.params["alpha"] for p in points[:6]] == [1.0] * 6 and points[0].params["n"] == points[1].params["n"]
    seeds = [p.params["seed"] for p in points]
    assert len(set(seeds)) == 12  # every run its own stream
    again = sw.sweep_points({"alpha": [1.0, 1.2], "n": [8, 16, 32]}, repeats=2, seed=5)
    assert seeds == [p.params["seed"] for p in again]  # reproducible
    assert seeds != [p.params["seed"] for p in sw.sweep_points({"alpha": [1.0, 1.2], "n": [8, 16, 32]}, repeats=2)]
    assert [p.params["seed"] for p in sw.sweep_points({"seed": [1, 2]})] == [1, 2]  # swept seeds used as given


@pytest.mark.parametrize("grid, kwargs, match", [
    ({"alpha": []}, {}, "grid"), ({"alpha": "12"}, {}, "grid"), ({"alpha": [1]}, {"repeats": 0}, "repeats"),
    ({"alpha": [1]}, {"seed": -1}, "seed"), ({"seed": [1, 2]}, {"repeats": 2}, "repeats must be 1"),
])
def test_bad_grid(grid, kwargs, match):
    with pytest.raises(InputError, match=match):
        sw.sweep_points(grid, **kwargs)


def test_unknown_grid_name_lists_the_valid_parameters():
    with pytest.raises(InputError, match="'beta'; valid parameters: alpha, n, stall, noise, seed, device"):
        sw.sweep(toy_run, {"beta": [1.0]})
    with pytest.raises(InputError, match="scheduler"):
        sw.sweep(toy_run, {"alpha": [1.0]}, scheduler="thread")


def test_serial_results_read_typed_records():
    res = sw.sweep(toy_run, {"alpha": [1.0, 1.6]}, repeats=2, seed=3)
    assert [p.verdict for p in res.points] == ["PASS", "PASS", "FAIL", "FAIL"]
    assert res.counts == {"PASS": 2, "FAIL": 2, "ERROR": 0} and not res.passed
    assert res.points[2].failures == ("alpha too large: alpha = 1.6, expected <= 1.5",)
    data = json.loads(res.to_json())
    assert data["root_seed"] == 3 and data["repeats"] == 2 and data["grid"] == {"alpha": [1.0, 1.6]}
    assert data["versions"]["command"] is not None and data["versions"]["attention-limits"]
    assert data["fixed_parameters"] == {"n": 8, "stall": False, "noise": True, "device": "cpu"}
    point = data["points"][2]
    assert point["parameters"] == {"alpha": 1.6, "seed": res.points[2].params["seed"]}
    assert point["verdict"] == "FAIL" and point["failures"]
    # deciding records only, read from the typed records (the informational draw is left out)
    assert point["records"] == [{"name": "alpha", "measured": 1.6, "expected": "<= 1.5", "passed": False}]


def test_a_point_that_does_not_converge_is_an_error_row():
    res = sw.sweep(toy_run, {"stall": [False, True]})
    assert [p.verdict for p in res.points] == ["PASS", "ERROR"]
    assert "did not converge" in res.points[1].error and res.points[1].result is None
    assert json.loads(res.to_json())["points"][1]["error"].startswith("did not converge")
    assert "1 did not converge" in res.final_line()


def test_dask_parity():
    pytest.importorskip("dask")
    grid = {"alpha": [1.0, 1.6], "n": [8, 16]}
    serial = sw.sweep(toy_run, grid, repeats=2, seed=3)
    for scheduler in ("synchronous", "threads"):
        parallel = sw.sweep(toy_run, grid, repeats=2, seed=3, scheduler=scheduler)
        assert [p.params for p in parallel.points] == [p.params for p in serial.points]
        assert [p.result.records for p in parallel.points] == [p.result.records for p in serial.points]


def _counting(run):
    """``run`` with a call counter (``wrapped.calls``); same signature, so sweeps accept it."""
    @functools.wraps(run)
    def wrapped(**kwargs):
        wrapped.calls += 1
        return run(**kwargs)

    wrapped.calls = 0
    return wrapped


def test_seeds_depend_on_the_point_not_on_the_rest_of_the_grid():
    small = {p.params["alpha"]: p.params["seed"] for p in sw.sweep_points({"alpha": [1.0]}, seed=4)}
    large = {p.params["alpha"]: p.params["seed"] for p in sw.sweep_points({"alpha": [0.5, 1.0, 2.0]}, seed=4)}
    assert small[1.0] == large[1.0] and len(set(large.values())) == 3


def test_a_fail_line_says_why():
    res = sw.sweep(toy_run, {"alpha": [1.0, 1.6]})
    lines = res.lines()
    assert lines[0].startswith("PASS   alpha=1, seed=") and ":" not in lines[0]
    assert lines[1].startswith("FAIL   alpha=1.6, seed=") and lines[1].endswith(
        ": alpha too large: alpha = 1.6, expected <= 1.5")
    stalled = sw.sweep(toy_run, {"stall": [True]}).lines()
    assert stalled[0].startswith("ERROR  stall=True") and "did not converge: toy iteration stalled" in stalled[0]


def test_a_deterministic_point_is_said_so_once_and_not_repeated():
    run = _counting(toy_run)
    res = sw.sweep(run, {"noise": [False, True]}, repeats=4, seed=2)
    assert run.calls == 2 + 4  # two runs prove noise=False deterministic; noise=True runs every repeat
    quiet, noisy = res.points[0], res.points[1:]
    assert quiet.deterministic and len(quiet.identical_seeds) == 1 and quiet.skipped == 2
    assert not any(p.deterministic for p in noisy) and len({p.params["seed"] for p in noisy}) == 4
    assert res.counts == {"PASS": 5, "FAIL": 0, "ERROR": 0} and res.runs == 6
    lines = res.lines()
    assert sum("deterministic" in line for line in lines) == 1
    assert lines[0] == ("note: toy is deterministic at 1 of 2 swept settings: two different seeds gave identical "
                        "records there, so each such point is shown once, and their other 2 repeats were skipped")
    assert lines[1] == "PASS   noise=False"  # its seed does not matter: not shown
    assert res.final_line() == "toy: 5 passed, 0 failed (6 runs; 2 identical repeats skipped)"
    data = json.loads(res.to_json())
    assert data["points"][0]["deterministic"] == {"identical_seeds": list(quiet.identical_seeds),
                                                  "repeats_skipped": 2}
    assert data["note"] == res.deterministic_note()
    # with one repeat there is nothing to compare: no claim of determinism
    assert not sw.sweep(toy_run, {"noise": [False]}).deterministic_note()


def test_the_run_log_resumes_an_interrupted_sweep(tmp_path):
    log = tmp_path / "runs.jsonl"
    grid = {"alpha": [1.0, 1.6], "stall": [False, True]}
    first = sw.sweep(toy_run, grid, repeats=2, seed=7, jsonl=log)
    lines = log.read_text().splitlines()
    assert json.loads(lines[0]) == {"format": "attention-limits sweep runs v1", "check": "test_sweep",
                                    "root_seed": 7} and len(lines) == 1 + 8
    run = _counting(toy_run)
    again = sw.sweep(run, grid, repeats=2, seed=7, jsonl=log)
    assert run.calls == 0 and again.resumed == 8
    assert [p.params for p in again.points] == [p.params for p in first.points]
    assert again.results[0].records == first.results[0].records and again.points[2].verdict == "ERROR"
    assert "8 read back from the run log" in again.final_line()
    # an interrupted write leaves a torn last line: it is dropped and that run is done again
    log.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    run = _counting(toy_run)
    sw.sweep(run, grid, repeats=2, seed=7, jsonl=log)
    assert run.calls == 1 and sw.sweep(toy_run, grid, repeats=2, seed=7, jsonl=log).resumed == 8
    assert len(log.read_text().splitlines()) == 1 + 8
    # a longer grid keeps the seeds of the points already done, so only the new point runs
    run = _counting(toy_run)
    longer = sw.sweep(run, {"alpha": [1.0, 1.6, 1.2], "stall": [False, True]}, repeats=2, seed=7, jsonl=log)
    assert run.calls == 4 and longer.resumed == 8


def test_the_run_log_refuses_a_file_that_is_not_one(tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text('{"format": "attention-limits sweep runs v1", "check": "appendix_c", "root_seed": 0}\n')
    with pytest.raises(InputError, match="holds runs of 'appendix_c', not 'test_sweep'"):
        sw.sweep(toy_run, {"alpha": [1.0]}, jsonl=other)
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(InputError, match="not a sweep run log"):
        sw.sweep(toy_run, {"alpha": [1.0]}, jsonl=text)


def test_local_dask_schedulers_log_each_run(tmp_path):
    pytest.importorskip("dask")
    log = tmp_path / "runs.jsonl"
    res = sw.sweep(toy_run, {"alpha": [1.0, 1.6]}, repeats=2, scheduler="threads", jsonl=log)
    assert len(log.read_text().splitlines()) == 1 + 4
    run = _counting(toy_run)
    assert sw.sweep(run, {"alpha": [1.0, 1.6]}, repeats=2, jsonl=log).results == res.results and run.calls == 0


def _like_serial(parallel, serial, log, deterministic):
    """What a sweep on a scheduler address must show: two repeats of a PASS and a FAIL point with the serial
    sweep's seeds and records, each run in the run log (written here as the workers finished), and at two
    deterministic points (three repeats) two runs each and one repeat skipped."""
    assert [p.verdict for p in parallel.points] == ["PASS", "PASS", "FAIL", "FAIL"]
    assert [p.params for p in parallel.points] == [p.params for p in serial.points]
    assert [p.result.records for p in parallel.points] == [p.result.records for p in serial.points]
    assert len(log.read_text().splitlines()) == 1 + 4
    assert [p.verdict for p in deterministic.points] == ["PASS", "FAIL"]
    assert all(p.deterministic and p.skipped == 1 for p in deterministic.points) and deterministic.runs == 4


SMALL_DRAWS = dict(n=8, dims=(3,), betas=(0.0, 1.0), draws=3, t_max=64.0)


def test_a_scheduler_address_gives_the_serial_results(tmp_path):
    """A real dask.distributed scheduler reached by its tcp address: one in-process worker with two threads.

    The default tier's test of the address path (Client, futures, as_completed, the run log written as runs
    finish, the repeats skipped at deterministic points); worker processes are the slow tier's
    (:func:`test_a_local_cluster_of_two_worker_processes_gives_the_serial_results`).
    """
    distributed = pytest.importorskip("dask.distributed")
    from spectral.distributed import use_client
    from verify import sa_clustering

    grid = {"alpha": [1.0, 1.6]}  # toy draws a random number: every repeat differs
    serial = sw.sweep(toy_run, grid, repeats=2, seed=5)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp://",
                                  host="127.0.0.1", dashboard_address=":0") as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        log = tmp_path / "runs.jsonl"
        parallel = sw.sweep(toy_run, grid, repeats=2, seed=5, scheduler=address, jsonl=log)
        quiet = sw.sweep(toy_run, {"noise": [False], "alpha": [1.0, 1.6]}, repeats=3, scheduler=address)
        # a check's own draws (ctx.map) as tasks on the same cluster: the serial records
        with distributed.Client(address) as client, use_client(client):
            drawn = sa_clustering.run(**SMALL_DRAWS)
    _like_serial(parallel, serial, log, quiet)
    assert drawn.records == sa_clustering.run(**SMALL_DRAWS).records


@pytest.mark.slow
def test_a_local_cluster_of_two_worker_processes_gives_the_serial_results(tmp_path):
    """A real dask.distributed cluster: two worker processes on loopback, reached by its address (real checks
    pickled to other interpreters; the default tier's cheaper test is
    :func:`test_a_scheduler_address_gives_the_serial_results`)."""
    distributed = pytest.importorskip("dask.distributed")
    from verify import appendix_c, metric_attention

    grid = {"tensor": ["inverse", "direct"], "triples": [2000]}  # random draws: every repeat differs
    serial = sw.sweep(metric_attention.run, grid, repeats=2, seed=5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0") as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        log = tmp_path / "runs.jsonl"
        parallel = sw.sweep(metric_attention.run, grid, repeats=2, seed=5, scheduler=address, jsonl=log)
        quadrature = sw.sweep(appendix_c.run, {"claim": ["corrected", "printed"]}, repeats=3, scheduler=address)
    _like_serial(parallel, serial, log, quadrature)


def test_parse_grid_reads_values_like_the_checks_cli():
    from verify import nearest_point

    grid = sw.parse_grid(["n-lattice=1e3,2000", "claim=printed",
                          "eps_grid=0.002,0.004,0.008,0.016;0.004,0.008,0.016,0.032"], nearest_point.run)
    assert grid == {"n_lattice": [1000, 2000], "claim": ["printed"],
                    "eps_grid": [(0.002, 0.004, 0.008, 0.016), (0.004, 0.008, 0.016, 0.032)]}
    for items, match in ((["n_lattice=1.5"], "n_lattice: expected an integer"), (["claim=x"], "invalid choice"),
                         (["alpha"], "NAME=V1,V2"), (["n_lattice=1000", "n_lattice=2000"], "twice"),
                         (["size=3"], "valid parameters: dim, trials")):
        with pytest.raises(InputError, match=match):
            sw.parse_grid(items, nearest_point.run)


def test_cli_resumes_from_its_run_log(capsys, tmp_path):
    log = tmp_path / "runs.jsonl"
    argv = ["pde_modes", "--grid", "claim=corrected,printed", "--repeats", "3", "--jsonl", str(log)]
    assert sw.main(argv) == 1
    out = capsys.readouterr().out
    assert out.startswith("note: pde_modes is deterministic at every swept setting")
    assert out.strip().endswith("1 passed, 1 failed (4 runs; 2 identical repeats skipped)")
    assert sw.main(argv + ["--quiet"]) == 1
    assert capsys.readouterr().out == ("pde_modes: 1 passed, 1 failed (4 runs; 4 read back from the run log; "
                                       "2 identical repeats skipped)\n")


def test_cli(capsys, tmp_path):
    path = tmp_path / "sweep.json"
    assert sw.main(["pde_modes", "--grid", "claim=corrected,printed", "--json", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("PASS   claim=corrected, seed=")
    assert "Prop. D.4(1) as printed" in out and out.strip().endswith("1 passed, 1 failed (2 runs)")
    data = json.loads(path.read_text())
    assert data["check"] == "pde_modes" and [p["verdict"] for p in data["points"]] == ["PASS", "FAIL"]
    assert data["versions"]["command"]  # the command line as typed (here pytest's: in-process call)
    assert sw.main(["pde_modes", "--grid", "size=64", "--quiet"]) == 0
    assert capsys.readouterr().out.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    (["no_such_check"], "unknown check"), (["appendix_c", "--grid", "alpha"], "NAME=V1,V2"),
    (["appendix_c", "--grid", "cc=1"], "valid parameters: c, d3, a"),
    (["appendix_c", "--grid", "c=0.1"], "c must be in"), (["appendix_c", "--repeats", "0"], "repeats"),
    (["appendix_c", "--repeats", "x"], "--repeats"), (["appendix_c", "--json", "/no/such/dir/x.json"], "--json"),
    (["appendix_c", "--jsonl", "/no/such/dir/x.jsonl"], "--jsonl"),
])
def test_cli_errors_are_one_line(capsys, argv, message):
    assert sw.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_declared_grid_is_validated_before_anything_runs(monkeypatch):
    """A declared check's grid values and points are checked by its declarations before any run."""
    from verify import pde_stability

    def no_run(*args, **kwargs):  # pragma: no cover - the failure mode under test
        raise AssertionError("a point ran before the grid was validated")

    monkeypatch.setattr(pde_stability.CHECK, "_measure", no_run)
    with pytest.raises(InputError, match=r"^grid growth_size: growth_size must be an integer in \[8, 128\], got 4$"):
        sw.sweep(pde_stability.run, {"growth_size": [16, 4]})
    with pytest.raises(InputError, match=r"^grid lengths: lengths must hold at least 3"):
        sw.sweep(pde_stability.run, {"lengths": [(64, 256, 1024), (64, 128)]})


def test_a_point_that_would_not_fit_in_memory_is_refused_before_any_point_runs(monkeypatch, capsys):
    """The whole grid's memory is checked first: n = 2000, 4000 would fit, 10^10 would not, and nothing runs."""
    from spectral.floor.memory import DenseMemoryError
    from verify import weyl

    def no_run(*args, **kwargs):  # pragma: no cover - the failure mode under test
        raise AssertionError("a point ran before the grid's memory was checked")

    monkeypatch.setattr(weyl.CHECK, "_measure", no_run)
    with pytest.raises(DenseMemoryError, match=r"^grid point n=10000000000: .* needs an estimated"):
        sw.sweep(weyl.run, {"n": [2000, 4000, 10**10]}, repeats=3)
    assert sw.main(["weyl", "--grid", "n=2000,4000,10000000000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m verify.sweep: memory: grid point n=10000000000") and err.count("\n") == 1
