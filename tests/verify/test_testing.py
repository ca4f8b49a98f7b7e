"""verify.testing: assert_claims and the pytest plugin (--verify-claims, the verify_claims fixture), and the
helpers of a check's own tests (measured, measurement_fixture, assert_fails, assert_nan_fails, ...), held to a
toy check.
"""

import dataclasses
import subprocess
import sys
from importlib.metadata import entry_points

import numpy as np
import pytest

from spectral.floor.validation import InputError
from verify.core.check import Check, Context
from verify.core.claims import load_check
from verify.core.params import Int, Real
from verify.core.reduce import worst
from verify.testing import (assert_claims, assert_fails, assert_nan_fails, assert_passes, assert_printed_agrees,
                            assert_refused, assert_round_trip, assert_same_quantities, assert_same_records,
                            changed_fields, failed_records, measured, measurement_fixture, negative_controls, refusals,
                            resolve_checks)


def test_ids_and_names_resolve_to_checks_once():
    assert resolve_checks(["DRIFT-13", "appendix_c", "drift-6"]) == ["appendix_c", "metric_scaling"]
    with pytest.raises(InputError, match="unknown claim id or check 'nosuch'"):
        resolve_checks(["nosuch"])
    with pytest.raises(InputError, match="FNA-6 has no check .*tests/spectral/test_kernel_identities.py"):
        resolve_checks(["FNA-6"])
    with pytest.raises(InputError, match="at least one"):
        resolve_checks([])


def test_passing_claims_return_their_results():
    (res,) = assert_claims("PDE-3", size=64)  # pde_modes: 0.02 s a run
    assert res.check == "pde_modes" and res.passed and res.parameters["size"] == 64


def test_a_failing_claim_raises_with_what_failed():
    with pytest.raises(AssertionError, match=r"1 of 1 checks failed:\nFAIL pde_modes \[paper: PDE-3 holds under "
                                             r"stated assumptions; PDE-4 false as printed\]: Prop. D.4\(1\) as printed"):
        assert_claims("pde_modes", claim="printed")


def test_a_keyword_no_check_takes_is_refused():
    with pytest.raises(InputError, match="no selected check takes 'no_such_option'"):
        assert_claims("appendix_c", no_such_option=1)


def _run_pytest(folder, *args):
    registered = any(ep.value == "verify.pytest_plugin" for ep in entry_points(group="pytest11"))
    plugin = [] if registered else ["-p", "verify.pytest_plugin"]
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, *args],
                          cwd=folder, capture_output=True, text=True, timeout=300, check=False)


def test_pytest_option_and_fixture(tmp_path):
    (tmp_path / "test_user.py").write_text(
        "def test_fixture(verify_claims):\n"
        "    assert verify_claims('PDE-3')[0].check == 'pde_modes'\n"
        "\n"
        "def test_printed_fails(verify_claims):\n"
        "    import pytest\n"
        "    with pytest.raises(AssertionError):\n"
        "        verify_claims('pde_modes', claim='printed')\n")
    out = _run_pytest(tmp_path, "--verify-claims", "PDE-3", "-rA")  # pde_modes: 0.02 s a run
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 passed" in out.stdout and "verify[pde_modes]" in out.stdout


def test_pytest_option_with_an_unknown_id_is_a_usage_error():
    from verify import pytest_plugin

    class Config:
        def getoption(self, name):
            return {"verify_claims": "nosuch", "verify_full": False}[name]

    with pytest.raises(pytest.UsageError, match="--verify-claims: unknown claim id or check 'nosuch'"):
        pytest_plugin.pytest_collection_modifyitems(None, Config(), [])
    items = []
    Config.getoption = lambda self, name: None
    pytest_plugin.pytest_collection_modifyitems(None, Config(), items)  # no option: adds nothing
    assert items == []


# -- the helpers for a check's own tests (measured, measurement_fixture, assert_fails, ...) ---------------------

TOY = Check("testing_toy", claims=(), printed="the toy's gap is zero")
MEASURED = []  # one entry per measurement of the toy


@TOY.parameters
class ToyParams:
    n: int = Int(4, "Entries", low=2, high=64)
    gap: float = Real(0.01, "The measured gap", low=0, high=1)


@dataclasses.dataclass(frozen=True)
class ToyQuantities:
    gap: float
    errors: np.ndarray
    by_beta: dict[float, np.ndarray]
    counts: dict[tuple[int, str], int]


@TOY.measurement
def toy_measure(p: ToyParams, ctx: Context) -> ToyQuantities:
    MEASURED.append(p)
    xp = ctx.xp
    errors = np.asarray(xp.linspace(0.0, 0.01, p.n))
    return ToyQuantities(p.gap, errors, {0.5: errors.copy(), 1.0: errors[::-1].copy()}, {(2, "a"): 0, (3, "b"): 0})


@TOY.assertions
def toy_assess(q: ToyQuantities, p: ToyParams, rec) -> str:
    rec.at_most("gap", q.gap, 0.1, why="toy bound")
    rec.at_most("worst_error", worst(q.errors), 0.1, why="toy bound")
    rec.at_most("worst_by_beta", worst([worst(e) for e in q.by_beta.values()]), 0.1, why="toy bound")
    rec.equal("bad_counts", sum(q.counts.values()), 0, why="toy count")
    rec.info("mean_error", float(np.mean(q.errors)))
    if p.claim == "printed":
        rec.at_most("printed_gap", q.gap, 0.0, why="the printed statement: no gap at all")
    return "the toy's errors are small"


toy = measurement_fixture(TOY, n=6)


def test_the_fixture_measures_once_per_module(toy):
    p, q = toy
    assert p == TOY.params(n=6) and type(q) is ToyQuantities and q.errors.shape == (6,)
    assert MEASURED.count(p) == 1 and toy_measure.__name__ == "toy_measure"


def test_the_fixture_is_shared(toy):
    assert MEASURED.count(toy[0]) == 1  # the second test asking for it did not measure again


def test_measured_takes_parameters_and_a_namespace(strict_xp):
    p, q = measured(TOY, n=3, xp=strict_xp)
    assert p.n == 3 and q.errors.shape == (3,) and "linspace" in strict_xp.used


def test_assert_passes_returns_the_result_or_lists_the_failures(toy):
    p, q = toy
    assert assert_passes(TOY, q, p).passed
    with pytest.raises(AssertionError, match="gap = 0.5"):
        assert_passes(TOY, dataclasses.replace(q, gap=0.5), p)
    assert failed_records(TOY.assess(q, dataclasses.replace(p, claim="printed"))) == {"printed_gap"}


def test_assert_fails_holds_the_named_record_to_the_change(toy):
    p, q = toy
    res = assert_fails(TOY, q, p, "gap", only=True, gap=0.5)
    assert failed_records(res) == {"gap"}
    assert_fails(TOY, q, p, {"gap", "worst_error"}, gap=0.5, errors=q.errors + 1)
    assert_fails(TOY, q, dataclasses.replace(p, claim="printed"), "printed_gap", only=True)  # no change: p altered
    with pytest.raises(AssertionError, match="testing_toy passed with gap changed"):
        assert_fails(TOY, q, p, "gap", gap=0.05)  # a change the check accepts
    with pytest.raises(AssertionError, match=r"\['worst_error'\] did not fail; failed: \['gap'\]"):
        assert_fails(TOY, q, p, "worst_error", gap=0.5)  # another record failed, not the one named
    with pytest.raises(AssertionError, match=r"\['worst_error'\] failed too"):
        assert_fails(TOY, q, p, "gap", only=True, gap=0.5, errors=q.errors + 1)
    with pytest.raises(AssertionError, match="did not fail"):
        assert_fails(TOY, q, p, "mean_error", gap=0.5)  # an informational record never fails
    with pytest.raises(KeyError, match="no record 'nosuch'"):
        assert_fails(TOY, q, p, "nosuch", gap=0.5)


def test_assert_nan_fails_puts_the_nan_where_told(toy):
    p, q = toy
    res = assert_nan_fails(TOY, q, p, "gap", "gap", only=True)
    assert np.isnan(res.quantities.gap)
    res = assert_nan_fails(TOY, q, p, "errors", "worst_error", only=True)
    assert np.isnan(res.quantities.errors).all()
    res = assert_nan_fails(TOY, q, p, "errors", "worst_error", at=2)
    assert np.isnan(res.quantities.errors).tolist() == [False, False, True, False, False, False]
    res = assert_nan_fails(TOY, q, p, ("by_beta", 1.0), "worst_by_beta", at=-1, only=True)
    assert np.isnan(res.quantities.by_beta[1.0][-1]) and not np.isnan(res.quantities.by_beta[0.5]).any()
    assert np.isnan(res.quantities.by_beta[1.0]).sum() == 1 and not np.isnan(q.by_beta[1.0]).any()  # q unchanged
    res = assert_nan_fails(TOY, q, p, ("counts", (3, "b")), "bad_counts")  # an integer becomes NaN
    assert np.isnan(res.quantities.counts[3, "b"])
    with pytest.raises(TypeError, match="no NaN can be put in a dict"):
        assert_nan_fails(TOY, q, p, "by_beta", "worst_by_beta")
    with pytest.raises(AssertionError, match="did not fail"):
        assert_nan_fails(TOY, q, p, "errors", "gap")  # the NaN reached another record


def test_assert_round_trip_compares_types_and_values(toy, monkeypatch):
    p, q = toy
    back = assert_round_trip(TOY, q, p)
    assert type(back.quantities) is ToyQuantities and back.records == TOY.assess(q, p).records
    nan_q = dataclasses.replace(q, errors=np.full(6, np.nan))
    assert_same_quantities(nan_q, dataclasses.replace(nan_q))  # a NaN equals a NaN
    for other, match in [
        (dataclasses.replace(q, gap=0.02), r"q.gap: 0.01 became 0.02"),
        (dataclasses.replace(q, errors=q.errors[:3]), r"q.errors: array float64 \(6,\) became float64 \(3,\)"),
        (dataclasses.replace(q, errors=q.errors.astype(int)), r"q.errors: array float64 \(6,\) became int64"),
        (dataclasses.replace(q, by_beta={"0.5": q.by_beta[0.5], 1.0: q.by_beta[1.0]}), r"q.by_beta: keys"),
        (dataclasses.replace(q, counts={(2, "a"): 0, (3, "b"): 0.0}), r"q.counts\[\(3, 'b'\)\]: int became float"),
        (dataclasses.replace(q, counts={(2.0, "a"): 0, (3, "b"): 0}), r"key \(2, 'a'\) \(\(int,str\)\) became"),
    ]:
        with pytest.raises(AssertionError, match=match):
            assert_same_quantities(q, other)
    # a quantity that JSON does not give back fails the round trip
    monkeypatch.setattr("verify.core.quantities.from_plain", lambda kind, value: dataclasses.replace(q, gap=0.0))
    with pytest.raises(AssertionError, match="q.gap: 0.01 became 0.0"):
        assert_round_trip(TOY, q, p)


def test_assert_refused_wants_the_input_error_and_its_words():
    err = assert_refused(TOY.run, "n must", n=1)
    assert "n must" in str(err)
    assert_refused(TOY.params, "gap", gap=2.0)
    with pytest.raises(AssertionError, match="does not match 'gap'"):
        assert_refused(TOY.params, "gap", n=1)
    with pytest.raises(AssertionError, match="did not refuse the input"):
        assert_refused(TOY.params, "n", n=5)
    with pytest.raises(TypeError, match="unknown parameter"):  # not an InputError: it propagates
        assert_refused(TOY.params, "n", size=5)


def test_assert_same_records_compares_verdicts_and_values(toy):
    p, q = toy
    ref = TOY.assess(q, p)
    assert_same_records(ref, TOY.assess(dataclasses.replace(q, gap=q.gap * (1 + 1e-9)), p))
    with pytest.raises(AssertionError, match="gap"):
        assert_same_records(ref, TOY.assess(dataclasses.replace(q, gap=q.gap * 1.01), p))
    with pytest.raises(AssertionError, match="PASS"):
        assert_same_records(ref, TOY.assess(dataclasses.replace(q, gap=0.5), p))
    one, other = (TOY.assess(dataclasses.replace(q, **c), p) for c in ({"gap": 0.5}, {"errors": q.errors + 1}))
    with pytest.raises(AssertionError, match="gap"):  # both fail, on different records
        assert_same_records(one, other)
    printed = TOY.assess(q, dataclasses.replace(p, claim="printed"))  # one record more
    with pytest.raises(AssertionError):
        assert_same_records(printed, TOY.assess(dataclasses.replace(q, gap=0.5), p))


def test_changed_fields_follow_paths_through_dictionaries_and_dataclasses(toy):
    p, q = toy
    changes = changed_fields(q, {("by_beta", 0.5): np.zeros(6), ("by_beta", 1.0): np.ones(6), "gap": 0.2})
    assert set(changes) == {"by_beta", "gap"} and changes["gap"] == 0.2
    assert changes["by_beta"][0.5].tolist() == [0.0] * 6 and changes["by_beta"][1.0].tolist() == [1.0] * 6
    assert q.by_beta[1.0][0] == pytest.approx(0.01) and q.gap == 0.01  # q itself is unchanged
    inner = changed_fields(dataclasses.replace(q, counts={"a": ToyParams()}), {("counts", "a", "n"): 9})
    assert inner["counts"]["a"] == ToyParams(n=9)
    with pytest.raises(TypeError, match="cannot go into a ndarray at 0"):
        changed_fields(q, {("errors", 0): 1.0})
    with pytest.raises(KeyError):
        changed_fields(q, {("by_beta", 2.0, "x"): 1.0})


test_negative_controls_make_one_case_per_assertion = negative_controls(TOY, "toy", [
    ({"gap": 0.5}, "gap"),
    ({("by_beta", 0.5): np.full(6, 0.2)}, "worst_by_beta"),
    (lambda q: {"errors": q.errors + 1}, "worst_error"),
    ({("counts", (2, "a")): 1}, "bad_counts"),
], only=True)

test_refusals_make_one_case_per_input = refusals(TOY.params, [({"n": 1}, "n must"), ({"gap": 2.0}, "gap")])


def test_the_made_tests_fail_on_a_wrong_case(toy):
    made = negative_controls(TOY, "toy", [])

    class Request:
        @staticmethod
        def getfixturevalue(name):
            assert name == "toy"
            return toy

    made(Request(), {"gap": 0.5}, "gap")
    with pytest.raises(AssertionError, match="testing_toy passed with gap changed"):
        made(Request(), {"gap": 0.05}, "gap")
    with pytest.raises(AssertionError, match=r"\['gap'\] failed too"):
        negative_controls(TOY, "toy", [], only=True)(Request(), {"gap": 0.5, "errors": toy[1].errors + 1},
                                                     "worst_error")
    assert [m.args for m in made.pytestmark] == [("change, record", [])]
    with pytest.raises(AssertionError, match="did not refuse the input"):
        refusals(TOY.params, [])({"n": 5}, "n")


appendix = measurement_fixture(load_check("appendix_c").CHECK)


def test_assert_printed_agrees_with_the_ledger(appendix):
    check = load_check("appendix_c").CHECK
    p, q = appendix
    res = assert_printed_agrees(check, q, p)  # DRIFT-13 is false as printed: the printed run fails
    assert not res.passed and res.parameters["claim"] == "printed"
    with pytest.raises(AssertionError, match="DRIFT-13 holds as printed, but coefficient_1d, coefficient_2d did"):
        assert_printed_agrees(check, q, p, holding=("DRIFT-13",))
    as_printed = dataclasses.replace(q, coefficient_1d=q.printed_1d, coefficient_2d=q.printed_2d)
    with pytest.raises(AssertionError, match="false as printed .*, but the printed run of appendix_c passes"):
        assert_printed_agrees(check, as_printed, p)
