"""Small real programming problems for `grpo smoke`'s synthetic rows when a reward runs completions' code: each with
its tests and reference solutions (Python and C++) that pass them, in the shape of the dataset the reward reads:

* open-r1/verifiable-coding-problems-python (`code`, `binary_code`): the statement and `verification_info`
  {"language": "python", "test_cases": [{"input", "output", "type": "stdin_stdout"}]};
* open-r1/codeforces (`cf_code`): the prompt, `id` CONTEST/INDEX, `time_limit` (s) and `memory_limit` (MB) as
  floats, `input_mode` (stdio, or file: input.txt and output.txt), `generated_checker` (a checker's Python source
  or null), `official_tests` [{input, output}], `language` python or cpp (the real set has both);
* open-r1/ioi (`ioi_code`): one subtask per row of an IOI-style Batch task (a grader that calls the submission's
  function): `id`, `subtask`, `score`, `score_precision`, `test_names`, `grader_files` [[path, content]],
  `time_limit`, `memory_limit`, `task_type`, `year`, and its tests in `test_cases` (open-r1's scorer reads them
  there before it looks in open-r1/ioi-test-cases).

Each column holds one type in every row, so Arrow stores them (datasets' map fails on a column mixing lists and
strings). `code_rows` picks the shape from the configured reward's type; `reference_completion` is what
grpo_runtime.smoke.code scores before the run.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from grpo_runtime.data.cf_scoring import CodeforcesReward
from grpo_runtime.data.code_rewards import CodeReward
from grpo_runtime.data.ioi_scoring import IOIReward

SHAPES = {
    "code": "open-r1/verifiable-coding-problems-python's",
    "cf_code": "open-r1/codeforces's",
    "ioi_code": "open-r1/ioi's",
}
FORMAT = "<think>\nThe reference solution.\n</think>\n<answer>\n```{language}\n{code}```\n</answer>"


@dataclass(frozen=True)
class Problem:
    key: str
    title: str
    statement: str
    tests: tuple  # (input, output) pairs
    python: str
    cpp: str
    input_mode: str = "stdio"
    checker: str | None = None  # a Codeforces-style checker: checker.py INPUT CORRECT_OUTPUT SOLUTION_OUTPUT


DIVISOR_CHECKER = """import sys
n = int(open(sys.argv[1]).read().split()[0])
words = open(sys.argv[3]).read().split()
if len(words) != 1:
    print(0)
    sys.exit(0)
d = int(words[0])
prime = all(n % k for k in range(2, int(n ** 0.5) + 1))
print(1 if (d == -1 and prime) or (1 < d < n and n % d == 0) else 0)
"""

PROBLEMS = (
    Problem(
        "sum",
        "Sum of two integers",
        "Read two integers a and b on one line and print a + b.",
        (("1 2\n", "3\n"), ("-5 7\n", "2\n"), ("2000000000 2000000000\n", "4000000000\n")),
        "a, b = map(int, input().split())\nprint(a + b)\n",
        '#include <cstdio>\nint main() {\n  long long a, b;\n  std::scanf("%lld %lld", &a, &b);\n'
        '  std::printf("%lld\\n", a + b);\n}\n',
    ),
    Problem(
        "max",
        "Largest number",
        "The first line holds n; the second n integers. Print the largest of them.",
        (("3\n1 9 4\n", "9\n"), ("1\n-7\n", "-7\n"), ("5\n2 2 2 2 3\n", "3\n")),
        "input()\nprint(max(map(int, input().split())))\n",
        "#include <iostream>\nint main() {\n  int n;\n  std::cin >> n;\n  long long best, x;\n"
        "  std::cin >> best;\n  for (int i = 1; i < n; i++) { std::cin >> x; if (x > best) best = x; }\n"
        "  std::cout << best << std::endl;\n}\n",
    ),
    Problem(
        "reverse",
        "Words backwards",
        "Read one line of words and print them in reverse order.",
        (("hello world\n", "world hello\n"), ("one\n", "one\n"), ("a b c d\n", "d c b a\n")),
        "print(' '.join(reversed(input().split())))\n",
        "#include <iostream>\n#include <string>\n#include <vector>\nint main() {\n  std::vector<std::string> w;"
        "\n  std::string s;\n  while (std::cin >> s) w.push_back(s);\n  for (size_t i = w.size(); i-- > 0;)\n"
        '    std::cout << w[i] << (i ? " " : "\\n");\n}\n',
    ),
    Problem(
        "divisor",
        "Any divisor",
        "Read n (n >= 2). Print any divisor d of n with 1 < d < n, or -1 if n is prime.",
        (("12\n", "2\n"), ("7\n", "-1\n"), ("49\n", "7\n")),
        "n = int(input())\nprint(next((d for d in range(n - 1, 1, -1) if n % d == 0), -1))\n",
        '#include <cstdio>\nint main() {\n  long long n, d = -1;\n  std::scanf("%lld", &n);\n'
        "  for (long long k = 2; k * k <= n; k++) if (n % k == 0) { d = n / k; break; }\n"
        '  std::printf("%lld\\n", d);\n}\n',
        checker=DIVISOR_CHECKER,
    ),
    # the references write yes/Yes where YES is expected: the judge's comparison upper-cases yes and no
    Problem(
        "parity",
        "Even or odd (files)",
        "Read n from input.txt; write YES to output.txt if n is even, else NO.",
        (("4\n", "YES\n"), ("7\n", "NO\n"), ("0\n", "YES\n")),
        "n = int(open('input.txt').read())\nopen('output.txt', 'w').write('yes' if n % 2 == 0 else 'no')\n",
        '#include <cstdio>\nint main() {\n  FILE *in = std::fopen("input.txt", "r");\n'
        '  FILE *out = std::fopen("output.txt", "w");\n  long long n;\n  std::fscanf(in, "%lld", &n);\n'
        '  std::fputs(n % 2 == 0 ? "Yes\\n" : "No\\n", out);\n}\n',
        input_mode="file",
    ),
)
STDIO = tuple(p for p in PROBLEMS if p.input_mode == "stdio" and p.checker is None)  # plain stdin/stdout problems

IOI_ID = "sumtwo"
IOI_HEADER = "long long sum_two(int a, int b);\n"
IOI_GRADER = (
    '#include <cstdio>\n#include "sumtwo.h"\nint main() {\n  int t;\n  if (std::scanf("%d", &t) != 1) '
    'return 1;\n  while (t--) {\n    int a, b;\n    std::scanf("%d %d", &a, &b);\n'
    '    std::printf("%lld\\n", sum_two(a, b));\n  }\n  return 0;\n}\n'
)
IOI_CONFIG = {"task_type": "Batch", "code": IOI_ID, "time_limit": 2.0, "memory_limit": 268435456}
IOI_TESTS = {
    "0-01": ("1\n1 2\n", "3\n"),
    "1-01": ("2\n0 0\n5 6\n", "0\n11\n"),
    "1-02": ("1\n-3 3\n", "0\n"),
    "2-01": ("2\n2147483647 1\n1000000000 1000000000\n", "2147483648\n2000000000\n"),
}
IOI_SUBTASKS = (("0", 0, ["0-01"]), ("1", 40, ["0-01", "1-01", "1-02"]), ("2", 60, ["0-01", "1-01", "1-02", "2-01"]))
IOI_SOLUTION = "long long sum_two(int a, int b) {\n  return (long long)a + b;\n}\n"


def code_prompt(problem: Problem, language: str) -> str:
    fence = "python" if language == "python" else "cpp"
    return f"{problem.title}. {problem.statement} Answer with a program in a ```{fence} block."


def verifiable_row(problem: Problem, prompt_column: str) -> dict:
    """open-r1/verifiable-coding-problems-python's shape."""
    cases = [{"input": given, "output": expected, "type": "stdin_stdout"} for given, expected in problem.tests]
    return {
        prompt_column: code_prompt(problem, "python"),
        "problem_id": problem.key,
        "verification_info": {"language": "python", "test_cases": cases},
    }


def codeforces_row(problem: Problem, language: str, prompt_column: str) -> dict:
    """open-r1/codeforces's verifiable-prompts shape."""
    contest = 9000 + PROBLEMS.index(problem)
    return {
        prompt_column: code_prompt(problem, language),
        "id": f"{contest}/A",
        "contest_id": str(contest),
        "title": problem.title,
        "time_limit": 2.0,
        "memory_limit": 256.0,
        "input_mode": problem.input_mode,
        "generated_checker": problem.checker,
        "language": language,
        "official_tests": [{"input": given, "output": expected} for given, expected in problem.tests],
    }


def ioi_row(subtask: tuple, prompt_column: str) -> dict:
    """One subtask of open-r1/ioi's shape."""
    name, score, tests = subtask
    files = [
        ["graders/grader.cpp", IOI_GRADER],
        [f"graders/{IOI_ID}.h", IOI_HEADER],
        ["graders/grader_config.json", json.dumps(IOI_CONFIG)],
    ]
    statement = (
        "Implement long long sum_two(int a, int b), returning a + b. The grader reads the pairs and prints "
        "each sum. Answer with C++ code in a ```cpp block."
    )
    return {
        prompt_column: statement,
        "year": 2024,
        "day": "practice",
        "name": "Sum two",
        "id": IOI_ID,
        "subtask": name,
        "score": score,
        "score_precision": 2,
        "time_limit": 2.0,
        "memory_limit": 256,
        "task_type": "Batch",
        "test_names": list(tests),
        "grader_files": files,
        "starting_code": "long long sum_two(int a, int b) {\n  return 0;\n}\n",
        "test_cases": [list(IOI_TESTS[test]) for test in tests],
    }


def rows_for(kind: str, prompt_column: str, count: int, seed: int) -> list[dict]:
    """`count` rows for the code reward `kind` (code, cf_code, ioi_code), drawn in an order seeded from the file."""
    order = random.Random(seed)
    if kind == "ioi_code":
        return [ioi_row(IOI_SUBTASKS[order.randrange(1, len(IOI_SUBTASKS))], prompt_column) for _ in range(count)]
    if kind == "cf_code":
        return [
            codeforces_row(order.choice(PROBLEMS), order.choice(("python", "cpp")), prompt_column) for _ in range(count)
        ]
    return [verifiable_row(order.choice(STDIO), prompt_column) for _ in range(count)]


def reference_completion(kind: str, row: dict) -> str:
    """A completion holding the row's reference solution, as a model would write it."""
    if kind == "ioi_code":
        return FORMAT.format(language="cpp", code=IOI_SOLUTION)
    key = row.get("problem_id") or next(p.key for p in PROBLEMS if p.title == row.get("title"))
    problem = next(p for p in PROBLEMS if p.key == key)
    language = row.get("language", "python")
    return FORMAT.format(language=language, code=problem.python if language == "python" else problem.cpp)


def kind_of(func) -> str | None:
    """Which dataset shape a code reward reads: code (and binary_code), cf_code, ioi_code; None for another."""
    if isinstance(func, CodeforcesReward):
        return "cf_code"
    if isinstance(func, IOIReward):
        return "ioi_code"
    return "code" if isinstance(func, CodeReward) else None


def code_kind(funcs: list) -> str | None:
    return next((kind for kind in map(kind_of, funcs) if kind is not None), None)


def code_rows(funcs: list, shape, count: int, seed: int) -> list[dict] | None:
    """Rows of the shape the first code reward's dataset has (None without a code reward), with the prompt in
    `shape`'s column and form and every other column `shape` asks for."""
    kind = code_kind(funcs)
    if kind is None:
        return None
    rows = rows_for(kind, shape.prompt_column, count, seed)
    for index, row in enumerate(rows):
        if shape.conversational:
            row[shape.prompt_column] = [{"role": "user", "content": row[shape.prompt_column]}]
        filler = shape.row(index, "What is 1 + 1?", "2")
        for column in shape.columns:
            row.setdefault(column, filler[column])
    return rows


def rows_note(funcs: list) -> str:
    kind = code_kind(funcs)
    if kind is None:
        return ""
    languages = " (Python and C++ rows, by its language column)" if kind == "cf_code" else ""
    return (
        f", small real programming problems in {SHAPES[kind]} shape{languages} whose reference solutions pass "
        "their tests"
    )
