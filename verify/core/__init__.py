"""The machinery of the checks: the skeleton, declared parameters, results, the command line, runs.

* :mod:`verify.core.check` the skeleton of a check (:class:`~verify.core.check.Check`),
  :mod:`verify.core.params` declared parameters, :mod:`verify.core.result` records and results,
  :mod:`verify.core.calibration` tolerances as data, :mod:`verify.core.quantities` typed measured
  quantities to and from JSON;
* :mod:`verify.core.cli` the command line of every check, :mod:`verify.core.runner` and
  :mod:`verify.core.report` running all checks and the report, :mod:`verify.core.progress` (progress
  lines, the heartbeat with the time left), :mod:`verify.core.tasks` (a check's draws in a loop or on a
  Dask cluster, resumable), :mod:`verify.core.locks` (a lock and claims shared by runs),
  :mod:`verify.core.drawing` finding a check's figure (entry points; verify never imports figures);
* :mod:`verify.core.claims` the claims ledger, :mod:`verify.core.claims_doc` its documents,
  :mod:`verify.core.api_doc` the API reference (docs/api.md);
* :mod:`verify.core.memory` memory first in the checks, :mod:`verify.core.fits` power-law fits,
  :mod:`verify.core.reduce` reductions that keep a NaN (``worst``, ``least``, ``count_bad``),
  :mod:`verify.core.provenance` versions, :mod:`verify.core.threads` BLAS threads.

The checks themselves are the modules ``verify.<name>`` (``python -m verify.<name>``).
"""
