"""Is there a CUDA device for CuPy? One line on stdout, exit 0 (a device) or 1 (why not).

Used by device_check.sh and device_run.sh before anything is run on a device. A plain script.
"""

import sys


def main() -> int:
    try:
        import cupy
    except ImportError:
        print("CuPy is not installed (pip install '.[gpu-cuda12]' or '.[gpu-cuda13]')")
        return 1
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, no device
        print(f"CuPy {cupy.__version__} sees no CUDA device ({type(exc).__name__}: {exc})")
        return 1
    if count < 1:
        print(f"CuPy {cupy.__version__} sees no CUDA device")
        return 1
    print(f"{count} CUDA device(s), CuPy {cupy.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
