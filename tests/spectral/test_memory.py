"""Tests of spectral.floor.memory: byte estimates and the refuse-before-allocating guard."""

import tracemalloc

import numpy as np
import pytest

from spectral import DenseMemoryError, available_memory_bytes, check_dense_memory, dense_bytes
from spectral.floor.validation import InputError


class TestDenseBytes:
    def test_matches_numpy_nbytes(self):
        # reference: numpy's own nbytes of a small real array of each dtype
        for dtype in ("float64", "float32", "complex128", np.float16):
            for shape in ((3, 3), (5, 7)):
                ref = np.empty(shape, dtype=dtype).nbytes
                m = None if shape[0] == shape[1] else shape[1]
                assert dense_bytes(shape[0], m, dtype) == ref

    def test_huge_is_exact_integer(self):
        # 10^6 x 10^6 float64 = 8e12 bytes exactly (no float rounding / overflow)
        assert dense_bytes(10**6) == 8 * 10**12
        assert dense_bytes(10**6, dtype="float32") == 4 * 10**12

    def test_array_api_dtype(self):
        array_api_strict = pytest.importorskip("array_api_strict")
        assert dense_bytes(10, dtype=array_api_strict.float32) == 400

    @pytest.mark.parametrize("bad", [0, -3, 2.5, True, "7"])
    def test_bad_counts(self, bad):
        with pytest.raises(InputError, match=r"n must be an integer in \[1, inf\)"):
            dense_bytes(bad)
        with pytest.raises(InputError, match=r"m must be an integer in \[1, inf\)"):
            dense_bytes(4, bad)

    def test_bad_dtype(self):
        with pytest.raises(InputError, match="dtype"):
            dense_bytes(4, dtype="not-a-dtype")


class TestAvailable:
    def test_positive_and_below_total(self):
        avail = available_memory_bytes()
        assert avail > 0
        with open("/proc/meminfo") as fh:
            total_kib = next(int(line.split()[1]) for line in fh if line.startswith("MemTotal"))
        assert avail <= total_kib * 1024


class TestGuard:
    def test_refuses_huge_before_allocating(self):
        # 10^6 x 10^6 float64 is 7276 GiB: must be refused from the estimate alone.
        tracemalloc.start()
        try:
            with pytest.raises(DenseMemoryError) as info:
                check_dense_memory(10**6, alternative="use method='matrix-free'")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        msg = str(info.value)
        # the estimate, 8e12 bytes = 7450.6 GiB, printed with 3 significant digits
        assert f"{8e12 / 2**30:.3g} GiB" in msg
        assert msg.endswith("; use method='matrix-free'")  # the caller's alternative, verbatim
        assert "(1000000, 1000000)" in msg
        # no dense allocation: the guard itself allocates well under a MiB
        assert peak < 1 << 20
        assert isinstance(info.value, MemoryError)

    def test_user_limit(self):
        need = dense_bytes(1000)  # 8e6 bytes
        assert check_dense_memory(1000, max_bytes=need) == need
        with pytest.raises(DenseMemoryError, match="limit max_bytes"):
            check_dense_memory(1000, max_bytes=need - 1)
        # copies multiply the estimate (negative control of the copies factor)
        with pytest.raises(DenseMemoryError):
            check_dense_memory(1000, copies=2, max_bytes=need + 1)
        assert check_dense_memory(1000, 10, dtype="float32", max_bytes=need) == 40000

    def test_small_request_passes_against_available(self):
        assert check_dense_memory(100) == 80000

    def test_message_reports_what_and_names_only_real_options(self):
        with pytest.raises(DenseMemoryError, match="^kernel block of shape \\(10, 20\\)") as info:
            check_dense_memory(10, 20, max_bytes=100, what="kernel block")
        assert str(info.value).endswith("GiB")  # no alternative given: none invented
        with pytest.raises(DenseMemoryError, match="limit max_memory = "):
            check_dense_memory(10, 20, max_bytes=100, limit_name="max_memory")

    @pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "1GB"])
    def test_bad_limit(self, bad):
        with pytest.raises(InputError, match="max_bytes must be"):
            check_dense_memory(10, max_bytes=bad)

    def test_bad_copies(self):
        with pytest.raises(InputError, match=r"copies must be an integer in \[1, inf\)"):
            check_dense_memory(10, copies=0)


class TestLimits:
    def test_address_space_limit_is_respected(self):
        # under ulimit -v (RLIMIT_AS) the free memory is what the limit leaves, not the machine's
        import subprocess
        import sys

        code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
                "from spectral.floor.memory import available_memory_bytes, check_memory; "
                "print(available_memory_bytes()); check_memory(4 << 30, what='four GiB')")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        avail = int(proc.stdout.split()[0])
        assert 0 < avail < 3 << 30
        assert "DenseMemoryError: four GiB needs an estimated 4 GiB, over the memory available now:" in proc.stderr

    def test_cgroup_limits(self, tmp_path):
        from spectral.floor.memory import _cgroup_headroom

        assert _cgroup_headroom(str(tmp_path)) is None  # no control files: no limit
        (tmp_path / "memory.max").write_text("max\n")
        assert _cgroup_headroom(str(tmp_path)) is None
        (tmp_path / "memory.max").write_text(f"{3 << 30}\n")
        (tmp_path / "memory.current").write_text(f"{1 << 30}\n")
        assert _cgroup_headroom(str(tmp_path)) == 2 << 30
        v1 = tmp_path / "v1"
        (v1 / "memory").mkdir(parents=True)
        (v1 / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1 "unlimited"
        assert _cgroup_headroom(str(v1)) is None
        (v1 / "memory" / "memory.limit_in_bytes").write_text(f"{1 << 30}\n")
        (v1 / "memory" / "memory.usage_in_bytes").write_text(f"{1 << 28}\n")
        assert _cgroup_headroom(str(v1)) == (1 << 30) - (1 << 28)


class TestCheckMemory:
    def test_estimate_against_limit(self):
        from spectral import check_memory, format_bytes

        assert check_memory(1000, what="x", max_bytes=1000) == 1000
        with pytest.raises(DenseMemoryError, match=r"^the dense path needs an estimated 1\.5 GiB, over the limit "
                                                   r"max_memory = 1 GiB; use a smaller n$"):
            check_memory(1.5 * 2**30, what="the dense path", max_bytes=2**30, limit_name="max_memory",
                         alternative="use a smaller n")
        assert [format_bytes(v) for v in (512, 3 << 20, 1.5 * 2**30, 8e12)] == ["0.5 KiB", "3 MiB", "1.5 GiB",
                                                                                "7.28 TiB"]
        with pytest.raises(InputError, match="needed must be"):
            check_memory(-1, what="x")


class TestMemoryLimit:
    def test_limit_of_the_guard(self, monkeypatch):
        import spectral.floor.memory as memory

        assert memory.memory_limit(max_bytes=1.5e9) == 1_500_000_000
        monkeypatch.setattr(memory, "available_memory_bytes", lambda device="cpu": 12345)
        assert memory.memory_limit() == memory.memory_limit("cpu") == 12345
        # the limit the guard compares with: a request of exactly the limit passes, one byte more is refused
        assert memory.check_memory(12345, what="x") == 12345
        with pytest.raises(DenseMemoryError, match="over the memory available now"):
            memory.check_memory(12346, what="x")

    def test_first_that_fits_with_the_limit(self):
        from spectral.floor.memory import first_that_fits, memory_limit

        needs = {"dense": 8 << 30, "lanczos": 2 << 30, "matrix-free": 0}
        assert first_that_fits(needs, memory_limit(max_bytes=4 << 30)) == "lanczos"
        assert first_that_fits(needs, memory_limit(max_bytes=2 << 30)) == "lanczos"  # equal fits
        assert first_that_fits({"dense": 8 << 30}, memory_limit(max_bytes=4 << 30)) is None

    def test_bad_arguments(self):
        from spectral.floor.memory import memory_limit

        with pytest.raises(InputError, match="device must be"):
            memory_limit("tpu")
        with pytest.raises(InputError, match="max_memory"):
            memory_limit(max_bytes=0, limit_name="max_memory")
