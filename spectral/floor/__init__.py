"""The floor of :mod:`spectral`: what every layer of the toolkit stands on, and nothing else.

The array backend (:mod:`spectral.floor.backend`: array libraries, the host boundary, eigensolver dispatch),
the input validators and error types (:mod:`spectral.floor.validation`: ``InputError``, ``UnavailableError``,
random streams), array inputs (:mod:`spectral.floor.arrays`), the memory guard (:mod:`spectral.floor.memory`,
:mod:`spectral.floor.pairwise_memory`: estimates refused before anything large is allocated), the toolkit's one
squared-distance routine (:mod:`spectral.floor.distance`, which ``manifolds`` shares) and short reprs
(:mod:`spectral.floor.display`).

The floor imports no other module of ``spectral``, and ``manifolds`` (the exact ground truth) imports nothing of
``spectral`` above it (``tests/test_layers.py``). The names users meet (``InputError``, ``UnavailableError``,
``DenseMemoryError``, ...) are exported by :mod:`spectral` itself.
"""
