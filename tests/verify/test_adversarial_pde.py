"""verify.pde_contract: the toolkit's step and a correct third-party step hold the contract; adversarial steps
fail for their own reason (a record, or the one-line error of a step that raises or returns another shape).

Small settings: T = 8 and 9 (even and odd: the periodic limit moves), 10 conservation steps, margin 0.2
(42 steps per stability probe).
"""

import numpy as np
import pytest

from verify import pde_contract as check
from verify.core.implementation import ImplementationError
from verify.testing import (assert_passes, assert_round_trip, changed_fields, failed_records, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"sizes": (8, 9), "steps": 10, "margin": 0.2}


def _name(fn) -> str:
    return f"{__name__}:{fn.__name__}"


def _second_difference(a, boundary, periodic_roll=False):
    """Along the last axis, with slices and the ghost values of each boundary (written here, not imported)."""
    if boundary == "periodic" or periodic_roll:
        return np.roll(a, 1, axis=-1) - 2 * a + np.roll(a, -1, axis=-1)
    left = np.empty_like(a)
    right = np.empty_like(a)
    left[..., 1:], right[..., :-1] = a[..., :-1], a[..., 1:]
    if boundary == "neumann":
        left[..., 0], right[..., -1] = a[..., 0], a[..., -1]
    elif boundary == "reflect":
        left[..., 0], right[..., -1] = a[..., 1], a[..., -2]
    else:  # dirichlet and fixed
        left[..., 0], right[..., -1] = 0.0, 0.0
    out = left - 2 * a + right
    if boundary == "fixed":
        out[..., 0] = out[..., -1] = 0.0
    return out


def _step(a, r, axis, boundary, **kw):
    out = np.array(a, dtype=float)
    if axis in ("key", "both"):
        out += r * _second_difference(a, boundary, **kw)
    if axis in ("query", "both"):
        out += r * _second_difference(a.T, boundary, **kw).T
    if boundary == "fixed" and axis == "both":  # the public code's layer on both axes holds the frame
        out[:, [0, -1]] = a[:, [0, -1]]
        out[[0, -1], :] = a[[0, -1], :]
    return out


# -- steps that hold ----------------------------------------------------------------------------------
def sliced(a, *, r, axis, boundary):
    return _step(a, r, axis, boundary)


def sliced_float32(a, *, r, axis, boundary):
    return _step(a, r, axis, boundary).astype(np.float32)


# -- steps that must fail a record ---------------------------------------------------------------------
def all_nan(a, *, r, axis, boundary):
    return np.full(a.shape, np.nan)


def nan_on_dirichlet(a, *, r, axis, boundary):
    out = _step(a, r, axis, boundary)
    if boundary == "dirichlet":
        out[2, 3] = np.nan
    return out


def reflect_as_neumann(a, *, r, axis, boundary):
    return _step(a, r, axis, "neumann" if boundary == "reflect" else boundary)


def roll_everywhere(a, *, r, axis, boundary):
    return _step(a, r, axis, boundary, periodic_roll=True)  # np.roll: every boundary becomes periodic


def axes_swapped(a, *, r, axis, boundary):
    return _step(a, r, {"key": "query", "query": "key"}.get(axis, axis), boundary)


def clamped_r(a, *, r, axis, boundary):
    return _step(a, min(r, 0.999 * (0.25 if axis == "both" else 0.5)), axis, boundary)  # a "safe" step


def leaks_mass(a, *, r, axis, boundary):
    return _step(a, r, axis, boundary) * (1.0 - 1e-9)


def buffer_of_200(a, *, r, axis, boundary):
    """Right for T <= 200: tokens past a fixed buffer of 200 are copied instead of diffused."""
    out = _step(a, r, axis, boundary)
    out[200:, :] = a[200:, :]
    out[:, 200:] = a[:, 200:]
    return out


def mutates(a, *, r, axis, boundary):
    out = _step(a, r, axis, boundary)
    a[0, 0] = 0.0
    return out


# -- not the contract's function: one line, exit 2 ----------------------------------------------------------
def wrong_shape(a, *, r, axis, boundary):
    return _step(a, r, axis, boundary)[:, 1:]


def hangs(a, *, r, axis, boundary):
    import time

    time.sleep(60)


def only_periodic(a, *, r, axis, boundary):
    if boundary != "periodic":
        raise NotImplementedError(f"boundary {boundary!r}")
    return _step(a, r, axis, boundary)
toolkit = measurement_fixture(CHECK, **SMALL)


def _run(fn, **kwargs):
    return check.run(implementation=_name(fn), **{**SMALL, **kwargs})


def test_the_toolkit_step_holds(toolkit):
    p, q = toolkit
    res = assert_passes(CHECK, q, p)
    assert res.final_line().startswith("PASS pde_contract: ")  # a contract decides no ledger claim
    assert q.limit[("key", "periodic", 8)] == pytest.approx(0.5) and q.limit[("both", "periodic", 8)] == 0.25
    assert q.limit[("key", "periodic", 9)] > 0.5  # odd T: mu_max = 4 sin^2(4 pi / 9) < 4


@pytest.mark.parametrize("fn", [sliced, sliced_float32])
def test_correct_third_party_steps_hold(fn):
    res = _run(fn)
    assert res.passed, res.failures
    assert res.final_line().startswith(f"PASS pde_contract [contract on {_name(fn)}: holds]: contract of the step")


def test_a_step_for_some_boundaries_is_held_to_those_only():
    assert _run(only_periodic, boundaries=("periodic",), axes=("key",)).passed


@pytest.mark.parametrize("fn", [all_nan, nan_on_dirichlet])
def test_non_finite_steps_never_pass(fn):
    res = _run(fn)
    assert "non_finite_outputs" in failed_records(res) and res.measured["non_finite_outputs"] > 0
    assert res.final_line().startswith(f"FAIL pde_contract [contract on {_name(fn)}: violated]")


@pytest.mark.parametrize("fn, where", [(reflect_as_neumann, "reflect"), (roll_everywhere, "axis"),
                                       (axes_swapped, "axis")])
def test_wrong_stencils_fail_the_reference_step(fn, where):
    res = _run(fn)
    assert "step_error" in failed_records(res) and where in res.record("step_error").label
    assert res.measured["step_error"] > 1e-3


def test_a_clamped_r_passes_one_step_but_not_the_stability_limit():
    res = _run(clamped_r)
    assert failed_records(res) == {"unstable_growth_rate"}


def test_leaking_mass_fails_conservation():
    res = _run(leaks_mass)
    assert "conserving_row_sum_deviation" in failed_records(res)


def test_a_step_wrong_only_past_200_tokens_fails_at_the_default_sizes():
    long = [t for t in check.DEFAULT_SIZES if t > 256]
    assert {t % 2 for t in long} == {0, 1}  # past 256, even and odd
    one = {"axes": ("key",), "boundaries": ("neumann",)}
    assert _run(buffer_of_200, sizes=(16, 33, 200), **one).passed
    res = _run(buffer_of_200, sizes=tuple(long), **one)
    assert "step_error" in failed_records(res)
    assert any(f"T = {t}" in res.record("step_error").label for t in long)


def test_a_hanging_step_stops_at_the_timeout():
    with pytest.raises(ImplementationError, match=r"hangs' ran past its time limit of 0.2 s"):
        _run(hangs, timeout=0.2)


def test_mutating_the_input_fails():
    assert failed_records(_run(mutates)) == {"arguments_unchanged"}


@pytest.mark.parametrize("fn, match", [
    (wrong_shape, r"returned step \(key axis, periodic\) of shape \(8, 7\), expected \(8, 8\)"),
    (only_periodic, "only_periodic' raised NotImplementedError: boundary 'neumann'"),
])
def test_steps_that_are_not_the_contracts_give_one_line_errors(fn, match):
    with pytest.raises(ImplementationError, match=match):
        _run(fn)


test_counts_fail_their_records = negative_controls(CHECK, "toolkit", [
    ({"non_finite_outputs": 1}, "non_finite_outputs"), ({"mutating_calls": 1}, "arguments_unchanged"),
])


def _first(table, value):
    """The first entry of the table ``table`` of q set to ``value``."""
    return lambda q: changed_fields(q, {(table, next(iter(getattr(q, table)))): value})


test_one_bad_entry_of_a_table_fails_its_record = negative_controls(CHECK, "toolkit", [
    (_first("step_error", 1e-12), "step_error"), (_first("step_error", float("nan")), "step_error"),
    (_first("row_sum_deviation", 1e-9), "conserving_row_sum_deviation"),
    (_first("row_sum_deviation", float("nan")), "conserving_row_sum_deviation"),
    (_first("stable_rate", 1.2), "stable_growth_rate"), (_first("stable_rate", float("nan")), "stable_growth_rate"),
    (_first("unstable_rate", 1.0), "unstable_growth_rate"),
    (_first("unstable_rate", float("nan")), "unstable_growth_rate"),
])


test_bad_input = refusals(check.run, [
    ({"implementation": "euler"}, "'toolkit' or 'package.module:function'"), ({"r": 0.3}, "r"),
    ({"sizes": (3,)}, "sizes"), ({"axes": ("rows",)}, "axes"), ({"boundaries": ()}, "boundaries"),
    ({"margin": 0.0}, "margin"), ({"steps": 0}, "steps"), ({"timeout": 0.0}, "timeout"), ({"sizes": (1025,)}, "sizes"),
])


def test_json_round_trip(toolkit):
    p, q = toolkit
    back = assert_round_trip(CHECK, q, p).quantities
    assert back.step_error == q.step_error and back.limit == q.limit


def test_cli(capsys):
    argv = ["--sizes", "6", "--steps", "4", "--margin", "0.3", "--quiet"]
    assert check.main(["--implementation", _name(sliced), *argv]) == 0
    assert f"[contract on {_name(sliced)}: holds]" in capsys.readouterr().out
    assert check.main(["--implementation", _name(clamped_r), *argv]) == 1
    capsys.readouterr()
    assert check.main(["--implementation", _name(only_periodic), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "NotImplementedError" in err[0] and _name(only_periodic) in err[0]


@pytest.mark.slow
def test_default_run_passes():
    res = check.run()
    assert res.passed, res.failures
