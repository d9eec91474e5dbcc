"""Advantages on the reference values of grpo-runtime.md §5 (verified against TRL 1.16 by its authors)."""

import pytest
import torch

from grpo_runtime.training.advantages import compute_advantages, nanstd

NAN = float("nan")
# G = 3, two reward functions; None is NaN. Row 2 is unscorable (both None).
REWARDS = torch.tensor([[1, 0.5], [0, NAN], [NAN, NAN], [2, 0], [2, 1], [2, NAN]])


@pytest.mark.parametrize(
    "scale,weights,aggregation,expected",
    [
        ("group", (1, 1), "sum_then_normalize", [0.70704, -0.70704, 0, -0.57725, 1.1545, -0.57725]),
        ("batch", (1, 1), "sum_then_normalize", [0.68459, -0.68459, 0, -0.30426, 0.60853, -0.30426]),
        ("none", (1, 1), "sum_then_normalize", [0.75, -0.75, 0, -0.33333, 0.66667, -0.33333]),
        ("group", (1, 0.5), "normalize_then_sum", [1.26468, -1.26468, 0, -0.63234, 0.63234, 0]),
    ],
)
def test_reference_values(scale, weights, aggregation, expected):
    result = compute_advantages(REWARDS, torch.tensor(weights, dtype=torch.float32), 3, scale, aggregation)
    assert torch.allclose(result.advantages, torch.tensor(expected), atol=1e-5)


def test_nanstd_uses_bessel_and_needs_two_values():
    assert nanstd(torch.tensor([1.0, 3.0, NAN])).item() == pytest.approx(2**0.5)
    assert torch.isnan(nanstd(torch.tensor([1.0, NAN])))
    rows = nanstd(torch.tensor([[1.0, 2.0, 3.0], [5.0, NAN, NAN]]), dim=1)
    assert rows[0].item() == pytest.approx(1.0) and torch.isnan(rows[1])


def test_a_flat_group_gets_zero_advantage_and_counts_as_zero_std():
    rewards = torch.tensor([[1.0], [1.0], [0.0], [1.0]])
    result = compute_advantages(rewards, torch.ones(1), 2, "group", "sum_then_normalize")
    assert result.advantages[:2].tolist() == [0.0, 0.0]
    assert result.advantages[2] < 0 < result.advantages[3]
