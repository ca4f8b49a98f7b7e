"""GPU benchmark: the toolkit's main paths on a CUDA device against the same calls on the host.

Run from the repository root on a machine with CuPy and a CUDA device (the ``gpu`` extra)::

    python benchmarks/gpu.py                          # n in {2000, 8000}, every section
    python benchmarks/gpu.py --sizes 4000,16000 --sections kernel,eigh --repeats 5 --json gpu.json
    python benchmarks/gpu.py --host-only              # the same sections on NumPy only (no device needed)

Without CuPy or a CUDA device it prints why and exits 0 (nothing is timed) unless ``--host-only``.

Sections, each on n points of S^1 (FNA power-law kernel, alpha 1.2, scale 0.05, geodesic distance):

* ``kernel``: distances and ``spectral.fna_kernel`` (n x n);
* ``normalise``: ``spectral.row_normalize`` and ``spectral.anisotropic_normalize(C, 1/2)``;
* ``eigh``: the symmetric conjugate ``D^-1/2 C D^-1/2`` and ``spectral.backend.eigh`` (dense, all pairs);
* ``matrix-free``: ``spectral.markov_spectrum(KernelOperator(...), 10, method="matrix-free")``
  (the block solver; tiles recomputed per product, C never stored);
* ``checks``: every check declared for the GPU at its defaults, ``run(device="gpu")`` against
  ``run(device="cpu")`` (wall clock; a check brings its results to the host once, which synchronises).

Device times come from CUDA events recorded around the call on the current stream (the first call
of each path is an untimed warm-up: CuPy compiles its kernels then); host times from perf_counter.
Each row prints the median of ``--repeats`` runs, the ratio host / device, and the largest
difference between the two results (eigenvalues, or every record of a check) so that a fast wrong
answer shows. A plain script, never run by pytest.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SECTIONS = ("kernel", "normalise", "eigh", "matrix-free", "checks")
ALPHA, SCALE, K = 1.2, 0.05, 10


def device_module():
    """CuPy when a CUDA device is usable, else None with the reason."""
    from spectral.backend import available_devices

    if "gpu" not in available_devices():
        try:
            import cupy  # noqa: F401
        except ImportError:
            return None, "CuPy is not installed (pip install 'attention-limits[gpu]')"
        return None, "CuPy is installed but sees no CUDA device"
    import cupy

    return cupy, ""


def time_host(fn, repeats: int):
    fn()  # warm-up
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def time_device(cp, fn, repeats: int):
    """Median seconds between CUDA events recorded before and after ``fn()`` on the current stream."""
    fn()  # warm-up: kernel compilation and the memory pool's first allocations
    cp.cuda.Device().synchronize()
    times, out = [], None
    for _ in range(repeats):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        out = fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(times), out


def circle_points(n: int) -> np.ndarray:
    theta = np.random.default_rng(0).uniform(0.0, 2 * math.pi, n)
    return np.stack([np.cos(theta), np.sin(theta)], axis=1)


def _distances(xp, x):
    from manifolds import Circle

    return Circle().distance(xp.asarray(x))


def path_functions(section: str, xp, x):
    """The callable timed for ``section`` in the namespace ``xp`` and how to compare its output."""
    from spectral import KernelOperator, anisotropic_normalize, fna_kernel, markov_spectrum, row_normalize
    from spectral.backend import eigh, to_numpy

    if section == "kernel":
        return lambda: fna_kernel(_distances(xp, x), alpha=ALPHA, scale=SCALE, dim=1), None
    c = fna_kernel(_distances(xp, x), alpha=ALPHA, scale=SCALE, dim=1)
    if section == "normalise":
        return lambda: (row_normalize(c), anisotropic_normalize(c, 0.5)), None
    if section == "eigh":
        def solve():
            s = 1.0 / xp.sqrt(xp.sum(c, axis=1))
            return eigh(s[:, None] * c * s[None, :])[0]

        return solve, lambda out: np.sort(to_numpy(out))[::-1][:K]
    from manifolds import Circle

    op = KernelOperator(xp.asarray(x), kernel=functools.partial(fna_kernel, alpha=ALPHA, scale=SCALE, dim=1),
                        distance=Circle().distance)
    return (lambda: markov_spectrum(op, K, method="matrix-free", rng=0),
            lambda out: np.sort(np.real(to_numpy(out.eigenvalues)))[::-1])


def section_paths(section, sizes, repeats, cp, host_only, log):
    rows = []
    for n in sizes:
        if section == "eigh" and n > 8000:
            log(f"  {section:<12} n={n:<6} skipped: dense eigh beyond n = 8000 (O(n^3), n^2 memory)")
            continue
        x = circle_points(n)
        fn_h, summary = path_functions(section, np, x)
        t_h, out_h = time_host(fn_h, repeats)
        row = {"section": section, "n": n, "host_s": t_h}
        if not host_only:
            fn_d, _ = path_functions(section, cp, x)
            t_d, out_d = time_device(cp, fn_d, repeats)
            row.update(device_s=t_d, ratio=t_h / t_d)
            if summary is not None:
                row["max_difference"] = float(np.max(np.abs(summary(out_h) - summary(out_d))))
        log(_format(row))
        rows.append(row)
    return rows


def section_checks(repeats, host_only, log):
    from verify.core.claims import available_checks, load_check

    rows = []
    for name in available_checks():
        check = load_check(name)
        if "gpu" not in check.CHECK.devices:
            continue
        t_h, ref = time_host(lambda c=check: c.run(device="cpu"), repeats)
        row = {"section": "checks", "check": name, "host_s": t_h}
        if not host_only:
            t_d, res = time_host(lambda c=check: c.run(device="gpu"), repeats)  # results come back: synchronised
            diffs = [abs(res.record(r.name).measured - r.measured) / max(abs(r.measured), 1e-300)
                     for r in ref.records if isinstance(r.measured, float)]
            row.update(device_s=t_d, ratio=t_h / t_d, verdicts=f"{ref.verdict}/{res.verdict}",
                       max_difference=max(diffs, default=0.0))
        log(_format(row))
        rows.append(row)
    return rows


def _format(row) -> str:
    what = row.get("check") or f"n={row['n']}"
    text = f"  {row['section']:<12} {what:<22} host {row['host_s']:9.4f} s"
    if "device_s" in row:
        text += f"   device {row['device_s']:9.4f} s   host/device {row['ratio']:7.2f}"
    if "max_difference" in row:
        text += f"   max difference {row['max_difference']:.1e}"
    if "verdicts" in row:
        text += f"   verdicts {row['verdicts']}"
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,8000", help="points n per path section (default 2000,8000)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"subset of {','.join(SECTIONS)}")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per row (median; default 3)")
    parser.add_argument("--host-only", action="store_true", help="time the host side only (no device needed)")
    parser.add_argument("--json", default=None, help="write the rows as JSON to this path")
    ns = parser.parse_args(argv)
    sizes = [int(v) for v in ns.sizes.split(",") if v]
    sections = [s for s in ns.sections.split(",") if s]
    bad = [s for s in sections if s not in SECTIONS]
    if bad or not sizes or min(sizes) < 10 or ns.repeats < 1:
        parser.error(f"sections must be in {SECTIONS} (got {bad}), sizes >= 10, repeats >= 1")
    cp, why = device_module()
    if cp is None and not ns.host_only:
        print(f"gpu benchmark skipped: {why}")
        return 0
    from spectral.memory import device_memory_bytes, format_bytes

    device = "host only" if ns.host_only else (cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
                                               + f", {format_bytes(device_memory_bytes(cp))} device memory free")
    print(f"gpu benchmark: {device}; sizes {sizes}; median of {ns.repeats}")
    rows = []
    for section in sections:
        if section == "checks":
            rows += section_checks(ns.repeats, ns.host_only, print)
        else:
            rows += section_paths(section, sizes, ns.repeats, cp, ns.host_only, print)
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as fh:
            json.dump({"device": device, "repeats": ns.repeats, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
