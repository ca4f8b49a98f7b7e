"""verify.core.implementation: loading a user's ``package.module:function``, calling it, reading what it returns.

The machinery every contract shares: a name that cannot be loaded is bad input naming the option; a user
function that raises or returns something else than the contract's array is one line naming it (exit 2);
the toolkit's own functions keep their traceback; arguments are copied and their changes reported.
"""

import numpy as np
import pytest

from spectral.floor.validation import InputError
from verify.core.implementation import Implementation, ImplementationError, is_reference, load


class Holder:
    @staticmethod
    def scaled(x):
        return 2.0 * x


def changes_its_argument(x, label=""):
    x[0] = -1.0
    return x.copy()


def raises_long(x):
    raise ValueError("bad\n" + "x" * 1000)


class ArrayLike:
    def __array__(self, dtype=None, copy=None):
        return np.ones((2, 2))


class Refuses:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("Can't call numpy() on Tensor that requires grad")


def test_names_and_loading():
    assert is_reference("a.b:c") and not is_reference("fma") and not is_reference(None)
    fn = load(f"{__name__}:Holder.scaled", parameter="kernel")  # a dotted attribute path
    assert fn.name == f"{__name__}:Holder.scaled" and fn.parameter == "kernel" and fn.user
    assert fn.call(np.ones(2))[0].tolist() == [2.0, 2.0]


@pytest.mark.parametrize("text, match", [
    ("fma", r"implementation must be 'a', 'b' or 'package.module:function', got 'fma'"),
    (":f", "must be"), ("mod:", "must be"),
    ("no_such_module_xyz:f", "cannot be loaded: ModuleNotFoundError"),
    ("math:no_such_function", "'math' has no attribute 'no_such_function'"),
    ("math:pi", r"is not callable \(it is a float\)"),
])
def test_names_that_cannot_be_loaded_are_input_errors(text, match):
    with pytest.raises(InputError, match=match):
        load(text, builtins=("a", "b"))


def test_a_module_that_raises_while_imported(tmp_path, monkeypatch):
    (tmp_path / "impl_broken_at_import.py").write_text("1 / 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImplementationError, match="importing 'impl_broken_at_import' raised ZeroDivisionError"):
        load("impl_broken_at_import:f")


def test_calls_copy_the_arrays_and_report_changes():
    fn = load(f"{__name__}:changes_its_argument")
    x = np.zeros(3)
    out, changed = fn.call(x, "not an array")  # non-arrays pass through, never reported
    assert changed == (0,) and x.tolist() == [0.0, 0.0, 0.0] and out[0] == -1.0
    out, changed = fn.call(x, copy=False)  # a temporary: passed as it is
    assert changed == () and x[0] == -1.0


def test_exceptions_of_user_code_are_one_line_and_of_the_toolkit_keep_their_type():
    with pytest.raises(ImplementationError) as info:
        load(f"{__name__}:raises_long").call(np.zeros(1))
    text = str(info.value)
    assert "\n" not in text and len(text) < 400 and text.startswith(f"implementation '{__name__}:raises_long' raised "
                                                                    "ValueError: bad xxx")
    with pytest.raises(ImplementationError, match="raised ValueError"):
        load(f"{__name__}:raises_long").call(np.zeros(1), copy=False)
    toolkit = Implementation("builtin", raises_long, user=False)
    with pytest.raises(ValueError, match="bad"):  # a bug of the toolkit is not the user's error
        toolkit.call(np.zeros(1))


@pytest.mark.parametrize("out, match", [
    (np.ones((2, 3)), r"returned output of shape \(2, 3\), expected \(2, 2\)"),
    (np.ones((2, 2), dtype=np.int64), "dtype int64, expected float64 or float32"),
    (np.ones((2, 2), dtype=np.complex128), "dtype complex128"),
    (np.ones((2, 2), dtype=np.float16), "dtype float16"),
    (None, "returned a NoneType that is not a numeric array"),
    ({"a": 1}, "not a numeric array"),
    (Refuses(), "returned a Refuses that is not an array .RuntimeError: Can't call numpy"),
])
def test_outputs_that_are_not_float_arrays_of_the_shape(out, match):
    fn = Implementation("m:f", lambda: None)
    with pytest.raises(ImplementationError, match=match):
        fn.array(out, (2, 2))


def test_outputs_that_convert():
    fn = Implementation("m:f", lambda: None)
    assert fn.array(ArrayLike(), (2, 2)).dtype == np.float64
    assert fn.array([[1.5, 2.0], [0.0, 1.0]], (2, 2)).dtype == np.float64
    assert fn.array(np.ones((2, 2), np.float32), (2, 2)).dtype == np.float32
    with pytest.raises(ImplementationError, match="dtype float32, expected float64 \\("):
        fn.array(np.ones((2, 2), np.float32), (2, 2), dtypes=(np.float64,))
    assert np.isnan(fn.array(np.full((2, 2), np.nan), (2, 2))).all()  # values are judged by the contract, not here


# -- time limits on a user's code ------------------------------------------------------------------------------
def _spins():
    while True:
        pass


def _sleeps():
    import time

    time.sleep(30)


@pytest.mark.parametrize("function", [_spins, _sleeps], ids=["python-loop", "sleep"])
def test_a_call_past_its_time_limit_is_one_line_naming_the_function(function):
    import time

    fn = Implementation("m:hangs", function, timeout=0.2)
    start = time.monotonic()
    with pytest.raises(ImplementationError, match=r"^implementation 'm:hangs' ran past its time limit of 0.2 s"):
        fn.call()
    assert time.monotonic() - start < 5


def test_a_timed_call_off_the_main_thread_stops_waiting():
    import threading

    fn = Implementation("m:hangs", _sleeps, timeout=0.2)
    seen = []

    def run():
        try:
            fn.call()
        except ImplementationError as exc:
            seen.append(str(exc))

    t = threading.Thread(target=run)
    t.start()
    t.join(10)
    assert seen and "ran past its time limit of 0.2 s" in seen[0]


def test_a_timed_call_returns_and_raises_as_an_untimed_one():
    from verify.core.implementation import call_with_timeout

    assert call_with_timeout(lambda a, b=0: a + b, 1, b=2, timeout=5) == 3
    with pytest.raises(ImplementationError, match="raised ZeroDivisionError"):
        Implementation("m:f", lambda: 1 / 0, timeout=5).call()


def test_an_outer_timer_keeps_its_deadline():
    import signal

    from verify.core.implementation import call_with_timeout

    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        call_with_timeout(lambda: None, timeout=2)
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 0.5
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "1", True])
def test_a_bad_timeout_is_refused_naming_it(bad):
    from spectral.floor.validation import InputError

    with pytest.raises(InputError, match="timeout must be"):
        Implementation("m:f", lambda: None, timeout=bad)


def test_a_very_short_time_limit_never_leaks_the_alarm():
    from verify.core.implementation import CallTimeout, call_with_timeout

    for _ in range(200):  # a limit of microseconds: the alarm may fire anywhere, even before the call
        try:
            call_with_timeout(sum, range(1000), timeout=1e-6)
        except CallTimeout:
            pass
