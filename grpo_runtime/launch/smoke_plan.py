"""What `grpo smoke` changes in a config so that it runs on this machine's CPUs in about a minute, and why.

Only what cannot run here is substituted, each change stated: the model (a small random-init model of the same
architecture class), the tokenizer (when the real one is not on disk), the dataset (when it is neither local nor
cached), GPU-only settings, the completion length, the world size, the output folder and the step counts. The
result is a list of `--set` overrides on the user's own file (so positions, relative paths and profiles stay those
of the file) and one line per setting group.
"""

from __future__ import annotations

import inspect
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from grpo_runtime.model.modality import named_vision_language, vision_language_class

COMPLETION_CAP = 32  # tokens: enough for a reward to see a real completion, short enough for a CPU
ROWS_PER_OPTIMIZER_STEP = 64  # completions a process trains on per optimizer step, at most (bound_batch)
SMALL_MODEL_PARAMS = 60e6  # a local model this small runs as it is
MAX_CPU_PROCESSES = 2
SYNTHETIC_ROWS = 64
SYNTHETIC_TEST_ROWS = 4  # evaluation reads the whole test split, every step: a few prompts
EXERCISED, SUBSTITUTED, NOT_EXERCISED = "exercised", "substituted", "not_exercised"
# The keyword arguments every reward function receives that are not dataset columns.
REWARD_CALL_ARGS = {"prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric", "self"}
NETWORK_REPORTERS = {"wandb", "trackio", "mlflow", "comet_ml", "neptune", "clearml", "dagshub", "dvclive",
                     "swanlab", "azure_ml", "codecarbon"}


class SmokeRefused(Exception):
    """A named problem found before anything starts (exit 3): `component` is what it is about, `key` its field."""

    def __init__(self, component: str, message: str, key: str | None = None, needle: str | None = None):
        super().__init__(message)
        self.component, self.key, self.needle = component, key, needle


@dataclass
class Group:
    group: str
    status: str
    detail: str

    def to_dict(self) -> dict:
        return {"group": self.group, "status": self.status, "detail": self.detail}


@dataclass
class SmokePlan:
    overrides: dict = field(default_factory=dict)  # key -> value, applied after the user's own --set
    groups: list[Group] = field(default_factory=list)
    world_size: int = 1
    env: dict = field(default_factory=dict)
    seed: int = 0  # the stand-ins' seed, drawn from the file's content (content_seed): the same file, the same run
    strict_paths: bool = False  # --strict-paths: a path that does not exist here is refused, never substituted

    def add(self, group: str, status: str, detail: str) -> None:
        self.groups.append(Group(group, status, detail))

    def set_strings(self) -> list[str]:
        return [f"{key}={json.dumps(value)}" for key, value in self.overrides.items()]


def content_seed(path: str, overrides: list[str], profiles: list[str]) -> int:
    """The seed of everything the smoke makes up (the stand-in model's weights, the synthetic rows): drawn from
    the file's bytes and the command's --set and --profile, so the same file smokes the same way on every run."""
    import hashlib

    digest = hashlib.sha256()
    try:
        digest.update(Path(path).read_bytes())
    except OSError:
        digest.update(str(path).encode())
    for item in [*overrides, "--profile", *profiles]:
        digest.update(b"\0" + str(item).encode())
    return int.from_bytes(digest.digest()[:4], "big")


def cpu_process_limit() -> int:
    return max(1, min(MAX_CPU_PROCESSES, os.cpu_count() or 1))


# --- the model and tokenizer ---------------------------------------------------------------------------------------

def model_folder(name: str, revision: str | None) -> Path | None:
    """The folder holding the model's config.json: a local folder, or a snapshot in the Hub cache."""
    from grpo_schema.engine.hardware.models import find_local_config

    found = find_local_config(name, revision)
    return found.parent if found is not None else None


def catalogue_config(name: str):
    """A transformers config of the model's architecture class from the built-in catalogue's facts, or None."""
    from grpo_schema.engine.hardware.catalogue import lookup

    facts = lookup(name)
    if facts is None:
        return None, None
    import transformers

    lowered = name.lower()
    if "phi-4" in lowered or "phi4" in lowered:
        kind = "Phi3Config"
    elif "mistral" in lowered:
        kind = "MistralConfig"
    elif facts.qk_norm:
        kind = "Qwen3Config"
    elif facts.attention_bias:
        kind = "Qwen2Config"
    else:
        kind = "LlamaConfig"
    config = getattr(transformers, kind)(tie_word_embeddings=facts.tie_word_embeddings)
    return config, facts


def shrink(config, vocab_size: int, tokenizer):
    """The same architecture class at toy sizes: 2 layers, hidden 64, 4 heads (2 key/value heads), MLP 128."""
    sizes = dict(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16, max_position_embeddings=4096, max_window_layers=2,
                 moe_intermediate_size=64, shared_expert_intermediate_size=64, num_experts=4, n_routed_experts=4,
                 num_local_experts=4, num_experts_per_tok=2, first_k_dense_replace=0, kv_lora_rank=16,
                 q_lora_rank=16, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16)
    text = getattr(config, "text_config", None)
    for target in [config] + ([text] if text is not None and text is not config else []):
        for key, value in sizes.items():
            if hasattr(target, key) and getattr(target, key) is not None:
                setattr(target, key, value)
        if getattr(target, "layer_types", None):
            target.layer_types = list(target.layer_types[:2])
        if hasattr(target, "sliding_window") and getattr(target, "use_sliding_window", False):
            target.use_sliding_window = False
        target.vocab_size = vocab_size
        target.pad_token_id = tokenizer.pad_token_id
        target.eos_token_id = tokenizer.eos_token_id
        target.bos_token_id = tokenizer.bos_token_id
    if getattr(config, "quantization_config", None) is not None:
        del config.quantization_config
    return config


def local_tokenizer(folder: Path | None):
    if folder is None:
        return None
    if not any((folder / name).exists() for name in ("tokenizer.json", "tokenizer_config.json", "vocab.json")):
        return None
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except Exception:  # noqa: BLE001 - an unreadable tokenizer is replaced and said so
        return None


ELSEWHERE = "path of another machine"


def another_machines(path) -> bool:
    """A path (absolute, ./, ~, or with more than one slash) that does not exist on this machine: written on the
    cluster the file comes from."""
    return isinstance(path, str) and looks_local(path) and not Path(path).expanduser().exists()


def refuse_strict(plan: SmokePlan, component: str, what: str, path: str, key: str) -> None:
    if plan.strict_paths:
        raise SmokeRefused(component, f"the {what} path {path} does not exist on this machine (--strict-paths: a "
                           "path of another machine is refused, not substituted)", key)


def strict_paths_check(config, plan: SmokePlan, script=None) -> None:
    """--strict-paths: every path of another machine is refused before anything is built."""
    if not plan.strict_paths:
        return
    for source in dataset_sources(config, script):
        if another_machines(source):
            refuse_strict(plan, "dataset", "dataset", source, "datasets" if config.datasets else "dataset_name")
    for key, what, component in (("model_name_or_path", "model", "model"),
                                 ("reward_model_name_or_path", "reward model", "reward model"),
                                 ("deepspeed", "DeepSpeed config", "sharding")):
        value = getattr(config, key, None)
        if another_machines(value):
            refuse_strict(plan, component, what, value, key)


def substitute_model(config, plan: SmokePlan, workdir: Path) -> None:
    name = str(config.model_name_or_path)
    elsewhere = another_machines(name)
    if elsewhere:
        refuse_strict(plan, "model", "model", name, "model_name_or_path")
    folder = None if elsewhere else model_folder(name, config.model_revision)
    facts = None
    if folder is not None:
        from transformers import AutoConfig

        try:
            model_config = AutoConfig.from_pretrained(str(folder), local_files_only=True,
                                                      trust_remote_code=config.trust_remote_code)
        except (ValueError, KeyError) as error:
            raise SmokeRefused("model", f"the model {name} ({folder / 'config.json'}) has an architecture that "
                               f"transformers does not know: {str(error).splitlines()[0]}",
                               "model_name_or_path") from None
        refuse_vision_language(name, vision_language_class(model_config), "its config.json")
        from grpo_schema.engine.hardware.models import read_config_json

        try:
            facts = read_config_json(folder / "config.json", name)
        except Exception:  # noqa: BLE001 - only used to decide whether the model is small
            facts = None
        if facts is not None and facts.total_params() <= SMALL_MODEL_PARAMS:
            plan.add("model", EXERCISED, f"{name} as it is ({facts.total_params() / 1e6:.1f}M parameters, local)")
            plan.add("tokenizer and chat template", EXERCISED, f"the model's own tokenizer ({folder})")
            return
        source = f"its config.json ({folder})"
    else:
        refuse_vision_language(name, named_vision_language(name), "its name")
        model_config, facts = catalogue_config(Path(name).name if elsewhere else name)
        source = "the built-in catalogue's facts"
        if elsewhere:
            source = f"{ELSEWHERE}: {name} is not on this machine; " + (
                f"the catalogue's facts for {Path(name).name}" if model_config is not None else "")
        if model_config is None:
            from transformers import LlamaConfig

            model_config = LlamaConfig(tie_word_embeddings=False)
            source = (source if elsewhere else "") + "nothing (not on disk, not in the catalogue): a Llama-class model"
    tokenizer = local_tokenizer(folder)
    if tokenizer is not None:
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        plan.add("tokenizer and chat template", EXERCISED, f"the real tokenizer and chat template ({folder})")
    else:
        from grpo_runtime.launch.tiny import build_byte_tokenizer

        tokenizer = build_byte_tokenizer()
        plan.add("tokenizer and chat template", SUBSTITUTED,
                 f"a byte-level tokenizer of {len(tokenizer)} tokens with a ChatML chat template (the real tokenizer of {name} is "
                 "not on disk; a profile's chat_template still applies)")
    shrunk = shrink(model_config, len(tokenizer), tokenizer)
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(plan.seed)
    try:
        model = AutoModelForCausalLM.from_config(shrunk, dtype=torch.float32,
                                                 trust_remote_code=config.trust_remote_code)
    except ValueError as error:
        raise SmokeRefused("model", f"transformers cannot build a causal LM of {name}'s architecture "
                           f"({type(shrunk).__name__}): {str(error).splitlines()[0]}", "model_name_or_path") from None
    for key in ("eos_token_id", "pad_token_id", "bos_token_id"):
        setattr(model.generation_config, key, getattr(tokenizer, key))
    target = workdir / "model"
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    if folder is None:
        check_tokenizer_reloads(target, tokenizer)
    layers = f"2 layers, hidden 64, 4 heads, MLP 128, vocab {len(tokenizer)}"
    plan.add("model", SUBSTITUTED, f"a random-init {type(model).__name__} ({layers}; from {source}) instead of {name}")
    plan.overrides.update(model_name_or_path=str(target), model_revision=None)
    substitute_reward_model(config, plan, workdir, shrunk, tokenizer)


def refuse_vision_language(name: str, found: str | None, how: str) -> None:
    """A vision-language policy is refused, not stood in for by a text model: a smoke that passed on text alone
    would say nothing of the run, which trains on the dataset's images."""
    if found is not None:
        raise SmokeRefused("model", f"{name} is a vision-language model ({how} says {found}): grpo_runtime trains "
                           "text-only causal LMs and the smoke builds no vision-language stand-in; TRL's trainer "
                           "(`trl grpo`) trains such models on the dataset's images", "model_name_or_path")


def substitute_reward_model(config, plan: SmokePlan, workdir: Path, shrunk, tokenizer) -> None:
    """reward_model_name_or_path: a random-init sequence classifier (one label) of the stand-in's sizes when the
    reward model is not on this machine (a path of another machine, or a Hub model that is not cached)."""
    name = config.reward_model_name_or_path
    if not name:
        return
    elsewhere = another_machines(str(name))
    if elsewhere:
        refuse_strict(plan, "reward model", "reward model", str(name), "reward_model_name_or_path")
    elif Path(str(name)).expanduser().exists() or model_folder(str(name), None) is not None:
        plan.add("reward model", EXERCISED, f"{name} as it is (local or cached)")
        return
    import torch
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(plan.seed + 1)
    classifier = AutoModelForSequenceClassification.from_config(shrunk, num_labels=1, dtype=torch.float32)
    classifier.config.pad_token_id = tokenizer.pad_token_id
    target = workdir / "reward_model"
    classifier.save_pretrained(target)
    tokenizer.save_pretrained(target)
    why = f"{ELSEWHERE}: {name} is not on this machine" if elsewhere else f"{name} is not on disk or in the cache"
    plan.add("reward model", SUBSTITUTED, f"a random-init {type(classifier).__name__} of the stand-in's sizes "
             f"({why}; nothing is downloaded)")
    plan.overrides["reward_model_name_or_path"] = str(target)


def check_tokenizer_reloads(folder: Path, tokenizer) -> None:
    """`AutoTokenizer` may pick the architecture's own tokenizer class for a saved folder; the ids must survive."""
    from transformers import AutoTokenizer

    sample = tokenizer.apply_chat_template([{"role": "user", "content": "What is 1 + 1?"}], tokenize=False,
                                           add_generation_prompt=True)
    again = AutoTokenizer.from_pretrained(str(folder))
    if again(sample).input_ids != tokenizer(sample).input_ids:
        raise SmokeRefused("tokenizer", f"the substitute tokenizer does not survive a reload as {type(again).__name__}")


# --- the dataset ---------------------------------------------------------------------------------------------------

def looks_local(name: str) -> bool:
    """A name that can only mean a path: absolute, ./ ../ ~, a data file suffix, or more than one slash."""
    return (name.startswith(("/", "./", "../", "~")) or Path(name).suffix in (".jsonl", ".json", ".csv", ".parquet")
            or name.count("/") > 1)


def dataset_cached(name: str) -> bool:
    from grpo_schema.engine.hardware.models import hub_cache_dirs

    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    datasets_cache = Path(os.environ.get("HF_DATASETS_CACHE") or home / "datasets")
    hub = [cache / ("datasets--" + name.replace("/", "--")) for cache in hub_cache_dirs()]
    return any(path.is_dir() for path in hub) or (datasets_cache / name.replace("/", "___")).is_dir()


LOADERS = {"json", "csv", "parquet", "text", "arrow", "pandas", "imagefolder", "audiofolder", "webdataset"}


def entry_sources(entry) -> list[str]:
    """What one `datasets:` entry reads: its data files for a loader name (`path: json`), else its path."""
    if str(entry.path) in LOADERS and entry.data_files:
        files = entry.data_files
        if isinstance(files, dict):
            files = [f for value in files.values() for f in ([value] if isinstance(value, str) else value)]
        return [str(f) for f in ([files] if isinstance(files, str) else files)]
    return [str(entry.path)]


def dataset_sources(config, script=None) -> list[str]:
    if config.datasets:
        return [source for entry in config.datasets for source in entry_sources(entry)]
    mixture = open_r1_mixture(script)
    if mixture is not None:
        return [str(entry.id) for entry in mixture.datasets]
    return [str(config.dataset_name)] if config.dataset_name else []


def open_r1_mixture(script):
    if script is None or script[0] != "open-r1":
        return None
    return getattr(script[1], "dataset_mixture", None)


def available(source: str) -> bool:
    """On this machine: a path that exists, or a Hub dataset in the cache."""
    return Path(source).expanduser().exists() or (not looks_local(source) and dataset_cached(source))


def reward_columns(reward_funcs: list) -> dict[str, str]:
    """The dataset columns the reward functions take (their named parameters), each with the reward asking."""
    columns = {}
    for func in reward_funcs:
        target = func if inspect.isfunction(func) or inspect.ismethod(func) else getattr(func, "__call__", func)
        try:
            parameters = inspect.signature(target).parameters.values()
        except (TypeError, ValueError):
            continue
        for parameter in parameters:
            if parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL) or \
                    parameter.name in REWARD_CALL_ARGS:
                continue
            if parameter.default is parameter.empty:
                columns.setdefault(parameter.name, getattr(func, "__name__", type(func).__name__))
    return columns


QUESTIONS = [("What is 1 + 1?", "2"), ("What is 2 + 3?", "5"), ("What is 3 * 3?", "9"), ("What is 10 - 4?", "6"),
             ("What is 7 + 8?", "15"), ("What is 12 / 4?", "3"), ("What is 6 * 7?", "42"), ("What is 9 - 9?", "0")]


@dataclass
class RowShape:
    """The shape the real dataset's rows would have, as the config's pipeline reads them.

    `prompt_column` holds a string when a training script builds the conversation from it (open-r1: the system
    prompt and a user message with the column's text), else TRL's conversational prompt (a list of messages).
    `columns` are the other columns: those the reward functions take and those a mixture keeps."""

    prompt_column: str = "prompt"
    conversational: bool = True
    columns: tuple = ()

    def row(self, index: int, question: str, answer: str) -> dict:
        text = f"{question} Put the final answer in \\boxed{{}}."
        out = {self.prompt_column: [{"role": "user", "content": text}] if self.conversational else text}
        for column in self.columns:
            out[column] = f"${answer}$" if column == "solution" else answer
        return out


def synthetic_rows(shape: RowShape, count: int, seed: int) -> list[dict]:
    """`count` rows of `shape`, the questions drawn in an order seeded from the file (content_seed)."""
    import random

    order = random.Random(seed)
    return [shape.row(i, *QUESTIONS[order.randrange(len(QUESTIONS))]) for i in range(count)]


def write_rows(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def substitute_dataset(config, raw: dict, reward_funcs: list, plan: SmokePlan, workdir: Path, script=None) -> None:
    """Synthetic rows, of the shape the real data would have, for a dataset that is not on this machine: a Hub
    dataset that is not cached, or a path of another machine (refused under --strict-paths). A mixture stays a
    mixture (one synthetic file per entry, with the columns it keeps), so its own loading runs as written."""
    sources = dataset_sources(config, script)
    if not sources:
        return  # the runtime names the missing dataset itself
    key = "datasets" if config.datasets else ("dataset_mixture" if open_r1_mixture(script) else "dataset_name")
    elsewhere = [s for s in sources if looks_local(s) and not Path(s).expanduser().exists()]
    if elsewhere and plan.strict_paths:
        raise SmokeRefused("dataset", f"the dataset path {elsewhere[0]} does not exist on this machine "
                           "(--strict-paths: a path of another machine is refused, not substituted)", key)
    remote = [s for s in sources if not available(s)]
    if not remote:
        plan.add("dataset", EXERCISED, f"{', '.join(sources)} as written (local or cached; read offline)")
        return
    open_r1 = script is not None and script[0] == "open-r1"
    prompt_column = str(getattr(script[1], "dataset_prompt_column", None) or "prompt") if open_r1 else \
        str(raw.get("dataset_prompt_column") or "prompt")
    needed = reward_columns(reward_funcs)
    mixture = open_r1_mixture(script)
    if mixture is not None:  # open-r1's mixture is cut to each entry's columns before the prompt is built
        for entry in mixture.datasets:
            for column in entry.columns or []:
                needed.setdefault(str(column), "the mixture's columns")
    needed.pop(prompt_column, None)
    why = []
    if elsewhere:
        why.append(f"path of another machine: {', '.join(elsewhere)} not on this machine")
    hub = [s for s in remote if s not in elsewhere]
    if hub:
        why.append(("" if not elsewhere else f"{', '.join(hub)} ") + "not on disk or in the cache; nothing is "
                   "downloaded")
    data = workdir / "data"
    if config.datasets:
        substitute_mixture(config, needed, plan, data, "; ".join(why))
        return
    shape = RowShape(prompt_column, conversational=not open_r1, columns=tuple(sorted(needed)))
    from grpo_runtime.launch.smoke_problems import code_rows, rows_note  # rows a code reward can run

    rows = code_rows(reward_funcs, shape, SYNTHETIC_ROWS, plan.seed) or \
        synthetic_rows(shape, SYNTHETIC_ROWS, plan.seed)
    write_rows(data / "train.jsonl", rows)
    write_rows(data / "test.jsonl", rows[:SYNTHETIC_TEST_ROWS])
    form = "text (open-r1 builds the conversation" + (", with the system prompt" if getattr(
        script[1], "system_prompt", None) is not None else "") + ")" if open_r1 else "a conversation"
    shown = ", ".join([f"{prompt_column} ({form})", *(f"{c} (read by {who})" for c, who in sorted(needed.items()))])
    plan.add("dataset", SUBSTITUTED, f"{SYNTHETIC_ROWS} synthetic rows{rows_note(reward_funcs)} ("
             f"{SYNTHETIC_TEST_ROWS} in the test split) "
             f"with the columns {shown}, instead of {', '.join(remote)} ({'; '.join(why)})")
    plan.overrides.update(dataset_name=str(data), dataset_config=None, dataset_train_split="train",
                          dataset_test_split="test")
    if mixture is not None:
        plan.overrides["dataset_mixture"] = None


def substitute_mixture(config, needed: dict, plan: SmokePlan, data: Path, why: str) -> None:
    """One synthetic JSONL per `datasets:` entry: the prompt, the columns the entry keeps (all of them when it
    names none: the prompt and what the rewards read); split, columns, fraction and test_split_size as written."""
    entries, shown = [], []
    for number, entry in enumerate(config.datasets):
        kept = [str(c) for c in entry.columns] if entry.columns is not None else ["prompt", *sorted(needed)]
        shape = RowShape("prompt", conversational=True, columns=tuple(c for c in kept if c != "prompt"))
        rows = synthetic_rows(shape, SYNTHETIC_ROWS, plan.seed + number)
        if "prompt" not in kept and entry.columns is not None:
            for row in rows:  # the entry keeps no prompt: its rows have none (the runtime says so)
                row.pop("prompt", None)
        path = data / f"mixture-{number}.jsonl"
        write_rows(path, rows)
        new = {"path": "json", "data_files": str(path), "split": "train"}
        if entry.columns is not None:
            new["columns"] = list(entry.columns)
        if entry.fraction is not None:
            new["fraction"] = entry.fraction
        entries.append(new)
        shown.append(f"{entry.path} ({', '.join(kept)})")
    plan.add("dataset", SUBSTITUTED, f"a mixture of {len(entries)} synthetic datasets of {SYNTHETIC_ROWS} rows, "
             f"each with the columns its entry keeps: {'; '.join(shown)} ({why}); the mixture's columns, "
             "fractions and test_split_size as written")
    plan.overrides["datasets"] = entries


# --- settings that need a GPU, the network or a long time ----------------------------------------------------------

def installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def substitute_settings(config, raw: dict, plan: SmokePlan, workdir: Path) -> None:
    overrides = plan.overrides
    overrides.update(use_cpu=True, output_dir=str(workdir / "output"), logging_steps=1, disable_tqdm=True)
    if config.use_cpu:
        plan.add("device", EXERCISED, "CPU, as written")
    else:
        plan.add("device", SUBSTITUTED, "CPU processes (use_cpu: true) instead of GPUs")
    length = config.max_completion_length
    if length is not None and length > COMPLETION_CAP:
        overrides["max_completion_length"] = COMPLETION_CAP
        plan.add("completion length", SUBSTITUTED, f"max_completion_length capped at {COMPLETION_CAP} (was {length})")
    else:
        plan.add("completion length", EXERCISED, f"max_completion_length {length}")
    attention = config.attn_implementation or ""
    if "flash" in attention or attention.startswith("kernels"):
        overrides["attn_implementation"] = "sdpa"
        plan.add("attention", NOT_EXERCISED, f"{attention} needs a GPU; sdpa ran instead")
    for key in ("tf32", "torch_compile"):
        if getattr(config, key, None):
            overrides[key] = False if key == "torch_compile" else None
            plan.add(key, NOT_EXERCISED, f"{key} is for GPUs (compilation takes minutes); off for the smoke")
    if config.fp16:
        overrides.update(fp16=False)
        plan.add("precision", NOT_EXERCISED, "fp16 mixed precision needs a GPU; float32 on CPU")
    else:
        plan.add("precision", EXERCISED, "bf16" if config.bf16 else f"dtype {config.dtype or 'auto'}")
    if config.use_vllm:
        if installed("vllm"):
            plan.add("generation", EXERCISED, f"vLLM {config.vllm_mode}")
        else:
            overrides["use_vllm"] = False
            plan.add("generation", NOT_EXERCISED, f"vLLM ({config.vllm_mode}) is not installed here; completions "
                     "came from transformers generate")
    else:
        plan.add("generation", EXERCISED, "transformers generate")
    if config.push_to_hub or config.log_completions_hub_repo:
        overrides.update(push_to_hub=False, log_completions_hub_repo=None)
        plan.add("hub push", NOT_EXERCISED, "never sent from a smoke test")
    reporters = config.report_to if isinstance(config.report_to, list) else [config.report_to]
    reporters = [str(r) for r in reporters if r is not None]
    if "all" in reporters:
        reporters = ["tensorboard"] if installed("tensorboard") else ["none"]
    kept = [r for r in reporters if r not in NETWORK_REPORTERS and r != "none"]
    dropped = [r for r in reporters if r in NETWORK_REPORTERS]
    if dropped:
        overrides["report_to"] = kept or "none"
        plan.add("logging", NOT_EXERCISED, f"{', '.join(dropped)} needs the network; "
                 + (f"{', '.join(kept)} ran" if kept else "metrics.jsonl only"))
    else:
        plan.add("logging", EXERCISED, ", ".join(kept) if kept else "metrics.jsonl")
    if config.eval_strategy not in (None, "no"):
        overrides.update(eval_strategy="steps", eval_steps=1)
        plan.add("evaluation", EXERCISED, f"every step (was {config.eval_strategy}"
                 + (f", every {config.eval_steps}" if config.eval_strategy == "steps" else "") + ")")
    if config.resume_from_checkpoint not in (None, False, "false", "False"):
        plan.add("resume target", SUBSTITUTED, f"resume_from_checkpoint ({config.resume_from_checkpoint}) replaced "
                 "by the smoke's own checkpoint-1")
    for key in ("num_machines",):
        if raw.get(key) not in (None, 1):
            overrides[key] = 1
    for key in ("main_process_ip", "machine_rank"):
        if key in raw:
            overrides[key] = None
    lora = config.use_peft or bool(config.lora_target_modules and config.use_peft)
    quantised = config.load_in_4bit or config.load_in_8bit
    if lora or quantised:
        what = [f"LoRA r={config.lora_r} on {config.lora_target_modules or 'the default modules'}"] if lora else []
        what += ["4-bit" if config.load_in_4bit else "8-bit"] if quantised else []
        plan.add("PEFT and quantisation", EXERCISED, ", ".join(what))
    substitute_deepspeed(config, plan, workdir)
    sharded = config.deepspeed or config.fsdp or raw.get("accelerate_config") or raw.get("use_deepspeed") \
        or raw.get("use_fsdp")
    if sharded:
        # a substituted DeepSpeed path is not what ran: name the stand-in, not the other machine's file
        stand_in = "the DeepSpeed stand-in" if "deepspeed" in plan.overrides else None
        what = raw.get("accelerate_config") or stand_in or config.deepspeed or config.fsdp or "as written"
        plan.add("sharding", EXERCISED, f"{what} on gloo")


def zero_stage_of(name: str) -> int:
    """The ZeRO stage a DeepSpeed config's file name says (zero3.json, ds_z2_offload.json, stage1.json), else 2."""
    found = re.search(r"(?:zero|stage|z)[_-]?([0-3])", Path(name).name.lower())
    return int(found.group(1)) if found else 2


def substitute_deepspeed(config, plan: SmokePlan, workdir: Path) -> None:
    """`deepspeed: PATH` of another machine: a DeepSpeed config of the ZeRO stage its name says, every batch and
    precision value "auto" (filled from the config, as for the bundled ones)."""
    path = config.deepspeed
    if not isinstance(path, str) or not another_machines(path):
        return
    refuse_strict(plan, "sharding", "DeepSpeed config", path, "deepspeed")
    stage = zero_stage_of(path)
    stand_in = {"zero_optimization": {"stage": stage}, "train_batch_size": "auto",
                "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
                "gradient_clipping": "auto", "bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"}}
    target = workdir / "deepspeed.json"
    target.write_text(json.dumps(stand_in, indent=1), encoding="utf-8")
    plan.overrides["deepspeed"] = str(target)
    plan.add("DeepSpeed config", SUBSTITUTED, f"ZeRO stage {stage} (as its name says), every batch and precision "
             f"value auto, instead of {path} ({ELSEWHERE}: not on this machine)")


# --- the world size ------------------------------------------------------------------------------------------------

def choose_world_size(path: str, config, plan: SmokePlan, declared: int, checked) -> int:
    """The declared world size when this machine can run that many CPU processes, else the smallest world size
    whose batch schedule (per process, unchanged) is valid. `checked(size)` validates the smoke's config."""
    limit = cpu_process_limit()
    at_declared = checked(declared)
    if not at_declared.valid:  # the substitutions broke the config: say which diagnostics, not a world size
        errors = [f"{d.code} {', '.join(d.fields)}: {d.message}" for d in at_declared.diagnostics
                  if d.severity == "error"]
        raise SmokeRefused("substitution", "the config with the smoke's substitutions does not validate: "
                           + "; ".join(errors[:5]))
    if declared <= limit:
        plan.add("world size", EXERCISED, f"{declared} CPU process(es) as declared")
        return declared
    for size in range(1, limit + 1):
        if checked(size).valid:
            plan.add("world size", SUBSTITUTED, f"{size} CPU process(es) instead of {declared}, with the same "
                     "per-process batch schedule (this machine runs at most "
                     f"{limit} CPU process(es))")
            return size
    # No world size this machine runs keeps whole groups with the per-process batch as written (a recipe for 7 or
    # 8 processes): one group per micro-batch instead, said so.
    changed = {"per_device_train_batch_size": config.num_generations}
    if config.generation_batch_size is not None:
        changed["generation_batch_size"] = None
    if config.eval_strategy not in (None, "no"):
        changed["per_device_eval_batch_size"] = config.num_generations_eval or config.num_generations
    plan.overrides.update(changed)
    for size in range(1, limit + 1):
        if checked(size).valid:
            was = f"per_device_train_batch_size {config.per_device_train_batch_size}"
            plan.add("world size", SUBSTITUTED, f"{size} CPU process(es) instead of {declared}; no world size up to "
                     f"{limit} keeps whole groups with the per-process batch as written, so "
                     f"per_device_train_batch_size is {config.num_generations} (one group; was {was.split()[-1]})")
            return size
    for key in changed:
        plan.overrides.pop(key)
    raise SmokeRefused("world size", f"{path} needs {declared} processes and no world size up to {limit} (what this "
                       f"machine's {os.cpu_count()} CPU core(s) run) keeps its batch schedule valid", "num_processes")


def bound_batch(config, plan: SmokePlan, checked) -> None:
    """Bound the work of an optimizer step, keeping the schedule's shape: when a process's micro-batches over an
    optimizer step hold more than ROWS_PER_OPTIMIZER_STEP rows, per_device_train_batch_size becomes the largest
    value under that bound (at least the smallest) whose generation batch still holds whole groups of
    num_generations, with steps_per_generation, num_iterations and gradient_accumulation_steps as written (so generation happens on the same micro-steps, the
    optimizer steps on the same ones, and the off-policy pattern (GA % (steps_per_generation * num_iterations))
    is the same). A generation_batch_size set in the file is scaled with it."""
    import math

    world = plan.world_size
    before = checked(world)
    spg = getattr(before.plan, "steps_per_generation", None) if getattr(before, "plan", None) else None
    generations = config.num_generations
    batch = plan.overrides.get("per_device_train_batch_size", config.per_device_train_batch_size)
    if not spg or not generations or not batch:
        return
    step = generations // math.gcd(generations, spg * world)  # the batch sizes that keep whole groups
    accumulation = max(1, config.gradient_accumulation_steps or 1)
    smallest = step * max(1, (ROWS_PER_OPTIMIZER_STEP // accumulation) // step)
    if smallest >= batch:
        return
    changed = {"per_device_train_batch_size": smallest}
    if config.generation_batch_size is not None:
        changed["generation_batch_size"] = smallest * spg * world
    kept = {key: plan.overrides.get(key) for key in changed}
    plan.overrides.update(changed)
    after = checked(world)
    if not after.valid or getattr(after.plan, "steps_per_generation", None) != spg:
        for key, value in kept.items():  # the schedule would not keep its shape: as written
            if value is None:
                plan.overrides.pop(key, None)
            else:
                plan.overrides[key] = value
        return
    groups = smallest * spg * world // generations
    plan.add("batch size", SUBSTITUTED, f"per_device_train_batch_size {smallest} (was {batch}): {groups} group(s) of "
             f"{generations} completions per generation instead of {batch * spg * world // generations}, with "
             f"steps_per_generation {spg}, num_iterations {config.num_iterations} and gradient_accumulation_steps "
             f"{config.gradient_accumulation_steps} as written (the same schedule, less work per micro-step)")


def cap_generation_kwargs(config, plan: SmokePlan) -> None:
    """generation_kwargs win over max_completion_length: a max_new_tokens there is capped too, and a max_time (a
    wall-clock limit, which a busy machine would reach at another token) is dropped."""
    kwargs = dict(config.generation_kwargs or {})
    if not kwargs:
        return
    changed = []
    if isinstance(kwargs.get("max_new_tokens"), int) and kwargs["max_new_tokens"] > COMPLETION_CAP:
        changed.append(f"max_new_tokens capped at {COMPLETION_CAP} (was {kwargs['max_new_tokens']})")
        kwargs["max_new_tokens"] = COMPLETION_CAP
    if "max_time" in kwargs:
        kwargs.pop("max_time")
        changed.append("max_time dropped (a wall-clock limit would stop at another token on a busy machine)")
    if changed:
        plan.overrides["generation_kwargs"] = kwargs
        plan.add("generation_kwargs", SUBSTITUTED, "; ".join(changed))


# --- the groups that run as written --------------------------------------------------------------------------------

def written_groups(config, run_plan, plan: SmokePlan, steps: int, reward_names: list[str]) -> None:
    loss = f"{config.loss_type}, epsilon {config.epsilon}" + (
        f"/{config.epsilon_high}" if config.epsilon_high is not None else "") + \
        f", importance sampling at {config.importance_sampling_level} level"
    plan.add("loss", EXERCISED, loss)
    if config.beta:
        plan.add("reference model", EXERCISED, f"beta {config.beta}: a frozen reference copy and the KL term")
    else:
        plan.add("reference model", NOT_EXERCISED, "beta 0: the config has no reference model")
    plan.add("schedule", EXERCISED, f"num_iterations {config.num_iterations}, steps_per_generation "
             f"{run_plan.steps_per_generation}, gradient_accumulation_steps {config.gradient_accumulation_steps}")
    plan.add("reward functions", EXERCISED, f"{', '.join(reward_names)} on real generated completions")
    if steps >= 2:
        plan.add("checkpoint save and resume", EXERCISED, "saved after step 1, resumed for step 2"
                 + (f" to step {steps}" if steps > 2 else ""))
    else:
        plan.add("checkpoint save and resume", NOT_EXERCISED, "--steps 1: saved, never resumed")


def config_line(path: str, key: str | None, needle: str | None = None) -> dict | None:
    """{"line": N, "text": ...} of the first line that sets `key` (or, with `needle`, mentions it after `key`)."""
    if not key:
        return None
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*:")
    for number, line in enumerate(lines, 1):
        if pattern.match(line):
            if needle is None:
                return {"line": number, "text": line.strip()}
            for later in range(number - 1, min(len(lines), number + 40)):
                if needle in lines[later]:
                    return {"line": later + 1, "text": lines[later].strip()}
            return {"line": number, "text": line.strip()}
    return None
