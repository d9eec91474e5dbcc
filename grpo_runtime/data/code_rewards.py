"""open-r1's `code` and `binary_code` rewards, run by the local executor (grpo_runtime.data.code_programs) with the
numbers open-r1 gives for the same completions and rows (open-r1/verifiable-coding-problems-python's shape:
`verification_info` = {"language", "test_cases": [{"input", "output", "type"}]}):

* the code is the completion's last ```python block (an empty program when there is none), run by Python on each
  test case's input (stdin), 5 s per test, `parallel_code_exec_per_proc` completions at a time;
* a test passes when the program exits with 0 and each line of its output (stripped) equals the expected output's
  line at the same place (open-r1 compares line by line as far as the shorter of the two goes);
* `code` is the share of tests passed; a test that runs out of time ends open-r1's evaluation script with an
  exception, which scores the whole completion 0.0, as does a row without tests; `binary_code` is 1.0 when that
  share is above 0.99, else 0.0.

As in open-r1, every completion runs as Python whatever `verification_info`'s language says (open-r1 reads the
first row's language only to compare the rows' languages, which its registry does not ask for).
"""

from __future__ import annotations

import json
import re

from grpo_runtime.data.code_execution import Limits
from grpo_runtime.data.code_programs import parallel_map, python_program, run_program, workspace

CODE_TIME_S = 5.0  # open-r1's limit per test case
CODE_MEMORY_MB = 1024.0  # a sandbox's memory; open-r1 sets none per test
BINARY_THRESHOLD = 0.99


def last_content(completion) -> str:
    """The text the code rewards read: the last message's content (or a plain completion string)."""
    return completion if isinstance(completion, str) else completion[-1]["content"]


def extract_code(text: str, language: str | None = "python") -> str:
    """The last ```LANGUAGE fenced block's code, "" when there is none (or no language)."""
    if language is None:
        return ""
    found = re.findall(rf"```{re.escape(language)}\n(.*?)```", text, re.DOTALL)
    return found[-1] if found else ""


def lines_match(output: str, expected: str) -> bool:
    return all(mine.strip() == theirs.strip() for mine, theirs in zip(output.split("\n"), expected.split("\n")))


def pass_rate(space, code: str, info, limits: Limits) -> float:
    info = json.loads(info) if isinstance(info, str) else info
    cases = list(info.get("test_cases") or [])
    if not cases:
        return 0.0  # open-r1's script divides by the number of tests: no number comes back
    program = python_program(space, code) if code else None
    passed = 0
    for case in cases:
        if program is None:  # `python -c ""`: exits 0 and prints nothing
            passed += lines_match("", case["output"])
            continue
        outcome, _ = run_program(space, program, case["input"], limits)
        if outcome.status == "timeout":
            return 0.0
        if outcome.exit_code == 0 and lines_match(universal_newlines(outcome.stdout).strip(), case["output"]):
            passed += 1
    return passed / len(cases)


def universal_newlines(text: str) -> str:
    """What open-r1's `subprocess.run(text=True)` reads: \\r\\n and \\r as \\n."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


class CodeReward:
    """open-r1's `code`: the pass rate of each completion's Python code on its row's test cases."""

    __name__ = "code_reward"
    best_score = 1.0  # what a completion passing every test scores

    def __init__(self, args):
        self.parallel = max(1, int(args.parallel_code_exec_per_proc))
        self.limits = Limits(time_s=CODE_TIME_S, memory_mb=CODE_MEMORY_MB)

    def __call__(self, completions, verification_info, **kwargs) -> list[float]:
        codes = [extract_code(last_content(c), "python") for c in completions]
        with workspace() as space:
            return parallel_map(
                lambda pair: pass_rate(space, pair[0], pair[1], self.limits),
                list(zip(codes, verification_info, strict=True)),
                self.parallel,
            )


class BinaryCodeReward(CodeReward):
    """open-r1's `binary_code`: 1.0 when `code`'s pass rate is above 0.99, else 0.0."""

    __name__ = "binary_code_reward"

    def __call__(self, completions, verification_info, **kwargs) -> list[float]:
        rates = super().__call__(completions, verification_info, **kwargs)
        return [None if rate is None else (1.0 if rate > BINARY_THRESHOLD else 0.0) for rate in rates]
