"""The claims ledger as data: one module per paper, beside the paper's checks (``verify/<check>.py``).

Each module (``verify/papers/fna.py`` for the claims ``FNA-<k>``) holds the paper's ``PREFIX``, ``NAME`` and
``TITLE`` and its ``CLAIMS``: per claim its id, title, priority, the verdict expected for the statement as
printed, the check that decides it (``check=``, the one place a claim and its check are linked; or the test
file, ``test=``), the setting of the deciding run where it is not the check's default, and its details (where
the paper makes it, what it says, what the toolkit asserts instead). :mod:`verify.core.claims` loads them and
answers the queries; ``python -m verify.core.claims_doc --write`` regenerates ``docs/claims.md`` and the
README's table of papers from them; ``python -m verify.core.new_check NAME --paper P`` adds an entry.

A new paper is a new module here, named after its prefix in lower case, and a line in :data:`MODULES`.
"""

#: The paper modules, in the order of the docs and of ``python -m verify --all``.
MODULES = ("fna", "drift", "pde", "fma", "neural", "sa", "gl", "sk", "ga", "ms")

#: Checks that decide no claim of the ledger: contracts a user's own implementation is held to (their default
#: run holds the toolkit's own implementation to the same contract). Listed after the ledger's checks.
CONTRACT_CHECKS = ("pde_contract", "attention_contract")
