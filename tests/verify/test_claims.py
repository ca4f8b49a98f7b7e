"""verify.core.claims: every ledger entry has its details (where, claim, what is asserted) and readings."""

import ast
import re
from pathlib import Path

import pytest

from spectral.floor.validation import InputError
from verify.core import claims
from verify.core.check import Check


def test_every_ledger_id_has_details():
    missing = [c.id for c in claims.LEDGER if c.id not in claims.DETAILS]
    assert not missing, f"ledger ids without DETAILS: {missing}"
    for key in claims.DETAILS:
        assert re.fullmatch(r"(" + "|".join(claims.PAPERS) + r")-\d+", key), key


@pytest.mark.parametrize("entry", claims.LEDGER, ids=lambda c: c.id)
def test_details_say_what_is_asserted_where_the_paper_is_wrong(entry):
    d = claims.details(entry.id)
    assert d.where.strip() and len(d.claim) > 30
    if entry.verdict in ("suspicious / likely false as stated", "partly false as stated"):
        assert d.asserted, f"{entry.id}: the paper is wrong as printed, so say what the toolkit asserts"
    if entry.verdict == "partly false as stated":
        assert d.split, f"{entry.id}: say which part holds and which does not"
    assert entry.verdict in claims.VERDICT_NAMES and entry.verdict in claims.READINGS
    for text in (d.where, d.claim, d.asserted or "", d.split or ""):
        assert not re.search(r"CLAIMS|DESIGN|STYLE|\.\./shared", text), text


def test_unknown_ids_are_input_errors():
    with pytest.raises(InputError, match="unknown claim id"):
        claims.details("FNA-999")


def test_partly_false_claims_read_and_count_as_such():
    assert claims.READINGS["partly false as stated"].startswith("partly false")
    mixed = [c for c in claims.LEDGER if c.verdict == "partly false as stated"]
    for c in mixed:
        assert claims.outcome_category(c.id, True) == "partly refuted (corrected statement verified)"
        assert claims.paper_reading([c.id], printed=True) == "paper: partly false as printed"
    assert claims.outcome_category("FNA-10", None) == "not checked here"
    assert claims.outcome_category("FNA-10", False) == "check failed"


# -- the bracket of a printed run ----------------------------------------------------------------

def test_a_printed_run_reads_the_verdict_in_the_readmes_words():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for verdict, words in claims.VERDICT_NAMES.items():
        entry = next(c for c in claims.LEDGER if c.verdict == verdict)
        assert claims.paper_reading([entry.id], printed=True) == f"paper: {words}"
        assert f"| {words} |" in readme  # the words of the README's table of papers
    mixed = claims.paper_reading(["PDE-16", "PDE-18"], printed=True)
    assert mixed == "paper: PDE-16 holds under stated assumptions; PDE-18 holds as printed"
    for c in claims.LEDGER:
        assert "should hold" not in claims.paper_reading([c.id], printed=True)


# -- the printed run against the ledger ----------------------------------------------------------

def _result(claim_ids, *records, check="x"):
    from verify.core.result import CheckResult

    return CheckResult(check, tuple(claim_ids), "s", tuple(records), {"claim": "printed"})


def _rec(name, ok, label=""):
    from verify.core.result import Record

    return Record(name, 0.0 if ok else 2.0, "at_most", tolerance=1.0, label=label)


def test_printed_disagreements_follow_the_ledger():
    # FMA-1, FMA-2 hold as printed; FMA-8 is false as printed; FMA-6 partly false; FMA-11 holds under assumptions
    assert claims.printed_disagreements(_result(["FMA-1", "FMA-2"], _rec("a", True))) == []
    [msg] = claims.printed_disagreements(_result(["FMA-1", "FMA-2"], _rec("a", False)))
    assert "every claim of x holds as printed" in msg
    [msg] = claims.printed_disagreements(_result(["FMA-8"], _rec("a", True)))
    assert "FMA-8 is false as printed" in msg
    assert claims.printed_disagreements(_result(["FMA-6"], _rec("a", False))) == []
    # a failing assertion that names a claim holding as printed is a disagreement, even beside a false claim
    [msg] = claims.printed_disagreements(_result(["FMA-1", "FMA-8"], _rec("a", False, "printed FMA-1: x"),
                                                 _rec("b", False, "FMA-8: y")))
    assert msg.startswith("FMA-1 holds as printed") and "fails a" in msg
    assert claims.printed_disagreements(_result(["FMA-1", "FMA-8"], _rec("a", True, "FMA-1: x"),
                                                _rec("b", False, "FMA-8: y"))) == []
    # a false claim whose own assertions all pass while another part fails
    [msg] = claims.printed_disagreements(_result(["FMA-8", "FMA-6"], _rec("a", True, "FMA-8: x"),
                                                 _rec("b", False, "FMA-6: y")))
    assert msg.startswith("FMA-8 is false as printed") and "none of" in msg
    # holding only under stated assumptions: the printed run may fail or pass
    assert claims.printed_disagreements(_result(["FMA-11"], _rec("a", False))) == []
    assert claims.printed_disagreements(_result(["FMA-11"], _rec("a", True))) == []
    assert claims.printed_disagreements(_result(["USER-1"], _rec("a", False))) == []  # not in the ledger


#: printed runs that disagree with the ledger for a reason outside this module: (check, why); a strict xfail,
#: so fixing one makes the test say so
KNOWN_PRINTED_DISAGREEMENTS: dict[str, str] = {}


def _printed_checks():
    import inspect

    out = []
    for name in claims.available_checks():
        run = claims.load_check(name).run
        par = inspect.signature(run).parameters.get("claim")
        if par is not None:
            marks = ([pytest.mark.xfail(strict=True, reason=KNOWN_PRINTED_DISAGREEMENTS[name])]
                     if name in KNOWN_PRINTED_DISAGREEMENTS else [])
            out.append(pytest.param(name, marks=marks, id=name))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", _printed_checks())
def test_printed_run_at_the_defaults_agrees_with_the_ledger(name):
    """Every check with claim="printed": its printed run at the defaults agrees with the ledger's verdicts."""
    res = claims.load_check(name).run(claim="printed")
    assert claims.printed_disagreements(res) == []
    assert "should hold" not in res.final_line()


# -- every claim is decided by a run in its own setting --------------------------------------------

def test_settings_name_parameters_of_their_checks():
    import inspect

    with_setting = [c for c in claims.LEDGER if c.setting]
    assert [c.id for c in with_setting if c.id.startswith("FNA-")] == ["FNA-11"]
    assert claims.setting("FNA-11") == {"manifold": "sphere"} and claims.setting("FNA-10") == {"manifold": "circle"}
    assert claims.settings("weyl") == [{"manifold": "circle"}, {"manifold": "sphere"}]
    assert claims.settings("levy") == [{}] and claims.setting("FNA-6") == {}
    assert claims.run_label("weyl", {"manifold": "sphere"}) == "weyl[manifold=sphere]"
    assert claims.run_label("weyl", {"manifold": "circle"}) == "weyl"
    for c in with_setting:
        assert c.check, f"{c.id}: a setting needs a check"
        params = inspect.signature(claims.load_check(c.check).run).parameters
        for key, value in c.setting:
            assert key in params, f"{c.id}: {c.check} has no parameter {key!r}"
            assert params[key].default is not None, f"{c.id}: {key} must have an explicit default"
            assert params[key].default != value, f"{c.id}: the setting {key}={value!r} is the default"


@pytest.fixture
def stub_checks(monkeypatch):
    """Every ledger check replaced by a stub with the real ``run`` signature that records each call and returns a
    result with the parameters of the call (defaults filled) and one assertion per run, named after the run."""
    import inspect
    import types

    from verify import testing
    from verify.core import runner
    from verify.core.result import CheckResult, Record

    real = {name: claims.load_check(name) for name in claims.available_checks()}
    calls = []

    def stub(name):
        sig = inspect.signature(real[name].run)

        def run(**kwargs):
            bound = sig.bind(**kwargs)
            bound.apply_defaults()
            params = dict(bound.arguments)
            calls.append((name, {k: v for k, v in kwargs.items()}))
            where = {k: params[k] for k in claims.settings(name)[0]}
            label = claims.run_label(name, where)
            # a check run in several settings fails in its first one: a claim counted from the wrong run shows
            failing = len(claims.settings(name)) > 1 and where == claims.settings(name)[0]
            return CheckResult(name, claims.CHECKS[name], f"stub {label}",
                               (Record(f"run_{label}", 2.0 if failing else 0.0, "at_most", tolerance=1.0),), params)

        run.__signature__ = sig
        return types.SimpleNamespace(run=run)

    stubs = {name: stub(name) for name in real}

    def load(name):
        if name not in stubs:
            raise InputError(f"unknown check {name!r}")
        return stubs[name]

    for module in (claims, runner, testing):
        monkeypatch.setattr(module, "load_check", load)
    return calls


def test_every_claim_is_decided_by_a_run_in_its_own_setting(stub_checks, tmp_path):
    """The ledger walked: runner rows, summary by paper, report page, claims.md, assert_claims and the pytest
    plugin all take each claim's deciding records from the run of its check in the claim's setting."""
    from verify import testing
    from verify.core.claims_doc import claims_markdown
    from verify.core.report import REPORT_HTML, load_report, write_report
    from verify.core.runner import row_of_claim, run_checks, summary_by_paper

    names = claims.available_checks()
    rows = run_checks(names, quiet=True, seed=4)
    assert len(rows) == sum(len(claims.settings(n)) for n in names)
    assert ("weyl", {"manifold": "sphere", "seed": 4}) in stub_checks
    summary = summary_by_paper(rows)
    write_report(tmp_path / "r", rows, quiet=True)
    data = load_report(tmp_path / "r")
    doc = claims_markdown(data)
    page = (tmp_path / "r" / REPORT_HTML).read_text(encoding="utf-8")
    for c in claims.LEDGER:
        if c.check is None or c.check not in names:
            continue
        want = claims.setting(c.id)
        row = row_of_claim(c.id, rows)
        assert row is not None and dict(row.setting) == want, c.id
        assert all(row.result.parameters[k] == v for k, v in want.items()), c.id
        assert claims.decided_by(row.result, c.id)
        others = [r for r in rows if r.name == c.check and r is not row]
        assert not any(claims.decided_by(r.result, c.id) for r in others), c.id
        own = f"run_{claims.run_label(c.check, want)}"
        assert [r.name for r in claims.claim_records(row.result, c.id)] == [own]
        assert c.id in summary[c.paper][claims.outcome_category(c.id, row.result.passed)], c.id
        section = doc.split(f"### {c.id} ")[1].split("\n### ")[0]
        assert f"`{own}`" in section, c.id
        assert not any(f"`run_{claims.run_label(c.check, s)}`" in section
                       for s in claims.settings(c.check) if s != want), c.id
        html_row = page.split(f'<tr id="claim-{c.id}"')[1].split('<tr id="claim-')[0].split("</tbody>")[0]
        assert f"{own}<" in html_row and all(f"run_{claims.run_label(c.check, s)}<" not in html_row
                                       for s in claims.settings(c.check) if s != want), c.id
        assert f"row-{row.result.verdict}" in html_row.split(">")[0], c.id
        stub_checks.clear()
        if row.result.passed:
            (res,) = testing.assert_claims(c.id)
            assert claims.decided_by(res, c.id), c.id
        else:
            with pytest.raises(AssertionError, match=f"1 of 1 checks failed:\nFAIL {c.check} "):
                testing.assert_claims(c.id)
        assert stub_checks == [(c.check, want)], c.id
    assert summary["fractional-neural-attention"]["check failed"] == ["FNA-10"]  # weyl fails on S^1 only here
    stub_checks.clear()
    with pytest.raises(AssertionError, match="1 of 2 checks failed"):
        testing.assert_claims("weyl")
    assert [kw["manifold"] for _, kw in stub_checks] == ["circle", "sphere"]
    assert testing.resolve_runs(["weyl"], {"manifold": "sphere"}) == [("weyl", {"manifold": "sphere"})]
    with pytest.raises(InputError, match="FNA-11 is decided by weyl with manifold='sphere'"):
        testing.assert_claims("FNA-11", manifold="circle")


def test_the_pytest_plugin_adds_one_item_per_run(stub_checks):
    import types

    from verify import pytest_plugin

    class Config:
        def getoption(self, name):
            return {"verify_claims": "FNA-10,FNA-11,DRIFT-13", "verify_full": False}[name]

    added = []

    class Item:
        @classmethod
        def from_parent(cls, parent, **kw):
            return types.SimpleNamespace(**kw)

    real = pytest_plugin.ClaimCheckItem
    pytest_plugin.ClaimCheckItem = Item
    try:
        pytest_plugin.pytest_collection_modifyitems(None, Config(), added)
    finally:
        pytest_plugin.ClaimCheckItem = real
    assert [(i.name, i.check, i.setting) for i in added] == [
        ("verify[weyl]", "weyl", {"manifold": "circle"}),
        ("verify[weyl,manifold=sphere]", "weyl", {"manifold": "sphere"}),
        ("verify[appendix_c]", "appendix_c", {})]


def test_the_claim_check_link_is_written_once():
    """A ledger entry names its check (``Claim(check=...)`` in verify/papers); no check names its claims."""
    root = Path(__file__).resolve().parents[2]
    for path in sorted((root / "verify").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Check":
                assert not any(k.arg == "claims" for k in node.keywords), f"{path}: Check(..., claims=...)"
    for name, ids in claims.CHECKS.items():
        assert (root / "verify" / f"{name}.py").is_file(), name
        assert claims.load_check(name).CHECK.claims == ids
    with pytest.raises(ValueError, match="written once"):
        Check("weyl", claims=("FNA-10",))
    assert Check("a_users_own_check", claims=("USER-1",)).claims == ("USER-1",)
