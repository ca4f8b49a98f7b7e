"""Tests of spectral.memory: byte estimates and the refuse-before-allocating guard."""

import tracemalloc

import numpy as np
import pytest

from spectral import DenseMemoryError, available_memory_bytes, check_dense_memory, dense_bytes
from spectral.validation import InputError


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
