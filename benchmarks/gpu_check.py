"""GPU check: grpo_runtime against TRL 1.16's GRPOTrainer with vLLM colocate generation, on one machine, one run.

    python benchmarks/gpu_check.py                 # on a machine with CUDA GPUs and the `vllm` extra (+ trl)
    python benchmarks/gpu_check.py --dry-run       # anywhere: build the model and configs, run nothing

What it runs (every part in its own process, one after another, on the same GPUs):
1. a Qwen2-architecture model of ~0.5B random-init parameters (Qwen2.5-0.5B's shape) saved in bf16 with a small
   byte-level BPE tokenizer (built here: nothing is downloaded), and the demo's prompts;
2. grpo_runtime and TRL's GRPOTrainer with the same config: bf16, vLLM colocate, 8 generations per prompt;
   s/step (median after warm-up), completions/s, peak GPU memory (torch's peak reserved, vLLM's pool included),
   and the importance-sampling ratio both report;
3. server-mode weight sync over NCCL: a vLLM server (as `trl vllm-serve` starts it) on the last GPU and
   grpo_runtime training on the first: the ratio stays near 1 only if the pushed weights arrive;
4. sharded training on all GPUs: grpo_runtime under FSDP2 and under DeepSpeed ZeRO-3 (when deepspeed is
   installed), with vLLM colocate, a few steps each (pass/fail, s/step).
Results: benchmarks/results/gpu_check-<time>.json (and the console). Each part has a time limit; a failed part is
recorded with its error and the others still run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
GPU_PACKAGES = ("torch", "transformers", "trl", "vllm", "accelerate", "deepspeed")  # what results.json records
# Qwen2.5-0.5B's shape (494M parameters with tied embeddings), random init.
QWEN2_05B = dict(
    hidden_size=896,
    intermediate_size=4864,
    num_hidden_layers=24,
    num_attention_heads=14,
    num_key_value_heads=2,
    vocab_size=151936,
    max_position_embeddings=2048,
    tie_word_embeddings=True,
    rope_theta=1000000.0,
    rms_norm_eps=1e-6,
)
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_tokenizer(directory: Path):
    """A byte-level BPE tokenizer (Qwen2's kind) trained on the demo's prompts, with ChatML special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from grpo_runtime.launch.demo import demo_rows
    from grpo_runtime.model.tiny import FILLER_WORDS, TARGET_WORDS

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    texts = [row["prompt"][0]["content"] for row in demo_rows()] + [" ".join(TARGET_WORDS + FILLER_WORDS)] * 4
    core.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    tokenizer.chat_template = CHATML
    tokenizer.save_pretrained(directory)
    return tokenizer


def build_model(directory: Path, layers: int | None = None) -> int:
    """Save the random-init Qwen2 model (bf16) and its tokenizer; returns the parameter count. `layers` shrinks it
    (the dry run checks the architecture without building 0.5B parameters on a CPU)."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    tokenizer = build_tokenizer(directory)
    torch.manual_seed(0)
    shape = {**QWEN2_05B, **({"num_hidden_layers": layers} if layers else {})}
    config = Qwen2Config(
        **shape, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=None
    )
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(directory)
    count = sum(p.numel() for p in model.parameters())
    del model
    return count


def run_config(root: Path, name: str, steps: int, **extra) -> Path:
    """The shared config (as `trl grpo` reads it); `extra` overrides per part."""
    import yaml

    values = dict(
        model_name_or_path=str(root / "model"),
        dataset_name=str(root / "data"),
        reward_funcs=["grpo_runtime.data.reward_library.target_word_reward"],
        output_dir=str(root / name),
        per_device_train_batch_size=16,
        num_generations=8,
        max_completion_length=256,
        temperature=1.0,
        loss_type="dapo",
        beta=0.0,
        learning_rate=1e-6,
        lr_scheduler_type="constant",
        max_steps=steps,
        seed=0,
        bf16=True,
        activation_checkpointing=True,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_vllm=True,
        vllm_mode="colocate",
        vllm_gpu_memory_utilization=0.3,
        vllm_max_model_length=512,
        vllm_importance_sampling_correction=True,
        disable_tqdm=True,
    )
    values.update(extra)
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(values, sort_keys=False))
    return path


def write_data(root: Path) -> None:
    from grpo_runtime.launch.demo import demo_rows

    (root / "data").mkdir(parents=True, exist_ok=True)
    with (root / "data" / "train.jsonl").open("w") as handle:
        for row in demo_rows(repeats=64):
            handle.write(json.dumps(row) + "\n")


def summary(metrics_file: Path, warmup: int = 2) -> dict:
    rows = [json.loads(line) for line in metrics_file.read_text().splitlines()] if metrics_file.exists() else []
    rows = [r for r in rows if "step_time" in r or "step_time_s" in r]
    times = [r.get("step_time", r.get("step_time_s")) for r in rows][warmup:]
    if not times:
        return {"steps_logged": len(rows)}
    per_step = statistics.median(times)
    ratio = [r.get("sampling/importance_sampling_ratio/mean") for r in rows]
    return {
        "steps_logged": len(rows),
        "s_per_step": per_step,
        "importance_sampling_ratio_mean": [x for x in ratio if x is not None],
    }


def run_part(name: str, command: list[str], timeout: float, env: dict | None = None) -> dict:
    print(f"== {name}: {' '.join(command)}", flush=True)
    started = time.time()
    try:
        done = subprocess.run(
            command,
            cwd=REPO,
            timeout=timeout,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout:.0f} s", "wall_s": time.time() - started}
    result = {"ok": done.returncode == 0, "wall_s": round(time.time() - started, 1)}
    if done.returncode:
        result["error"] = done.stderr[-4000:]
    for line in done.stdout.splitlines():  # the child's one JSON line of measurements
        if line.startswith("GPU_CHECK "):
            result.update(json.loads(line[len("GPU_CHECK ") :]))
    print(json.dumps(result, indent=1)[:2000], flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--root", default="/tmp/grpo-gpu-check")
    parser.add_argument("--part-timeout", type=float, default=900)
    parser.add_argument("--dry-run", action="store_true", help="build the model and configs; run nothing")
    parser.add_argument(
        "--only", nargs="*", default=None, help="parts to run: runtime trl server fsdp zero3 (default: all)"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    import torch

    from grpo_runtime.outputs.run_info import versions

    root = Path(args.root)
    root.mkdir(parents=True, exist_ok=True)
    gpus = torch.cuda.device_count()
    if not gpus and not args.dry_run:
        print("gpu_check: no CUDA GPU here; run it on a machine with one (or use --dry-run)", file=sys.stderr)
        return 2
    results: dict = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpus": gpus,
        "gpu": torch.cuda.get_device_name(0) if gpus else None,
        "steps": args.steps,
        "versions": versions(GPU_PACKAGES, missing="not installed"),
    }
    results["parameters"] = build_model(root / "model", layers=2 if args.dry_run else None)
    write_data(root)
    python = sys.executable
    child = str(HERE / "gpu_check_child.py")
    parts = {
        "runtime": lambda: run_part(
            "grpo_runtime, vLLM colocate",
            [python, child, "runtime", str(run_config(root, "runtime", args.steps))],
            args.part_timeout,
        ),
        "trl": lambda: run_part(
            "TRL GRPOTrainer, vLLM colocate",
            [python, child, "trl", str(run_config(root, "trl", args.steps))],
            args.part_timeout,
        ),
        "server": lambda: server_part(root, args, python, child, gpus),
        "fsdp": lambda: run_part(
            f"grpo_runtime FSDP2 on {gpus} GPU(s)",
            [
                python,
                "-m",
                "grpo_schema",
                "launch",
                str(run_config(root, "fsdp", 4)),
                "--num-processes",
                str(gpus),
                "--use_fsdp",
                "--fsdp_version",
                "2",
            ],
            args.part_timeout,
        ),
        "zero3": lambda: (
            run_part(
                f"grpo_runtime DeepSpeed ZeRO-3 on {gpus} GPU(s)",
                [
                    python,
                    "-m",
                    "grpo_schema",
                    "launch",
                    str(run_config(root, "zero3", 4)),
                    "--num-processes",
                    str(gpus),
                    "--use_deepspeed",
                    "--zero_stage",
                    "3",
                ],
                args.part_timeout,
            )
            if importable("deepspeed")
            else {"ok": False, "error": "deepspeed is not installed"}
        ),
    }
    if args.dry_run:  # every config must validate; the tokenizer must read back what the prompts say
        from transformers import AutoTokenizer

        from grpo_schema import check_file

        for name in ("runtime", "trl", "fsdp", "zero3"):
            checked = check_file(str(run_config(root, name, args.steps)), world_size=max(gpus, 1))
            results[f"{name}_config_valid"] = checked.valid
        tokenizer = AutoTokenizer.from_pretrained(root / "model")
        ids = tokenizer.apply_chat_template([{"role": "user", "content": "say cat"}], add_generation_prompt=True)
        results["tokenizer_round_trip"] = tokenizer.decode(ids)
        print(json.dumps(results, indent=1))
        return 0 if all(results[f"{n}_config_valid"] for n in ("runtime", "trl", "fsdp", "zero3")) else 1
    for name in args.only or list(parts):
        results[name] = parts[name]()
    if (
        "runtime" in results
        and "trl" in results
        and results["runtime"].get("s_per_step")
        and results["trl"].get("s_per_step")
    ):
        results["speedup_vs_trl"] = results["trl"]["s_per_step"] / results["runtime"]["s_per_step"]
    out = HERE / "results" / f"gpu_check-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(f"wrote {out}")
    return 0 if all(results[n].get("ok") for n in (args.only or list(parts))) else 1


def server_part(root: Path, args, python: str, child: str, gpus: int) -> dict:
    """vLLM server on the last GPU (as `trl vllm-serve` starts it), grpo_runtime on the first, weights over NCCL."""
    if gpus < 2:
        return {"ok": False, "error": "server mode with NCCL weight sync needs 2 GPUs (server + trainer)"}
    from trl.scripts.vllm_serve import ScriptArguments, build_command

    command = build_command(
        ScriptArguments(
            model=str(root / "model"), host="127.0.0.1", port=8011, gpu_memory_utilization=0.5, max_model_len=512
        )
    )
    log = open(root / "server.log", "w")
    server = subprocess.Popen(
        command,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "VLLM_SERVER_DEV_MODE": "1", "CUDA_VISIBLE_DEVICES": str(gpus - 1)},
    )
    try:
        config = run_config(
            root,
            "server",
            args.steps,
            vllm_mode="server",
            vllm_server_host="127.0.0.1",
            vllm_server_port=8011,
            vllm_server_timeout=600,
        )
        return run_part(
            "grpo_runtime, vLLM server (NCCL weight sync)",
            [python, child, "runtime", str(config)],
            args.part_timeout,
            env={"CUDA_VISIBLE_DEVICES": "0"},
        )
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=120)


def importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


if __name__ == "__main__":
    sys.exit(main())
