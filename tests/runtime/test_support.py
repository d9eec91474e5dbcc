"""The field table (grpo_runtime.support.fields) and what `grpo train` / `grpo launch` do with it before anything loads:
every field classified, the generated page current, --dry-run, exit codes, launch keys from the file."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import grpo_runtime.model.loading
import grpo_runtime.setup  # imported before any test patches model.load_policy, so it binds the real one
from grpo_runtime.launch.cli import launch_arguments, launch_command, train_command
from grpo_runtime.support import CATEGORIES
from grpo_runtime.support.fields import CONFIG_FIELDS, LAUNCH_FIELDS

from .helpers import base_settings, write_prompts

ROOT = Path(__file__).resolve().parents[2]


def test_every_field_and_launch_key_has_one_entry():
    facts = json.loads((ROOT / "grpo_schema" / "engine" / "compiled_models.json").read_text())
    assert set(CONFIG_FIELDS) == set(facts["config"]["fields"]) and len(CONFIG_FIELDS) == 221
    assert set(LAUNCH_FIELDS) == set(facts["launch"]["fields"])
    for name, entry in {**CONFIG_FIELDS, **LAUNCH_FIELDS}.items():
        assert entry.category in CATEGORIES and len(entry.note) >= 7, name
        if entry.category in ("refused", "warned"):
            assert len(entry.limits) == 1 and entry.limits[0].refuse == (entry.category == "refused"), name
        if entry.category == "ignored":
            assert not entry.limits and "TRL" in entry.note or "only with" in entry.note, name


def test_the_field_page_is_generated_from_the_table():
    page = (ROOT / "docs" / "runtime-fields.md").read_text(encoding="utf-8")
    for name in CONFIG_FIELDS:
        assert f"| `{name}` |" in page


def test_assessing_a_config_imports_no_torch(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(
        "model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]\nuse_vllm: true\n"
        "per_device_train_batch_size: 8\nnum_generations: 4\n"
    )
    code = (
        "import sys; from grpo_schema import check_file; from grpo_runtime.support import assess; "
        f"found = assess(check_file({str(config)!r})); "
        "print(sorted(d.code for d in found), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.stdout.strip() == "['GRPO-U005'] False", out.stderr  # vllm is not installed in this environment


@pytest.fixture
def demo_file(tmp_path, tiny_model_dir):
    def write(**extra):
        settings = base_settings(tiny_model_dir, write_prompts(tmp_path / "data.jsonl"), tmp_path / "out")
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump({**settings, **extra}))
        return str(path)

    return write


@pytest.fixture
def no_loading(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(grpo_runtime.model.loading, "load_policy", refuse)
    monkeypatch.setattr("grpo_runtime.setup.load_policy", refuse)


def test_dry_run_says_the_demo_runs_and_loads_nothing(demo_file, no_loading, capsys):
    assert train_command([demo_file(), "--dry-run"]) == 0
    assert "can run" in capsys.readouterr().out
    assert launch_command([demo_file(), "--dry-run", "--num-processes", "2"]) == 0


def test_refusals_exit_3_with_coded_diagnostics_before_loading(demo_file, no_loading, capsys):
    path = demo_file(use_vllm=True, deepspeed="missing/zero3.json", torch_compile=True)
    for argv in ([path, "--dry-run"], [path]):
        assert train_command(argv) == 3
        captured = capsys.readouterr()
        for words in (
            "error[GRPO-U005] use_vllm",
            "error[GRPO-U002] deepspeed",
            "warning[GRPO-U008] torch_compile",
            "cannot run",
        ):
            assert words in captured.err + captured.out, words
        assert "Traceback" not in captured.err
    assert launch_command([path, "--num-processes", "2"]) == 3
    assert not (Path(path).parent / "out").exists()


def test_a_file_asking_for_several_processes_gets_the_command_to_run(demo_file, no_loading, capsys):
    path = demo_file(num_processes=2, num_machines=1)
    assert train_command([path, "--set", "max_steps=2"]) == 3
    err = capsys.readouterr().err
    assert f"grpo launch {path} --set max_steps=2" in err and "GRPO-U006" in err
    assert "--world-size" not in err  # no flag nobody passed


def test_dry_run_of_a_multi_process_file_names_the_command_that_runs_it(demo_file, no_loading, capsys):
    path = demo_file(num_processes=2)
    assert train_command([path, "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert f"can run {path} as written at 2 processes, started with:  grpo launch {path};" in captured.out
    assert "GRPO-U006" not in captured.out + captured.err


def test_counts_read_one_process_and_two_processes_never_process_es(demo_file, no_loading, capsys):
    """The two lines a user meets first: `grpo launch --dry-run`'s verdict and the Slurm job's layout."""
    from grpo_runtime.clusters.slurm.layout import plan_layout

    path = demo_file()
    assert launch_command([path, "--dry-run", "--num-processes", "1"]) == 0
    one = capsys.readouterr().out
    assert f"can run {path} as written at 1 process; nothing was loaded" in one
    assert launch_command([path, "--dry-run", "--num-processes", "2"]) == 0
    two = capsys.readouterr().out
    assert f"can run {path} as written at 2 processes; nothing was loaded" in two
    assert "(s)" not in one + two and "(es)" not in one + two
    assert plan_layout({}, nodes=1, processes_per_node=1).describe() == "1 node x 1 process = world size 1"
    assert plan_layout({}, nodes=2, processes_per_node=2).describe() == "2 nodes x 2 processes = world size 4"


def test_dry_run_checks_a_recipe_at_the_smallest_world_size_its_batch_fits(demo_file, no_loading, capsys):
    """4 rows per process are not whole groups of 3; nothing declares a world size, and 3 processes (12 rows) fit:
    the dry run says so and names the command. A declared world size is never replaced, and a real run is not."""
    path = demo_file(num_generations=3)
    assert train_command([path, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "declares no world size" in out and "checked at 3, the smallest world size it fits (fits 3, 6, 9" in out
    assert f"started with:  grpo launch {path} --num-processes 3;" in out
    assert launch_command([path, "--dry-run"]) == 0 and "at 3 processes" in capsys.readouterr().out
    assert launch_command([path, "--dry-run", "--num-processes", "2"]) == 1
    assert train_command([path]) == 1  # a real `grpo train` runs one process, where the batch does not fit
    assert "GRPO-B001" in capsys.readouterr().err


def test_a_file_written_for_open_r1_runs_under_its_profile(demo_file, no_loading, capsys):
    """open-r1's script arguments (and reward names) in a file given no --profile: the runtime checks and runs it
    as `--profile open-r1` does; `grpo validate` keeps saying that `trl grpo` would stop on them."""
    from grpo_schema.cli import main as grpo

    path = demo_file(system_prompt="Answer briefly.", reward_funcs=["accuracy"])
    assert train_command([path, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "is written for open-r1's training script (system_prompt, reward accuracy)" in out
    assert "--profile open-r1" in out and "can run" in out
    assert grpo(["validate", path]) == 1 and "GRPO-K006" in capsys.readouterr().out


def test_a_file_for_another_trainer_is_refused_naming_what_nobody_here_knows(demo_file, no_loading, capsys):
    path = demo_file(advantage="gopo", token_broadcast=True)
    assert train_command([path, "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert "2 keys (advantage, token_broadcast) belong" in err and "written for another trainer" in err


def test_a_bitsandbytes_optimizer_without_its_package_names_it(demo_file, no_loading, capsys, monkeypatch):
    import grpo_runtime.support.fields.training as training_fields

    path = demo_file(optim="paged_adamw_8bit")
    with monkeypatch.context() as patched:
        patched.setattr(training_fields, "installed", lambda module: module != "bitsandbytes")
        assert train_command([path, "--dry-run"]) == 3
    assert (
        "error[GRPO-U005] optim: optimizer 'paged_adamw_8bit' needs the bitsandbytes package" in capsys.readouterr().err
    )
    pytest.importorskip("bitsandbytes", reason="with bitsandbytes installed the optimizer runs")
    assert train_command([path, "--dry-run"]) == 0


def test_a_flash_attention_kernel_this_machine_lacks_falls_back_to_sdpa_with_a_warning(demo_file, no_loading, capsys):
    """Recipes ask for flash_attention_2 (a CUDA package); loading it here would end in an ImportError traceback."""
    import importlib.util

    from grpo_runtime.model.loading import load_kwargs
    from grpo_schema import check_file

    if importlib.util.find_spec("flash_attn") is not None:
        pytest.skip("flash_attn is installed here: flash_attention_2 is loaded as asked")
    for extra, field in (
        (dict(attn_implementation="flash_attention_2"), "attn_implementation"),
        (dict(model_init_kwargs={"attn_implementation": "flash_attention_2"}), "model_init_kwargs"),
    ):
        path = demo_file(**extra)
        assert train_command([path, "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert (
            f"warning[GRPO-U008] {field}: attn_implementation 'flash_attention_2' needs the flash_attn package" in out
        )
        assert load_kwargs(check_file(path).config)["attn_implementation"] == "sdpa"
    assert load_kwargs(check_file(demo_file(attn_implementation="eager")).config)["attn_implementation"] == "eager"


def test_accuracy_rewards_without_math_verify_are_warned_as_differing_from_trl(
    demo_file, no_loading, capsys, monkeypatch
):
    import grpo_runtime.support.fields.data as data_fields

    path = demo_file(reward_funcs=["accuracy_reward", "grpo_runtime.data.reward_library.target_word_reward"])
    with monkeypatch.context() as patched:
        patched.setattr(data_fields, "installed", lambda module: module != "math_verify")
        assert train_command([path, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "warning[GRPO-U009] reward_funcs: accuracy_reward compare answers with math-verify in TRL" in out
    pytest.importorskip("math_verify", reason="with math-verify installed nothing is said")
    assert train_command([path, "--dry-run"]) == 0 and "GRPO-U009" not in capsys.readouterr().out


def test_a_file_without_a_model_is_refused_before_loading_and_runs_with_set(demo_file, tmp_path, no_loading, capsys):
    # GRPOConfig arguments for a script (TRL's paper index): valid for validation, but nothing a run can train
    fragment = tmp_path / "dapo.yaml"
    fragment.write_text(
        "loss_type: dapo\nepsilon_high: 0.28\nbeta: 0.0\nnum_generations: 4\nper_device_train_batch_size: 4\n"
    )
    for argv in ([str(fragment), "--dry-run"], [str(fragment)]):
        assert train_command(argv) == 3
        out = capsys.readouterr()
        assert (
            "error[GRPO-U010] model_name_or_path: the file sets no model_name_or_path, a dataset (dataset_name "
            "or datasets) and reward_funcs"
        ) in out.err
        assert "cannot run" in out.err and "Traceback" not in out.err
        assert "dapo.yaml: valid at world size 1, but grpo_runtime refuses 1 setting (1 error)" in out.err
    complete = yaml.safe_load(Path(demo_file()).read_text())
    sets = [f"{key}={complete[key]}" for key in ("model_name_or_path", "dataset_name", "output_dir")]
    sets.append("reward_funcs=[grpo_runtime.data.reward_library.target_word_reward]")
    assert train_command([str(fragment), "--dry-run", *(a for s in sets for a in ("--set", s))]) == 0
    assert "GRPO-U010" not in str(capsys.readouterr())


def test_exit_codes_for_invalid_and_failed_runs(demo_file, tmp_path, capsys):
    assert train_command([demo_file(num_generations=3)]) == 1  # 4 rows are not whole groups of 3
    assert train_command([demo_file(model_name_or_path=str(tmp_path / "no-model"))]) == 4
    err = capsys.readouterr().err
    assert "the run failed" in err


def test_launch_passes_the_files_launch_keys_and_the_command_line_wins(demo_file, monkeypatch):
    launched = []
    monkeypatch.setattr("grpo_runtime.launch.cli.subprocess.call", lambda command: launched.append(command) or 0)
    path = demo_file(
        num_processes=2,
        num_machines=2,
        machine_rank=1,
        main_process_ip="10.0.0.1",
        main_process_port=29511,
        rdzv_backend="c10d",
        same_network=True,
        max_restarts=3,
        monitor_interval=2.5,
        per_device_train_batch_size=8,
    )
    assert launch_command([path, "--main_process_port", "29600"]) == 0
    command = launched[0]
    flags = command[command.index("accelerate.commands.launch") + 1 : command.index("grpo_runtime") - 1]
    assert flags[:2] == ["--num_processes", "2"]
    for pair in (
        ["--num_machines", "2"],
        ["--machine_rank", "1"],
        ["--main_process_ip", "10.0.0.1"],
        ["--rdzv_backend", "c10d"],
        ["--max_restarts", "3"],
        ["--monitor_interval", "2.5"],
        ["--main_process_port", "29600"],
    ):
        assert any(flags[i : i + 2] == pair for i in range(len(flags))), pair
    assert "--same_network" in flags and "29511" not in flags and flags.count("--num_machines") == 1
    # --num-processes on the command line wins over the file, and the processes check the same world size
    assert launch_command([path, "--num-processes", "4"]) == 0
    assert launched[1][launched[1].index("--num_processes") + 1] == "4"
    assert launched[1][-2:] == ["--set", "num_processes=4"]
    monkeypatch.setattr("grpo_runtime.launch.cli.subprocess.call", lambda command: 1)
    assert launch_command([path]) == 4  # a failed run, not an invalid config


def test_launch_arguments_turn_flags_on_and_skip_what_was_given():
    assert launch_arguments({"quiet": True, "cpu": False, "gpu_ids": "0,1", "num_processes": 8}, ["--gpu-ids=2"]) == [
        "--quiet"
    ]
