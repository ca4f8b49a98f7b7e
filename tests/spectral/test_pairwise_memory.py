"""Tests of spectral.floor.pairwise_memory: the estimate, the limit, and the small-request shortcut."""

import pytest

import spectral.floor.memory
from spectral.floor.memory import DenseMemoryError
from spectral.floor.pairwise_memory import FIXED_OVERHEAD_BYTES, SMALL_REQUEST_BYTES, check_pairwise_memory
from spectral.floor.validation import InputError


def test_estimate_is_pairs_times_bytes_plus_extra():
    fixed = FIXED_OVERHEAD_BYTES
    assert check_pairwise_memory(300, 200, bytes_per_pair=9, extra_bytes=7, max_bytes=2**30, what="x") == 540_007 + fixed
    assert check_pairwise_memory(0, 200, bytes_per_pair=9, max_bytes=fixed, what="x") == fixed


def test_explicit_limit_always_enforced():
    # far below SMALL_REQUEST_BYTES: the caller's limit still holds
    needed = 4800 + FIXED_OVERHEAD_BYTES
    with pytest.raises(DenseMemoryError, match=r"scores of shape \(30, 20\) needs an estimated .* limit max_bytes = "):
        check_pairwise_memory(30, 20, bytes_per_pair=8, max_bytes=needed - 1, what="scores", alternative="use fewer")
    assert check_pairwise_memory(30, 20, bytes_per_pair=8, max_bytes=needed, what="scores") == needed


def test_available_memory_read_only_above_the_small_request_size(monkeypatch):
    calls = []

    def available(*args, **kwargs):
        calls.append(1)
        return 16 << 20

    monkeypatch.setattr(spectral.floor.memory, "available_memory_bytes", available)
    small = SMALL_REQUEST_BYTES - FIXED_OVERHEAD_BYTES
    assert check_pairwise_memory(1, small, bytes_per_pair=1, what="x") == SMALL_REQUEST_BYTES
    assert calls == []  # the shortcut: no /proc read for a small request
    check_pairwise_memory(1, small + 1, bytes_per_pair=1, what="x")
    assert calls == [1]
    with pytest.raises(DenseMemoryError, match=r"over the memory available now: 16 MiB; try y"):
        check_pairwise_memory(4096, 4096, bytes_per_pair=2, what="x", alternative="try y")


@pytest.mark.parametrize("bad, name", [({"max_bytes": 0}, "max_bytes"), ({"max_bytes": -1.0}, "max_bytes"),
                                       ({"bytes_per_pair": -1}, "bytes_per_pair"), ({"extra_bytes": 0.5}, "extra_bytes")])
def test_bad_input(bad, name):
    kwargs = {"bytes_per_pair": 8, "what": "x", **bad}
    with pytest.raises(InputError, match=name):
        check_pairwise_memory(10, 10, **kwargs)
