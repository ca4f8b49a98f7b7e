"""Diffusion maps in a scikit-learn pipeline: DiffusionMaps is the estimator, DiffusionMap its result.

Run: python docs/examples/diffusion_maps_pipeline.py
"""

import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from spectral import DiffusionMap, DiffusionMaps

rng = np.random.default_rng(0)
t = np.sort(rng.uniform(0, 3 * np.pi, 600))  # a noisy spiral: one coordinate along it
X = np.c_[t * np.cos(t), t * np.sin(t)] + 0.05 * rng.standard_normal((600, 2))

pipe = make_pipeline(StandardScaler(), DiffusionMaps(n_components=2, a=1.0, random_state=0))
Y = pipe.fit_transform(X)
dm = pipe[-1]
assert isinstance(dm.diffusion_map_, DiffusionMap)  # the result: eigenvalues, psi, phi, stationary law

# the first diffusion coordinate orders the points along the spiral
order = abs(np.corrcoef(np.argsort(np.argsort(Y[:, 0])), np.arange(600))[0, 1])
assert order > 0.99, order
new = pipe.transform(X[:5])  # Nystrom extension of new points (here: five training points again)
assert np.allclose(new, Y[:5], atol=1e-8)
print(f"bandwidth {dm.bandwidth_:.3g} (auto), eigenvalues {np.round(dm.eigenvalues_, 4)}, "
      f"rank correlation of the first coordinate with the position along the spiral {order:.4f}")
