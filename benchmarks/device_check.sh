#!/usr/bin/env bash
# The device check: everything this project measures on a CUDA device, in one run of about eight minutes
# on one H100, its results written as JSON into OUTDIR.
#
#   bash benchmarks/device_check.sh OUTDIR
#
# 1. environment.json: GPU (nvidia-smi), CuPy / CUDA / NumPy / SciPy versions, host CPU and its SIMD level;
# 2. python benchmarks/gpu.py: the device memory refusals, the fused product's kernel entries per second at
#    n = 2e4 and 1e5, then the FNA top-10 at n = 2e4, 1e5 and 1e6 within DEVICE_CHECK_LARGE_S (200 s; an n
#    whose time, extrapolated from the measured throughput, would overrun it is skipped and says so)
#    (gpu.json, rewritten after every section, so a timeout keeps what finished);
# 3. python -m pytest -m gpu (the device suite; report in pytest_gpu.xml), up to 240 s (DEVICE_CHECK_PYTEST=0
#    leaves it out: benchmarks/device_run.sh runs it as a part of its own);
# 4. the host/device comparison of the main paths at n = 2000 and 4000 in what is left (gpu_paths.json);
# 5. summary.json: what ran, exit codes, seconds.
#
# Without CuPy or a CUDA device it says so, writes summary.json with "gpu": false and exits 0.
# Run from the repository root (or anywhere: it changes to the root). Budget: DEVICE_CHECK_BUDGET_S
# seconds in all (default 450); each step has its own timeout within it.
set -u

if [ $# -ne 1 ]; then
    echo "usage: bash benchmarks/device_check.sh OUTDIR" >&2
    exit 2
fi
OUT=$1
mkdir -p "$OUT" || { echo "device_check: cannot create $OUT" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
PY=${PYTHON:-python}
BUDGET=${DEVICE_CHECK_BUDGET_S:-450}
START=$(date +%s)

elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( BUDGET - $(elapsed) )); }
say() { echo "[device_check $(elapsed)s] $*"; }

json_summary() {  # json_summary GPU(true/false) REASON
    "$PY" - "$OUT/summary.json" "$1" "$2" "$(elapsed)" "${PYTEST_RC:-null}" "${BENCH_RC:-null}" <<'EOF'
import json, sys
path, gpu, reason, seconds, pytest_rc, bench_rc = sys.argv[1:7]
num = lambda v: None if v == "null" else int(v)
json.dump({"gpu": gpu == "true", "reason": reason, "seconds": int(seconds), "pytest_rc": num(pytest_rc),
           "benchmark_rc": num(bench_rc)}, open(path, "w"), indent=1)
EOF
}

# ------------------------------------------------------------------------------------------- 0. a device?
WHY=$("$PY" - <<'EOF' 2>&1
try:
    import cupy
except ImportError:
    print("CuPy is not installed (pip install '.[gpu-cuda12]' or '.[gpu-cuda13]')")
    raise SystemExit(1)
try:
    count = cupy.cuda.runtime.getDeviceCount()
except Exception as exc:  # no driver, no device
    print(f"CuPy {cupy.__version__} sees no CUDA device ({type(exc).__name__}: {exc})")
    raise SystemExit(1)
if count < 1:
    print(f"CuPy {cupy.__version__} sees no CUDA device")
    raise SystemExit(1)
print(f"{count} CUDA device(s)")
EOF
)
if [ $? -ne 0 ]; then
    say "no GPU here: $WHY; nothing to run"
    json_summary false "$WHY"
    exit 0
fi
say "$WHY; output in $OUT; budget ${BUDGET}s"

# ------------------------------------------------------------------------------------------- 1. environment
"$PY" - "$OUT/environment.json" <<'EOF'
import json, platform, subprocess, sys
import numpy, scipy, cupy
env = {"python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__,
       "cupy": cupy.__version__, "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
       "cuda_driver": cupy.cuda.runtime.driverGetVersion(),
       "device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
       "free_bytes": int(cupy.cuda.runtime.memGetInfo()[0])}
try:
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    env["numpy_simd_found"] = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
except ImportError:
    pass
try:
    env["cpu"] = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except (OSError, StopIteration):
    env["cpu"] = platform.processor()
try:
    env["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,memory.used",
                                        "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
except (OSError, subprocess.TimeoutExpired):
    env["nvidia_smi"] = None
json.dump(env, open(sys.argv[1], "w"), indent=1)
print("  " + ", ".join(f"{k} {v}" for k, v in env.items() if k in ("device", "cupy", "cuda_runtime", "numpy", "scipy", "cpu")))
EOF

# ------------------------------------------------------------------------------------------- 2. device numbers
# the targets first: refusals, kernel entries per second, FNA top-10 at 2e4, 1e5 and (if the measured
# throughput says it fits) 1e6 within a budget of LARGE seconds
LARGE=${DEVICE_CHECK_LARGE_S:-200}
T=$(( $(left) < LARGE + 60 ? $(left) : LARGE + 60 ))
say "benchmarks/gpu.py: refusals, throughput, large (budget ${LARGE}s, timeout ${T}s)"
timeout "$T" "$PY" benchmarks/gpu.py --sections refusals,throughput,large --large-sizes 20000,100000,1000000 \
    --budget-s "$LARGE" --repeats 3 --json "$OUT/gpu.json"
BENCH_RC=$?
say "gpu.py exit code $BENCH_RC$([ "$BENCH_RC" = 124 ] && echo ' (timed out: gpu.json holds the sections that finished)')"

# ------------------------------------------------------------------------------------------- 3. device suite
T=$(( $(left) - 40 < 240 ? $(left) - 40 : 240 ))
if [ "${DEVICE_CHECK_PYTEST:-1}" = 0 ]; then
    say "pytest -m gpu left out (DEVICE_CHECK_PYTEST=0)"
    PYTEST_RC=null
elif [ "$T" -lt 30 ]; then
    say "pytest -m gpu skipped: ${T}s of the budget left"
    PYTEST_RC=null
else
    say "python -m pytest -m gpu (timeout ${T}s)"
    timeout "$T" "$PY" -m pytest -m gpu -q -p no:cacheprovider --junitxml="$OUT/pytest_gpu.xml" 2>&1 | tail -25
    PYTEST_RC=${PIPESTATUS[0]}
    say "pytest -m gpu exit code $PYTEST_RC$([ "$PYTEST_RC" = 124 ] && echo ' (timed out)')"
fi

# ------------------------------------------------------------------------------------------- 4. host vs device
T=$(( $(left) - 5 ))
if [ "$T" -lt 30 ]; then
    say "host/device comparison skipped: ${T}s of the budget left"
else
    say "benchmarks/gpu.py: kernel, normalise, eigh, matrix-free, host vs device at n = 2000, 4000 (timeout ${T}s)"
    timeout "$T" "$PY" benchmarks/gpu.py --sections kernel,normalise,eigh,matrix-free,pde,fma --sizes 2000,4000 --repeats 2 \
        --json "$OUT/gpu_paths.json"
    say "gpu.py (paths) exit code $?"
fi

json_summary true "$WHY"
say "done: $(ls "$OUT" | tr '\n' ' ')"
{ [ "$PYTEST_RC" = 0 ] || [ "$PYTEST_RC" = null ]; } && [ "${BENCH_RC:-0}" = 0 ]
