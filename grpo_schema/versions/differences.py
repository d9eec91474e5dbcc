"""What changes between two TRL releases' `trl grpo` surfaces: the data `grpo migrate --from A --to B` uses to
write changed defaults out explicitly and to rename keys."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .tables import ReleaseSurface, VersionLike, surface

# old name -> new name, for keys whose meaning carried over (checked against the tables: the old name leaves the
# surface in the release the new one is there, or earlier).
RENAMES: dict[str, str] = {
    "torch_dtype": "dtype",  # ModelConfig; both read 0.23-0.26, only dtype from 0.27
    "wandb_log_unique_prompts": "log_unique_prompts",  # GRPOConfig, 0.26
    "vllm_guided_decoding_regex": "vllm_structured_outputs_regex",  # GRPOConfig, 0.27/0.28
    "use_liger_loss": "use_liger_kernel",  # GRPOConfig -> TrainingArguments' flag, 0.28
    "evaluation_strategy": "eval_strategy",  # transformers 4.46+ (gone from 4.51)
    "no_cuda": "use_cpu",  # transformers 5.0
    "per_gpu_train_batch_size": "per_device_train_batch_size",  # transformers 5.0
    "per_gpu_eval_batch_size": "per_device_eval_batch_size",  # transformers 5.0
    "push_to_hub_token": "hub_token",  # transformers 5.0
    "push_to_hub_model_id": "hub_model_id",  # transformers 5.0
    "vllm_max_model_len": "vllm_max_model_length",  # GRPOConfig: removed 0.18, back under this name in 0.26
    "warmup_ratio": "warmup_steps",  # transformers 5.2: warmup_steps takes a float ratio (< 1)
}


@dataclass(frozen=True)
class DefaultChange:
    name: str
    old: Any  # the default in `a` (None with old_required when there was none)
    new: Any
    old_required: bool = False
    new_required: bool = False
    old_type: str = ""
    new_type: str = ""


@dataclass(frozen=True)
class SurfaceDiff:
    a: str  # release of the table `a` resolved to
    b: str
    added: tuple[str, ...]  # keys `b` reads that `a` does not (rename targets excluded)
    removed: tuple[str, ...]  # keys `a` reads that `b` does not (rename sources excluded)
    renamed: tuple[tuple[str, str], ...]  # (old, new): `a` reads old, `b` reads new and no longer old
    defaults_changed: tuple[DefaultChange, ...]  # keys both read (or renamed pairs) whose default differs
    types_changed: tuple[DefaultChange, ...]  # keys both read whose type differs (scale_rewards bool -> str)

    def explicit_defaults(self) -> dict[str, Any]:
        """For a config written for `a`: the keys to write out so that `b` reads it as `a` did (the old default
        of every key whose default changed; a key `a` required has no default to carry and is left out)."""
        return {c.name: c.old for c in self.defaults_changed if not c.old_required}


def _default(field: Any) -> Any:
    return None if field.required else field.default


def _same(x: Any, y: Any) -> bool:
    dx, dy = _default(x), _default(y)
    if (x.required, x.default_expr) != (y.required, y.default_expr):
        return False
    if isinstance(dx, bool) or isinstance(dy, bool):  # True == 1 in Python; not for a config
        return type(dx) is type(dy) and dx == dy
    return bool(dx == dy)  # 0 and 0.0 are the same default


def diff(a: VersionLike | ReleaseSurface, b: VersionLike | ReleaseSurface) -> SurfaceDiff:
    """Fields added, removed, renamed and defaults changed going from release `a` to release `b`."""
    sa = a if isinstance(a, ReleaseSurface) else surface(a)
    sb = b if isinstance(b, ReleaseSurface) else surface(b)
    fa, fb = sa.fields, sb.fields
    forward = [(old, new) for old, new in RENAMES.items()]
    backward = [(new, old) for old, new in RENAMES.items()]  # going to an older release: the new name back
    renamed = tuple(sorted({(o, n) for o, n in forward + backward if o in fa and o not in fb and n in fb}))
    sources = {old for old, _ in renamed}
    targets = {new for new in (n for _, n in renamed) if new not in fa}
    added = tuple(sorted(n for n in fb if n not in fa and n not in targets))
    removed = tuple(sorted(n for n in fa if n not in fb and n not in sources))
    changes: list[DefaultChange] = []
    types: list[DefaultChange] = []
    # a renamed pair is compared only when the new name is new: otherwise the new name's own entry covers it
    pairs = [(n, n) for n in sorted(set(fa) & set(fb))] + [(o, n) for o, n in renamed if n not in fa]
    for old_name, new_name in pairs:
        x, y = fa[old_name], fb[new_name]
        change = DefaultChange(
            name=new_name,
            old=_default(x),
            new=_default(y),
            old_required=x.required,
            new_required=y.required,
            old_type=x.type,
            new_type=y.type,
        )
        if not _same(x, y):
            changes.append(change)
        if x.type != y.type:
            types.append(change)
    return SurfaceDiff(
        a=sa.release,
        b=sb.release,
        added=added,
        removed=removed,
        renamed=renamed,
        defaults_changed=tuple(changes),
        types_changed=tuple(types),
    )
