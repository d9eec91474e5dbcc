"""A local config for the smoke tests: the run's tiny word-level model (tests/support/tiny.py), a 4-row dataset and a
user reward module, all in a temporary folder that is the working directory."""

import json
import sys
import textwrap

import pytest
import yaml

REWARDS = """
def fine(completions, **kwargs):
    return [float(len(str(c))) for c in completions]


def picky(completions, kind, **kwargs):
    out = []
    for completion, k in zip(completions, kind):
        if k == "bad":
            raise ValueError("cannot score this row")
        out.append(1.0)
    return out


def nothing(completions, **kwargs):
    return None


def needs_answer(completions, answer, **kwargs):
    return [1.0 for _ in completions]
"""

FAILING_TEMPLATE = (
    "{% if messages[0]['role'] != 'system' %}{{ raise_exception('the conversation must start with a "
    "system message') }}{% endif %}{% for m in messages %}{{ m['content'] }}{% endfor %}"
)


@pytest.fixture(scope="session")
def smoke_model(tiny_model_dir):
    return tiny_model_dir


@pytest.fixture(scope="session")
def failing_template_model(tmp_path_factory):
    from tests.support.tiny import build_model, build_tokenizer

    directory = tmp_path_factory.mktemp("smoke-template") / "model"
    tokenizer = build_tokenizer()
    tokenizer.chat_template = FAILING_TEMPLATE
    build_model(tokenizer).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture
def workspace(tmp_path, monkeypatch, request, smoke_model):
    """Returns write(name, **settings) -> path of a config in tmp_path (the working directory)."""
    (tmp_path / "my_rewards.py").write_text(textwrap.dedent(REWARDS))
    rows = [
        {"prompt": [{"role": "user", "content": f"say {word}"}], "kind": kind}
        for word, kind in (("cat", "ok"), ("dog", "ok"), ("star", "ok"), ("sun", "bad"))
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    # Other tests import modules of this name from their own folders; this test's file must be the one imported.
    monkeypatch.delitem(sys.modules, "my_rewards", raising=False)
    request.addfinalizer(lambda: sys.modules.pop("my_rewards", None))

    def write(name="run.yaml", **settings):
        config = dict(
            model_name_or_path=str(smoke_model),
            dataset_name=str(tmp_path / "data.jsonl"),
            reward_funcs=["my_rewards.fine"],
            output_dir=str(tmp_path / "out"),
            per_device_train_batch_size=8,
            num_generations=2,
            max_completion_length=4,
            learning_rate=1e-3,
            max_steps=10,
            save_steps=5,
            report_to="none",
            seed=0,
            bf16=False,
            use_cpu=True,
        )
        config.update(settings)
        path = tmp_path / name
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path

    return write


def run_smoke(path, *extra):
    """grpo smoke PATH --format json ...: (exit code, report)."""
    import contextlib
    import io

    from grpo_runtime.smoke.command import smoke_command

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = smoke_command([str(path), "--format", "json", *extra])
    return code, json.loads(out.getvalue())
