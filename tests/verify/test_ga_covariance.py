"""verify.ga_covariance (GA-5): the covariance dynamics against closed forms, blow-up, collapse onto ker Q."""

import numpy as np

from verify import ga_covariance as check
from verify.testing import assert_fails, assert_passes, changed_fields, failed_records, measurement_fixture

CHECK = check.CHECK

small = measurement_fixture(CHECK, draws=1, dims=(3, 4), t_long=10000)


def test_passes(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert abs(res.measured["blowup_time_softmax"] - q.blowup_times["softmax"]) == 0.0


def test_each_assertion_fails_on_a_wrong_quantity(small):
    p, q = small
    assert_fails(CHECK, q, p, "closed_form_error", only=True, closed_form_error=1e-4)
    assert_fails(CHECK, q, p, "scalar_mean_error", only=True, scalar_mean_error=float("nan"))
    assert_fails(CHECK, q, p, "softmax_blowup_time_error", only=True,
                 **changed_fields(q, {("blowup_solver_times", "softmax"): 1.01 * q.blowup_times["softmax"]}))
    assert_fails(CHECK, q, p, "multihead_anisotropy_error", only=True,
                 **changed_fields(q, {("blowup_direction_error", "multihead"): 0.1}))
    assert_fails(CHECK, q, p, "sinkhorn_finite_past_T*", only=True,
                 **changed_fields(q, {("no_blowup_trace", "sinkhorn"): float("inf")}))
    assert_fails(CHECK, q, p, "l2_growth_rate", only=True,
                 **changed_fields(q, {("no_blowup_rate", "l2"): 2 * q.no_blowup_bound["l2"]}))
    assert_fails(CHECK, q, p, "projected_limit_rank", only=True, projected_rank=2)
    assert_fails(CHECK, q, p, "rank_of_limit", only=True, rank_count=q.rank_count + (q.rank_dims == 4))
    assert_fails(CHECK, q, p, "rank_q_sigma_decay", only=True, rank_q_sigma_decay=np.ones_like(q.rank_q_sigma_decay))
    assert_fails(CHECK, q, p, "rank_trace_increase", only=True, rank_trace_increase=q.rank_trace_increase + 1e-3)
    assert_fails(CHECK, q, p, "sinkhorn_collapse", only=True, sinkhorn_collapse=0.5)
    assert_fails(CHECK, q, p, "sinkhorn_printed_gap", only=True, sinkhorn_printed_gap=1e-3)


def test_a_wrong_covariance_rhs_fails(monkeypatch):
    """The score scale off by 2 (a 1/2 dropped from a convention): closed forms and T* no longer hold.

    (B transposed would not do: with V = lambda I the covariance sees only B's symmetric part.)"""
    from manifolds.references import gaussian_attention as ga

    real = ga._head_terms

    def wrong(spec, h, mean, cov):
        M, c, dS = real(spec, h, mean, cov)
        if M is None or spec.kernel != "dot":
            return M, c, dS
        return 0.5 * M, c, 0.5 * dS
    monkeypatch.setattr(ga, "_head_terms", wrong)
    p = CHECK.params(draws=1, dims=(3,), t_long=10000)
    res = CHECK.assess(CHECK.measure(p), p)
    assert {"closed_form_error", "softmax_blowup_time_error"} <= failed_records(res)
