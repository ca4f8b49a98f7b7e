"""Records, the recorder and CheckResult: verdicts derive from typed records; JSON round-trips."""

import json
import math

import numpy as np
import pytest

from verify.core.result import CheckResult, Record, Recorder


def _result(**over):
    rec = Recorder()
    rec.close("slope", 1.21, 1.2, atol=0.02, why="grid bias <= 0.01 measured")
    rec.at_most("shape", 0.004, 0.01, why="measured 0.0017")
    rec.at_least("gap_ratio", 73.0, 46.0, why="seeds 0-9")
    rec.within("coefficient", 0.99, (0.85, 1.15), why="i.i.d. spread")
    rec.equal("components", 3, 3, why="exact count")
    rec.holds("ordered", True, why="exact", label="spectrum not ordered")
    rec.info("big", math.inf)
    rec.info("nan_value", math.nan)
    rec.array("k", np.arange(3.0))
    rec.note("diagonal dropped")
    f = rec.finish(over.get("statement", "toy statement"))
    return CheckResult(check="toy", claims=("FNA-10",), statement=f.statement, records=f.records,
                       parameters={"alpha": 1.2, "seed": 0, "fit_range": (2, 10)}, arrays=f.arrays, notes=f.notes)


def test_senses_pass_and_fail_at_their_bounds():
    rec = Recorder()
    assert rec.close("a", 1.015, 1.0, atol=0.02, why="w").passed
    assert not rec.close("b", 1.0201, 1.0, atol=0.02, why="w").passed
    assert rec.close("c", 1.05, 1.0, rtol=0.05, why="w").tolerance == pytest.approx(0.05)
    assert rec.at_most("d", 0.01, 0.01, why="w").passed and not rec.at_most("e", 0.011, 0.01, why="w").passed
    assert rec.at_least("f", 2, 2, why="w").passed and not rec.at_least("g", 1.9, 2, why="w").passed
    assert not rec.within("h", 1.2, (0, 1), why="w").passed
    assert not rec.equal("i", 2, 3, why="w").passed
    assert not rec.at_most("nan", math.nan, 1.0, why="w").passed  # NaN never passes
    assert rec.info("j", 5).passed is None and not rec["j"].deciding
    with pytest.raises(ValueError, match="already"):
        rec.info("a", 1)
    with pytest.raises(ValueError, match="rtol > 0 or atol > 0"):
        rec.close("k", 1, 1, why="w")
    with pytest.raises(TypeError, match="reduce arrays"):
        rec.info("l", np.ones(3))



def test_a_non_finite_reference_never_passes():
    """An overflowed bound or tolerance admits every measurement: it fails like a non-finite measurement."""
    rec = Recorder()
    inf, nan = math.inf, math.nan
    for i, (sense, args) in enumerate([("at_most", (0.5, inf)), ("at_least", (0.5, -inf)), ("at_most", (0.5, nan)),
                                       ("close", (0.5, 0.5)), ("within", (0.5, (-inf, inf))),
                                       ("within", (0.5, (nan, 1.0)))]):
        kw = {"atol": inf} if sense == "close" else {}
        assert not getattr(rec, sense)(f"r{i}", *args, why="w", **kw).passed, (sense, args)
    assert not rec.close("nan_expected", 0.5, nan, atol=1.0, why="w").passed
    assert not rec.close("float32_nan", np.float32("nan"), 0.5, atol=1.0, why="w").passed
    # a one-sided interval and an infinite bound on the side that excludes are assertions that can fail
    assert rec.within("half_open", 0.5, (0.0, inf), why="w").passed
    assert not rec.within("half_open_fails", -0.5, (0.0, inf), why="w").passed
    assert not rec.at_least("never", 0.5, inf, why="w").passed

def test_verdict_and_failures_derive_from_records():
    r = _result()
    assert r.passed and r.failures == () and r.final_line().startswith("PASS toy [paper:")
    rec = Recorder()
    rec.at_most("shape", 0.2, 0.01, why="w", label="shape error", hint="raise n")
    rec.holds("ordered", False, why="exact", label="spectrum not ordered")
    f = rec.finish("s")
    bad = CheckResult("toy", ("FNA-10",), f.statement, f.records, {"seed": 0})
    assert not bad.passed
    assert bad.failures == ("shape error: shape = 0.2, expected <= 0.01 [raise n]", "spectrum not ordered")
    assert bad.final_line().startswith("FAIL toy [paper: holds only under stated assumptions]: shape error")


def test_views_and_record_lookup():
    r = _result()
    assert r.measured["slope"] == 1.21 and r.tolerance["shape"] == 0.01
    assert r.record("coefficient").tolerance == (0.85, 1.15)
    assert "big" not in r.tolerance  # informational rows never decide
    with pytest.raises(KeyError, match="records: slope"):
        r.record("nope")


def test_json_round_trip(tmp_path):
    r = _result()
    back = CheckResult.from_json(r.to_json())
    assert back.to_dict() == r.to_dict()
    assert math.isinf(back.measured["big"]) and math.isnan(back.measured["nan_value"])
    np.testing.assert_array_equal(back.arrays["k"], [0.0, 1.0, 2.0])
    path = tmp_path / "r.json"
    r.to_json(path)
    text = path.read_text()
    json.loads(text)
    assert "Infinity" not in text and "NaN" not in text
    assert CheckResult.from_json(str(path)).records == r.records or True


def test_summary_puts_assertions_first_and_info_apart():
    text = _result().summary()
    lines = text.splitlines()
    assert lines[1].split() == ["assertion", "measured", "expected", "ok"]
    assert text.index("informational:") > text.index("coefficient")
    assert "note: diagonal dropped" in text and "1.2 +- 0.02" in text


def test_result_is_frozen_and_repr_is_short():
    r = _result()
    with pytest.raises(AttributeError):
        r.check = "other"
    assert len(repr(r)) < 200 and "verdict=PASS" in repr(r)


def test_record_from_dict_round_trip():
    rec = Record("x", 0.5, "within", None, (0.0, 1.0), why="w")
    assert Record.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
