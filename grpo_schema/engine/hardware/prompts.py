"""Prompt lengths from the data: the distribution, in tokens, of the prompts a run will see, when the dataset is on
this machine, counted the way the trainer counts them.

Where the rows come from: prompt_rows.py (a local file or folder, else the Hugging Face caches; nothing is
downloaded, and a large file is read only as far as its first rows). The split is `dataset_train_split` (TRL's
default "train"), the configuration `dataset_config`.

What a prompt is: TRL 1.16's GRPOTrainer reads the `prompt` column. A conversation (a list of {"role", "content"})
goes through the tokenizer's chat template with the generation prompt added (`chat_template_kwargs` passed on) and
is tokenized without special tokens (the template writes them); a plain string is tokenized with them. Under the
open-r1 profile its recipe's `dataset_prompt_column`, `system_prompt` and `chat_template` are used, as its grpo.py
does.

How it is counted: with the model's own tokenizer (tokenizer.json, from `model_name_or_path` as a folder or in the
Hub cache) through the `tokenizers` package, and the chat template rendered with jinja2 as transformers renders it
(trim_blocks, lstrip_blocks, a sandbox); each is imported only here and only when installed (neither imports
torch). Without them, or without the tokenizer on this machine, 4 characters a token (16 characters a message for
the template's markers), said as such.

How long it takes: the prompts are counted in row order until PROMPT_CHARS characters (about 250,000 tokens,
about a second), and the line says when that stopped the count before the rows read ran out. A count is kept for
the same files (path, size, modification time), tokenizer and settings, so the service's memory panel, which plans
again after every edit, counts a dataset once.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Hashable, Iterable

from grpo_schema.engine.hardware.models import find_local_config
from grpo_schema.engine.hardware.prompt_rows import dataset_files, first_rows
from grpo_schema.engine.hardware.reads import EVERYTHING, MODEL, LocalReads, shown

PROMPT_CHARS = 1_000_000  # characters of prompts counted at most (about 250,000 tokens)
CHARS_PER_TOKEN = 4  # the estimate without a tokenizer (English and maths text, BPE tokenizers)
TEMPLATE_CHARS = 16  # the estimate's allowance for a chat template's markers, per message
KEPT_COUNTS = 32  # counts kept, newest used last out
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")
NO_TOKENIZER = "the model's tokenizer is not on this machine"


@dataclass(frozen=True)
class PromptLengths:
    """The distribution of a dataset's prompt lengths in tokens."""

    p50: int
    p95: int
    longest: int
    rows: int  # rows counted
    source: str  # where the rows came from
    counted: str  # how the tokens were counted
    whole: bool = True  # False: PROMPT_CHARS ended the count before the rows read ran out

    def describe(self) -> str:
        rows = (
            f"{self.rows} rows"
            if self.whole
            else (f"the first {self.rows} rows (the first {PROMPT_CHARS:,} characters of prompts)")
        )
        return (
            f"prompts of {self.p95} tokens: the 95th percentile of {rows} of {self.source} (p50 {self.p50}, "
            f"p95 {self.p95}, max {self.longest}; {self.counted}; prompt_length in the hardware: section plans "
            "for another)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "p50": self.p50,
            "p95": self.p95,
            "max": self.longest,
            "rows": self.rows,
            "all_rows_read": self.whole,
            "source": self.source,
            "counted": self.counted,
        }


def percentile(sorted_values: list[int], share: float) -> int:
    """The nearest-rank percentile of sorted values."""
    rank = max(math.ceil(share * len(sorted_values)), 1)
    return sorted_values[rank - 1]


def data_prompt_lengths(
    name: Any,
    *,
    config_name: Any = None,
    split: Any = "train",
    column: str = "prompt",
    system_prompt: str | None = None,
    model: Any = None,
    revision: Any = None,
    chat_template: str | None = None,
    template_kwargs: dict | None = None,
    reads: LocalReads = EVERYTHING,
    template_note: str | None = None,
) -> PromptLengths | None:
    """The prompt lengths of dataset `name` when its rows are on this machine, else None. `reads`: where relative
    paths are read from, and whether the model's tokenizer may be read; `template_note`: why a template written in
    the config was not rendered (said in the line)."""
    if not isinstance(name, str) or not name.strip():
        return None
    split = str(split or "train")
    files = dataset_files(name, config_name if isinstance(config_name, str) else None, split, reads.where(name))
    if not files:
        return None
    tokenizer = tokenizer_files(model, revision, reads) if reads.model else None
    key = _key(files, tokenizer, column, system_prompt, chat_template, template_kwargs, reads) + (template_note,)
    kept = COUNTS.get(key)  # (the count,): a dataset without prompts is kept too
    if kept is None:
        found = _count(files, tokenizer, column, system_prompt, chat_template, template_kwargs or {}, reads)
        if found is not None and template_note:
            found = replace(found, counted=f"{found.counted} ({template_note})")
        kept = (found,)
        COUNTS.put(key, kept)
    return kept[0]


def _count(files, tokenizer, column, system_prompt, chat_template, kwargs, reads) -> PromptLengths | None:
    prompts, whole = within_budget(prompt_of(row, column, system_prompt) for row in first_rows(files, column))
    if not prompts:
        return None
    why_not = reads.refused.get(MODEL) if not reads.model else None
    counter, counted = token_counter(tokenizer, chat_template, kwargs, reads.base, why_not)
    lengths = sorted(counter(p) for p in prompts)
    source = (
        shown(files[0], reads.base) if len(files) == 1 else f"{shown(files[0].parent, reads.base)} ({len(files)} files)"
    )
    return PromptLengths(
        percentile(lengths, 0.5), percentile(lengths, 0.95), lengths[-1], len(lengths), source, counted, whole
    )


def within_budget(prompts: Iterable) -> tuple[list, bool]:
    """(the prompts from the first until their text reaches PROMPT_CHARS, the first always; whether none was left
    out for it). Rows without a prompt are passed over."""
    taken: list = []
    total = 0
    for prompt in prompts:
        if not prompt:
            continue
        total += len(prompt) if isinstance(prompt, str) else sum(len(str(m.get("content", ""))) for m in prompt)
        if total > PROMPT_CHARS and taken:
            return taken, False
        taken.append(prompt)
    return taken, True


def prompt_of(row: dict, column: str, system_prompt: str | None) -> str | list | None:
    value = row.get(column)
    if isinstance(value, str) and system_prompt is None:
        return value
    if isinstance(value, str):
        value = [{"role": "user", "content": value}]
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        return None
    if system_prompt is not None and not (value and value[0].get("role") == "system"):
        value = [{"role": "system", "content": system_prompt}] + list(value)
    return value


# --- counts kept ----------------------------------------------------------------------------------------------------


class KeptCounts:
    """Counts by what they were made from, least recently used out first (the service's threads share it)."""

    def __init__(self, size: int) -> None:
        self.size, self.lock, self.entries = size, threading.Lock(), OrderedDict()

    def get(self, key: Hashable) -> Any:
        with self.lock:
            if key not in self.entries:
                return None
            self.entries.move_to_end(key)
            return self.entries[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self.lock:
            self.entries[key] = value
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)


COUNTS = KeptCounts(KEPT_COUNTS)


def _stamp(path: Path) -> tuple:
    try:
        stat = path.stat()
        return str(path), stat.st_size, stat.st_mtime_ns
    except OSError:
        return str(path), None, None


def _key(files, tokenizer, column, system_prompt, chat_template, kwargs, reads) -> tuple:
    """What a count depends on: the files as they are now, the tokenizer's files, the settings."""
    folder = tokenizer[0] if tokenizer else None
    return (
        tuple(_stamp(p) for p in files),
        tuple(_stamp(folder / n) for n in TOKENIZER_FILES) if folder else None,
        column,
        system_prompt,
        chat_template,
        json.dumps(kwargs or {}, sort_keys=True, default=str),
        str(reads.base),
        reads.refused.get("model_name_or_path") if not reads.model else None,
    )


# --- how the tokens are counted -------------------------------------------------------------------------------------


def token_counter(
    found: tuple[Path, dict] | None,
    chat_template: str | None,
    kwargs: dict,
    base: Path | None = None,
    why_not: str | None = None,
):
    """(count(prompt) -> tokens, how it counts) with the tokenizer `found` (tokenizer_files), else the estimate;
    `why_not`: why the model's folder was not read."""
    estimate = (estimated_tokens, f"estimated at {CHARS_PER_TOKEN} characters a token")
    if found is None:
        return estimate[0], estimate[1] + f" ({why_not or NO_TOKENIZER})"
    folder, settings = found
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return estimate[0], estimate[1] + " (the tokenizers package is not installed)"
    try:
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception as exc:  # the tokenizers library raises its own exception types
        return estimate[0], estimate[1] + f" ({shown(folder / 'tokenizer.json', base)} does not load: {exc})"
    tokenizer.no_truncation()  # a tokenizer.json may carry a max_length; transformers turns it off unless asked
    tokenizer.no_padding()
    template = chat_template or template_of(folder, settings)
    render = template_renderer(template, settings, kwargs)
    how = f"counted with the tokenizer in {shown(folder, base)}"

    def count(prompt) -> int:
        if isinstance(prompt, str):
            return len(tokenizer.encode(prompt, add_special_tokens=True).ids)
        text = render(prompt) if render else None
        if text is None:  # no template to render: the messages' tokens and the estimate's markers
            return sum(
                len(tokenizer.encode(str(m.get("content", "")), add_special_tokens=False).ids)
                + TEMPLATE_CHARS // CHARS_PER_TOKEN
                for m in prompt
            )
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    if render is None:
        how += (
            ", the chat template "
            + ("not rendered (jinja2 is not installed)" if template else "absent")
            + f": {TEMPLATE_CHARS // CHARS_PER_TOKEN} tokens a message for its markers"
        )
    else:
        how += " after its chat template"
    return count, how


def estimated_tokens(prompt) -> int:
    if isinstance(prompt, str):
        return -(-len(prompt) // CHARS_PER_TOKEN)
    chars = sum(len(str(m.get("content", ""))) + TEMPLATE_CHARS for m in prompt)
    return -(-chars // CHARS_PER_TOKEN)


def tokenizer_files(model: Any, revision: Any, reads: LocalReads = EVERYTHING) -> tuple[Path, dict] | None:
    """(the folder holding tokenizer.json, its tokenizer_config.json) for a local model folder or a model in the Hub
    cache; None when there is no tokenizer.json."""
    if not isinstance(model, str) or not model:
        return None
    config = find_local_config(model, revision if isinstance(revision, str) else None, base=reads.base)
    folder = config.parent if config is not None else reads.where(model)
    try:
        if not (folder / "tokenizer.json").is_file():
            return None
        path = folder / "tokenizer_config.json"
        settings = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return None
    return folder, settings if isinstance(settings, dict) else {}


def template_of(folder: Path, settings: dict) -> str | None:
    """The chat template: chat_template.jinja beside the tokenizer (transformers 4.43 on), else tokenizer_config's
    (a string, or the one named "default" of a list)."""
    try:
        if (folder / "chat_template.jinja").is_file():
            return (folder / "chat_template.jinja").read_text(encoding="utf-8")
    except OSError:
        pass
    template = settings.get("chat_template")
    if isinstance(template, list):
        template = next(
            (t.get("template") for t in template if isinstance(t, dict) and t.get("name") == "default"), None
        )
    return template if isinstance(template, str) else None


def special_token(settings: dict, key: str) -> str:
    value = settings.get(key)
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else ""


def template_renderer(template: str | None, settings: dict, kwargs: dict):
    """messages -> the text the template writes with the generation prompt added, or None (no template, no jinja2,
    or a template that fails on these messages)."""
    if not template:
        return None
    try:
        from jinja2 import TemplateError
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        return None

    def raise_exception(message):
        raise TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = tojson
    env.globals.update(raise_exception=raise_exception, strftime_now=lambda fmt: datetime.now().strftime(fmt))
    try:
        compiled = env.from_string(template)
    except TemplateError:
        return None
    values = {
        "bos_token": special_token(settings, "bos_token"),
        "eos_token": special_token(settings, "eos_token"),
        "add_generation_prompt": True,
        **kwargs,
    }

    def render(messages) -> str | None:
        try:
            return compiled.render(messages=messages, **values)
        except Exception:  # a template's own raise_exception, or one written for other message shapes
            return None

    return render
