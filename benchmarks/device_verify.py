"""Every check declared for the GPU, run on the device and on the host at the same time, verdicts compared.

    python benchmarks/device_verify.py --json verify.json                  # every check with "gpu" in its devices
    python benchmarks/device_verify.py --json verify.json --checks weyl,levy --budget-s 60

The device side is what ``python -m verify NAMES --device gpu --json`` runs (``verify.core.runner.run_checks``:
each check once per setting its claims need, at its defaults and seeds), one check at a time, so that the JSON
is rewritten after each and a timeout keeps what finished; the host side (``--device cpu``, the same checks and
seeds) runs meanwhile in a child process. No check is started after ``--budget-s`` seconds (the ones left are
listed as not run). The JSON holds ``"gpu"``, each side's runs (label, verdict, error, seconds), the device
side's full results in the format of ``python -m verify --json`` (``"device_report"``), and ``"comparison"``:
the runs whose verdicts differ, or that ran on one side only. Exit code 0 when every device run passed and
matched the host's verdict, 1 otherwise; without CuPy or a CUDA device it says why, writes ``{"gpu": false}``
and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def gpu_checks() -> list[str]:
    """The checks that declare the GPU among their devices (``CHECK.devices``), in the ledger's order."""
    from verify.core.claims import available_checks, load_check

    return [name for name in available_checks() if "gpu" in getattr(load_check(name).CHECK, "devices", ())]


def _write(path: str, data: dict) -> None:
    tmp = path + ".part"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, default=str)
        fh.write("\n")
    os.replace(tmp, path)


def _read(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def run_side(names, device: str, budget_s: float, on_update):
    """Run ``names`` on ``device`` one check at a time; ``on_update(runs, rows)`` after each; ``(runs, rows)``."""
    from verify.core.runner import run_checks

    start = time.perf_counter()
    runs, rows = [], []
    for name in names:
        if time.perf_counter() - start > budget_s:
            runs.append({"check": name, "label": name, "verdict": "NOT RUN", "error": f"budget of {budget_s:g} s spent",
                         "seconds": 0.0})
            continue
        t0 = time.perf_counter()
        got = run_checks([name], device=device, quiet=True)
        seconds = (time.perf_counter() - t0) / max(len(got), 1)
        for row in got:
            rows.append(row)
            runs.append({"check": name, "label": row.label,
                         "verdict": row.result.verdict if row.result is not None else "ERROR",
                         "error": row.error, "seconds": round(seconds, 3)})
        on_update(runs, rows)
    on_update(runs, rows)
    return runs, rows


def compare(device_runs, host_runs) -> dict:
    """Runs whose verdicts differ between the sides, and runs found on one side only (not-run ones aside)."""
    dev = {r["label"]: r["verdict"] for r in device_runs if r["verdict"] != "NOT RUN"}
    host = {r["label"]: r["verdict"] for r in host_runs if r["verdict"] != "NOT RUN"}
    return {"differ": {k: {"device": dev[k], "host": host[k]} for k in dev if k in host and dev[k] != host[k]},
            "device_only": sorted(set(dev) - set(host)), "host_only": sorted(set(host) - set(dev)),
            "compared": len(set(dev) & set(host))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", required=True, help="where the JSON goes (rewritten after each check)")
    parser.add_argument("--checks", default=None, help="comma-separated checks (default: every check for the GPU)")
    parser.add_argument("--budget-s", type=float, default=100.0, help="no check starts after this (default 100)")
    parser.add_argument("--device", choices=("gpu", "cpu"), default="gpu", help=argparse.SUPPRESS)  # the host child
    ns = parser.parse_args(argv)
    from spectral.floor.backend import available_devices

    if ns.device == "gpu" and "gpu" not in available_devices():
        why = "no GPU: CuPy is missing or sees no CUDA device"
        print(f"device_verify: {why}; nothing run")
        _write(ns.json, {"gpu": False, "reason": why})
        return 0
    names = ns.checks.split(",") if ns.checks else gpu_checks()
    if ns.device == "cpu":  # the host side, as a child of the device side
        run_side(names, "cpu", ns.budget_s, lambda runs, rows: _write(ns.json, {"runs": runs}))
        return 0
    host_json = os.path.join(tempfile.mkdtemp(prefix="device_verify_"), "host.json")
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--device", "cpu", "--json", host_json,
                              "--budget-s", str(ns.budget_s), "--checks", ",".join(names)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    start = time.perf_counter()

    printed = [0]

    def update(runs, rows, *, done=False):
        from verify.core.report import report_data

        host = _read(host_json).get("runs", [])
        _write(ns.json, {"gpu": True, "done": done, "checks": names, "seconds": round(time.perf_counter() - start, 1),
                         "device_runs": runs, "host_runs": host, "comparison": compare(runs, host),
                         "device_report": report_data(rows, options={"checks": names, "device": "gpu"})})
        for run in runs[printed[0]:]:
            print(f"  {run['verdict']:<7} {run['label']:<30} {run['seconds']:8.2f} s  {run['error'][:100]}", flush=True)
        printed[0] = len(runs)

    device_runs, rows = run_side(names, "gpu", ns.budget_s, update)
    try:
        child.wait(timeout=max(5.0, ns.budget_s + 30.0 - (time.perf_counter() - start)))
    except subprocess.TimeoutExpired:
        child.kill()
    update(device_runs, rows, done=True)  # with the host's last results
    host_runs = _read(host_json).get("runs", [])
    cmp = compare(device_runs, host_runs)
    failed = [r["label"] for r in device_runs if r["verdict"] not in ("PASS",)]
    print(f"device_verify: {len(device_runs)} device runs ({len(failed)} not PASS: {', '.join(failed) or 'none'}); "
          f"{cmp['compared']} compared with the host, {len(cmp['differ'])} verdicts differ"
          + (f": {', '.join(cmp['differ'])}" if cmp["differ"] else ""))
    return 1 if failed or cmp["differ"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
