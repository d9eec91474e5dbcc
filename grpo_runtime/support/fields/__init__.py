"""The field table: what grpo_runtime does with every field of TRL 1.16's `trl grpo` surface and every
`accelerate launch` key, one module per area of settings (the categories are described in grpo_runtime.common).
docs/runtime-fields.md is generated from it (`python -m grpo_runtime.support.page --write`); a test fails when the
page is stale or a field is missing here.
"""

from __future__ import annotations

from grpo_runtime.common import Support
from grpo_runtime.support.fields import data, distributed, generation, launch, model, outputs, training

CONFIG_FIELDS: dict[str, Support] = dict(
    sorted(
        {
            **model.FIELDS,
            **data.FIELDS,
            **generation.FIELDS,
            **training.FIELDS,
            **outputs.FIELDS,
            **distributed.FIELDS,
        }.items()
    )
)
LAUNCH_FIELDS: dict[str, Support] = launch.FIELDS
