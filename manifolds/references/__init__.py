"""The papers' mechanisms rebuilt from their definitions, independently of :mod:`spectral`.

Each module restates one paper's construction as directly as the paper writes it (Python sets of
token indices, loops over pairs, token-by-token stencils, closed-form spectra), with NumPy and the
floor's validators only. The checks in :mod:`verify` and the tests of :mod:`spectral` hold the
toolkit's fast implementations to these references; nothing here imports :mod:`spectral`'s
numerics.

* :mod:`manifolds.references.fma`: Fast Multipole Attention hierarchies and eq. (4) by brute force;
* :mod:`manifolds.references.pde`: the PDE paper's stencils, their closed-form spectra and limits;
* :mod:`manifolds.references.neural`: MLP scores by loops over pairs, rank profiles, the NEURAL cases;
* :mod:`manifolds.references.graph_laplacian`: graph-Laplacian constants by quadrature, the finite-eps continuum
  spectra of eps-graph and Gaussian Laplacians on S^1 and S^2 (Funk-Hecke), exact eigenspaces (the GL claims).
* :mod:`manifolds.references.metastability`: growth rates of the uniform state under self-attention dynamics
  (Bessel / Funk-Hecke closed forms and quadrature), the linear theory's law of the first mode to grow, escape
  rates of equally spaced clusters and the metastability theorem's quantities (the MS claims).
"""
