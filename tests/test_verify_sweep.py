"""Sweeps: grid expansion, independent child seeds, serial and Dask execution agree."""

import numpy as np
import pytest

from verify import sweep as sw
from verify.core import make_result


def toy_run(*, alpha=1.2, n=8, seed=0, device="cpu"):
    draw = float(np.random.default_rng(seed).standard_normal())
    failures = [] if alpha < 1.5 else [f"alpha {alpha} >= 1.5"]
    return make_result(check="toy", claims=("FNA-10",), statement="toy", measured={"draw": draw},
                       expected={}, tolerance={}, parameters=dict(alpha=alpha, n=n, seed=seed, device=device),
                       failures=failures)


def test_points_product_and_spawned_seeds():
    points = sw.sweep_points({"alpha": [1.0, 1.2], "n": [8, 16, 32]}, seeds=2, seed=5)
    assert len(points) == 12
    seeds = [p.params["seed"] for p in points]
    assert len(set(seeds)) == 12  # every point its own stream
    again = sw.sweep_points({"alpha": [1.0, 1.2], "n": [8, 16, 32]}, seeds=2, seed=5)
    assert seeds == [p.params["seed"] for p in again]  # reproducible
    explicit = sw.sweep_points({"seed": [1, 2]})
    assert [p.params["seed"] for p in explicit] == [1, 2]


@pytest.mark.parametrize("grid, seeds", [({"alpha": []}, 1), ({"alpha": "12"}, 1), ({"alpha": [1]}, 0)])
def test_bad_grid(grid, seeds):
    with pytest.raises(ValueError):
        sw.sweep_points(grid, seeds=seeds)


def test_serial_results_and_dask_parity():
    grid = {"alpha": [1.0, 1.6]}
    serial = sw.sweep(toy_run, grid, seeds=2, seed=3)
    assert [r.passed for r in serial] == [True, True, False, False]
    pytest.importorskip("dask")
    parallel = sw.sweep(toy_run, grid, seeds=2, seed=3, scheduler="synchronous")
    assert [r.measured for r in parallel] == [r.measured for r in serial]


def test_cli_errors(capsys):
    assert sw.main(["no_such_check"]) == 2
    assert "unknown check" in capsys.readouterr().err
    assert sw.main(["weyl", "--grid", "alpha"]) == 2
