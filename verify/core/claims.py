"""The claims ledger: loading it, and the queries on it (which check decides a claim, in which setting, what a
run says about the paper).

The ledger is data, one module per paper in :mod:`verify.papers` (``verify/papers/<paper>.py``: every checkable
claim of that paper restated precisely, with the verdict expected for the printed statement, the check that
decides it and its details); this module knows no paper. An entry is a :class:`~verify.core.ledger.Claim`
with its :class:`~verify.core.ledger.ClaimDetails`. ``Claim.check`` is the one link between a claim and its
check: :data:`CHECKS` (check name -> the ledger ids it decides, in ledger order) is derived from it, and a
check's :attr:`verify.core.check.Check.claims` reads it. :func:`available_checks` lists the checks that exist
in this installation. Claims covered by structural tests rather than a check name the test file.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import re
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

from spectral.floor.validation import InputError
from verify.core.ledger import Claim, ClaimDetails

__all__ = ["Claim", "ClaimDetails", "Ledger", "LEDGER", "DETAILS", "CHECKS", "PAPERS", "PAPER_TITLES", "READINGS",
           "VERDICT_NAMES", "VERDICTS", "CONTRACT_CHECKS", "PAPERS_PACKAGE", "claim", "details", "available_checks",
           "load_check", "paper_reading", "ledger_of", "outcome_category", "claim_records", "setting", "settings",
           "claims_in", "decided_by", "deciding_result", "run_label", "setting_at_defaults", "printed_disagreements"]

#: The package of the ledger's data: ``MODULES`` (the paper modules, in the order of the docs and of
#: ``python -m verify --all``) and ``CONTRACT_CHECKS``; each paper module has ``PREFIX``, ``NAME``, ``TITLE``
#: and ``CLAIMS``.
PAPERS_PACKAGE = "verify.papers"

#: The ledger's verdict on a paper's printed statement -> how a reader should read a PASS of the
#: check (which asserts the corrected, precise statement).
READINGS = {
    "should hold": "confirmed",
    "holds only under stated assumptions": "holds only under stated assumptions",
    "suspicious / likely false as stated": "false as stated -> corrected statement holds",
    "partly false as stated": "partly false as stated -> corrected statement holds",
}

#: Short names of the ledger's verdicts on the printed claims, for tables (README, docs, report).
#: ``"partly false as stated"`` marks a claim with parts of different verdicts (:attr:`ClaimDetails.split`).
VERDICT_NAMES = {
    "should hold": "holds as printed",
    "holds only under stated assumptions": "holds under stated assumptions",
    "suspicious / likely false as stated": "false as printed",
    "partly false as stated": "partly false as printed",
}

#: The verdicts a ledger entry may give the printed statement.
VERDICTS = tuple(READINGS)


@dataclasses.dataclass(frozen=True)
class Ledger:
    """The claims of the papers, in order, with what is derived from them.

    Attributes
    ----------
    claims : tuple of Claim
        Every entry, paper by paper in the order of the paper modules.
    papers : dict
        Paper prefix (``Claim.id`` up to ``-``) -> the paper's name (``Claim.paper``).
    titles : dict
        Paper prefix -> the paper's full title.
    contract_checks : tuple of str
        Checks that decide no claim (contracts a user's implementation is held to).
    """

    claims: tuple[Claim, ...]
    papers: dict[str, str]
    titles: dict[str, str]
    contract_checks: tuple[str, ...] = ()

    @property
    def details(self) -> dict[str, ClaimDetails]:
        """Claim id -> its :class:`ClaimDetails`."""
        return {c.id: c.details for c in self.claims}

    @property
    def checks(self) -> dict[str, tuple[str, ...]]:
        """Check name -> the ledger ids it decides (``Claim.check``), checks in the order of their first claim."""
        out: dict[str, list[str]] = {}
        for c in self.claims:
            if c.check is not None:
                out.setdefault(c.check, []).append(c.id)
        return {name: tuple(ids) for name, ids in out.items()}


def ledger_of(modules: Sequence[ModuleType], contract_checks: Iterable[str] = ()) -> Ledger:
    """The ledger of the paper modules ``modules`` (each with ``PREFIX``, ``NAME``, ``TITLE`` and ``CLAIMS``).

    Raises ValueError where the data contradict themselves: an id that is not ``<PREFIX>-<k>`` of its module or
    appears twice, a claim of another paper, a verdict outside :data:`VERDICTS`, a claim without details or
    without a check or test.
    """
    claims: list[Claim] = []
    papers: dict[str, str] = {}
    titles: dict[str, str] = {}
    for module in modules:
        prefix, name = module.PREFIX, module.NAME
        where = getattr(module, "__name__", prefix)
        if prefix in papers:
            raise ValueError(f"{where}: paper prefix {prefix!r} appears twice")
        papers[prefix], titles[prefix] = name, module.TITLE
        for c in module.CLAIMS:
            if not isinstance(c, Claim) or not re.fullmatch(re.escape(prefix) + r"-\d+", c.id):
                raise ValueError(f"{where}: {c!r} is not a Claim with an id {prefix}-<k>")
            if c.paper != name:
                raise ValueError(f"{where}: {c.id} names paper {c.paper!r}, not {name!r}")
            if c.verdict not in VERDICTS:
                raise ValueError(f"{where}: {c.id} has verdict {c.verdict!r}; one of {VERDICTS}")
            if not isinstance(c.details, ClaimDetails):
                raise ValueError(f"{where}: {c.id} has no ClaimDetails")
            if c.check is None and c.test is None:
                raise ValueError(f"{where}: {c.id} names neither a check nor a test")
            claims.append(c)
    ids = [c.id for c in claims]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ValueError(f"ledger ids appear twice: {', '.join(twice)}")
    return Ledger(tuple(claims), papers, titles, tuple(contract_checks))


def _load() -> Ledger:
    package = importlib.import_module(PAPERS_PACKAGE)
    modules = [importlib.import_module(f"{PAPERS_PACKAGE}.{name}") for name in package.MODULES]
    return ledger_of(modules, package.CONTRACT_CHECKS)


_LEDGER = _load()

#: Every claim of the papers, paper by paper (the data of :mod:`verify.papers`).
LEDGER: tuple[Claim, ...] = _LEDGER.claims
#: claim id -> :class:`ClaimDetails` for every ledger entry.
DETAILS: dict[str, ClaimDetails] = _LEDGER.details
#: check name -> the ledger ids it covers, derived from ``Claim.check`` (the ledger is the one source).
CHECKS: dict[str, tuple[str, ...]] = _LEDGER.checks
#: paper prefix -> the paper's name (``Claim.paper``).
PAPERS: dict[str, str] = _LEDGER.papers
#: Full titles of the papers, by ledger prefix.
PAPER_TITLES: dict[str, str] = _LEDGER.titles
#: Checks that decide no claim of the ledger: contracts a user's own implementation is held to (their
#: default run holds the toolkit's own implementation to the same contract). Listed after the ledger's.
CONTRACT_CHECKS: tuple[str, ...] = _LEDGER.contract_checks

_BY_ID = {c.id: c for c in LEDGER}
_EXAMPLES = ", ".join(next(c.id for c in LEDGER if c.id.startswith(prefix + "-")) for prefix in list(PAPERS)[:2])


def claim(claim_id: str) -> Claim:
    """The ledger entry ``claim_id``; InputError (a ValueError) for an unknown id."""
    try:
        return _BY_ID[claim_id]
    except KeyError:
        raise InputError(f"unknown claim id {claim_id!r}; ledger ids are e.g. {_EXAMPLES}") from None


def available_checks() -> list[str]:
    """Names of the checks in :data:`CHECKS` (in ledger order), then :data:`CONTRACT_CHECKS`, whose module exists."""
    return [name for name in (*CHECKS, *CONTRACT_CHECKS) if importlib.util.find_spec(f"verify.{name}") is not None]


def load_check(name: str):
    """Import ``verify.<name>``; ValueError naming the available checks if it does not exist."""
    available = available_checks()
    if name not in available:
        raise InputError(f"unknown check {name!r}; available: {', '.join(available) or 'none'}")
    return importlib.import_module(f"verify.{name}")


def _reading(verdict: str) -> str:
    return READINGS.get(verdict, verdict)


def paper_reading(claim_ids, *, printed: bool = False) -> str:
    """What the check's claims say about the paper, e.g. ``paper: false as stated -> corrected statement holds``.

    With several claims of different verdicts, each verdict lists its ids. ``printed=True`` (a run
    that asserts the printed statement) states the ledger's verdict on the printed statement in the
    words of the README's tables (:data:`VERDICT_NAMES`: holds as printed, holds under stated
    assumptions, false as printed, partly false as printed).
    """
    if not claim_ids:  # a check that decides no ledger claim (a contract) says nothing about a paper
        return ""
    groups: dict[str, list[str]] = {}
    for cid in claim_ids:
        c = claim(cid)
        text = VERDICT_NAMES.get(c.verdict, c.verdict) if printed else _reading(c.verdict)
        groups.setdefault(text, []).append(cid)
    if len(groups) == 1:
        return f"paper: {next(iter(groups))}"
    return "paper: " + "; ".join(f"{', '.join(ids)} {text}" for text, ids in groups.items())


def outcome_category(claim_id: str, passed: bool | None) -> str:
    """Category of one claim in a run's summary by paper.

    ``confirmed``, ``confirmed under stated assumptions``, ``refuted (corrected statement verified)``,
    ``partly refuted (corrected statement verified)`` (a claim with parts of different verdicts),
    ``check failed`` (the check ran and did not pass: look at it), ``error`` (the check raised) or
    ``not checked here`` (``passed is None``: no check ran for it).
    """
    if passed is None:
        return "not checked here"
    if passed is False:
        return "check failed"
    verdict = claim(claim_id).verdict
    return {"should hold": "confirmed",
            "holds only under stated assumptions": "confirmed under stated assumptions",
            "suspicious / likely false as stated": "refuted (corrected statement verified)",
            "partly false as stated": "partly refuted (corrected statement verified)"}.get(verdict, "confirmed")


# -- The setting of the run that decides each claim --------------------------------------------

def _defaults(check: str) -> dict[str, Any]:
    """The keyword defaults of ``verify.<check>.run``."""
    run = load_check(check).run
    return {name: par.default for name, par in inspect.signature(run).parameters.items()
            if par.default is not inspect.Parameter.empty}


def _setting_keys(check: str) -> list[str]:
    keys: list[str] = []
    for c in LEDGER:
        if c.check == check:
            keys += [k for k, _ in c.setting if k not in keys]
    return keys


def setting(claim_id: str) -> dict[str, Any]:
    """The parameters of the run that decides ``claim_id``: its own :attr:`Claim.setting`, and the check's
    default for every other parameter that a claim of the same check sets.

    A claim decided on the sphere by a check whose default is the circle has ``{"manifold": "sphere"}``, and
    every other claim of that check ``{"manifold": "circle"}`` (the default); ``{}`` for a claim whose check
    runs in one setting only.
    """
    c = claim(claim_id)
    if c.check is None:
        return {}
    own = dict(c.setting)
    keys = _setting_keys(c.check)
    defaults = _defaults(c.check) if any(k not in own for k in keys) else {}
    return {k: own[k] if k in own else defaults[k] for k in keys}


def setting_at_defaults(check: str, keys: Iterable[str]) -> dict[str, Any]:
    """The check's default value of each of ``keys`` (the setting of a run given none of them)."""
    keys = list(keys)
    if not keys:
        return {}
    defaults = _defaults(check)
    return {k: defaults.get(k) for k in keys}


def settings(check: str) -> list[dict[str, Any]]:
    """The distinct settings that the claims of ``check`` are decided in, in ledger order (``[{}]`` for most)."""
    out: list[dict[str, Any]] = []
    for cid in CHECKS.get(check, ()):
        s = setting(cid)
        if s not in out:
            out.append(s)
    return out or [{}]


def claims_in(check: str, where: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The ledger ids of ``check`` decided by a run in setting ``where`` (its full setting, as :func:`settings`
    gives it); every claim of the check when ``where`` is None."""
    ids = CHECKS.get(check, ())
    if where is None:
        return ids
    return tuple(cid for cid in ids if setting(cid) == dict(where))


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def decided_by(result, claim_id: str) -> bool:
    """Whether ``result`` (a ``CheckResult``) was run in the setting that decides ``claim_id``.

    Read from the result's recorded parameters, so it holds for results read back from JSON too.
    """
    c = claim(claim_id)
    if c.check != result.check:
        return False
    params = result.parameters
    return all(k in params and _same(params[k], v) for k, v in setting(claim_id).items())


def deciding_result(claim_id: str, results: Iterable):
    """The first of ``results`` run in the setting that decides ``claim_id``, or None."""
    return next((r for r in results if r is not None and decided_by(r, claim_id)), None)


def run_label(check: str, where: Mapping[str, Any] | None = None) -> str:
    """``"weyl"`` for a run at the check's defaults, ``"weyl[manifold=sphere]"`` for another setting."""
    if not where:
        return check
    defaults = _defaults(check)
    changed = [f"{k}={v}" for k, v in where.items() if not (k in defaults and _same(defaults[k], v))]
    return f"{check}[{','.join(changed)}]" if changed else check


# -- A printed run against the ledger ------------------------------------------------------------

_FALSE_AS_PRINTED = ("suspicious / likely false as stated", "partly false as stated")


def _names_claim(record, claim_id: str) -> bool:
    """Whether a record's name or label names ``claim_id`` (its ``why`` may cite a claim for a tolerance)."""
    return re.search(re.escape(claim_id) + r"(?!\d)", f"{record.name} {record.label}") is not None


def printed_disagreements(result) -> list[str]:
    """Where a run with ``claim="printed"`` disagrees with the ledger's verdicts on the printed claims.

    The rules: a check whose claims all hold as printed passes its printed run; a check with a claim
    false or partly false as printed fails it, on at least one assertion bearing on that claim
    (:func:`claim_records`); an assertion whose name or label names a claim that holds as printed
    passes. A claim that holds only under stated assumptions may fail its printed run (which asserts
    it without them) or not. Returns one sentence per disagreement (empty: they agree).
    """
    ids = [cid for cid in result.claims if cid in _BY_ID]
    if not ids:
        return []
    holds = [cid for cid in ids if claim(cid).verdict == "should hold"]
    false = [cid for cid in ids if claim(cid).verdict in _FALSE_AS_PRINTED]
    out = []
    if len(holds) == len(ids) and not result.passed:
        out.append(f"every claim of {result.check} holds as printed ({', '.join(ids)}), but its printed run fails: "
                   + "; ".join(result.failures))
    if false and result.passed:
        out.append(f"{', '.join(false)} {'is' if len(false) == 1 else 'are'} false as printed (in part), but the "
                   f"printed run of {result.check} passes")
    for cid in holds:
        for r in result.records:
            if r.deciding and r.passed is False and _names_claim(r, cid):
                out.append(f"{cid} holds as printed, but the printed run of {result.check} fails {r.name} "
                           f"({r.label})")
    for cid in false:
        records = claim_records(result, cid)
        if not result.passed and not any(r.passed is False for r in records):
            out.append(f"{cid} is false as printed (in part), but none of the printed run's assertions bearing on "
                       "it fails")
    return out


def claim_records(result, claim_id: str) -> list:
    """The deciding records of ``result`` (a ``CheckResult``) that bear on ``claim_id``.

    A check covering several claims names the claim in a record's name, label or rationale
    (``"<id> entropy"``); records that name none of the check's claims bear on all of them.
    """
    own = re.compile(re.escape(claim_id) + r"(?!\d)")
    others = [re.compile(re.escape(c) + r"(?!\d)") for c in result.claims if c != claim_id]
    out = []
    for r in result.records:
        if not r.deciding:
            continue
        text = f"{r.name} {r.label} {r.why}"
        if own.search(text) or not any(o.search(text) for o in others):
            out.append(r)
    return out


def details(claim_id: str) -> ClaimDetails:
    """Where claim ``claim_id`` is made, what it says and what the toolkit asserts (InputError if unknown)."""
    claim(claim_id)
    return DETAILS[claim_id]
