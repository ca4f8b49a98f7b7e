"""Smoothness S(t) and consistency C(t) of the refined attention per PDE type (PDE-11).

Thm. D.2 (eqs. 12-13) states ``S(t) <= S(0) exp(-k_s t) + C_s / k_s`` for ``S = |nabla_s^2 A|_F^2`` and
``C(t) <= C(0) exp(-k_c t)`` for ``C = Var(A)`` (over all entries), for diffusion, wave and
reaction-diffusion alike. For a row-stochastic ``A(0)`` (random softmax, T = 128, key axis):

* diffusion (periodic and cell-centred Neumann): every non-constant mode of every row shrinks by
  ``|1 - r mu_k| <= rho = 1 - r mu_1`` per step (r <= 1/4), so ``S(n) <= rho^(2n) S(0)`` and
  ``C(n) <= rho^(2n) C(0)`` with ``C_s = 0``;
* central advection-diffusion (periodic): the same with ``rho = max_(k>=1) |1 - 4 r sin^2(pi k/T) +
  i (beta dt / ds) sin(2 pi k/T)|``; with zero-flux ends the advected mass piles up at one end and C
  does not decay (recorded);
* wave (eqs. 26-27): the discrete energy ``|V_n|^2 - c^2 <A_n, A_(n-1) L^T>`` is conserved exactly, and
  S and C oscillate without decaying;
* reaction-diffusion (eq. 30, ``R = beta A (1 - A)``): the logistic term pulls entries towards 1, so C
  first grows (by orders of magnitude for beta = 1, and for the paper's beta = 0.02 after ~100 steps). The
  growth depends on T (the slowest mode's damping ``alpha mu_1`` against beta, saturation at ``beta t ~ ln T``):
  it is decided at T = 128 whatever the size asked for, and recorded at that size.

``claim="printed"`` asserts the exponential bounds for diffusion, wave and reaction-diffusion with the
rate ``k = 2 alpha lambda_min`` that the energy estimate of the linear diffusion part gives; the wave and
reaction-diffusion fail.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import spectral
from manifolds.references import pde
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.params import Int, Real, Reals, check_resolved
from verify.core.reduce import worst
from verify.core.result import Recorder

CHECK = Check("pde_smoothing", devices=("cpu", "gpu"),
              printed="the exponential decay of S and C for diffusion, wave and reaction-diffusion with rate "
                      "2 alpha lambda_min, which fails")

#: The measured tolerances (the others are bounds computed from theory or rounding next to their assertion).
CALIBRATION = Calibration(
    Tolerance("wave_late_consistency_fraction", 0.25, measured=0.504, over={"seed": (0, 1, 2, 3, 4)},
              why="no damping: the mean of cos^2 phases keeps C(t) / C(0) about 1/2 over the second half; a "
                  "decaying C would give a fraction near 0"),
    Tolerance("reaction_max_consistency_ratio", 1.5, measured=25.9,
              over=({"seed": (0, 1, 2, 3, 4), "size": (128,)},
                    {"alpha": (0.01, 0.25), "beta_reaction": ((0.003,),), "seed": (0, 1), "size": (128,)}),
              why="logistic growth amplifies the larger entries while A < 1/2: C grows (x29 for beta = 0.02 near "
                  "n = 200, x258 for beta = 1; at beta t = 6 x2.65 with r = 0.25, x37.5 with r = 0.01); a decaying C "
                  "would give <= 1; measured at T = REACTION_DECIDED_SIZE = 128, where every run decides it"),
)
#: C grows only once the logistic term has acted: decided for the rates with beta dt steps >= this (measured growth
#: 0.66 at beta t = 2, 1.1-1.2 at 4 with r = 0.25, >= 2.65 at 6 for r in [0.01, 0.25]; dt = 0.01 with beta = 0.02
#: reaches beta t = 0.4 only: C had not grown, a wrong FAIL).
REACTION_GROWTH_BETA_T = 6.0
#: The growth of C is decided on the random softmax of this size, whatever the size asked for (that one is recorded).
#: While the entries are << 1 the step multiplies A by ~(1 + beta dt) and diffuses it, so C(t) / C(0) ~
#: sum_k f_k exp(2 (beta - alpha mu_k) t) over the non-constant modes k (f_k their share of C(0)), until the entries
#: near 1 at beta t ~ ln T and the logistic term saturates them. It depends on T through mu_1 = 4 sin^2(pi / T)
#: (alpha mu_1 = 0.015 at T = 16, alpha = 0.1: close to beta = 0.02) and through ln T: measured at beta t = 40,
#: beta = 0.02, x0.65 at T = 16, x1.43 at 32, x5.9 at 64 (wrong FAILs at 16 and 32), x29 at 128.
REACTION_DECIDED_SIZE = 128


@CHECK.parameters
class Params:
    size: int = Int(128, "Sequence length T of the random softmax A(0) (d = 16); the growth of C under the reaction "
                    "is decided at T = 128 whatever T (it depends on T), recorded at T", low=16, high=512,
                    unit="tokens")
    steps: int = Int(2000, "Number of steps n tracked (checkpoints on a geometric grid)", low=100, high=20000)
    dt: float = Real(1.0, "Pseudo-time step", low=0.0, high=2.0, low_open=True)
    alpha: float = Real(0.1, "Diffusion coefficient (PDE Table 5: 0.1); r = alpha dt must be <= 1/4", low=0.0,
                        low_open=True)
    c: float = Real(0.15, "Wave speed (PDE Table 11: 0.15); c dt < 1", low=0.0, high=0.9, low_open=True)
    beta_advection: float = Real(0.03, "Advection speed (PDE Table 5: 0.03), with |beta| dt / 2 <= r", low=-0.5,
                                 high=0.5)
    beta_reaction: tuple = Reals((0.02, 1.0), "Reaction rates of R(A) = beta A (1 - A) (0.02 as in Table 5; 1 with "
                                 "a small alpha shows the growth)", low=0.0, high=2.0, low_open=True)
    alpha_reaction_fast: float = Real(0.01, "Diffusion coefficient used with the largest reaction rate", low=0.0,
                                      high=0.25, low_open=True)

    def resolve(self):
        """The rules between parameters: r <= 1/4, c dt < 1, cell Peclet <= 2."""
        r = self.alpha * self.dt
        if r > 0.25:
            raise InputError(f"alpha must keep r = alpha dt <= 0.25, got {r:g}")
        check_resolved("alpha and dt", r, "r = alpha dt")
        check_resolved("c and dt", self.c * self.dt, "c dt")  # c = 1e-300 gave a NaN energy drift
        if self.c * self.dt >= 1.0:
            raise InputError(f"c must keep c dt < 1, got {self.c * self.dt:g}")
        if abs(self.beta_advection) * self.dt / 2 > r:
            raise InputError(f"beta_advection must satisfy |beta| dt / 2 <= r = {r:g}, got {self.beta_advection:g}")
        return self


@dataclasses.dataclass(frozen=True)
class Curves:
    """S(n) = |A(n) L^T|_F^2 and C(n) = Var(A(n)) of one run at the checkpoints, and their values at n = 0."""

    smoothness: np.ndarray
    consistency: np.ndarray
    smoothness0: float
    consistency0: float


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What pde_smoothing measures (key axis, random softmax A(0))."""

    #: the checkpoints n (a geometric grid up to steps)
    steps: np.ndarray
    #: (pde, boundary) -> S and C of diffusion, advection-diffusion (periodic, neumann) and the wave (periodic)
    linear: dict[tuple[str, str], Curves]
    #: beta -> S and C of reaction-diffusion (periodic; alpha_reaction_fast for the largest beta when > 0.5)
    reaction: dict[float, Curves]
    #: the same at T = REACTION_DECIDED_SIZE, where the growth of C is decided (the same runs when size is that)
    reaction_decided: dict[float, Curves]
    #: the wave's discrete energy |V_n|^2 - c^2 <A_n, A_(n-1) L^T> at the checkpoints
    wave_energy: np.ndarray
    #: (pde, boundary) -> largest non-constant mode factor rho of diffusion and periodic advection-diffusion
    rho: dict[tuple[str, str], float]
    #: smallest non-zero eigenvalue of -L (periodic): the rate 2 alpha lambda_min of the printed bound
    lambda_min: float


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """S(t) and C(t) under diffusion, advection-diffusion, wave and reaction-diffusion (Thm. D.2).

    The evolutions, S, C and the wave's energy compute in ``ctx.xp`` (the run's device); ``A(0)`` is
    drawn and the token-by-token second-difference matrices are built on the host.
    """
    xp = ctx.xp
    T, dt, alpha, r = p.size, p.dt, p.alpha, p.alpha * p.dt
    ns = np.unique(np.round(np.geomspace(1, p.steps, 32)).astype(int))
    track = _tracker(xp, T, p.seed, ns, dt)

    with ctx.timed("evolve"):
        linear = {("diffusion", "periodic"): track("diffusion", "periodic", alpha=alpha)[0],
                  ("diffusion", "neumann"): track("diffusion", "neumann", alpha=alpha)[0],
                  ("advection-diffusion", "periodic"): track("advection-diffusion", "periodic", alpha=alpha,
                                                             beta=p.beta_advection)[0],
                  ("advection-diffusion", "neumann"): track("advection-diffusion", "neumann", alpha=alpha,
                                                            beta=p.beta_advection)[0]}
        linear[("wave", "periodic")], energy = track("wave", "periodic", c=p.c)

        def reactions(run):
            out = {}
            for b in p.beta_reaction:
                a_rd = p.alpha_reaction_fast if b == max(p.beta_reaction) and b > 0.5 else alpha
                out[b] = run("reaction-diffusion", "periodic", alpha=a_rd, beta=b)[0]
            return out

        reaction = reactions(track)
        decided = reaction if T == REACTION_DECIDED_SIZE else reactions(
            _tracker(xp, REACTION_DECIDED_SIZE, p.seed, ns, dt))

    k = np.arange(1, T)
    g_adv = np.abs(1.0 - 4 * r * np.sin(np.pi * k / T) ** 2 + 1j * p.beta_advection * dt * np.sin(2 * np.pi * k / T))
    rho = {("diffusion", "periodic"): 1.0 - r * pde.laplacian_eigenvalues(T, "periodic")[1],
           ("diffusion", "neumann"): 1.0 - r * pde.laplacian_eigenvalues(T, "neumann")[1],
           ("advection-diffusion", "periodic"): float(g_adv.max())}
    return Quantities(steps=ns, linear=linear, reaction=reaction, reaction_decided=decided, wave_energy=energy,
                      rho={key: float(v) for key, v in rho.items()},
                      lambda_min=float(pde.laplacian_eigenvalues(T, "periodic")[1]))


def _tracker(xp, T, seed, ns, dt):
    """A function (pde, boundary, **coefficients) -> (Curves, wave energies) of the random softmax A(0) of size T:
    S and C at the checkpoints ns (chained evolution; the wave continues from its velocity)."""
    a0 = xp.asarray(pde.softmax_attention(child_rng(seed, "softmax"), T))
    lap = {b: xp.asarray(pde.stencil_matrix(T, b)) for b in ("periodic", "neumann")}

    def host(x) -> float:
        return float(to_numpy(x))

    def s_c(a, b):
        return host(xp.sum((a @ lap[b].T) ** 2)), host(xp.var(a))

    s0 = {b: s_c(a0, b)[0] for b in lap}
    c0 = host(xp.var(a0))

    def track(pde, boundary, **kw):
        res, done, out_s, out_c, energy = None, 0, [], [], []
        for n in ns:
            if res is None:
                res = spectral.evolve_attention(a0, pde=pde, steps=int(n), dt=dt, boundary=boundary, **kw)
            else:
                res = spectral.evolve_attention(res.attention, pde=pde, steps=int(n - done), dt=dt, boundary=boundary,
                                                velocity=res.velocity, **kw)
            done = n
            s, cc = s_c(res.attention, boundary)
            out_s.append(s)
            out_c.append(cc)
            if pde == "wave":
                prev = res.attention - dt * res.velocity
                energy.append(host(xp.sum(res.velocity ** 2))
                              - kw["c"] ** 2 * host(xp.sum(res.attention * (prev @ lap[boundary].T))))
        curves = Curves(smoothness=np.array(out_s), consistency=np.array(out_c), smoothness0=s0[boundary],
                        consistency0=c0)
        return curves, np.array(energy)

    return track


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Decay at the spectral rate, the wave's energy, the reaction's growth; or the printed bound."""
    ns = q.steps
    if p.claim == "corrected":
        ratios = []
        for key, rho in q.rho.items():
            cur = q.linear[key]
            ratios += [float(np.max(cur.smoothness / (cur.smoothness0 * rho ** (2 * ns)))),
                       float(np.max(cur.consistency / (cur.consistency0 * rho ** (2 * ns))))]
        excess = np.max(ratios)  # np.max: a NaN ratio is not skipped
        rec.at_most("spectral_rate_bound_ratio", excess, 1.0 + 1e-9,
                    why="per mode |g_k|^(2n) <= rho^(2n) with orthonormal modes (constants excluded): S and C obey the "
                        "bound exactly up to rounding (measured max ratio 0.66)",
                    label="S or C decays slower than rho^(2n) for diffusion / advection-diffusion")
        energy = q.wave_energy
        drift = float(np.max(np.abs(energy - energy[0])) / abs(energy[0]))
        rec.at_most("wave_energy_drift", drift, 1e-10,
                    why="symplectic Euler conserves |V_n|^2 - c^2 <A_n, A_(n-1) L^T> exactly; rounding over "
                        f"{p.steps} steps (measured 1e-15)",
                    label="the wave's discrete energy is not conserved")
        wave = q.linear[("wave", "periodic")]
        late = ns >= ns[-1] / 2
        rec.at_least("wave_late_consistency_fraction", float(np.mean(wave.consistency[late])) / wave.consistency0,
                     CALIBRATION.get("wave_late_consistency_fraction", p),
                     label="the wave's C(t) decays")
        horizon = p.dt * float(ns[-1])
        grown = [float(np.max(cur.consistency)) / cur.consistency0 for b, cur in q.reaction_decided.items()
                 if b * horizon >= REACTION_GROWTH_BETA_T]
        if grown:
            rec.at_least("reaction_max_consistency_ratio", np.min(grown),
                         CALIBRATION.get("reaction_max_consistency_ratio", p),
                         label=f"reaction-diffusion did not increase C(t) (at T = {REACTION_DECIDED_SIZE})")
        short = [b for b in q.reaction if b * horizon < REACTION_GROWTH_BETA_T]
        for b in short:
            cur = q.reaction_decided[b]
            rec.info(f"reaction_max_consistency_ratio_beta{b:g}", float(np.max(cur.consistency)) / cur.consistency0)
        if short:
            rec.note(f"reaction rates {', '.join(f'{b:g}' for b in short)}: beta t = {max(short) * horizon:.3g} < "
                     f"{REACTION_GROWTH_BETA_T:g} over the {ns[-1]} steps, too short for the logistic term to raise C: "
                     "its growth is not decided there (raise steps or dt)")
        if p.size != REACTION_DECIDED_SIZE:
            for b, cur in q.reaction.items():
                rec.info(f"reaction_max_consistency_ratio_size{p.size}_beta{b:g}",
                         float(np.max(cur.consistency)) / cur.consistency0)
            rec.note(f"the growth of C is decided at T = {REACTION_DECIDED_SIZE}; at T = {p.size} it is recorded: it "
                     "depends on T (the slowest mode's damping alpha mu_1 = 4 alpha sin^2(pi / T) against beta, and "
                     "saturation at beta t ~ ln T), x0.65 at T = 16 and x1.43 at 32 for beta = 0.02, alpha = 0.1")
        adv = q.linear[("advection-diffusion", "neumann")]
        rec.info("advection_neumann_final_C_ratio", float(adv.consistency[-1]) / adv.consistency0)
        return ("diffusion and periodic advection-diffusion shrink S and C at least like rho^(2n) (rho the largest "
                "non-constant mode factor, C_s = 0); the wave conserves its discrete energy and S, C do not decay; "
                "reaction-diffusion increases C")
    k_rate = 2 * p.alpha * q.lambda_min
    t = ns * p.dt
    ratio = {}
    runs = {"diffusion (periodic)": q.linear[("diffusion", "periodic")],
            "wave (periodic)": q.linear[("wave", "periodic")],
            **{f"reaction-diffusion (beta{b:g})": cur for b, cur in q.reaction.items()}}
    for name, cur in runs.items():
        ratio[name] = worst(float(np.max(cur.smoothness / (cur.smoothness0 * np.exp(-k_rate * t)))),
                            float(np.max(cur.consistency / (cur.consistency0 * np.exp(-k_rate * t)))))
    failing = [name for name, v in ratio.items() if not v <= 1 + 1e-9]  # a NaN ratio is named too
    rec.at_most("printed_max_bound_ratio", np.max(list(ratio.values())), 1.0 + 1e-9,
                why="Thm. D.2 as printed: S and C decay at least like exp(-k t) for diffusion, wave and "
                    f"reaction-diffusion, with k = 2 alpha lambda_min = {k_rate:.3g} from the energy estimate",
                label=f"Thm. D.2 as printed: S or C exceeds S(0), C(0) exp(-k t) for {', '.join(failing)}")
    return "S and C decay exponentially for diffusion, wave and reaction-diffusion alike (Thm. D.2 as printed)"


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
