"""verify.core.claims: every ledger entry has its details (where, claim, what is asserted) and readings."""

import re

import pytest

from spectral.validation import InputError
from verify.core import claims


def test_every_ledger_id_has_details():
    missing = [c.id for c in claims.LEDGER if c.id not in claims.DETAILS]
    assert not missing, f"ledger ids without DETAILS: {missing}"
    for key in claims.DETAILS:
        assert re.fullmatch("(" + "|".join(claims.PAPERS) + r")-\d+", key), key


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
        assert claims.paper_reading([c.id], printed=True) == "paper: partly false as stated"
    assert claims.outcome_category("FNA-10", None) == "not checked here"
    assert claims.outcome_category("FNA-10", False) == "check failed"
