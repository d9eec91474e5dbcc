"""open-r1's `cf_code` reward, run by the local executor with the numbers open-r1 gets from its Piston workers'
`codeforces` package, on rows of open-r1/codeforces's shape (`official_tests` [{input, output}], `time_limit` s,
`memory_limit` MB, `input_mode` stdio|file, `generated_checker` Python source or null, `language` python|cpp, `id`
CONTEST/INDEX):

* the code is the completion's last block of the row's `language` (```python or ```cpp); C++ is compiled once as
  the package does (g++ -DONLINE_JUDGE -O2 -std=c++17), Python runs as it is;
* the tests are `official_tests` and, where CF_TESTS_FOLDER is set, the problem's generated tests read from its
  `test_cases_CCCC.parquet` as open-r1 does (open-r1 scores nothing without that folder; here the official tests
  alone are used, and said once);
* each test runs with the problem's time and memory limits (input from stdin, or input.txt/output.txt in file
  mode); it passes when the program exits with 0 and the checker accepts (it prints 1 or 100), or without a
  checker when the outputs are equal once whitespace is collapsed and yes/no upper-cased;
* a row whose language is not python or cpp, or without tests, scores None; no code -1.0; code that does not
  compile -0.1; tests run `code_eval_test_batch_size` at a time (below 1: all at once); then `code_eval_scoring_mode`:
  pass_fail (1.0 when every test passes; stops at the first batch with a failure), partial (the share passed) or
  weighted_sum (pass_fail + 0.1 x the share).
"""

from __future__ import annotations

import functools
import os
import re
import warnings
from itertools import islice
from pathlib import Path

from grpo_runtime.data.code_execution import Limits
from grpo_runtime.data.code_programs import cpp_program, parallel_map, python_program, run_program, workspace
from grpo_runtime.data.code_rewards import extract_code, last_content

NO_SUBMISSION, NO_COMPILE = -1.0, -0.1
CHECKER_TIME_S = 10.0
CPP_FLAGS = ["-DONLINE_JUDGE", "-O2", "-std=c++17", "-pipe", "-s"]
SPACE = re.compile(r"[ \t\n\v\f\r]+")
YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE | re.ASCII)


def batched(items: list, size: int) -> list[list]:
    if size < 1:
        return [items]
    iterator = iter(items)
    return list(iter(lambda: list(islice(iterator, size)), []))


def without_cr(text: str) -> str:
    """`sed 's/\\r$//'`: a carriage return ending a line goes."""
    return re.sub(r"\r(?=\n|\Z)", "", text)


def without_empty_lines(text: str) -> str:
    """`sed '/^$/d'`."""
    ends = text.endswith("\n")
    kept = [line for line in (text[:-1] if ends else text).split("\n") if line]
    return "\n".join(kept) + ("\n" if ends and kept else "")


def normalized(text: str) -> str:
    """The package's comparison without a checker: yes/no upper-cased, all whitespace one space, on one line."""
    return SPACE.sub(" ", YES_NO.sub(lambda m: m.group(1).upper(), text)).strip(" ")


@functools.cache
def say_official_tests_only() -> None:
    warnings.warn(
        "cf_code: CF_TESTS_FOLDER is not set, so each problem is scored on its official_tests alone "
        "(open-r1 reads the generated tests from there and scores nothing without it)",
        stacklevel=3,
    )


def generated_tests(problem_id: str) -> list[dict]:
    folder = os.environ.get("CF_TESTS_FOLDER")
    if not folder:
        say_official_tests_only()
        return []
    if not Path(folder).is_dir():
        raise ValueError(
            f"cf_code: CF_TESTS_FOLDER {folder} is not a folder (it holds open-r1/codeforces's "
            "generated tests, test_cases_CCCC.parquet)"
        )
    return list(contest_tests(folder, str(problem_id).split("/")[0]).get(str(problem_id), []))


@functools.lru_cache(maxsize=32)
def contest_tests(folder: str, contest: str) -> dict:
    path = Path(folder) / f"test_cases_{int(contest):04d}.parquet"
    if not path.is_file():
        return {}
    import pyarrow.parquet as parquet

    found: dict[str, list] = {}
    for row in parquet.read_table(path, columns=["problem_id", "input", "output"]).to_pylist():
        found.setdefault(row["problem_id"], []).append({"input": row["input"], "output": row["output"]})
    return found


def build(space, code: str, language: str):
    if language == "python":
        return python_program(space, code)
    return cpp_program(space, {"main.cpp": code}, [*CPP_FLAGS, "-o", "main", "main.cpp"], "main")


def passes(space, program, problem: dict, test: dict, checker) -> bool:
    limits = Limits(time_s=float(problem["time_limit"]), memory_mb=float(problem["memory_limit"]))
    given = without_cr(test["input"])
    file_mode = problem.get("input_mode") == "file"
    outcome, kept = run_program(
        space,
        program,
        "" if file_mode else given,
        limits,
        files={"input.txt": given} if file_mode else None,
        keep=("output.txt",) if file_mode else (),
    )
    output = kept.get("output.txt") if file_mode else outcome.stdout
    if not outcome.ok or output is None:
        return False
    output = without_empty_lines(output)
    if checker is None:
        return normalized(test["output"]) == normalized(output)
    expected = without_empty_lines(without_cr(test["output"].rstrip("\n") + "\n"))
    verdict, _ = run_program(
        space,
        checker,
        "",
        Limits(time_s=CHECKER_TIME_S, memory_mb=limits.memory_mb),
        argv=("input.txt", "correct_output.txt", "solution_output.txt"),
        files={"input.txt": given, "correct_output.txt": expected, "solution_output.txt": output},
    )
    return verdict.exit_code == 0 and SPACE.sub("", verdict.stdout) in ("1", "100")


class CodeforcesReward:
    """open-r1's `cf_code`: each completion's code judged on its Codeforces problem's tests."""

    __name__ = "cf_code_reward"

    def __init__(self, args):
        self.batch = int(args.code_eval_test_batch_size)
        self.mode = args.code_eval_scoring_mode
        self.parallel = max(1, int(args.parallel_code_exec_per_proc))
        self.best_score = 1.1 if self.mode == "weighted_sum" else 1.0

    def __call__(
        self, completions, official_tests, id, time_limit, memory_limit, input_mode, generated_checker, **kwargs
    ) -> list[float | None]:
        languages = kwargs.get("language") or [None] * len(completions)
        problems = [
            dict(
                official_tests=t,
                id=i,
                time_limit=tl,
                memory_limit=m,
                input_mode=mode,
                generated_checker=c,
                language=lang,
            )
            for t, i, tl, m, mode, c, lang in zip(
                official_tests, id, time_limit, memory_limit, input_mode, generated_checker, languages, strict=True
            )
        ]
        codes = [extract_code(last_content(c), lang) for c, lang in zip(completions, languages, strict=True)]
        with workspace() as space:
            return parallel_map(lambda pair: self.score(space, *pair), list(zip(codes, problems)), self.parallel)

    def score(self, space, code: str, problem: dict) -> float | None:
        language = problem["language"]
        if language not in ("python", "cpp"):
            return None  # open-r1 raises on another language, and an exception scores None
        tests = list(problem["official_tests"] or []) + generated_tests(problem["id"])
        if not tests:
            return None
        if not code:
            return NO_SUBMISSION
        program = build(space, code, language)
        if program.compile_error is not None:
            return NO_COMPILE
        checker = (
            python_program(space, problem["generated_checker"], "checker.py") if problem["generated_checker"] else None
        )
        passed = 0
        for batch in batched(tests, self.batch):
            results = [passes(space, program, problem, test, checker) for test in batch]
            if self.mode == "pass_fail" and not all(results):
                break
            passed += sum(results)
        whole = 1.0 if passed == len(tests) else 0.0
        if self.mode == "pass_fail":
            return whole
        if self.mode == "partial":
            return passed / len(tests)
        return whole + 0.1 * (passed / len(tests))
