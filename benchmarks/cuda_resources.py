"""Registers, stack and spills of every generated CUDA kernel, compiled here by NVRTC (no GPU needed).

    python benchmarks/cuda_resources.py                          # every variant (spectral.tiles.cuda_variants), every NVRTC found
    python benchmarks/cuda_resources.py --dims 128,768 --widths 32 --json resources.json
    python benchmarks/cuda_resources.py --arch sm_80             # another architecture (A100)

Each source is compiled to a cubin for ``--arch`` (default ``sm_90``: H100, H200) with ``ptxas -v``, as CuPy
compiles a ``RawKernel`` for the device it runs on, and ptxas' report is read: registers per thread, stack frame
and spill bytes per thread, and the compile time (what a cold CuPy kernel cache pays on first use). NVRTC is
looked for as spectral.nvrtc.find_libraries does (``NVRTC_LIBRARY``, the nvidia-cuda-nvrtc wheels, a CUDA
toolkit); without one it says what to install and exits 0. Exit code 1 if a source fails to compile or warns.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from spectral.nvrtc import INSTALL_HINT, compile_source, find_libraries  # noqa: E402
from spectral.tiles import CUDA_DIMS, CUDA_WIDTHS, cuda_variants  # noqa: E402


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(",") if v.strip())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dims", type=_ints, default=CUDA_DIMS, help="numbers of coordinates (default: %(default)s)")
    parser.add_argument("--widths", type=_ints, default=CUDA_WIDTHS, help="kernel widths (default: %(default)s)")
    parser.add_argument("--arch", default="sm_90", help="target architecture (default: sm_90)")
    parser.add_argument("--newest-only", action="store_true", help="only the newest NVRTC found")
    parser.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                        help="compilations at a time (NVRTC is thread-safe; default: up to 4)")
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    ns = parser.parse_args(argv)
    libraries = find_libraries()
    if not libraries:
        print(f"cuda_resources: no libnvrtc found ({INSTALL_HINT}); nothing compiled")
        return 0
    if ns.newest_only:
        libraries = libraries[:1]
    variants = [(label, src) for label, src in cuda_variants(ns.dims)
                if label == "chunk_sum" or int(label.split("/w")[1].split("/")[0]) in ns.widths]

    def one(job):
        lib, (label, source) = job
        start = time.perf_counter()
        report = compile_source(source, lib, arch=ns.arch)
        seconds = time.perf_counter() - start
        k = report.kernels[0] if report.kernels else None
        return {"nvrtc": ".".join(map(str, lib.version)), "variant": label, "ok": report.ok,
                "warnings": report.warnings, "registers": k and k.registers, "stack_frame": k and k.stack_frame,
                "spill_stores": k and k.spill_stores, "spill_loads": k and k.spill_loads,
                "compile_s": round(seconds, 3), "log": "" if report.ok and not report.warnings else report.log}

    jobs = [(lib, v) for lib in libraries for v in variants]
    with concurrent.futures.ThreadPoolExecutor(ns.jobs) as pool:
        rows = list(pool.map(one, jobs))
    print(f"{'nvrtc':<6} {'variant':<34} {'regs':>5} {'stack':>6} {'spill st':>8} {'spill ld':>8} {'compile':>8}")
    for row in rows:
        flag = "" if row["ok"] and not row["warnings"] else "  FAILED" if not row["ok"] else "  WARNS"
        print(f"{row['nvrtc']:<6} {row['variant']:<34} {row['registers']!s:>5} {row['stack_frame']!s:>6} "
              f"{row['spill_stores']!s:>8} {row['spill_loads']!s:>8} {row['compile_s']:>7.2f}s{flag}")
    bad = [r for r in rows if not r["ok"] or r["warnings"]]
    print(f"{len(rows)} compilations ({len(variants)} variants x {len(libraries)} NVRTC: "
          f"{', '.join(lib.name for lib in libraries)}) for {ns.arch}; {len(bad)} failed or warned")
    for r in bad:
        print(f"--- {r['nvrtc']} {r['variant']}\n{r['log']}")
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as fh:
            json.dump({"arch": ns.arch, "libraries": [lib.name for lib in libraries], "rows": rows}, fh, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
