"""verify.core.tasks and verify.core.locks: a check's draws in a loop or on a cluster, resumable, shared by runs.

Default tier: the loop, the resume folder (a stopped run continues, nothing is rerun), two runs sharing one
folder from two threads (each draw once), claims of dead or silent owners taken over, the file lock held
against another process, and two sweeps on one run log (each run once). Slow tier: a LocalCluster of two
worker processes, one of them killed in the middle of a sweep and of a check's draws: everything completes,
each run once in the log, nothing finished is computed again.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from verify.core import tasks
from verify.core.locks import Claims, locked
from verify.core.tasks import ResultStore, resume_into, run_items


class Counter:
    """Calls of ``square`` per item (thread-safe), optionally slow, optionally failing at one item."""

    def __init__(self, pause=0.0, fail_at=None):
        self.calls: dict[int, int] = {}
        self.pause, self.fail_at = pause, fail_at
        self.lock = threading.Lock()
        self.ran_in: set[str] = set()

    def square(self, item):
        with self.lock:
            self.calls[item] = self.calls.get(item, 0) + 1
            self.ran_in.add(threading.current_thread().name)
        if item == self.fail_at:
            raise ArithmeticError(f"draw {item} failed")
        time.sleep(self.pause)
        return {"item": item, "square": item * item}


def test_a_loop_gives_the_results_in_order():
    c = Counter()
    out = run_items(c.square, [3, 1, 2], desc="toy", quiet=True)
    assert [r["square"] for r in out] == [9, 1, 4] and c.calls == {3: 1, 1: 1, 2: 1}


def test_the_resume_folder_keeps_finished_draws(tmp_path):
    store = ResultStore(tmp_path / "resume")
    stopped = Counter(fail_at=3)
    with pytest.raises(ArithmeticError, match="draw 3"):
        run_items(stopped.square, range(5), desc="toy", store=store, context={"check": "toy"}, quiet=True)
    assert stopped.calls == {0: 1, 1: 1, 2: 1, 3: 1}
    again = Counter()
    out = run_items(again.square, range(5), desc="toy", store=store, context={"check": "toy"}, quiet=True)
    assert [r["square"] for r in out] == [0, 1, 4, 9, 16]
    assert again.calls == {3: 1, 4: 1}  # the three draws done before the failure are read back
    assert not os.listdir(store.claims.folder) or set(os.listdir(store.claims.folder)) <= {".lock", ".clock"}
    # another context (parameters) never reads these files
    other = Counter()
    run_items(other.square, range(2), desc="toy", store=store, context={"check": "toy", "n": 2}, quiet=True)
    assert other.calls == {0: 1, 1: 1}


def test_two_runs_sharing_a_folder_divide_the_draws(tmp_path):
    c = Counter(pause=0.05)
    results = {}

    def one_run(name):
        store = ResultStore(tmp_path / "shared")  # each run its own store object, as two processes would have
        results[name] = run_items(c.square, range(12), desc=name, store=store, context={"check": "toy"}, quiet=True)

    threads = [threading.Thread(target=one_run, args=(name,)) for name in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.calls == {i: 1 for i in range(12)}  # each draw once, between the two runs
    assert len(c.ran_in) == 2  # both runs did some: one draw claimed at a time
    assert results["a"] == results["b"] == [{"item": i, "square": i * i} for i in range(12)]


def test_claims_of_dead_or_silent_owners_are_taken_over(tmp_path):
    claims = Claims(tmp_path / "claims", stale_after=30.0)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    here = socket.gethostname()
    for key, owner in (("dead", {"host": here, "pid": pid, "since": 0}),
                       ("silent", {"host": "elsewhere", "pid": 1, "since": 0}),
                       ("alive", {"host": "elsewhere", "pid": 1, "since": 0})):
        with open(os.path.join(claims.folder, f"{key}.claim"), "w") as fh:
            json.dump(owner, fh)
    old = time.time() - 3600
    os.utime(os.path.join(claims.folder, "silent.claim"), (old, old))
    assert claims.stale("dead") and claims.stale("silent") and not claims.stale("alive")
    assert claims.claim("dead") and claims.claim("silent") and not claims.claim("alive")
    assert claims.holder("dead")["pid"] == os.getpid()
    assert not Claims(tmp_path / "claims").claim("dead")  # ours now, alive: another run waits
    claims.release_all()
    assert claims.holder("dead") is None and claims.holder("alive") is not None


def test_the_lock_excludes_other_processes(tmp_path):
    path = tmp_path / "log.lock"
    probe = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
             "try:\n    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')\n"
             "except OSError:\n    print('held')\n")
    pytest.importorskip("fcntl")
    with locked(path):
        assert subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True).stdout == "held\n"
    assert subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True).stdout == "free\n"


def test_two_sweeps_on_one_run_log_run_each_point_once(tmp_path):
    from verify import sweep as sw
    from verify.pde_modes import run as real_run

    calls, sweeps = [], set()
    lock = threading.Lock()

    @functools.wraps(real_run)
    def run(**params):
        with lock:
            calls.append(params["size"])
            sweeps.add(threading.current_thread().name)
        time.sleep(0.03)
        return real_run(**params)

    log = tmp_path / "runs.jsonl"
    grid = {"size": [16, 24, 32, 40, 48, 56]}
    out = {}

    def one_sweep(name):
        out[name] = sw.sweep(run, grid, jsonl=log)

    threads = [threading.Thread(target=one_sweep, args=(name,)) for name in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(calls) == grid["size"] and len(sweeps) == 2  # each run once, the two sweeps taking turns
    lines = log.read_text().splitlines()
    assert len(lines) == 1 + 6 and len({json.dumps(json.loads(x)["params"], sort_keys=True) for x in lines[1:]}) == 6
    assert [p.result.records for p in out["a"].points] == [p.result.records for p in out["b"].points]
    assert out["a"].resumed + out["b"].resumed == 6  # what one sweep ran, the other read back


def test_resume_on_the_command_line(tmp_path, capsys, monkeypatch):
    from verify import sa_clustering

    counted = []
    real = sa_clustering._flow

    def flow(p, xp, item):
        counted.append(item)
        return real(p, xp, item)

    monkeypatch.setattr(sa_clustering, "_flow", flow)
    argv = ["--n", "8", "--dims", "3", "--betas", "0,1", "--draws", "2", "--t-max", "64", "--quiet",
            "--resume", str(tmp_path / "r")]
    assert sa_clustering.main(argv) == 0
    assert len(counted) == 4
    assert sa_clustering.main(argv) == 0 and len(counted) == 4  # every draw read back
    assert capsys.readouterr().err == ""
    (tmp_path / "file").write_text("x")
    assert sa_clustering.main(argv[:-1] + [str(tmp_path / "file")]) == 2
    assert "resume" in capsys.readouterr().err and len(counted) == 4


# ------------------------------------------------------------------------------------------- slow: kill a worker


def _started(marks, params):
    with open(marks, "a") as fh:
        fh.write(json.dumps(params["seed"]) + "\n")


@pytest.mark.slow
def test_a_killed_worker_loses_no_finished_run(tmp_path):
    """Two worker processes; one is killed (SIGKILL) while it runs a sweep's point: Dask reruns that point on the
    other worker or the replacement the nanny starts, the sweep completes with every point once in its log and
    the records of a serial sweep, and no point already logged is started again. Then the same for a check's
    draws (ctx.map) under use_client."""
    distributed = pytest.importorskip("dask.distributed")
    import signal

    import cloudpickle

    from spectral.distributed import use_client
    from verify import sa_clustering
    from verify import sweep as sw

    marks = tmp_path / "started.txt"
    real = sa_clustering.run

    @functools.wraps(real)
    def run(**params):  # pickled by value (it is not verify.sa_clustering.run): counts the starts
        _started(marks, params)
        return real(**params)

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    grid = {"seed": list(range(8)), "n": [32], "dims": [(3,)], "draws": [2]}
    log = tmp_path / "runs.jsonl"
    logged_at_kill: list = []
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cl, \
                distributed.Client(cl) as client:
            pids = client.run(os.getpid)

            def killer():
                while True:
                    time.sleep(0.05)
                    lines = log.read_text().splitlines() if log.exists() else []
                    busy = [w for w, keys in client.processing().items() if keys]
                    if len(lines) >= 1 + 2 and busy:
                        logged_at_kill.extend(json.loads(x)["params"]["seed"] for x in lines[1:])
                        os.kill(pids[busy[0]], signal.SIGKILL)
                        return

            thread = threading.Thread(target=killer, daemon=True)
            thread.start()
            spread = sw.sweep(run, grid, scheduler=client, jsonl=log)
            thread.join(timeout=5)
            assert logged_at_kill, "the worker was not killed during the sweep"
            # a check's own draws on the cluster (kept in a resume folder), a busy worker killed once two are kept
            client.wait_for_workers(2)
            pids = client.run(os.getpid)
            small = dict(n=32, dims=(3, 8), betas=(0.0, 1.0, 2.0), draws=2, t_max=64.0)
            folder = tmp_path / "resume"
            kept_at_kill: list = []

            def killer_of_draws():
                while True:
                    time.sleep(0.02)
                    kept = [f for f in os.listdir(folder) if f.endswith(".pkl")] if folder.exists() else []
                    busy = [w for w, keys in client.processing().items() if keys]
                    if len(kept) >= 2 and busy:
                        kept_at_kill.append(len(kept))
                        os.kill(pids[busy[0]], signal.SIGKILL)
                        return

            thread = threading.Thread(target=killer_of_draws, daemon=True)
            thread.start()
            with use_client(client), resume_into(folder):
                drawn = sa_clustering.run(**small)
            thread.join(timeout=5)
            assert kept_at_kill and kept_at_kill[0] < 12  # killed in the middle of the 12 draws
            assert len([f for f in os.listdir(folder) if f.endswith(".pkl")]) == 12
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    lines = log.read_text().splitlines()
    assert len(lines) == 1 + 8 and sorted(json.loads(x)["params"]["seed"] for x in lines[1:]) == list(range(8))
    starts = [json.loads(x) for x in marks.read_text().splitlines()]
    assert all(starts.count(seed) == 1 for seed in logged_at_kill)  # nothing finished is computed again
    assert 8 <= len(starts) <= 8 + 2  # at most the killed worker's point(s) ran again, nothing else
    serial = sw.sweep(real, grid)
    assert [p.result.records for p in spread.points] == [p.result.records for p in serial.points]
    assert drawn.records == sa_clustering.run(**small).records
