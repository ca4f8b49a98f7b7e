"""GPU benchmark: the toolkit's main paths on a CUDA device against the same calls on the host.

Run from the repository root on a machine with CuPy and a CUDA device (the ``gpu`` extra)::

    python benchmarks/gpu.py                          # n in {2000, 8000}, every section
    python benchmarks/gpu.py --sizes 4000,16000 --sections kernel,eigh --repeats 5 --json gpu.json
    python benchmarks/gpu.py --host-only              # the same sections on NumPy only (no device needed)

Without CuPy or a CUDA device it prints why and exits 0 (nothing is timed) unless ``--host-only``.
``benchmarks/device_check.sh OUTDIR`` runs the device suite and the device-only sections below in about
eight minutes on one H100 and writes their JSON into OUTDIR.

Sections, each on n points of S^1 (FNA power-law kernel, alpha 1.2, scale 0.05, geodesic distance):

* ``kernel``: distances and ``spectral.fna_kernel`` (n x n);
* ``normalise``: ``spectral.row_normalize`` and ``spectral.anisotropic_normalize(C, 1/2)``;
* ``eigh``: the symmetric conjugate ``D^-1/2 C D^-1/2`` and ``spectral.floor.backend.eigh`` (dense, all pairs);
* ``matrix-free``: ``spectral.markov_spectrum(KernelOperator(...), 10, method="matrix-free")``
  (the block solver; tiles recomputed per product, C never stored);
* ``checks``: every check declared for the GPU at its defaults, ``run(device="gpu")`` against
  ``run(device="cpu")`` (wall clock; a check brings its results to the host once, which synchronises).

Device-only sections (no host run; ``--large-sizes``, default 20000,100000,1000000):

* ``throughput``: one fused block product ``C @ X`` (FNA on S^1, X of 20 columns; float32 and float64
  score arithmetic, float64 accumulation) per n: kernel entries per second = n^2 / time (target
  >= 2e11 in float32 on one H100);
* ``large``: ``markov_spectrum(KernelOperator(...), 10)`` on n random circle points (targets on one
  H100: n = 1e5 within 30 s, n = 1e6 within 15 min), eigenvalues against the same solve with float64
  tiles throughout (target 1e-8); an n whose time, extrapolated from the throughput just measured,
  would overrun ``--budget-s`` is skipped and says so;
* ``refusals``: requests too large for the device (a dense kernel, a dense eigensolve, the matrix-free
  basis) must be refused by the device memory guard (``DenseMemoryError`` naming device memory) before
  anything is allocated: the memory pool must not grow.

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

SECTIONS = ("kernel", "normalise", "eigh", "matrix-free", "pde", "fma", "checks", "throughput", "large", "refusals")
DEVICE_ONLY = ("throughput", "large", "refusals")
#: Largest n of the sections that store an n x n matrix (the kernel alone is 8 n^2 bytes).
DENSE_MAX_N = 20000
#: Largest n at which the matrix-free section also runs on the host (minutes at 2e4 on 2 cores).
HOST_MAX_N = 20000
ALPHA, SCALE, K = 1.2, 0.05, 10


def device_module():
    """CuPy when a CUDA device is usable, else None with the reason."""
    from spectral.floor.backend import available_devices

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
    from spectral.floor.backend import eigh, to_numpy

    if section == "pde":  # eight refinement steps on both axes of a dense row-stochastic n x n attention
        from spectral import evolve_attention

        a = np.random.default_rng(0).random((x.shape[0], x.shape[0]))
        a0 = xp.asarray(a / a.sum(axis=1, keepdims=True))
        return (lambda: evolve_attention(a0, steps=8, alpha=0.1, axis="both").attention,
                lambda out: to_numpy(out))
    if section == "fma":  # fast multipole attention of n tokens, d = 64, leaf size r = 64
        from spectral import fma_attention

        rng = np.random.default_rng(0)
        q, k, v = (xp.asarray(rng.standard_normal((x.shape[0], 64))) for _ in range(3))
        return lambda: fma_attention(q, k, v, r=64), lambda out: to_numpy(out)
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
        if section in ("kernel", "normalise", "pde") and n > DENSE_MAX_N:
            log(f"  {section:<12} n={n:<6} skipped: dense n x n beyond n = {DENSE_MAX_N}")
            continue
        x = circle_points(n)
        row = {"section": section, "n": n}
        out_h = summary = None
        if not (section == "matrix-free" and n > HOST_MAX_N and not host_only):
            fn_h, summary = path_functions(section, np, x)
            t_h, out_h = time_host(fn_h, repeats)
            row["host_s"] = t_h
        if not host_only:
            fn_d, summary = path_functions(section, cp, x)
            t_d, out_d = time_device(cp, fn_d, repeats)
            row["device_s"] = t_d
            if "host_s" in row:
                row["ratio"] = row["host_s"] / t_d
            if summary is not None and out_h is not None:
                row["max_difference"] = float(np.max(np.abs(summary(out_h) - summary(out_d))))
        log(_format(row))
        rows.append(row)
    return rows


def _circle_operator(cp, n, dtype=None):
    from manifolds import Circle
    from spectral import KernelOperator, fna_kernel

    x = cp.asarray(circle_points(n))
    return KernelOperator(x, kernel=functools.partial(fna_kernel, alpha=ALPHA, scale=SCALE, dim=1),
                          distance=Circle().distance)


def section_throughput(sizes, repeats, cp, log, width=20):
    """Kernel entries per second of one fused block product (n^2 entries, X of ``width`` columns)."""
    rows = []
    for n in sizes:
        op = _circle_operator(cp, n)
        X = cp.asarray(np.random.default_rng(1).standard_normal((n, width)))
        for tile_dtype in ("float32", "float64"):
            reps = repeats if n <= 100_000 else 1
            # the product as the solvers call it: no finiteness pass over X (a reduction and a host sync)
            t, _ = time_device(cp, lambda: op.matmat(X, tile_dtype=tile_dtype, check_finite=False), reps)
            row = {"section": "throughput", "n": n, "tile_dtype": tile_dtype, "width": width, "device_s": t,
                   "entries_per_s": n * n / t, "fused": op.plan is not None}
            log(f"  throughput   n={n:<8} {tile_dtype}  {t:9.4f} s per product of width {width}   "
                f"{n * n / t:.3g} kernel entries/s (target >= 2e11 in float32)")
            rows.append(row)
    return rows


def section_large(sizes, cp, log, budget_s, rates):
    """Top-10 of the FNA operator on n random circle points on the device, each n within the time budget."""
    from spectral import markov_spectrum
    from spectral.floor.backend import to_numpy

    rows, start = [], time.perf_counter()
    for n in sizes:
        # 12 float32 + 4 float64 products of width 20 and one float64 row-sum pass, measured at 20000-1e5
        # on the host; the float64 reference run adds about as much again for n <= 1e5
        rate32, rate64 = rates.get("float32"), rates.get("float64")
        est = None if not (rate32 and rate64) else n * n * (12 / rate32 + 5 / rate64)
        if n <= 100_000 and est is not None:
            est += n * n * 17 / rate64
        left = budget_s - (time.perf_counter() - start)
        if est is not None and est > left:
            log(f"  large        n={n:<8} skipped: estimated {est:.0f} s from the measured throughput, "
                f"{left:.0f} s of the budget left")
            rows.append({"section": "large", "n": n, "skipped": True, "estimate_s": est, "budget_left_s": left})
            continue
        op = _circle_operator(cp, n)
        t0 = time.perf_counter()
        spec = markov_spectrum(op, K, method="matrix-free", rng=0)
        eta = np.sort(to_numpy(spec.eigenvalues))[::-1]  # comes to the host: synchronised
        t = time.perf_counter() - t0
        row = {"section": "large", "n": n, "device_s": t, "solver": spec.solver, "residual": spec.residual,
               "eigenvalues": eta.tolist(), "estimate_s": est, "entries_per_s": None}
        target = 30.0 if n <= 100_000 else 900.0
        line = f"  large        n={n:<8} {t:9.1f} s (target {target:.0f} s: {'met' if t <= target else 'MISSED'})"
        if n <= 100_000:
            ref = markov_spectrum(_circle_operator(cp, n), K, method="matrix-free", rng=0, dtype="float64")
            diff = float(np.max(np.abs(np.sort(to_numpy(ref.eigenvalues))[::-1] - eta)))
            row["max_difference_to_float64"] = diff
            line += f"   max|eta - eta(float64 tiles)| {diff:.1e} (target 1e-8)"
        log(line + f"   [{spec.solver}]")
        rows.append(row)
    return rows


def section_refusals(cp, log):
    """Requests too large for the device are refused by the memory guard before anything is allocated."""
    import functools as ft

    from manifolds import Circle
    from spectral import KernelOperator, fna_kernel, markov_spectrum, pairwise
    from spectral.floor.memory import DenseMemoryError, device_memory_bytes

    free = device_memory_bytes(cp)
    n = int(math.isqrt(free // 8)) * 2  # a dense float64 n x n is four times the free device memory
    x = cp.asarray(circle_points(n))
    kern = ft.partial(fna_kernel, alpha=ALPHA, scale=SCALE, dim=1)
    requests = {
        "dense kernel (pairwise)": lambda: pairwise(x, kernel=kern, distance=Circle().distance),
        "distances (Circle.distance)": lambda: Circle().distance(x),
        "operator to_dense": lambda: KernelOperator(x, kernel=kern, distance=Circle().distance).to_dense(),
        "block eigensolver basis": lambda: markov_spectrum(KernelOperator(x, kernel=kern, distance=Circle().distance),
                                                           max(1, n // 4), method="matrix-free"),
    }
    rows = []
    pool = cp.get_default_memory_pool()
    for what, call in requests.items():
        before = pool.used_bytes()
        try:
            call()
            outcome, message = "NOT REFUSED", ""
        except DenseMemoryError as exc:
            outcome, message = "refused", str(exc)
        grew = pool.used_bytes() - before
        ok = outcome == "refused" and "device memory" in message and grew < 64 << 20
        log(f"  refusals     {what:<28} n={n}: {outcome}; pool grew {grew / 2**20:.1f} MiB -> {'ok' if ok else 'FAILED'}")
        rows.append({"section": "refusals", "request": what, "n": n, "outcome": outcome, "message": message[:300],
                     "pool_growth_bytes": int(grew), "ok": ok})
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
    text = f"  {row['section']:<12} {what:<22}"
    if "host_s" in row:
        text += f" host {row['host_s']:9.4f} s"
    if "device_s" in row:
        text += f"   device {row['device_s']:9.4f} s"
    if "ratio" in row:
        text += f"   host/device {row['ratio']:7.2f}"
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
    parser.add_argument("--large-sizes", default="20000,100000,1000000",
                        help="n of the device-only sections throughput (up to 1e5) and large")
    parser.add_argument("--budget-s", type=float, default=300.0,
                        help="seconds the large section may take; an n estimated to overrun it is skipped")
    ns = parser.parse_args(argv)
    sizes = [int(v) for v in ns.sizes.split(",") if v]
    large = [int(float(v)) for v in ns.large_sizes.split(",") if v]
    sections = [s for s in ns.sections.split(",") if s]
    bad = [s for s in sections if s not in SECTIONS]
    if bad or not sizes or min(sizes) < 10 or ns.repeats < 1 or not large or min(large) < 10:
        parser.error(f"sections must be in {SECTIONS} (got {bad}), sizes >= 10, repeats >= 1")
    if ns.host_only:
        sections = [s for s in sections if s not in DEVICE_ONLY]
    cp, why = device_module()
    if cp is None and not ns.host_only:
        print(f"gpu benchmark skipped: {why}")
        return 0
    from spectral.floor.memory import device_memory_bytes, format_bytes

    device = "host only" if ns.host_only else (cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
                                               + f", {format_bytes(device_memory_bytes(cp))} device memory free")
    print(f"gpu benchmark: {device}; sizes {sizes}; median of {ns.repeats}")
    rows, rates = [], {}
    log = functools.partial(print, flush=True)
    for section in sections:
        if section == "checks":
            rows += section_checks(ns.repeats, ns.host_only, log)
        elif section == "throughput":
            got = section_throughput([n for n in large if n <= 100_000], ns.repeats, cp, log)
            rows += got
            for r in got:  # the largest n's rate (closest to the large runs)
                rates[r["tile_dtype"]] = r["entries_per_s"]
        elif section == "large":
            rows += section_large(large, cp, log, ns.budget_s, rates)
        elif section == "refusals":
            rows += section_refusals(cp, log)
        else:
            rows += section_paths(section, sizes, ns.repeats, cp, ns.host_only, log)
        if ns.json:  # after every section: a run cut short keeps what finished
            with open(ns.json, "w", encoding="utf-8") as fh:
                json.dump({"device": device, "repeats": ns.repeats, "versions": versions(cp), "rows": rows}, fh,
                          indent=1)
    return 0


def versions(cp) -> dict:
    """Library versions, the CUDA runtime and driver, and the host CPU, for the record."""
    import platform

    import scipy

    out = {"numpy": np.__version__, "scipy": scipy.__version__, "python": platform.python_version(),
           "cpu": platform.processor() or platform.machine()}
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    out["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    if cp is not None:
        out["cupy"] = cp.__version__
        try:
            out["cuda_runtime"] = int(cp.cuda.runtime.runtimeGetVersion())
            out["cuda_driver"] = int(cp.cuda.runtime.driverGetVersion())
        except Exception:  # noqa: BLE001 - informational only
            pass
    return out


if __name__ == "__main__":
    raise SystemExit(main())
