"""The catalogue of diagnostic codes: every code is stable, documented and never reused.

Codes are `GRPO-` + an area letter + three digits:
Y YAML and file, K keys (unknown, renamed, removed), T types and ranges, B batch geometry, G generation,
L loss, I importance sampling, V vLLM, R rewards, P precision, M model/PEFT/quantization, O output, logging,
evaluation and checkpoints, S datasets and script arguments, W world size and launch, E the `env:` section,
D deprecated keys, X the service's policy for configs posted over HTTP, H hardware (grpo plan: memory per GPU),
U what grpo_runtime (`grpo train`, `grpo launch`, the service's runs) can run: valid for TRL, but not run by this
trainer as written, C the environment that will run the config (`grpo doctor`: its packages, read from
metadata, against the TRL release and the features the config uses), Q verl's configs (grpo_schema.dialects.verl).
A run health (grpo_schema.health):
findings on a run's logged metrics, not on its config.

Loader, key, type and runtime codes are declared here; each cross-field rule declares its own code with `@rule`
(grpo_schema.engine.rules), each run-health rule with `@health_rule`, each environment rule with `@doctor_rule`.
All end up in one table, CODES; grpo_schema.catalogue.all_codes() imports every module that declares codes, and
`grpo codes`, SARIF and the language server read the table through it.
"""

from __future__ import annotations

from dataclasses import dataclass

from grpo_schema.engine.diagnostics import Severity

AREAS = {
    "Y": "YAML and file",
    "K": "keys",
    "T": "types and ranges",
    "B": "batch geometry",
    "G": "generation",
    "L": "loss",
    "I": "importance sampling",
    "V": "vLLM",
    "R": "rewards",
    "P": "precision",
    "M": "model, PEFT and quantization",
    "O": "output, logging, evaluation and checkpoints",
    "S": "datasets and script arguments",
    "W": "world size and launch",
    "E": "environment variables",
    "D": "deprecated keys",
    "X": "service policy (configs posted to the service)",
    "H": "hardware: will the run fit the declared GPUs (grpo plan)",
    "U": "what grpo_runtime runs (train, launch, service runs)",
    "A": "run health: what a run's metrics and completions show while and after it trains (grpo health)",
    "C": "the environment that will run the config (grpo doctor)",
    "F": "Python files: GRPOConfig(...) calls in scripts and notebooks",
    "Q": "verl configs (launch scripts and YAML): verl's own checks, the ones verl runs only on the cluster, "
    "and what verl does not check",
}


@dataclass(frozen=True)
class CodeInfo:
    code: str
    severity: Severity
    title: str
    explanation: str


CODES: dict[str, CodeInfo] = {}


def declare(code: str, severity: Severity, title: str, explanation: str) -> str:
    if code in CODES:
        raise ValueError(f"diagnostic code {code} declared twice")
    CODES[code] = CodeInfo(code, severity, title, " ".join(explanation.split()))
    return code


# --- YAML and file -------------------------------------------------------------------------------------------------
Y_SYNTAX = declare(
    "GRPO-Y001", "error", "YAML syntax error", "The file is not valid YAML. The position is where the parser stopped."
)
Y_TAB = declare(
    "GRPO-Y002", "error", "tab used for indentation", "YAML forbids tab characters in indentation. Indent with spaces."
)
Y_DUPLICATE = declare(
    "GRPO-Y003",
    "error",
    "duplicate key",
    "A key appears twice in one mapping. PyYAML (and so TRL) silently keeps the last value, "
    "which hides edits. Keep one.",
)
Y_NOT_MAPPING = declare(
    "GRPO-Y004",
    "error",
    "top level is not a mapping",
    "A config is a mapping of keys to values at the top level, as `trl grpo --config` expects.",
)
Y_EMPTY = declare(
    "GRPO-Y005", "error", "empty config", "The document is empty (or only comments). Nothing would be configured."
)
Y_ALIAS_BOMB = declare(
    "GRPO-Y006",
    "error",
    "anchors and aliases expand too far",
    "Aliases that expand to a huge document (the 'billion laughs' attack) or refer to "
    "themselves are refused before they are expanded.",
)
Y_TOO_LARGE = declare(
    "GRPO-Y007",
    "error",
    "file too large",
    "Config files are small; a file over the size limit is refused without being parsed.",
)
Y_TOO_DEEP = declare(
    "GRPO-Y008",
    "error",
    "nesting too deep",
    "Values nested deeper than the limit are refused; no GRPO setting needs that depth.",
)
Y_MULTI_DOC = declare(
    "GRPO-Y009",
    "error",
    "several YAML documents",
    "TRL reads exactly one YAML document; a second `---` document would be an error there.",
)
Y_KEY_TYPE = declare(
    "GRPO-Y010",
    "error",
    "key is not a string",
    "Every key must be a string. YAML 1.1 reads unquoted `on`, `off`, `yes`, `no`, numbers and "
    "`null` as other types; quote such keys.",
)
Y_ENCODING = declare("GRPO-Y011", "error", "file is not UTF-8 text", "The file could not be decoded as UTF-8 text.")
Y_TAG = declare(
    "GRPO-Y012",
    "error",
    "unsupported YAML tag",
    "Only plain YAML values are allowed; tags such as `!!python/object` are refused.",
)
Y_TOO_MANY_KEYS = declare(
    "GRPO-Y013", "error", "too many values", "The document holds more values than any config needs; it is refused."
)

Y_DUPLICATE_SAME = declare(
    "GRPO-Y014",
    "warning",
    "duplicate key with the same value",
    "A key appears twice in one mapping with the same value; harmless but redundant.",
)
Y_COMMENT = declare(
    "GRPO-Y015",
    "warning",
    "unreadable `# grpo:` comment",
    "A `# grpo: --world-size N --profile NAME ...` comment says how the file is meant to be checked; "
    "this one names an unknown option, profile or value, so that part of it is ignored and the "
    "file is checked without it.",
)
Y_NOT_GRPO = declare(
    "GRPO-Y016",
    "info",
    "not a GRPO config",
    "The file is recognised as another kind of file (an accelerate or DeepSpeed config, an SFT "
    "config, a workflow, ...): it has that kind's own top-level keys and none that only a GRPO "
    "config has, so it gets this one note instead of a GRPO check. A top-level `# grpo:` comment "
    "line makes it a GRPO config whatever its keys.",
)

Y_ANNOTATION = declare(
    "GRPO-Y017",
    "error",
    "a Python annotation as the value",
    "The value reads like a dataclass field pasted from Python (`use_vllm: bool = True`): YAML "
    "takes `bool = True` as one string, which a boolean or number field refuses and a text field "
    "keeps as it is. Write the value alone (`use_vllm: true`).",
)

# --- keys ------------------------------------------------------------------------------------------------------------
K_UNKNOWN = declare(
    "GRPO-K001",
    "error",
    "unknown key",
    "The key is not a field of TRL 1.16's `trl grpo` surface, of the active profiles or of "
    "`accelerate launch`. `trl grpo` would pass it to `accelerate launch`, which stops; "
    "running the script directly ignores it silently.",
)
K_RENAMED = declare(
    "GRPO-K002",
    "error",
    "renamed key",
    "The key was renamed in TRL or transformers; the old name is no longer read. `grpo migrate` rewrites it.",
)
K_REMOVED = declare(
    "GRPO-K003",
    "error",
    "removed key",
    "The key was removed from TRL or transformers and has no direct replacement, or its "
    "replacement works differently; the hint says what to do instead.",
)
K_HYPHEN = declare(
    "GRPO-K004",
    "error",
    "hyphenated key",
    "TRL accepts `--learning-rate` on the command line, but YAML keys must use the underscore "
    "name; a hyphenated key is ignored by TRL.",
)
K_LAUNCH = declare(
    "GRPO-K005",
    "info",
    "launch key",
    "An `accelerate launch` option in the config file. `trl grpo` forwards it to "
    "`accelerate launch`; grpo-config reads `num_processes` as the declared world size.",
)
K_PROFILE = declare(
    "GRPO-K006",
    "error",
    "key of a downstream project",
    "The key belongs to a known downstream project's script arguments (for example open-r1). "
    "Validate with that project's profile (`--profile NAME`) to accept and type it.",
)
K_DEAD_PROFILE_KEY = declare(
    "GRPO-K008",
    "warning",
    "profile key that nothing reads",
    "The active profile's script declares the key, so it is accepted, but it is the old "
    "name of a TRL setting (renamed or removed) and neither the script nor TRL 1.16 reads it: "
    "open-r1 declares wandb_log_unique_prompts, TRL reads log_unique_prompts. The value has "
    "no effect until it is moved to the new name.",
)
K_NESTED_UNKNOWN = declare(
    "GRPO-K007",
    "error",
    "unknown key in a nested mapping",
    "A key inside a nested mapping (a `datasets` entry, `accelerator_config`, ...) is not "
    "one the consumer accepts; TRL fails with a TypeError there.",
)
K_NOT_IN_RELEASE = declare(
    "GRPO-K009",
    "error",
    "key the chosen TRL release does not read",
    "The key is a field of TRL 1.16, but not of the release the config is judged against "
    "(--trl-version, the installed trl, or the repository's pin). That release's `trl grpo` "
    "stops on it (0.19-0.21), hands it to `accelerate launch`, which exits (0.29 on), or "
    "ignores it, and then it is a warning: the setting has no effect.",
)
K_LAUNCH_NOT_IN_RELEASE = declare(
    "GRPO-K010",
    "error",
    "launch key the chosen TRL release does not take",
    "An `accelerate launch` option (num_processes, ...) in the config. From TRL 0.29 "
    "`trl grpo` hands such keys to `accelerate launch`; earlier releases' parsers "
    "read only their own dataclasses, and stop on the key (0.19-0.21) or ignore it.",
)
K_OTHER_TRANSFORMERS = declare(
    "GRPO-K011",
    "warning",
    "key read only by some of the transformers the release accepts",
    "A TrainingArguments key that the release's table (the TrainingArguments of one "
    "transformers release) lacks, but that a transformers the TRL release accepts reads: "
    "removed later (warmup_ratio, read before transformers 5.15, by TRL 0.29 with 4.56-"
    "5.14) or added later (project and trackio_space_id, from transformers 4.57, by TRL "
    "0.23 with 4.57). Whether the run reads it depends on the transformers installed: pin "
    "the transformers that reads it, or write the setting as every accepted one reads it.",
)
D_IN_RELEASE = declare(
    "GRPO-D006",
    "warning",
    "key the chosen TRL release says is deprecated",
    "The release the config is judged against (--trl-version, the installed trl, or the "
    "repository's pin) still reads the key, and warns that it is deprecated when it is set. The "
    "hint names the key that release reads instead, where it has one.",
)
# The hardware: section is grpo-config's own (grpo plan reads it); every check says TRL does not.
H_SECTION = declare(
    "GRPO-H006",
    "warning",
    "`hardware:` is read by grpo-config only",
    "`trl grpo --config` does not know a `hardware:` key: it passes it on to `accelerate launch`, "
    "which stops. grpo train/launch ignore it; for `trl grpo`, pass --hardware on grpo's command "
    "line instead, or remove the section from the copy TRL reads.",
)

# --- types and ranges ----------------------------------------------------------------------------------------------
T_TYPE = declare(
    "GRPO-T001",
    "error",
    "wrong type",
    "The value does not have the type the field needs, and TRL would not convert it either.",
)
T_RANGE = declare(
    "GRPO-T002",
    "error",
    "value out of range",
    "The value has the right type but lies outside the range the field allows.",
)
T_CHOICE = declare(
    "GRPO-T003", "error", "not one of the allowed values", "The field takes one of a fixed set of values."
)
T_INTEGRAL_FLOAT = declare(
    "GRPO-T004",
    "warning",
    "whole number written as a float",
    "An integer field holds a float such as `4.0`. TRL keeps it a float, which breaks "
    "integer-only code later (sampler repeats, ranges); write `4`.",
)
T_MISSING = declare("GRPO-T005", "error", "required value missing", "A required key of a nested entry is missing.")
T_JSON = declare(
    "GRPO-T006",
    "error",
    "invalid JSON object string",
    "Dict-valued fields accept a JSON object written as a string (as TRL does for its "
    "command line); this string is not valid JSON.",
)
T_SCALAR_FOR_LIST = declare(
    "GRPO-T007",
    "error",
    "a single value where a list is needed",
    "The field takes a list. A bare string would be iterated character by character.",
)
T_LOG_LEVEL_NUMBER = declare(
    "GRPO-T009",
    "warning",
    "numeric log level",
    "log_level takes a level name; transformers looks the value up by name and fails on a "
    "number such as 20 when the trainer starts. Write the name (20 is 'info').",
)
T_YAML_BOOL = declare(
    "GRPO-T008",
    "error",
    "YAML boolean where a word was meant",
    "YAML 1.1 reads unquoted `no`, `yes`, `on` and `off` as booleans. Quote the word.",
)

T_BOOL_STRING = declare(
    "GRPO-T010",
    "error",
    "quoted boolean that TRL keeps as a string",
    "Only real YAML booleans (unquoted true/false) are booleans. In a field TRL types as a "
    'string (scale_rewards, resume_from_checkpoint), a quoted "False", or the command line\'s '
    "`--scale_rewards False`, stays the string 'False': not a scale_rewards mode, a checkpoint "
    "directory named 'False'. TRL fails only when training reaches it.",
)
T_BOOL_WORD = declare(
    "GRPO-T011",
    "warning",
    "quoted boolean in a field `trl grpo` parses as a boolean",
    '`trl grpo` converts a quoted "False" in include_num_input_tokens_seen to false, but '
    "transformers given the string itself (a Python script building GRPOConfig) counts every "
    "token. Write the unquoted boolean so both read the same.",
)
T_BOOL_OPTION = declare(
    "GRPO-T012",
    "error",
    "value `trl grpo`'s parser refuses",
    "`trl grpo` builds a boolean command-line option for include_num_input_tokens_seen (its "
    "type is `str | bool`), so its names 'all' and 'non_padding' fail with 'Truthy value "
    "expected' before training starts. Write true (every token) or false.",
)
T_NOT_IN_RELEASE = declare(
    "GRPO-T013",
    "error",
    "value the chosen TRL release's parser refuses",
    "The release the config is judged against types the key differently from TRL 1.16 (up to "
    "0.21, scale_rewards is a boolean), and its parser cannot convert the value written.",
)

T_UNLISTED = declare(
    "GRPO-T014",
    "warning",
    "value the release's parser takes but its trainer never acts on",
    "The release reads the key as a plain string with a list of names it documents (half_precision_backend, "
    "fp16_backend up to TRL 0.26): its parser takes any text, and its Trainer compares the value with those "
    "names only, so another one does nothing. Write one of the names the release lists.",
)

T_APEX_BF16 = declare(
    "GRPO-T015",
    "error",
    "bf16 with half_precision_backend apex, which the release's transformers refuses",
    "transformers 4.x (the TRL releases up to 0.26) refuses half_precision_backend: apex with bf16 when the training "
    "arguments are built: apex's mixed precision is fp16 only. From TRL 0.19 bf16 is on unless fp16 is, so apex alone "
    "is refused there. Use half_precision_backend: auto (torch's own mixed precision).",
)

# --- what grpo_runtime runs ---------------------------------------------------------------------------------------
# One table of fields (grpo_runtime.support) raises these, before anything loads: `grpo train/launch --dry-run`,
# `grpo train/launch` themselves (exit 3) and the service's launch check. Valid configs only: TRL would run them.
U_GENERATION = declare(
    "GRPO-U001",
    "error",
    "generation settings grpo_runtime cannot run as written",
    "The generation settings cannot be run as written (for example continuous-batching settings "
    "transformers does not take); grpo_runtime refuses them before loading anything.",
)
U_SHARDING = declare(
    "GRPO-U002",
    "error",
    "sharding grpo_runtime cannot run as written",
    "The DeepSpeed, FSDP or accelerate settings cannot be run as written (a missing DeepSpeed file, "
    "its own optimizer, batch sizes that contradict the run, an option that needs whole weights "
    "under FSDP or ZeRO-3); grpo_runtime refuses rather than silently running without them.",
)
U_HUB = declare(
    "GRPO-U003",
    "error",
    "upload to the Hub grpo_runtime does not run",
    "Uploading logged completions to a Hub dataset is not run by grpo_runtime (checkpoints are pushed "
    "with push_to_hub); it refuses the run instead of training without the upload.",
)
U_FEATURE = declare(
    "GRPO-U004",
    "error",
    "setting grpo_runtime does not run",
    "The setting is valid for TRL 1.16 but grpo_runtime has no implementation of it; the run is "
    "refused before anything loads, with what to change.",
)
U_PACKAGE = declare(
    "GRPO-U005",
    "error",
    "package missing for a setting",
    "The setting needs a Python package that is not installed where the run would start.",
)
U_PROCESSES = declare(
    "GRPO-U006",
    "error",
    "several processes asked of a one-process command",
    "`grpo train` trains in one process; a config that declares num_processes > 1 is run with "
    "`grpo launch`, which starts them.",
)
U_NO_EFFECT = declare(
    "GRPO-U007",
    "warning",
    "setting that cannot change this run",
    "grpo_runtime accepts the setting, but it cannot change this run (for example an option of a "
    "device or launcher this run does not use); the warning says why.",
)
U_SPEED_ONLY = declare(
    "GRPO-U008",
    "warning",
    "speed-only option not applied",
    "The option changes only how fast or how memory-hungry TRL runs, not the numbers; "
    "grpo_runtime does not apply it, so the run has the same results at its own speed.",
)
U_FALLBACK = declare(
    "GRPO-U009",
    "warning",
    "computed without a package TRL uses",
    "TRL computes this with a package that is not installed here; grpo_runtime runs with a "
    "documented fallback whose numbers can differ from TRL's. The warning names the package.",
)
U_NOTHING_TO_TRAIN = declare(
    "GRPO-U010",
    "error",
    "no model to train",
    "The file names no model_name_or_path. As GRPOConfig arguments for a Python script it is "
    "valid (the script passes the model, dataset and rewards), but a run started from it "
    "has nothing to train; grpo_runtime refuses it before loading anything. Add them to "
    "the file or pass them with --set.",
)

U_RAY_UNREACHABLE = declare(
    "GRPO-U011",
    "error",
    "Ray cluster not reachable",
    "`grpo launch --ray ADDRESS` found no Ray Jobs API (the dashboard, port 8265 by "
    "default) at the address; nothing was submitted. Start the cluster or give its "
    "dashboard address (http://HEAD:8265).",
)
U_RAY_UNPLACEABLE = declare(
    "GRPO-U012",
    "error",
    "Ray cluster cannot place the world size",
    "The Ray cluster's live nodes cannot hold the run's accelerate machines (equal bundles "
    "of the GPUs or CPUs of their processes, each on one node) for the config's world size, "
    "so the job would wait forever; it is refused before submission. Use a smaller world "
    "size, fewer resources per process, or a larger cluster.",
)

# --- the environment (grpo doctor) -----------------------------------------------------------------------------------
# The C codes are declared beside the rules that yield them, in grpo_schema.doctor.rules (@doctor_rule).
