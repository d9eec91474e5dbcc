"""The hardening review of `env:` and of the runs path: each refusal it added or checked, with its finding.

The refusals that already had tests are listed in docs/hardening.md with the tests that hold them
(tests/schema/test_env.py, tests/runs/test_policy.py, tests/runs/test_http_security.py, tests/web/test_serve.py).
"""

from __future__ import annotations

import os

import pytest

from grpo_schema import check_text
from grpo_schema.engine.policy import ServicePolicy, service_policy

BASE = "model_name_or_path: m\ndataset_name: d\nreward_funcs: [accuracy_reward]\n"


def env_codes(name: str, value: str = "x", allow: tuple[str, ...] = ()) -> list[str]:
    text = (
        f"env:\n  {name!r}: {value!r}\n".replace("'", '"')
        if not name.isidentifier()
        else f"env:\n  {name}: {value!r}\n"
    )
    result = check_text(text, allow_env=allow)
    return [d.code for d in result.diagnostics if d.code.startswith("GRPO-E")]


@pytest.mark.parametrize(
    "name",
    [
        "LD_PRELOAD",
        "ld_preload",
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "PYTHONPATH",
        "PYTHONHOME",
        "PATH",
        "BASH_ENV",
        "NODE_OPTIONS",
        "HF_ENDPOINT",
        "HTTPS_PROXY",
        "SSL_CERT_FILE",
        # added by this review: each makes a process load code from a place or run a command the variable names
        "PYTHONPYCACHEPREFIX",
        "TORCH_EXTENSIONS_DIR",
        "TORCHINDUCTOR_CACHE_DIR",
        "TRITON_CACHE_DIR",
        "NCCL_NET_PLUGIN",
        "NCCL_TUNER_PLUGIN",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "GIT_EXEC_PATH",
        "BROWSER",
    ],
)
def test_env_variables_that_change_what_code_runs_are_refused(name):
    assert env_codes(name) == ["GRPO-E003"]
    assert env_codes(name, allow=(name,)) == []  # --allow-env NAME: the user's own decision


@pytest.mark.parametrize(
    "name",
    [
        "HF_TOKEN",
        "WANDB_API_KEY",
        "OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "GITHUB_PRIVATE_KEY",
        "HUB_AUTH",
    ],
)
def test_env_secrets_are_refused(name):
    assert env_codes(name) == ["GRPO-E004"]


@pytest.mark.parametrize(
    "name",
    [
        "PATH\n",  # found by this review: NAME_PATTERN.match() accepted it ('$' matches before a final newline)
        "A B",
        "1X",
        "A=B",
        "Ä",
        "BASH_FUNC_ls%%",
        "A\u2028",
        "",
    ],
)
def test_env_names_that_are_not_variable_names_are_refused(name):
    assert env_codes(name) == ["GRPO-E005"]


def test_validation_never_sets_a_variable():
    before = dict(os.environ)
    check_text("env:\n  GRPO_HARDENING_PROBE: x\n  LD_PRELOAD: /tmp/x.so\n")
    assert dict(os.environ) == before


@pytest.fixture
def policy(tmp_path) -> ServicePolicy:
    (tmp_path / "runs").mkdir()
    return ServicePolicy(runs_dir=tmp_path / "runs")


def refused(text: str, policy: ServicePolicy) -> list[tuple[str, tuple[str, ...]]]:
    result = check_text(BASE + text)
    return [(d.code, d.fields) for d in service_policy(result, policy)]


@pytest.mark.parametrize(
    ("text", "code", "field"),
    [
        # found by this review: model_init_kwargs goes to from_pretrained, which writes to these folders
        ("model_init_kwargs: {cache_dir: /tmp/elsewhere}\n", "GRPO-X004", "model_init_kwargs"),
        ("model_init_kwargs: {offload_folder: ../../elsewhere}\n", "GRPO-X004", "model_init_kwargs"),
        # found by this review: a repository id as attn_implementation, or use_kernels, runs code from the Hub
        ("attn_implementation: kernels-community/flash-attn\n", "GRPO-X003", "attn_implementation"),
        ("model_init_kwargs: {attn_implementation: kernels-community/flash-attn}\n", "GRPO-X003", "model_init_kwargs"),
        ("model_init_kwargs: {use_kernels: true}\n", "GRPO-X003", "model_init_kwargs"),
        # found by this review: a NUL byte (a YAML or JSON escape) made Path.resolve() raise: a 500 from POST /runs
        ('output_dir: "run\\0x"\n', "GRPO-X004", "output_dir"),
        ('resume_from_checkpoint: "ckpt\\0x"\n', "GRPO-X004", "resume_from_checkpoint"),
    ],
)
def test_service_runs_refuse_what_the_review_found(policy, text, code, field):
    assert refused(text, policy) == [(code, (field,))]


@pytest.mark.parametrize(
    "text",
    [
        "model_init_kwargs: {cache_dir: hf-cache}\n",
        "attn_implementation: sdpa\n",
        "model_init_kwargs: {use_kernels: false, attn_implementation: eager}\n",
    ],
)
def test_service_runs_keep_what_is_harmless(policy, text):
    assert refused(text, policy) == []


def test_the_operator_switches_lift_the_new_refusals(policy):
    from dataclasses import replace

    lenient = replace(policy, allow_trust_remote_code=True, allow_outside_runs_dir=True)
    text = "attn_implementation: kernels-community/x\nmodel_init_kwargs: {use_kernels: true, cache_dir: /tmp/c}\n"
    assert refused(text, lenient) == []


def test_a_nul_byte_in_a_path_is_a_422_over_http(tmp_path):
    """The finding end to end: POST /api/v1/runs with output_dir "a\\u0000b" answered 500."""
    pytest.importorskip("uvicorn", reason="the service needs the web extra")
    from tests.support.service import TOKEN, Service

    service = Service(tmp_path / "runs").start()
    try:
        with service.client(TOKEN) as client:
            answer = client.post(
                "/api/v1/runs",
                json={
                    "model_name_or_path": "m",
                    "dataset_name": "d",
                    "reward_funcs": ["accuracy_reward"],
                    "output_dir": "a\x00b",
                },
            )
        assert answer.status_code == 422, answer.text
        assert [d["code"] for d in answer.json()["diagnostics"] if d["code"].startswith("GRPO-X")] == ["GRPO-X004"]
    finally:
        service.stop()
