"""Speed: torch.compile and Liger kernels."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from grpo_schema.engine.params.base import AreaParams
from grpo_schema.engine.types import RealBoolValues


class PerformanceParams(AreaParams):
    area = "performance"
    title = "Performance"
    summary = "torch.compile and fused kernels."

    torch_compile: bool = Field(False, description="Compile the model with torch.compile.")
    torch_compile_backend: str | None = Field(
        None, description="torch.compile backend; setting it turns torch_compile on. null picks one per device."
    )
    torch_compile_mode: str | None = Field(
        None,
        description="torch.compile mode (default, reduce-overhead, max-autotune); setting it turns torch_compile on.",
    )
    use_liger_kernel: bool = Field(
        False,
        description="Deprecated for GRPO in TRL 1.16: use model_init_kwargs {use_kernels: true}. Patches "
        "the model with Liger kernels (needs liger-kernel).",
    )
    liger_kernel_config: Annotated[dict[str, bool] | None, RealBoolValues] = Field(
        None, description="Which Liger kernels to apply; fused_linear_cross_entropy must stay off for GRPO."
    )
