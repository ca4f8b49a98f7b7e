"""A user's own code held to a check's contract: loading ``package.module:function``, calling it safely.

Several checks hold a third party's implementation of a mechanism to the contract the papers'
mechanism must satisfy (``python -m verify.attention_contract --implementation mymod:attention``,
``verify.fma_contract --implementation``, ``verify.weyl --kernel mymod:profile``,
``verify.neural_rank --implementation``, ``verify.pde_contract --implementation``), each with a
``--timeout`` per call. This module is what they share:

* :func:`load` turns the text ``package.module:function`` (``function`` may be a dotted attribute
  path, ``mymod:Attention.forward``) into an :class:`Implementation`; a name that cannot be
  imported, is missing or is not callable is bad input (:class:`~spectral.floor.validation.InputError`
  naming the option, exit 2);
* :meth:`Implementation.call` calls the function with *copies* of the arrays it is given and
  reports which of them the function changed (a contract may forbid that); any exception the
  function raises becomes :class:`ImplementationError`, one line naming the function and the
  exception (``implementation 'mymod:f' raised ValueError: ...``): it is the user's code that
  failed, not the claim, so the command exits 2 without a traceback; a call that runs past the
  implementation's ``timeout`` (seconds) is one too (:func:`call_with_timeout`);
* :meth:`Implementation.array` reads what the function returned as a NumPy array of a stated shape
  and a real floating dtype (float32 or float64); anything else (a wrong shape, integers, complex
  numbers, half precision unless the contract accepts it, an object that is not an array) is an
  :class:`ImplementationError` too. Values are not judged here: NaN and inf are measured (a
  :class:`CountedCalls` keeps the statistics of a contract's calls) and fail the contract's records.

A contract run states the contract's verdict on the implementation in its final line
(``PASS fma_contract [contract on mymod:f: holds]: ...``), not the ledger's verdict on the paper:
the check's ``assess`` calls :meth:`verify.core.result.Recorder.contract_of` (:func:`hold_to_contract`
does, and asserts that no output is NaN or inf).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from spectral.floor.validation import InputError

__all__ = ["Implementation", "ImplementationError", "CallTimeout", "CountedCalls", "is_reference", "load",
           "hold_to_contract", "call_with_timeout", "check_timeout", "FLOAT_DTYPES"]

#: the output dtypes a contract accepts: its rounding tolerances are stated per dtype (n eps)
FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))

#: longest exception message kept in the one-line error
_MESSAGE_CHARS = 300


class ImplementationError(InputError):
    """The user's implementation raised, or returned something that is not the contract's output (exit 2)."""


class CallTimeout(Exception):
    """A call ran past its time limit (raised by :func:`call_with_timeout`)."""


def check_timeout(timeout, *, name: str = "timeout") -> float | None:
    """``timeout`` as seconds > 0, or None for no limit (InputError naming ``name`` otherwise)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.integer, np.floating)):
        raise InputError(f"{name} must be a number of seconds > 0 or None, got {timeout!r}")
    value = float(timeout)
    if not (value > 0 and math.isfinite(value)):
        raise InputError(f"{name} must be a finite number of seconds > 0 or None, got {timeout!r}")
    return value


def call_with_timeout(function: Callable, *args, timeout: float | None = None, **kwargs):
    """``function(*args, **kwargs)``, raising :class:`CallTimeout` when it runs past ``timeout`` seconds.

    In the main thread of a POSIX process the call is interrupted by a real-time interval timer
    (``SIGALRM``; the previous handler and timer are restored afterwards, an outer timer that would
    have fired meanwhile fires at once): a Python loop or a blocking sleep stops at the limit, a
    long C call (one BLAS product) at its end. Elsewhere (another thread, Windows) the call runs in a
    daemon thread that is no longer waited for once the limit passes; it cannot be stopped and runs
    on in the background until it returns or the process exits. ``timeout=None`` calls directly.
    Exceptions of ``function`` propagate unchanged.
    """
    if timeout is None:
        return function(*args, **kwargs)
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        return _call_with_alarm(function, args, kwargs, timeout)
    return _call_in_thread(function, args, kwargs, timeout)


class _Expired(BaseException):
    """Raised inside the timed call by the alarm handler (a BaseException: the user's ``except Exception`` lets
    it through)."""


def _call_with_alarm(function, args, kwargs, timeout):
    def expire(signum, frame):
        raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    start = time.monotonic()
    outer_delay, outer_interval = 0.0, 0.0
    try:
        try:  # armed inside the try: an alarm at any moment below is caught (the timer is one-shot)
            outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, timeout)
            return function(*args, **kwargs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Expired:
        raise CallTimeout(f"ran past its time limit of {timeout:g} s") from None
    finally:
        signal.signal(signal.SIGALRM, previous)
        if outer_delay > 0:  # an outer timer keeps its deadline (at least a moment from now)
            signal.setitimer(signal.ITIMER_REAL, max(outer_delay - (time.monotonic() - start), 1e-6), outer_interval)


def _call_in_thread(function, args, kwargs, timeout):
    box: dict[str, Any] = {}

    def run():
        try:
            box["value"] = function(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread unchanged
            box["error"] = exc

    worker = threading.Thread(target=run, name="verify-timed-call", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise CallTimeout(f"ran past its time limit of {timeout:g} s (it goes on in a background thread)")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def is_reference(text) -> bool:
    """Whether ``text`` is written as ``package.module:function`` (rather than a built-in name)."""
    return isinstance(text, str) and ":" in text


def hold_to_contract(rec, implementation, q, label: str, *, why: str) -> bool:
    """Open the assertions of a contract check: a third party's ``implementation`` is held to the contract, and
    no output may be NaN or inf.

    A reference ``package.module:function`` makes the run a contract run
    (:meth:`verify.core.result.Recorder.contract_of`); the record ``non_finite_outputs`` asserts that none of
    the ``q.output_entries`` output entries the measurement read is NaN or inf (``q.non_finite_outputs`` were).

    Parameters
    ----------
    rec : verify.core.result.Recorder
        The recorder of the check's ``assess``.
    implementation : str
        The parameter naming the implementation (a built-in name, or ``package.module:function``).
    q
        The quantities, with the fields ``non_finite_outputs`` and ``output_entries``.
    label : str
        The implementation's name in the failure.
    why : str
        Why the contract's outputs are finite.

    Returns
    -------
    bool
        Whether ``implementation`` is a third party's (:func:`is_reference`).
    """
    third = is_reference(implementation)
    if third:
        rec.contract_of(implementation)
    rec.equal("non_finite_outputs", q.non_finite_outputs, 0, why=why,
              label=f"{label}: {q.non_finite_outputs} of {q.output_entries} output entries are NaN or inf")
    return third


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > _MESSAGE_CHARS:
        text = text[: _MESSAGE_CHARS - 3] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclasses.dataclass(frozen=True)
class Implementation:
    """A loaded user function and the option that named it.

    Attributes
    ----------
    name : str
        ``package.module:function`` as given.
    function : callable
        The function itself.
    parameter : str
        The option that named it (``"implementation"``, ``"kernel"``), for the error messages.
    user : bool
        True for a user's function; False for the toolkit's own (built-in) one, whose exceptions are
        bugs and keep their traceback (a check wraps its built-ins in the same interface).
    timeout : float or None
        Seconds one call of a user's function may take (None: no limit); a call past it is an
        :class:`ImplementationError` naming the function and the limit. The toolkit's own function
        is never timed.
    """

    name: str
    function: Callable
    parameter: str = "implementation"
    user: bool = True
    timeout: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "timeout", check_timeout(self.timeout))

    def _invoke(self, args, options):
        """The user's function on ``args``: its exceptions and a timeout as one-line ImplementationErrors."""
        try:
            return call_with_timeout(self.function, *args, timeout=self.timeout, **options)
        except CallTimeout:
            raise self._error(f"ran past its time limit of {self.timeout:g} s (raise it with timeout= / "
                              "--timeout)") from None
        except Exception as exc:  # noqa: BLE001 - the user's code: any exception is its failure, reported in one line
            raise self._error(f"raised {_one_line(exc)}") from None

    def _error(self, what: str) -> ImplementationError:
        return ImplementationError(f"{self.parameter} {self.name!r} {what}")

    def call(self, *arrays, copy: bool = True, **options) -> tuple[Any, tuple[int, ...]]:
        """``function(*copies_of_arrays, **options)`` and the positions of the arrays it changed.

        Every NumPy array is copied before the call (``copy=True``), so the caller's own arrays are
        never touched and a later call is not fed what an earlier one wrote; other arguments are
        passed as they are (a caller that must know whether an object changed passes a copy and
        compares it itself). ``copy=False`` passes the arrays themselves (temporaries the caller
        drops) and reports no change. Raises :class:`ImplementationError` (one line naming the
        function and the exception) when the function raises.
        """
        if not copy:
            if not self.user:
                return self.function(*arrays, **options), ()
            return self._invoke(arrays, options), ()
        copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in arrays]
        if not self.user:
            return self.function(*copies, **options), ()
        out = self._invoke(copies, options)
        changed = tuple(i for i, (a, c) in enumerate(zip(arrays, copies)) if isinstance(a, np.ndarray)
                        and (a.shape != c.shape or not np.array_equal(a, c, equal_nan=True)))
        return out, changed

    def array(self, out, shape: tuple[int, ...], *, what: str = "output", dtypes=FLOAT_DTYPES) -> np.ndarray:
        """``out`` as a NumPy array of ``shape`` and one of ``dtypes`` (ImplementationError otherwise).

        ``dtypes`` defaults to float64 and float32 (a contract whose bounds need float64 passes
        ``(numpy.float64,)``). Arrays of another library convert when they support ``numpy.asarray``
        (a CPU torch tensor does; one that requires grad must be detached by the function).
        """
        dtypes = tuple(np.dtype(t) for t in dtypes)
        try:
            arr = np.asarray(out)
        except Exception as exc:  # noqa: BLE001 - a foreign object that refuses conversion
            raise self._error(f"returned a {type(out).__name__} that is not an array ({_one_line(exc)})") from None
        if arr.dtype == object:
            raise self._error(f"returned a {type(out).__name__} that is not a numeric array; the {what} must be a "
                              f"float array of shape {tuple(shape)}")
        if arr.shape != tuple(shape):
            raise self._error(f"returned {what} of shape {arr.shape}, expected {tuple(shape)}")
        if arr.dtype not in dtypes:
            raise self._error(f"returned {what} of dtype {arr.dtype}, expected {' or '.join(map(str, dtypes))} (the "
                              "contract's tolerances are stated for those)")
        return arr


class CountedCalls:
    """Calls of an implementation with the statistics a contract records about what came back.

    ``calls(*arrays, shape=..., what=..., **options)`` calls the function through
    :meth:`Implementation.call`, reads its output with :meth:`Implementation.array` (``"output for
    <what>"`` in its messages) and returns it as float64; it counts the calls, the output entries, the NaN or inf entries among them (and names the
    call, ``what``, that returned the first one), the calls after which an argument had changed (and
    which: ``names[i]`` for the ``i``-th array) and keeps the coarsest dtype returned. Values are
    not judged here: the contract's records are.

    Parameters
    ----------
    fn : Implementation
        The function.
    names : str or sequence of str
        The names of the positional arrays, for ``mutated`` (``"qkv"``).
    """

    def __init__(self, fn: Implementation, names="qkv"):
        self.fn, self.names = fn, tuple(names)
        self.calls = self.entries = self.non_finite = self.mutating = 0
        self.mutated: set[str] = set()
        self.coarsest = np.dtype(np.float64)
        self.first_non_finite = ""

    def __call__(self, *arrays, shape, what: str, dtypes=FLOAT_DTYPES, **options) -> np.ndarray:
        raw, changed = self.fn.call(*arrays, **options)
        out = self.fn.array(raw, shape, what=f"output for {what}", dtypes=dtypes)
        self.calls += 1
        self.entries += out.size
        bad = int(out.size - np.count_nonzero(np.isfinite(out)))
        if bad and not self.first_non_finite:
            self.first_non_finite = what
        self.non_finite += bad
        if changed:
            self.mutating += 1
            self.mutated.update(self.names[i] for i in changed)
        if np.finfo(out.dtype).eps > np.finfo(self.coarsest).eps:
            self.coarsest = out.dtype
        return np.asarray(out, dtype=np.float64)

    def mutated_in_order(self) -> tuple[str, ...]:
        """The changed arguments' names, in the order of ``names``."""
        return tuple(n for n in self.names if n in self.mutated)


def load(text: str, *, parameter: str = "implementation", builtins: tuple[str, ...] = (),
         timeout: float | None = None) -> Implementation:
    """The function named by ``package.module:function`` (InputError naming ``parameter`` when it cannot be loaded).

    Parameters
    ----------
    text : str
        ``package.module:function``; the part after the colon may be a dotted attribute path.
    parameter : str
        The option that named it, for the messages.
    builtins : tuple of str
        The built-in names the option also accepts, listed in the message of a malformed name.
    timeout : float or None
        Seconds one call may take (see :class:`Implementation`).
    """
    allowed = (", ".join(map(repr, builtins)) + " or " if builtins else "") + "'package.module:function'"
    module_name, sep, attr = text.partition(":") if isinstance(text, str) else ("", "", "")
    if not sep or not module_name.strip() or not attr.strip():
        raise InputError(f"{parameter} must be {allowed}, got {text!r}")
    try:
        obj = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"{parameter} {text!r} cannot be loaded: {_one_line(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed while being imported
        raise ImplementationError(f"{parameter} {text!r}: importing {module_name!r} raised {_one_line(exc)}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InputError(f"{parameter} {text!r} cannot be loaded: {module_name!r} has no attribute "
                             f"{attr!r}") from None
    if not callable(obj):
        raise InputError(f"{parameter} {text!r} is not callable (it is a {type(obj).__name__})")
    return Implementation(text, obj, parameter, timeout=timeout)
