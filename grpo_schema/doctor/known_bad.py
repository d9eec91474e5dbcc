"""Combinations of package versions (and config features) that are known to fail, each with its public source.

A row matches when every package in `when` is installed at a version inside its specifier (a package written
with the specifier "absent" must not be installed), and every feature in `features` is used by the config
(doctor.rules.features). Rows with `fails=True` break the run (GRPO-C003, an error); the others make it misbehave
or fail only sometimes (GRPO-C004, a warning). `pin` is the requirement line that avoids the row, in
requirements syntax. Ranges are the releases a source names; where a source gives a date rather than a release,
the range ends at the first release after that date and `note` says so. docs/doctor.md prints this table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownBad:
    id: str
    when: dict[str, str]
    features: tuple[str, ...]
    fails: bool
    problem: str
    failure: str  # how it fails, as users saw it
    pin: str  # the line to write in requirements syntax
    source: str  # the public issue, pull request or release note
    note: str = ""
    # How strong the source is: "reproduced" (here, or in the issue with a traceback), "maintainers" (a statement or
    # change of the projects involved), "metadata" (a wheel's declared requirement), or "report" (a single user's
    # or another project's account, unconfirmed). A single report never makes a row an error (fails=False).
    evidence: str = "maintainers"


ROWS: tuple[KnownBad, ...] = (
    KnownBad(
        "KB01",
        {"trl": ">=0.14,<0.24", "transformers": ">=5"},
        (),
        True,
        "TRL releases before 0.24 misread transformers 5's optional-import checks",
        "importing trl tries to import vLLM (and fails where vLLM is not installed): `trl grpo` stops before training",
        "transformers<5",
        "grpo-config's release oracle (scripts/trl-release-venvs.sh: TRL 0.16.1, 0.19.1 and 0.23.1 import only "
        "with the transformers release before them); TRL PR#6108 and PR#6153 date TRL's transformers v5 "
        "support",
        "reproduced here, not a TRL issue thread",
        evidence="reproduced",
    ),
    KnownBad(
        "KB02",
        {"trl": ">=0.17", "vllm": "<0.8.3"},
        ("vllm",),
        True,
        "`trl vllm-serve` passes worker_extension_cls, which vLLM before 0.8.3 does not take",
        "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'",
        "vllm>=0.8.3",
        "https://github.com/huggingface/trl/issues/3304",
    ),
    KnownBad(
        "KB03",
        {"vllm": ">=0.8.3,<0.9", "torch": "<2.6"},
        ("vllm",),
        True,
        "vLLM 0.8.3 (the minimum of TRL 0.17) is built for torch 2.6.0 only",
        "vLLM does not load with torch 2.5.1",
        "torch==2.6.0",
        "https://github.com/axolotl-ai-cloud/axolotl/pull/2560",
        "vLLM 0.8.3 to 0.8.5's wheels declare torch==2.6.0 (doctor/vllm_requirements.json)",
        evidence="metadata",
    ),
    KnownBad(
        "KB04",
        {"trl": "<0.27", "vllm": ">=0.12,<0.13"},
        ("vllm",),
        True,
        "vLLM 0.12.0 changed what TRL's vLLM integration calls",
        "TRL's maintainers: vLLM 0.12.0 'is NOT compatible with TRL' (TRL supported up to 0.11.x then)",
        "vllm<0.12",
        "https://github.com/huggingface/trl/pull/4633",
    ),
    KnownBad(
        "KB05",
        {"trl": ">=1.8,<1.9", "vllm": ">=0.14,<0.16"},
        ("vllm",),
        True,
        "TRL 1.8 dropped vLLM 0.14 and 0.15",
        "the trainer's weight sync and generation calls no longer match those vLLM releases",
        "vllm>=0.16.0,<=0.23.0",
        "https://github.com/axolotl-ai-cloud/axolotl/pull/3875",
    ),
    KnownBad(
        "KB06",
        {"trl": ">=1.9", "vllm": ">=0.14,<0.17"},
        ("vllm",),
        True,
        "TRL 1.9 dropped vLLM 0.14 to 0.16",
        "the trainer's weight sync and generation calls no longer match those vLLM releases",
        "vllm>=0.17.0",
        "https://github.com/axolotl-ai-cloud/axolotl/pull/3875",
    ),
    KnownBad(
        "KB07",
        {"triton": "==3.2.0"},
        ("vllm",),
        False,
        "Triton 3.2.0 breaks GRPO with vLLM generation",
        "the reference-model forward pass fails inside the training step (reported under Axolotl)",
        "triton!=3.2.0",
        "https://github.com/axolotl-ai-cloud/axolotl/issues/2526",
        "one report, under another trainer: a warning",
        evidence="report",
    ),
    KnownBad(
        "KB08",
        {"trl": ">=0.25,<1.0"},
        ("vllm_colocate", "vllm_sleep_mode"),
        False,
        "colocated vLLM with vllm_enable_sleep_mode: the weights dropped by sleep level 2 were not synced back",
        "silent: training runs, but generation uses stale weights (importance-sampling ratios near 0)",
        "trl>=1.0.0",
        "https://github.com/huggingface/trl/issues/5312",
        "fixed by TRL PR#5313 (2026-03-19); 1.0.0 is the first release dated after it taken as fixed",
    ),
    KnownBad(
        "KB09",
        {"trl": ">=0.16,<0.17", "torch": ">=2.6"},
        ("resume",),
        True,
        "resuming a GRPO run on TRL 0.16 with torch 2.6 or newer",
        "resume_from_checkpoint fails: torch 2.6 loads checkpoints with weights_only=True by default "
        "(UnpicklingError: Weights only load failed)",
        "torch<2.6",
        "https://github.com/huggingface/trl/issues/3247",
    ),
    KnownBad(
        "KB10",
        {"unsloth": "<=2026.3.4", "trl": ">0.24.0"},
        (),
        False,
        "Unsloth up to 2026.3.4 declares trl<=0.24.0 and patches TRL's methods by text substitution",
        "installed past its pin (pip install trl --no-deps), its patches may no longer apply to the newer TRL",
        "trl==0.24.0",
        "https://github.com/unslothai/unsloth/issues/4190",
    ),
    KnownBad(
        "KB11",
        {"trl": "==0.27.2", "weave": "absent", "unsloth": ">=0"},
        (),
        False,
        "Unsloth's patched TRL 0.27.2 imports weave, which TRL does not declare",
        "importing GRPOTrainer fails with ModuleNotFoundError: weave (reported with Unsloth)",
        "weave",
        "https://github.com/unslothai/unsloth-zoo/pull/636",
        "another project's fix: TRL 0.27.2's own wheel imports weave only where it is installed "
        "(trl/trainer/callbacks.py), so the row needs Unsloth and is a warning",
        evidence="report",
    ),
    KnownBad(
        "KB12",
        {},
        ("vllm", "peft", "quantized"),
        False,
        "LoRA merged into a 4-bit base for vLLM generation",
        "vLLM generates from the merged weights, which differ from the trained model by rounding: "
        "'may get different generations'",
        "",
        "https://github.com/huggingface/trl/issues/2698",
    ),
    KnownBad(
        "KB13",
        {"trl": ">=0.18,<0.20", "vllm": ">=0.9"},
        ("vllm",),
        False,
        "TRL 0.18/0.19 GRPO with vLLM 0.9 or newer",
        "dstack's open-r1 example pins vLLM 0.8.5.post1 'as latest vLLM causes TRL's GRPO to fail' (trl#3608)",
        "vllm==0.8.5.post1",
        "https://github.com/dstackai/dstack/blob/master/examples/distributed-training/open-r1/README.md",
        "one project's note, not confirmed in the TRL issue it names: a warning",
        evidence="report",
    ),
    KnownBad(
        "KB14",
        {"vllm": "==0.9.1"},
        ("vllm_server",),
        False,
        "vLLM 0.9.1 in server mode across nodes",
        "the trainer cannot connect to the `trl vllm-serve` server on multi-node Slurm; closed as outdated "
        "once TRL required vLLM 0.12 or newer",
        "vllm>=0.12.0",
        "https://github.com/huggingface/trl/issues/3648",
    ),
    KnownBad(
        "KB15",
        {"trl": "<1.9"},
        ("vllm", "zero3"),
        False,
        "vLLM weight sync under ZeRO-3 sized its buckets with numel(), which is 0 for partitioned parameters",
        "the whole model lands in one bucket: out of memory at the first weight sync",
        "trl>=1.9.0",
        "https://github.com/huggingface/trl/pull/6386",
        "fix merged 2026-07; 1.9.0 (2026-07-28) is the first release taken as fixed",
    ),
    KnownBad(
        "KB16",
        {"trl": "<1.6"},
        ("vllm", "peft", "zero3"),
        False,
        "PEFT with ZeRO-3: the vLLM weight sync gathered the full model",
        "out of memory at the weight sync",
        "trl>=1.6.0",
        "https://github.com/huggingface/trl/pull/5766",
        "fix merged 2026-05; 1.6.0 (2026-06-11) is the first release taken as fixed",
    ),
    KnownBad(
        "KB17",
        {"trl": "<0.17", "vllm": ">=0.8"},
        ("vllm",),
        False,
        "vLLM 0.8 made its V1 engine the default, which TRL 0.16's vLLM generation did not run with",
        "generation fails or hangs; users ran with VLLM_USE_V1=0",
        "vllm<0.8",
        "https://github.com/huggingface/trl/issues/3115",
    ),
    KnownBad(
        "KB18",
        {"vllm": "<0.7"},
        ("vllm",),
        True,
        "TRL's GRPO vLLM generation with vLLM 0.6",
        "the vLLM calls GRPO makes do not exist in 0.6 (TRL 0.15 pins vllm==0.7.2)",
        "vllm>=0.7.2",
        "https://github.com/huggingface/trl/issues/2883",
    ),
    KnownBad(
        "KB19",
        {"vllm": ">=0.27,<0.28", "torch": "!=2.13.*"},
        ("vllm",),
        True,
        "vLLM 0.27 is built for PyTorch 2.13.0",
        "with another torch, vLLM's compiled kernels fail to load (undefined symbols)",
        "torch==2.13.0",
        "https://github.com/huggingface/trl/pull/6742",
        "vLLM 0.27's wheels declare torch==2.13.0 (doctor/vllm_requirements.json)",
        evidence="metadata",
    ),
    KnownBad(
        "KB20",
        {"vllm": ">=0.20,<0.21", "torch": "<2.11"},
        ("vllm",),
        True,
        "vLLM 0.20 moved to torch 2.11 and CUDA 13",
        "with an older torch, vLLM's compiled kernels fail to load",
        "torch>=2.11",
        "https://github.com/huggingface/trl/pull/6108",
        "vLLM 0.20's wheels declare torch==2.11.0 (doctor/vllm_requirements.json)",
        evidence="metadata",
    ),
    KnownBad(
        "KB21",
        {"vllm": "<0.19.1", "transformers": ">=5"},
        ("vllm",),
        False,
        "vLLM before 0.19.1 with transformers 5",
        "TRL's support note for 0.19.1 names transformers v5 compatibility as the release's one change: "
        "earlier vLLM releases may fail to load models through transformers 5",
        "vllm>=0.19.1",
        "https://github.com/huggingface/trl/pull/6107",
    ),
    KnownBad(
        "KB22",
        {"vllm": ">=0.24", "transformers": "<5"},
        ("vllm",),
        False,
        "vLLM 0.24 deprecated transformers v4 (0.23 targets transformers v5)",
        "model loading through transformers 4 is deprecated in those vLLM releases",
        "transformers>=5",
        "https://github.com/huggingface/trl/pull/6355",
    ),
)
