#!/usr/bin/env bash
# One device run, for the device tool's `run` (issue 29, step 1): every part under its own timeout, the next
# part runs whatever the last one did, everything within 8 minutes, results in OUTDIR (the tool's $OUT).
#
#   bash benchmarks/device_run.sh OUTDIR
#
# Parts (timeouts in seconds; DEVICE_RUN_BUDGET_S, default 470, caps the sum):
#   wheels        40  pip-install the carried wheels in .whl/ (array-api-compat, array-api-strict, dask, ...;
#                     benchmarks/device_wheels.sh fetches them) into /tmp/site, on PYTHONPATH for every part
#   versions      30  nvidia-smi; Python, NumPy, SciPy, CuPy, CUDA runtime and driver, NVRTC, array-api-compat
#   pytest_gpu   140  python -m pytest -m gpu (no -x), JUnit XML in OUTDIR/pytest_gpu.xml
#   device_check 170  bash benchmarks/device_check.sh OUTDIR/device (its own pytest step left out: the part above
#                     ran it); environment.json, gpu.json, gpu_paths.json, summary.json there
#   verify       100  python benchmarks/device_verify.py: every check declared for the GPU on the device and on
#                     the host at once, verdicts compared (OUTDIR/verify.json)
# OUTDIR/summary.json: "gpu", the versions, each part's exit code and seconds (124: timed out), the verdict
# comparison; OUTDIR/run.log: everything printed. 8 files at most come back from the tool's $OUT (its README):
# these 4 and device/'s 4.
#
# Without CuPy or a CUDA device it says why, writes summary.json with "gpu": false and exits 0. Exit code
# otherwise: 0 when every part exited 0, else 1. DEVICE_RUN_DRY=1 walks the parts without a GPU and without
# running them (each becomes `true`; `false` for the part named by DEVICE_RUN_DRY_FAIL, `sleep 600` for
# DEVICE_RUN_DRY_HANG; DEVICE_RUN_DRY_CAP_S shortens every timeout): the tests' check of the step and timeout
# logic; its summary says "gpu": false, "dry": true.
set -u

if [ $# -ne 1 ]; then
    echo "usage: bash benchmarks/device_run.sh OUTDIR" >&2
    exit 2
fi
OUT=$1
mkdir -p "$OUT" || { echo "device_run: cannot create $OUT" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
PY=${PYTHON:-python3}
BUDGET=${DEVICE_RUN_BUDGET_S:-470}
DRY=${DEVICE_RUN_DRY:-0}
START=$(date +%s)
PARTS=$(mktemp)
export PYTHONUNBUFFERED=1
exec > >(tee -a "$OUT/run.log") 2>&1

elapsed() { echo $(( $(date +%s) - START )); }
say() { echo "[device_run $(elapsed)s] $*"; }

part() {  # part NAME TIMEOUT COMMAND...: run under min(TIMEOUT, budget left), record exit code and seconds
    local name=$1 cap=$2 left t0 rc
    shift 2
    left=$(( BUDGET - $(elapsed) ))
    [ "$cap" -lt "$left" ] || cap=$left
    if [ "$cap" -lt 5 ]; then
        say "$name: not run (${left}s of the budget left)"
        printf '%s\t%s\t%s\t%s\n' "$name" "null" 0 "not run: budget spent" >>"$PARTS"
        return
    fi
    local command="$*"
    if [ "$DRY" = 1 ]; then  # the part's command replaced: true, false (DEVICE_RUN_DRY_FAIL) or a hang
        [ -z "${DEVICE_RUN_DRY_CAP_S:-}" ] || cap=$DEVICE_RUN_DRY_CAP_S
        case "$name" in
            "${DEVICE_RUN_DRY_FAIL:-}") set -- false ;;
            "${DEVICE_RUN_DRY_HANG:-}") set -- sleep 600 ;;
            *) set -- true ;;
        esac
    fi
    say "$name (timeout ${cap}s): $command"
    t0=$(date +%s)
    timeout --kill-after=10 "$cap" "$@"
    rc=$?
    printf '%s\t%s\t%s\t%s\n' "$name" "$rc" $(( $(date +%s) - t0 )) "$command" >>"$PARTS"
    say "$name: exit code $rc$([ "$rc" = 124 ] && echo ' (timed out)')"
}

summary() {  # summary GPU(true/false) REASON
    "$PY" - "$OUT" "$PARTS" "$1" "$2" "$(elapsed)" "$BUDGET" <<'EOF'
import json, os, sys
out, parts, gpu, reason, seconds, budget = sys.argv[1:7]
rows = []
for line in open(parts, encoding="utf-8"):
    name, rc, secs, command = line.rstrip("\n").split("\t", 3)
    rows.append({"part": name, "exit_code": None if rc == "null" else int(rc), "seconds": int(secs),
                 "timed_out": rc in ("124", "137"), "command": command})
data = {"gpu": gpu == "true", "dry": os.environ.get("DEVICE_RUN_DRY") == "1", "reason": reason,
        "seconds": int(seconds), "budget_s": int(budget), "parts": rows}
for name in ("versions.json", "verify.json"):
    try:
        part = json.load(open(os.path.join(out, name), encoding="utf-8"))
    except (OSError, ValueError):
        continue
    if name == "versions.json":
        data["versions"] = part
    else:
        data["verify"] = {"comparison": part.get("comparison"), "done": part.get("done"),
                          "device_verdicts": {r["label"]: r["verdict"] for r in part.get("device_runs", [])}}
try:
    os.remove(os.path.join(out, "versions.json"))  # folded in here: at most 8 files come back
except OSError:
    pass
json.dump(data, open(os.path.join(out, "summary.json"), "w"), indent=1)
print("summary: " + ", ".join(f"{r['part']} {r['exit_code']} ({r['seconds']}s)" for r in rows))
EOF
}

# ------------------------------------------------------------------------------------------------ wheels
if compgen -G ".whl/*.whl" >/dev/null; then
    part wheels 40 "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        .whl/*.whl
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

# ------------------------------------------------------------------------------------------------ a device?
if [ "$DRY" = 1 ]; then
    WHY="dry run (DEVICE_RUN_DRY=1): no part is run"
else
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
print(f"{count} CUDA device(s), CuPy {cupy.__version__}")
EOF
    )
    if [ $? -ne 0 ]; then
        say "no GPU here: $WHY; nothing to run"
        summary false "$WHY"
        rm -f "$PARTS"
        exit 0
    fi
fi
say "$WHY; output in $OUT; budget ${BUDGET}s"

# ------------------------------------------------------------------------------------------------ versions
part versions 30 "$PY" - "$OUT/versions.json" <<'EOF'
import importlib, json, platform, subprocess, sys
info = {"python": platform.python_version()}
for name in ("numpy", "scipy", "cupy", "array_api_compat", "array_api_strict", "dask", "numba"):
    try:
        info[name] = importlib.import_module(name).__version__
    except Exception as exc:  # noqa: BLE001 - missing or broken: say which
        info[name] = f"unavailable ({type(exc).__name__})"
try:
    import cupy
    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(0)
    info.update(device=props["name"].decode(), multiprocessors=props["multiProcessorCount"],
                compute_capability=f"{props['major']}.{props['minor']}", cuda_runtime=rt.runtimeGetVersion(),
                cuda_driver=rt.driverGetVersion(), nvrtc=".".join(map(str, cupy.cuda.nvrtc.getVersion())))
except Exception as exc:  # noqa: BLE001
    info["cupy_error"] = f"{type(exc).__name__}: {exc}"
try:
    info["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                                         "--format=csv,noheader"], capture_output=True, text=True,
                                        timeout=20).stdout.strip()
except (OSError, subprocess.TimeoutExpired) as exc:
    info["nvidia_smi"] = f"unavailable ({exc})"
json.dump(info, open(sys.argv[1], "w"), indent=1)
print("  " + ", ".join(f"{k} {v}" for k, v in info.items()))
EOF

# ------------------------------------------------------------------------------------------------ the parts
part pytest_gpu 140 "$PY" -m pytest -m gpu -q -p no:cacheprovider --junitxml="$OUT/pytest_gpu.xml"
part device_check 170 env DEVICE_CHECK_PYTEST=0 DEVICE_CHECK_BUDGET_S=160 DEVICE_CHECK_LARGE_S=90 PYTHON="$PY" \
    bash benchmarks/device_check.sh "$OUT/device"
part verify 100 "$PY" benchmarks/device_verify.py --json "$OUT/verify.json" --budget-s 70

summary "$([ "$DRY" = 1 ] && echo false || echo true)" "$WHY"
BAD=$(awk -F'\t' '$2 != "0" {n++} END {print n + 0}' "$PARTS")
rm -f "$PARTS"
say "done, $BAD part(s) not exiting 0: $(cd "$OUT" && find . -type f | sort | tr '\n' ' ')"
[ "$BAD" = 0 ]
