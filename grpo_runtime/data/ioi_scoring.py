"""open-r1's `ioi_code` reward, run by the local executor with the numbers open-r1 gets from its Piston workers'
`cms_ioi` package, on rows of open-r1/ioi's shape (one subtask per row: `id`, `subtask`, `score`, `score_precision`,
`test_names`, `grader_files` [[path, content]], `time_limit` s, `memory_limit` MB, `year`):

* the code is the completion's last ```cpp block, headed as open-r1 heads it (<bits/stdc++.h>, the problem's
  header, `using namespace std;` when the code uses neither it nor `std::`), saved as graders/ID.cpp beside the
  grader files and compiled once with them (g++ -DEVAL -std=gnu++17 -O2); a checker (checker/checker.cpp) too;
* the tests are the row's `test_cases` ([input, output] in `test_names`' order, or {name: [input, output]}),
  else the problem's tests in open-r1/ioi-test-cases (the year's configuration, from the cache);
* each test runs graders/CODE < input with grader_config.json's time and memory limits; a program that fails,
  runs out of time or memory scores 0; its output is scored by the checker (the number it prints) or, without
  one, 1 when it equals the expected output line by line, whitespace runs and line ends aside (`diff -b`);
* tests run `code_eval_test_batch_size` at a time, stopping after a batch with a test scoring 0; the reward is the
  subtask's score as open-r1 reads it: the lowest test score, rounded to `score_precision` (0 when a test scored 0
  or was not run, when there is no code, or when it does not compile).

Batch tasks only: a Communication task (a manager process talking to the submission) is refused by name.
"""

from __future__ import annotations

import functools
import json
import re

from grpo_runtime.data.cf_scoring import batched
from grpo_runtime.data.code_execution import Limits
from grpo_runtime.data.code_programs import CodeUnavailable, cpp_program, parallel_map, run_program, workspace
from grpo_runtime.data.code_rewards import extract_code, last_content

LINE_SPACE = re.compile(r"[ \t\v\f\r]+")
CHECKER_GRACE_S = 3.0  # Piston's hard limit is the time limit plus 3 s


def add_includes(code: str, problem_id: str) -> str:
    """open-r1's header for IOI submissions."""
    if not code:
        return code
    header = "#include <bits/stdc++.h>\n"
    if f'#include "{problem_id}.h"' not in code:
        header += f'#include "{problem_id}.h"\n'
    if "using namespace std;" not in code and "std::" not in code:
        header += "\nusing namespace std;\n\n"
    return header + code


def diff_b_lines(text: str) -> list[str]:
    """The lines `diff -b` compares: trailing whitespace dropped, other whitespace runs one space."""
    body = text[:-1] if text.endswith("\n") else text
    return [LINE_SPACE.sub(" ", line).rstrip(" ") for line in body.split("\n")] if text else []


def number(text: str) -> float:
    try:
        return float(text) if text.strip() else 0.0
    except ValueError:
        return 0.0  # open-r1's scorer raises on it, which scores the subtask 0


@functools.lru_cache(maxsize=4)
def hub_tests(year: int) -> dict:
    """{problem_id: {test_name: (input, output)}} of open-r1/ioi-test-cases for one year (from the cache)."""
    import datasets

    found: dict = {}
    for row in datasets.load_dataset("open-r1/ioi-test-cases", name=str(year), split="train"):
        found.setdefault(row["problem_id"], {})[row["test_name"]] = (row["test_input"], row["test_output"])
    return found


def tests_of(problem: dict) -> dict:
    given = problem.get("test_cases")
    if given is None:
        return hub_tests(int(problem["year"]))[problem["id"]]
    if isinstance(given, dict):
        return given
    return dict(zip(problem["test_names"], given, strict=True))


def grader_config(problem: dict) -> dict:
    files = {name: content for name, content in problem["grader_files"]}
    return json.loads(files.get("graders/grader_config.json") or "{}")


def compile_submission(space, code: str, problem: dict):
    files = {f"graders/{problem['id'].lower()}.cpp": code}
    files.update({name: content for name, content in problem["grader_files"] if content})
    graders = sorted(name.split("/", 1)[1] for name in files if name.startswith("graders/"))
    name = next((g[:-2] for g in graders if g.endswith(".h") and g != "testlib.h"), "?")
    sources = [f"graders/{name}.cpp"] + [
        f"graders/{extra}" for extra in ("grader.cpp", "stub.cpp") if f"graders/{extra}" in files
    ]
    program = cpp_program(
        space,
        files,
        ["-DEVAL", "-std=gnu++17", "-O2", "-pipe", "-s", "-o", f"graders/{name}", *sources],
        f"graders/{grader_config(problem).get('code', name)}",
    )
    checker = None
    if files.get("checker/checker.cpp"):
        checker = cpp_program(
            space,
            {"checker/checker.cpp": files["checker/checker.cpp"]},
            ["-x", "c++", "-std=gnu++17", "-O2", "-o", "checker/checker", "checker/checker.cpp"],
            "checker/checker",
        )
    return program, checker


def limits_of(problem: dict) -> Limits:
    config = grader_config(problem)
    seconds = float(config.get("time_limit") or problem["time_limit"])
    memory = float(config["memory_limit"]) / 2**20 if config.get("memory_limit") else float(problem["memory_limit"])
    return Limits(time_s=seconds, memory_mb=memory)


def test_score(space, program, checker, problem: dict, test) -> float:
    given, expected = test[0], test[1]
    limits = limits_of(problem)
    outcome, _ = run_program(space, program, given, limits, files={"input.txt": given})
    if not outcome.ok:
        return 0.0
    if not expected:  # no expected output: the program's own output is the score
        return number(outcome.stdout)
    if checker is None:
        return 1.0 if diff_b_lines(expected.rstrip("\n") + "\n") == diff_b_lines(outcome.stdout) else 0.0
    verdict, _ = run_program(
        space,
        checker,
        "",
        Limits(time_s=limits.time_s + CHECKER_GRACE_S, memory_mb=limits.memory_mb),
        argv=("input.txt", "correct_output.txt", "solution_output.txt"),
        files={
            "input.txt": given,
            "correct_output.txt": expected.rstrip("\n") + "\n",
            "solution_output.txt": outcome.stdout,
        },
    )
    return number(verdict.stdout)


class IOIReward:
    """open-r1's `ioi_code`: each completion's C++ code scored on its row's IOI subtask."""

    __name__ = "ioi_code_reward"
    best_score = 1.0

    def __init__(self, args):
        self.batch = int(args.code_eval_test_batch_size)
        self.parallel = max(1, int(args.parallel_code_exec_per_proc))

    def __call__(
        self, completions, id, test_names, grader_files, time_limit, memory_limit, score_precision, **kwargs
    ) -> list[float]:
        columns = dict(
            kwargs,
            id=id,
            test_names=test_names,
            grader_files=grader_files,
            time_limit=time_limit,
            memory_limit=memory_limit,
            score_precision=score_precision,
        )
        columns = {
            key: value
            for key, value in columns.items()
            if isinstance(value, list) and len(value) == len(completions) and key not in ("prompts", "completion_ids")
        }
        problems = [dict(zip(columns, values)) for values in zip(*columns.values())]
        codes = [add_includes(extract_code(last_content(c), "cpp"), p["id"]) for c, p in zip(completions, problems)]
        with workspace() as space:
            return parallel_map(lambda pair: self.score(space, *pair), list(zip(codes, problems)), self.parallel)

    def score(self, space, code: str, problem: dict) -> float:
        names = list(problem["test_names"] or [])
        if not code or not names:
            return 0.0
        task = grader_config(problem).get("task_type") or problem.get("task_type") or "Batch"
        if task != "Batch":
            raise CodeUnavailable(
                f"ioi_code: problem {problem['id']} is a {task} task (a manager process talks to "
                "the submission); the local executor runs Batch tasks only"
            )
        tests = tests_of(problem)
        missing = [name for name in names if name not in tests]
        if missing:
            raise ValueError(
                f"ioi_code: problem {problem['id']} subtask {problem.get('subtask')} names tests "
                f"that its tests do not have: {missing[:3]}"
            )
        program, checker = compile_submission(space, code, problem)
        if program.compile_error is not None or (checker is not None and checker.compile_error is not None):
            return 0.0
        scores = []
        for batch in batched(names, self.batch):
            found = [test_score(space, program, checker, problem, tests[name]) for name in batch]
            scores += found
            if any(score == 0.0 for score in found):
                return 0.0
        return round(min(scores), int(problem["score_precision"]))
