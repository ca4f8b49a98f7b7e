#!/usr/bin/env bash
# Fetch, here (where pip reaches an index), the wheels the device machine's image lacks, into .whl/ at the
# repository root, for the `wheels` part of benchmarks/device_run.sh (the device tool's `carry: [".whl"]`).
#
#   bash benchmarks/device_wheels.sh
#
# The image (device tool's KINDS.md, nvidia-h200) has Python 3.12, NumPy, SciPy, CuPy (cupy-cuda13x 14.2),
# scikit-learn, matplotlib, networkx, sympy, numba, pytest, hypothesis; it lacks array-api-compat (the gpu
# extra's namespace for CuPy), array-api-strict (the tests' stand-in namespace), dask and distributed with
# partd, locket, tblib, zict and tornado. Versions: those installed in this environment where they are
# (the tested ones), else the index's newest. About 3.2 MB; .whl/ is added to the repository's git exclude
# file so it is never committed. Exit code 1 if pip could not fetch one.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
EXCLUDE=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCLUDE")"
grep -qx '/.whl/' "$EXCLUDE" 2>/dev/null || echo '/.whl/' >>"$EXCLUDE"
PY=${PYTHON:-python3}
SPECS=$("$PY" - <<'PYEOF'
from importlib import metadata
names = ["array-api-compat", "array-api-strict", "dask", "distributed", "partd", "locket", "tblib", "zict", "tornado"]
specs = []
for name in names:
    try:
        specs.append(f"{name}=={metadata.version(name)}")
    except metadata.PackageNotFoundError:
        specs.append(name)
print(" ".join(specs))
PYEOF
)
rm -rf .whl && mkdir .whl
# shellcheck disable=SC2086
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 -d .whl $SPECS
ls -l .whl
du -sh .whl
