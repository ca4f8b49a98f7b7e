"""Run a sweep of a check on a Dask cluster: here a local one, started by the script itself.

On a real cluster, start ``dask scheduler`` and ``dask worker tcp://SCHEDULER:8786`` and run
python -m verify.sweep pde_modes --grid size=128,256 --grid claim=corrected,printed --scheduler tcp://SCHEDULER:8786
Run this one: python docs/examples/sweep_on_dask.py (needs pip install "attention-limits[dask]").
"""

from dask.distributed import LocalCluster

from verify import sweep

if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        code = sweep.main(["pde_modes", "--grid", "size=64,128", "--grid", "claim=corrected,printed",
                           "--scheduler", cluster.scheduler_address])
    # the printed claim of pde_modes is false (its points FAIL), so the sweep exits 1: that is the finding
    assert code == 1, code
