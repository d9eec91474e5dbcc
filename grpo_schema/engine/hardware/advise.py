"""plan_fit: will a checked config fit the hardware, and if not, which checked edits of the file make it fit.

The estimate (fit) knows nothing of edits; the edit search (fixes) re-runs the estimate on each candidate, so
this module, which combines the two, sits above both.
"""

from __future__ import annotations

from typing import Any

from grpo_schema.engine.hardware.accelerators import Hardware
from grpo_schema.engine.hardware.fit import FitReport, estimate_fit
from grpo_schema.engine.hardware.fit_codes import H_NO_FIT, H_TIGHT
from grpo_schema.engine.hardware.fixes import attach_fit_fixes
from grpo_schema.engine.hardware.reads import LocalReads


def plan_fit(
    result: Any,
    hardware: str | Hardware | None = None,
    *,
    model_config: str | None = None,
    prompt_length: int | None = None,
    mfu: float | None = None,
    strategy: str | None = None,
    dataset_size: int | None = None,
    suggest_fixes: bool = True,
    local_files: bool = True,
    engine: str | None = None,
    offload: str | None = None,
    host_ram: float | None = None,
    reads: LocalReads | None = None,
) -> FitReport:
    """The whole answer for one checked config. Never raises on bad input: problems become diagnostics."""
    report = estimate_fit(
        result,
        hardware,
        model_config=model_config,
        prompt_length=prompt_length,
        mfu=mfu,
        strategy=strategy,
        dataset_size=dataset_size,
        local_files=local_files,
        engine=engine,
        offload=offload,
        host_ram=host_ram,
        reads=reads,
    )
    if suggest_fixes and report.hardware is not None and any(d.code in (H_NO_FIT, H_TIGHT) for d in report.diagnostics):
        attach_fit_fixes(
            report,
            result,
            report.hardware,
            dict(
                model_config=model_config,
                prompt_length=prompt_length,
                strategy=strategy,
                local_files=local_files,
                engine=engine,
                offload=offload,
                host_ram=host_ram,
                reads=reads,
            ),
        )
    return report
