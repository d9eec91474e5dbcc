"""Parity of grpo_runtime.training.loss with TRL 1.16's `_compute_loss` on identical tensors (tolerance 1e-6).

Each case feeds the same log-probs, entropies, masks and advantages to both, then compares the loss, its gradient
with respect to the log-probs (and entropies, for the entropy bonus) and the logged metrics.
"""

import math

import pytest
import torch

from grpo_runtime.outputs.metrics import loss_metrics
from grpo_runtime.training.loss import LossInputs, LossSettings, StepContext, entropy_threshold, grpo_loss

from .trl_harness import build_trainer, trl_loss

pytestmark = pytest.mark.oracle

LOSS_TYPES = ["grpo", "bnpo", "dr_grpo", "dapo", "cispo", "sapo", "luspo", "vespo"]
TOL = 1e-6
T = 5  # completion width == max_completion_length of the harness trainer


@pytest.fixture(scope="module")
def trainer(tiny_model_dir, tmp_path_factory):
    return build_trainer(tiny_model_dir, tmp_path_factory.mktemp("trl_out"), max_completion_length=T)


def make_tensors(seed=0, rows=(5, 3, 4, 1), old_noise=0.3, advantages=(1.0, -1.0, 0.5, -0.5)):
    """Random log-probs with old/ref policies nearby, so that some tokens are clipped."""
    g = torch.Generator().manual_seed(seed)
    B = len(rows)
    mask = torch.tensor([[1] * n + [0] * (T - n) for n in rows])
    logps = -torch.rand(B, T, generator=g) * 2
    return dict(
        mask=mask,
        logps=logps,
        old=logps + old_noise * torch.randn(B, T, generator=g),
        ref=logps + 0.2 * torch.randn(B, T, generator=g),
        entropies=torch.rand(B, T, generator=g) * 3,
        sampling=logps + 0.1 * torch.randn(B, T, generator=g),
        advantages=torch.tensor(advantages),
    )


def settings(**overrides) -> LossSettings:
    base = dict(
        loss_type="dapo",
        beta=0.0,
        epsilon_low=0.2,
        epsilon_high=0.2,
        delta=None,
        importance_sampling_level="token",
        use_bias_correction_kl=True,
        top_entropy_quantile=1.0,
        off_policy_mask_threshold=None,
        sapo_temperature_pos=1.0,
        sapo_temperature_neg=1.05,
        vespo_k_pos=2.0,
        vespo_lambda_pos=3.0,
        vespo_k_neg=3.0,
        vespo_lambda_neg=2.0,
        max_completion_length=T,
        steps_per_generation=1,
        num_processes=1,
        apply_sampling_ratio=False,
    )
    base.update(overrides)
    return LossSettings(**base)


def run_both(
    trainer,
    t,
    *,
    train=True,
    grad_accum=1,
    num_items=None,
    use_old=True,
    use_sampling=False,
    sampling_ratio=None,
    entropy_coef=0.0,
    processes=1,
    **overrides,
):
    """Run TRL and grpo_runtime on the same tensors; return ((loss, grad_l, grad_h, metrics) for each)."""
    num_items = t["mask"].sum() if num_items is None else num_items
    trl_inputs = dict(
        prompt_ids=torch.ones(len(t["mask"]), 2, dtype=torch.long),
        prompt_mask=torch.ones(len(t["mask"]), 2, dtype=torch.long),
        completion_ids=torch.ones_like(t["mask"]),
        completion_mask=t["mask"],
        advantages=t["advantages"],
        num_items_in_batch=num_items,
        ref_per_token_logps=t["ref"],
    )
    if use_old:
        trl_inputs["old_per_token_logps"] = t["old"]
    if use_sampling:
        trl_inputs["sampling_per_token_logps"] = t["sampling"]
    if sampling_ratio is not None:
        trl_inputs["importance_sampling_ratio"] = sampling_ratio
    trl_overrides = dict(overrides)
    if sampling_ratio is not None:
        trl_overrides.update(use_vllm=True, vllm_importance_sampling_correction=True)
    bonus = entropy_coef != 0.0
    trl_overrides.update(entropy_coef=entropy_coef, _entropy_bonus_enabled=bonus)
    trainer._entropy_window_stats = None

    results = []
    for side in ("trl", "ours"):
        logps = t["logps"].clone().requires_grad_()
        entropies = t["entropies"].clone().requires_grad_()
        if side == "trl":
            loss, metrics = trl_loss(
                trainer, trl_inputs, logps, entropies, train=train, grad_accum=grad_accum, **trl_overrides
            )
        else:
            s = settings(
                apply_sampling_ratio=sampling_ratio is not None,
                num_processes=processes,
                **{k: v for k, v in overrides.items() if k != "_last_world_entropy"},
            )
            threshold = None
            if s.top_entropy_quantile < 1.0:
                threshold = entropy_threshold(entropies, t["mask"], 1 - s.top_entropy_quantile)
            ctx = StepContext(
                training=train,
                grad_accum=grad_accum,
                entropy_bonus=bonus,
                entropy_coef=entropy_coef,
                entropy_threshold=threshold,
            )
            out = grpo_loss(
                LossInputs(
                    logps=logps,
                    entropies=entropies,
                    mask=t["mask"],
                    advantages=t["advantages"],
                    num_items_in_batch=num_items,
                    old_logps=t["old"] if use_old else None,
                    ref_logps=t["ref"],
                    sampling_logps=t["sampling"] if use_sampling else None,
                    sampling_ratio=sampling_ratio,
                ),
                s,
                ctx,
            )
            loss, metrics = out.loss, loss_metrics(out)
        grad_l, grad_h = torch.autograd.grad(loss, [logps, entropies], allow_unused=True)
        results.append((loss.detach(), grad_l, grad_h, metrics))
    return results


def assert_same(results, metrics=True):
    (trl_loss_, trl_gl, trl_gh, trl_m), (loss, gl, gh, m) = results
    assert abs(loss.item() - trl_loss_.item()) <= TOL, (loss.item(), trl_loss_.item())
    assert torch.allclose(gl, trl_gl, atol=TOL, rtol=0), (gl - trl_gl).abs().max()
    if trl_gh is not None or gh is not None:
        assert trl_gh is not None and gh is not None
        assert torch.allclose(gh, trl_gh, atol=TOL, rtol=0)
    if metrics:
        expected = {k: v for k, v in trl_m.items() if k != "entropy_coef"}
        assert set(m) == set(expected), (sorted(m), sorted(expected))
        for name, value in expected.items():
            if value is None or (isinstance(value, float) and math.isnan(value)):
                assert m[name] is None or math.isnan(m[name]), name
            else:
                assert abs(m[name] - value) <= TOL, (name, m[name], value)


@pytest.mark.parametrize("loss_type", LOSS_TYPES)
@pytest.mark.parametrize("level", ["token", "sequence"])
@pytest.mark.parametrize("beta", [0.0, 0.1])
def test_every_loss_type_matches_trl(trainer, loss_type, level, beta):
    t = make_tensors()
    assert_same(run_both(trainer, t, grad_accum=2, loss_type=loss_type, importance_sampling_level=level, beta=beta))


def test_reference_numbers_of_the_spec(trainer):
    """grpo-runtime.md §10.1: dapo with beta=0.1, GA_cur=2, s=1 gives loss -0.111536 and kl 0.006969."""
    torch.manual_seed(0)
    B = 4
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 0, 0, 0, 0]])
    logp = -torch.rand(B, T) * 2
    old = logp + 0.3 * torch.randn(B, T)
    ref = logp + 0.2 * torch.randn(B, T)
    ent = torch.rand(B, T) * 3
    t = dict(
        mask=mask,
        logps=logp,
        old=old,
        ref=ref,
        entropies=ent,
        sampling=old,
        advantages=torch.tensor([1.0, -1.0, 0.5, -0.5]),
    )
    results = run_both(trainer, t, grad_accum=2, loss_type="dapo", beta=0.1)
    assert_same(results)
    assert round(results[1][0].item(), 6) == -0.111536
    assert round(results[1][3]["kl"], 6) == 0.006969


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "luspo"])
def test_on_policy_ratio_without_old_logps(trainer, loss_type):
    """No old log-probs: the ratio is exp(l - sg(l)) = 1 but carries the gradient of l."""
    assert_same(run_both(trainer, make_tensors(), use_old=False, loss_type=loss_type, beta=0.04))


def test_grpo_sequence_level_without_bias_correction(trainer):
    assert_same(
        run_both(
            trainer,
            make_tensors(),
            loss_type="grpo",
            importance_sampling_level="sequence",
            beta=0.1,
            use_bias_correction_kl=False,
        )
    )


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "luspo", "bnpo"])
def test_two_sided_clipping_and_epsilon_high(trainer, loss_type):
    t = make_tensors(seed=1, old_noise=0.6)
    assert_same(run_both(trainer, t, loss_type=loss_type, delta=1.4, epsilon_high=0.28, beta=0.02))


@pytest.mark.parametrize("loss_type", LOSS_TYPES)
def test_eval_mode(trainer, loss_type):
    assert_same(run_both(trainer, make_tensors(seed=2), train=False, grad_accum=4, loss_type=loss_type, beta=0.1))


class OneOfManyProcesses:
    """Stands in for TRL's accelerator: reports `n` processes, with collectives that see only this one."""

    def __init__(self, n):
        self.num_processes = n

    def reduce(self, tensor, reduction="sum"):
        return tensor

    def gather(self, tensor):
        return tensor


@pytest.mark.parametrize("loss_type", ["dapo", "cispo", "vespo"])
@pytest.mark.parametrize("processes,spg,ga", [(1, 1, 3), (2, 4, 2), (4, 2, 8)])
def test_generation_batch_normalizer(trainer, loss_type, processes, spg, ga):
    """dapo-family normalizer: N_gen / P * GA / s, with N_gen counting the whole generation batch."""
    real = trainer.accelerator
    try:
        trainer.accelerator = OneOfManyProcesses(processes)
        trl, ours = run_both(
            trainer,
            make_tensors(seed=3),
            grad_accum=ga,
            num_items=torch.tensor(57),
            loss_type=loss_type,
            steps_per_generation=spg,
            processes=processes,
        )
    finally:
        trainer.accelerator = real
    assert_same((trl, ours))


@pytest.mark.parametrize("threshold", [0.0, 0.05])
@pytest.mark.parametrize("use_sampling", [False, True])
def test_off_policy_mask(trainer, threshold, use_sampling):
    t = make_tensors(seed=4)
    t["sampling"][1, 2] = float("nan")  # a token the sampler could not score counts as no difference
    assert_same(
        run_both(
            trainer, t, loss_type="dapo", beta=0.05, off_policy_mask_threshold=threshold, use_sampling=use_sampling
        )
    )


@pytest.mark.parametrize("quantile", [0.2, 0.5, 0.9])
def test_top_entropy_quantile(trainer, quantile):
    assert_same(run_both(trainer, make_tensors(seed=5), loss_type="grpo", beta=0.1, top_entropy_quantile=quantile))


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "cispo"])
def test_static_entropy_bonus_gradient(trainer, loss_type):
    assert_same(
        run_both(
            trainer,
            make_tensors(seed=6),
            grad_accum=2,
            loss_type=loss_type,
            entropy_coef=0.01,
            top_entropy_quantile=0.5,
        )
    )


@pytest.mark.parametrize("mode", ["token_truncate", "token_mask", "sequence_truncate", "sequence_mask"])
@pytest.mark.parametrize("loss_type", ["dapo", "grpo"])
def test_sampling_ratio_multiplies_policy_term_only(trainer, mode, loss_type):
    from grpo_runtime.training.loss import sampling_importance_ratio

    t = make_tensors(seed=7)
    ratio = sampling_importance_ratio(t["old"], t["sampling"], t["mask"], mode, 0.9, 1.1)
    assert_same(run_both(trainer, t, loss_type=loss_type, beta=0.1, sampling_ratio=ratio))


def test_vespo_folds_token_sampling_ratio_into_phi(trainer):
    from grpo_runtime.training.loss import sampling_importance_ratio

    t = make_tensors(seed=8)
    ratio = sampling_importance_ratio(t["old"], t["sampling"], t["mask"], "token_truncate", None, 3.0)
    assert_same(run_both(trainer, t, loss_type="vespo", beta=0.1, sampling_ratio=ratio))


def test_fully_masked_row_gives_nan_free_loss(trainer):
    t = make_tensors(seed=9, rows=(5, 0, 2, 3))
    for loss_type in ("grpo", "dapo", "bnpo"):
        results = run_both(trainer, t, loss_type=loss_type, beta=0.1)
        assert_same(results)
        assert torch.isfinite(results[1][0])


def test_per_token_logps_and_entropies_match_trl(tiny_model_dir, tmp_path):
    """Temperature 0.7, left-padded prompts, right-padded completions: zeros at padding, values within 1e-6 of
    TRL's fused LM head (which differs from a plain log_softmax by float rounding only)."""
    from grpo_runtime.training.logprobs import completion_logps

    trl_trainer = build_trainer(tiny_model_dir, tmp_path, temperature=0.7)
    model = trl_trainer.model.train()
    g = torch.Generator().manual_seed(11)
    prompt_ids = torch.randint(4, 20, (3, 4), generator=g)
    prompt_mask = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1], [0, 1, 1, 1]])
    completion_ids = torch.randint(4, 20, (3, 5), generator=g)
    completion_mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]])
    with torch.no_grad():
        expected_l, expected_h, _ = trl_trainer._get_per_token_logps_and_entropies(
            model,
            torch.cat([prompt_ids, completion_ids], 1),
            torch.cat([prompt_mask, completion_mask], 1),
            5,
            compute_entropy=True,
        )
        logps, entropies, _ = completion_logps(model, prompt_ids, prompt_mask, completion_ids, completion_mask, 0.7)
    assert torch.allclose(logps, expected_l, atol=TOL, rtol=0)
    assert torch.allclose(entropies, expected_h, atol=TOL, rtol=0)
    assert logps[0, 3:].eq(0).all() and entropies[2, 1:].eq(0).all()
