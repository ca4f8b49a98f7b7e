"""What an entry of the claims ledger is: a :class:`Claim` and its :class:`ClaimDetails`.

A claim is one checkable statement of a paper: its id (``<PAPER>-<k>``), the paper, a short title, the priority,
the verdict expected for the statement as printed, and the check (``verify.<check>``) or test file that decides
it. Its details are what a reader needs: where the paper makes the claim, what it says, and what the toolkit
asserts instead where that differs.

The entries are data, one module per paper in :mod:`verify.papers`; :mod:`verify.core.claims` loads them and
answers the queries (which check decides a claim, in which setting, what a run says about the paper).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["Claim", "ClaimDetails"]


@dataclasses.dataclass(frozen=True)
class ClaimDetails:
    """The reader's view of one ledger entry (shown by ``docs/claims.md`` and the HTML report).

    Attributes
    ----------
    where : str
        Where the claim is made in the paper (section, equation, figure).
    claim : str
        What the paper states, restated precisely.
    asserted : str, optional
        What the toolkit asserts instead, where that differs from the printed claim: the corrected
        statement (paper wrong as printed), the conditions under which it holds, or its checkable
        form. None when the claim is asserted as stated.
    split : str, optional
        For a claim with parts of different verdicts: which part holds and which does not.
    """

    where: str
    claim: str
    asserted: str | None = None
    split: str | None = None


@dataclasses.dataclass(frozen=True)
class Claim:
    """One ledger entry: the paper, a short title, the priority, the expected verdict on the printed claim, the
    check (``verify.<check>``) or test file that covers it, and its :class:`ClaimDetails`.

    ``check`` is the one link between a claim and its check: a check's claims are the entries that name it
    (``verify.core.claims.claims_in``). ``setting`` holds the parameters of the run that decides the claim
    where they differ from the check's defaults (``{"manifold": "sphere"}``: a claim about the sphere decided
    by a check whose default run is on the circle); it is stored as sorted ``(name, value)`` pairs and read
    with ``verify.core.claims.setting``. A check whose claims need several settings is run once per distinct
    setting, and each claim takes its deciding records from the run in its own setting
    (``verify.core.claims.decided_by``). ``details`` is left out of comparisons and the repr.
    """

    id: str
    paper: str
    title: str
    priority: str
    verdict: str
    check: str | None = None
    test: str | None = None
    setting: tuple[tuple[str, Any], ...] = ()
    details: ClaimDetails | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self):
        value = self.setting
        if isinstance(value, Mapping):
            value = value.items()
        object.__setattr__(self, "setting", tuple(sorted((str(k), v) for k, v in value)))
