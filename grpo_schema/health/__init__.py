"""Run health: the same kind of diagnostics as a config's, while and after a run trains.

Rules over the metrics and completions a run writes (grpo_runtime's or TRL's), as plain data with no torch,
behind every surface: `grpo health`, the runtime's live output, the service's runs, and the TRL callback
(grpo_schema.health.trl, which imports transformers only when used).
"""

from grpo_schema.health.findings import HealthFinding
from grpo_schema.health.monitor import HealthMonitor
from grpo_schema.health.rundir import HealthReport, check_run_dir
from grpo_schema.health.settings import HealthSettings

__all__ = ["HealthFinding", "HealthMonitor", "HealthReport", "HealthSettings", "check_run_dir"]
