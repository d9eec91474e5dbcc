"""The verl dialect against verl 0.9.1 itself: one oracle process answers every case of this module.

- 320 generated override sets, each written as a launch script and checked by grpo, then composed and validated by
  verl (Hydra compose + validate_config): grpo refuses at parse time exactly when verl does, and names verl's reason.
- The cluster-time rules against verl's own code where it runs on the CPU: DataProto.chunk (equal chunks) and
  prepare_micro_batches (micro-batches of a rank), and the worker's mini-batch split by its formula.
- Every file of ../shared/verl-corpus: verl's verdict on what the file sets, and the cluster-time findings at the
  file's declared GPUs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from grpo_schema.dialects.verl.check import base_table, check_run, check_verl_text, read_runs
from grpo_schema.dialects.verl.launch import Run
from tests.verl.cases import (
    ENVIRONMENT,
    LORA_RANKS,
    PARSE_TIME,
    as_script,
    code_of,
    critic_cases,
    generated,
    lora_cases,
    patterns,
)
from tests.verl.oracle import ask, require_verl

pytestmark = [pytest.mark.slow, pytest.mark.verl_oracle]

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "verl-corpus"
CORPUS_FILES = sorted(p for p in CORPUS.glob("[0-9][0-9]_*") if p.is_file()) if CORPUS.is_dir() else []
KEY_ERRORS = {"GRPO-Q003", "GRPO-Q004", "GRPO-Q005", "GRPO-Q021", "GRPO-Q022", "GRPO-Q023"}
CLUSTER = {"GRPO-Q030", "GRPO-Q031", "GRPO-Q032", "GRPO-Q033", "GRPO-Q034", "GRPO-Q035", "GRPO-Q036", "GRPO-Q037"}


def _errors(diagnostics: list[Any]) -> set[str]:
    return {d.code for d in diagnostics if d.severity == "error"}


def _corpus_case(path: Path) -> list[tuple[dict[str, Any], set[str], Run]]:
    """Each run of a corpus file: the overrides verl gets (the known ones) and grpo's errors on the same."""
    out = []
    runs, _ = read_runs(path.read_text(), str(path))
    for run in runs:
        table = base_table(run)
        known = [s for s in run.settings if s.known]
        overrides = [
            ("" if table.get(s.key) else "+") + f"{s.key}={s.text}" if s.op == "file" else s.override for s in known
        ]
        name = run.config_name.removesuffix(".yaml")
        base = name if name in ("ppo_trainer", "ppo_megatron_trainer") else "ppo_trainer"
        trial = Run(run.entry, run.line, known, base)
        found, _ = check_run(trial)
        out.append(({"overrides": overrides, "config_name": base}, _errors(found), run))
    return out


def _cluster_queries(config: Any) -> dict[str, list[int]]:
    queries: dict[str, list[int]] = {}
    from grpo_schema.dialects.verl.rules.cluster import mini_fills_ranks, mini_samples, parallel_fits

    if config is None or not parallel_fits(config):
        return queries
    queries["chunk"] = [int(config["data.train_batch_size"]) * config.n, config.dp]
    micro = config["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"]
    if mini_fills_ranks(config) and not config.dynamic and isinstance(micro, int) and micro > 0:
        queries["micro"] = [mini_samples(config) // config.dp, micro]
    return queries


@pytest.fixture(scope="module")
def oracle() -> dict[str, Any]:
    require_verl()  # skip (or, under CI, fail) before checking anything
    cases = generated()
    checked = []
    for case in cases:
        text = as_script(case)
        result = check_verl_text(text, "case.sh")
        runs, _ = read_runs(text, "case.sh")
        _, config = check_run(runs[0])
        checked.append((case, result, config, _cluster_queries(config)))
    corpus = {path.name: _corpus_case(path) for path in CORPUS_FILES}
    converted = _converted_recipes()
    questions = [case for case, *_ in checked]
    questions += [{k: v} for *_, queries in checked for k, v in queries.items()]
    questions += [case for runs in corpus.values() for case, _, _ in runs]
    questions += [{"overrides": overrides, "config_name": "ppo_trainer"} for _, overrides, _ in converted]
    questions += [case for case, _ in patterns()]
    questions += [{"critic": case} for case in critic_cases()] + lora_cases() + [{"lora_rank": r} for r in LORA_RANKS]
    answers = iter(ask(questions))
    verdicts = [next(answers) for _ in checked]
    cluster = [{k: next(answers) for k in queries} for *_, queries in checked]
    corpus_verdicts = {name: [next(answers) for _ in runs] for name, runs in corpus.items()}
    conversions = [(name, overrides, trl, next(answers)) for name, overrides, trl in converted]
    pattern_verdicts = [(case, code, next(answers)) for case, code in patterns()]
    critic = [(case, next(answers)) for case in critic_cases()]
    lora = [(case, next(answers)) for case in lora_cases()]
    ranks = [(rank, next(answers)) for rank in LORA_RANKS]
    return {
        "patterns": pattern_verdicts,
        "critic": critic,
        "lora": lora,
        "ranks": ranks,
        "checked": checked,
        "verdicts": verdicts,
        "cluster": cluster,
        "corpus": corpus,
        "corpus_verdicts": corpus_verdicts,
        "conversions": conversions,
    }


def _converted_recipes() -> list[tuple[str, list[str], dict[str, int]]]:
    """The repository's TRL example recipes that have a verl equivalent, converted (grpo convert --to verl)."""
    from grpo_schema.dialects.verl.convert import _text, trl_to_verl
    from grpo_schema.engine.validate import check_text

    out = []
    for path in sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml")):
        result = check_text(path.read_bytes(), path=str(path))
        if not result.valid or result.config is None:
            continue
        config = result.migrated or result.config
        conversion = trl_to_verl(config, result.world_size)
        if conversion.ok:
            trl = {
                "completions_per_optimizer_step": config.per_device_train_batch_size
                * result.world_size
                * config.gradient_accumulation_steps
            }
            out.append((path.name, [f"{k}={_text(v)}" for k, v in conversion.settings.items()], trl))
    return out


def test_generated_override_sets_get_verls_verdict(oracle: dict[str, Any]) -> None:
    mismatches, refused, accepted = [], 0, 0
    for (case, result, _, _), verdict in zip(oracle["checked"], oracle["verdicts"]):
        ours = _errors(result.diagnostics) & PARSE_TIME
        if verdict["ok"]:
            accepted += 1
            if ours:
                mismatches.append((case["overrides"], "verl accepts", sorted(ours)))
            continue
        refused += 1
        expected = code_of(verdict["message"])
        if expected is None or expected not in ours:
            mismatches.append((case["overrides"], verdict["message"][:200], sorted(ours)))
    assert len(oracle["checked"]) >= 300
    assert accepted >= 60 and refused >= 60, (accepted, refused)  # both verdicts are exercised
    assert not mismatches, f"{len(mismatches)} disagreements, first: {mismatches[:3]}"


def test_patterns_of_real_scripts_get_verls_verdict(oracle: dict[str, Any]) -> None:
    """The reading and key patterns held-out launch scripts showed (model engines, fields added with +, Hydra's
    grammar, a LoRA run without a rollout engine): verl's verdict, and grpo's code for it."""
    for case, expected, verdict in oracle["patterns"]:
        ours = _errors(check_verl_text(as_script(case), "case.sh").diagnostics) & PARSE_TIME
        assert (code_of(verdict["message"]) if not verdict["ok"] else None) == expected, (case, verdict)
        assert ours == ({expected} if expected else set()), (case["overrides"][-1], sorted(ours))


def test_critic_rule_is_verls_critic_config(oracle: dict[str, Any]) -> None:
    """GRPO-Q019 fires exactly when verl's critic config class refuses the critic's batch sizes (its __post_init__
    and validate, as validate_config runs them; the oracle cannot build a whole critic, whose model it would load)."""
    refused = 0
    for case, verdict in oracle["critic"]:
        ours = "GRPO-Q019" in _errors(check_verl_text(as_script(case), "case.sh").diagnostics)
        assert ours == (not verdict["ok"]), (case["overrides"], verdict)
        refused += not verdict["ok"]
    assert 6 <= refused <= len(oracle["critic"]) - 6, refused  # both verdicts are exercised


def test_lora_rules_are_verls_lora_check(oracle: dict[str, Any]) -> None:
    """GRPO-Q020 and GRPO-Q025 read the LoRA rank as validate_config does: verl asks vLLM for its ranks exactly when
    the rank served (model.lora.rank, else model.lora_rank; none when merged) is positive with vLLM rollouts; and the
    largest rank is the one verl's own get_vllm_max_lora_rank allows."""
    from grpo_schema.dialects.verl.rules.parse_time import VLLM_MAX_LORA_RANK, served_lora_rank

    for case, verdict in oracle["lora"]:
        runs, _ = read_runs(as_script(case), "case.sh")
        _, config = check_run(runs[0])
        asks_vllm = not verdict["ok"] and any(text in verdict["message"] for text in ENVIRONMENT)
        assert asks_vllm == (served_lora_rank(config) > 0 and config["actor_rollout_ref.rollout.name"] == "vllm"), (
            case["overrides"],
            verdict,
        )
        without_name = [o for o in case["overrides"] if not o.startswith("actor_rollout_ref.rollout.name")]
        named = "GRPO-Q025" in _errors(
            check_verl_text(as_script({**case, "overrides": without_name}), "c.sh").diagnostics
        )
        assert named == (served_lora_rank(config) > 0), case["overrides"]
    for rank, verdict in oracle["ranks"]:
        script = as_script(
            {
                "overrides": [
                    "actor_rollout_ref.rollout.name=vllm",  # the rank alone decides Q020
                    f"actor_rollout_ref.model.lora_rank={rank}",
                ],
                "config_name": "ppo_trainer",
            }
        )
        assert ("GRPO-Q020" in _errors(check_verl_text(script, "case.sh").diagnostics)) == (not verdict["ok"]), rank
    assert max(r for r, v in oracle["ranks"] if v["ok"]) == VLLM_MAX_LORA_RANK


def test_cluster_rules_agree_with_verls_own_code(oracle: dict[str, Any]) -> None:
    compared = {"chunk": 0, "micro": 0, "split": 0}
    for (case, result, config, queries), answers in zip(oracle["checked"], oracle["cluster"]):
        codes = _errors(result.diagnostics)
        if codes & KEY_ERRORS:
            continue  # Hydra refuses the override set itself: the rules reading the refused keys are skipped
        if "chunk" in answers:
            compared["chunk"] += 1
            assert answers["chunk"]["ok"] == ("GRPO-Q033" not in codes), (case["overrides"], answers["chunk"])
        if "micro" in answers:
            compared["micro"] += 1
            assert answers["micro"]["ok"] == ("GRPO-Q031" not in codes), (case["overrides"], answers["micro"])
        if "chunk" in queries:  # the worker's mini-batch split needs a process group: its formula, written out
            samples = int(config["actor_rollout_ref.actor.ppo_mini_batch_size"]) * config.n
            splits = samples % config.dp == 0 and samples >= config.dp
            compared["split"] += 1
            assert splits == ("GRPO-Q030" not in codes), case["overrides"]
    assert min(compared.values()) >= 80, compared


def test_trl_recipes_converted_are_accepted_by_verl(oracle: dict[str, Any]) -> None:
    """Each example recipe with a verl equivalent: verl 0.9.1 accepts the converted overrides, grpo finds nothing
    wrong with them, and an optimizer step holds the same completions as in TRL."""
    assert len(oracle["conversions"]) >= 5
    for name, overrides, trl, verdict in oracle["conversions"]:
        assert verdict["ok"], (name, verdict)
        values = dict(o.split("=", 1) for o in overrides)
        mini, n = int(values["actor_rollout_ref.actor.ppo_mini_batch_size"]), int(values["actor_rollout_ref.rollout.n"])
        assert mini * n == trl["completions_per_optimizer_step"], name
        script = " \\\n  ".join(["python3 -m verl.trainer.main_ppo", *overrides]) + "\n"
        assert check_verl_text(script, name + ".sh").valid, name


@pytest.mark.parametrize("name", [p.name for p in CORPUS_FILES] or ["(no corpus)"])
def test_corpus_file_gets_verls_verdict(oracle: dict[str, Any], name: str) -> None:
    if not CORPUS_FILES:
        pytest.skip(f"{CORPUS} is not there (the checkout's parent has shared/ in CI)")
    for (_case, ours, run), verdict in zip(oracle["corpus"][name], oracle["corpus_verdicts"][name]):
        if not verdict["ok"] and any(text in verdict["message"] for text in ENVIRONMENT):
            continue  # verl imports vLLM to check the LoRA rank; the oracle has no vLLM
        parse_time = ours & PARSE_TIME
        if verdict["ok"]:
            assert not parse_time, f"run at line {run.line}: verl accepts, grpo refuses with {sorted(parse_time)}"
        else:
            assert code_of(verdict["message"]) in parse_time, (run.line, verdict["message"][:300], sorted(ours))
    # The whole file as grpo reads it (unknown values skipped, defaults taken and said): the cluster-time findings
    # at its declared GPUs are reported with a line of the file.
    result = check_verl_text((CORPUS / name).read_text(), name)
    for diagnostic in result.diagnostics:
        if diagnostic.code in CLUSTER:
            assert diagnostic.line is not None and diagnostic.line >= 1


def test_field_table_is_the_installed_wheels() -> None:
    """fields.json is what scripts/verl_release.py writes from verl 0.9.1's own config files and dataclasses."""
    import subprocess

    from tests.verl.oracle import ROOT, require_verl

    done = subprocess.run(
        [str(require_verl()), str(ROOT / "scripts" / "verl_release.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
