"""verify.sweep: grid expansion, independent child seeds, typed records in the output, serial/Dask parity."""

import json

import pytest

from spectral.validation import ConvergenceError, InputError, child_rng
from verify import sweep as sw
from verify.check import Check
from verify.result import Recorder

TOY = Check("toy", claims=("FNA-10",))


@TOY.define
def toy_run(*, alpha=1.2, n=8, stall=False, seed=0, device="cpu"):
    """A stand-in check: passes for alpha below 1.5.

    Parameters
    ----------
    alpha : float
        Asserted to be at most 1.5.
    n : int
        Unused size.
    stall : bool
        Raise ConvergenceError (a point whose numerics did not converge).
    seed : int
        Seed of the one random draw.
    device : {"cpu"}
        Host only.
    """
    if stall:
        raise ConvergenceError("toy iteration stalled; raise the iteration limit")
    rec = Recorder()
    rec.info("draw", float(child_rng(seed, "draw").standard_normal()))
    rec.at_most("alpha", alpha, 1.5, why="toy bound", label="alpha too large")
    return rec.finish("toy")


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
    with pytest.raises(InputError, match="'beta'; valid parameters: alpha, n, stall, seed, device"):
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
    assert data["fixed_parameters"] == {"n": 8, "stall": False, "device": "cpu"}
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


@pytest.mark.slow
def test_dask_cluster_address():
    distributed = pytest.importorskip("dask.distributed")
    from verify import appendix_c

    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as cl:
        res = sw.sweep(appendix_c.run, {"claim": ["corrected", "printed"]}, scheduler=cl.scheduler_address)
    assert [p.verdict for p in res.points] == ["PASS", "FAIL"]


def test_parse_grid_reads_values_like_the_checks_cli():
    from verify import nearest_point

    grid = sw.parse_grid(["n-lattice=1e3,2000", "claim=printed",
                          "eps_grid=0.002,0.004,0.008,0.016;0.004,0.008,0.016,0.032"], nearest_point.run)
    assert grid == {"n_lattice": [1000, 2000], "claim": ["printed"],
                    "eps_grid": [(0.002, 0.004, 0.008, 0.016), (0.004, 0.008, 0.016, 0.032)]}
    for items, match in ((["n_lattice=1.5"], "n_lattice: expected an integer"), (["claim=x"], "invalid choice"),
                         (["alpha"], "NAME=V1,V2"), (["n_lattice=1000", "n_lattice=2000"], "twice"),
                         (["size=3"], "valid parameters: claim, dim")):
        with pytest.raises(InputError, match=match):
            sw.parse_grid(items, nearest_point.run)


def test_cli(capsys, tmp_path):
    path = tmp_path / "sweep.json"
    assert sw.main(["appendix_c", "--grid", "claim=corrected,printed", "--json", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("PASS   claim=corrected, seed=")
    assert "printed Proposition 1" in out and out.strip().endswith("1 passed, 1 failed (2 runs)")
    data = json.loads(path.read_text())
    assert data["check"] == "appendix_c" and [p["verdict"] for p in data["points"]] == ["PASS", "FAIL"]
    assert "verify" in data["versions"]["command"]
    assert sw.main(["appendix_c", "--grid", "c=3", "--quiet"]) == 0
    assert capsys.readouterr().out.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    (["no_such_check"], "unknown check"), (["appendix_c", "--grid", "alpha"], "NAME=V1,V2"),
    (["appendix_c", "--grid", "cc=1"], "valid parameters: claim, c, d3"),
    (["appendix_c", "--grid", "c=0.1"], "c must be in"), (["appendix_c", "--repeats", "0"], "repeats"),
    (["appendix_c", "--repeats", "x"], "--repeats"), (["appendix_c", "--json", "/no/such/dir/x.json"], "--json"),
])
def test_cli_errors_are_one_line(capsys, argv, message):
    assert sw.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
