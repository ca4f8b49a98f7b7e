"""Checks of the papers' claims: one module per check, each a library function and a command.

``python -m verify`` lists them; ``verify.<name>.run(**params)`` returns a
:class:`~verify.core.result.CheckResult`; ``python -m verify.<name>`` prints its table and verdict.
"""

from verify.core.provenance import toolkit_version

__version__ = toolkit_version()
