"""open-r1's code rewards on the local executor give open-r1's numbers: hand-written completions (correct, wrong,
partly right, no code, not compiling, too slow) on rows of the real datasets' shapes, each number worked out from
open-r1's scoring (src/open_r1/rewards.py, utils/competitive_programming) and its Piston packages."""

import shutil

import pytest

from grpo_runtime.data import open_r1
from grpo_runtime.smoke import problems as bank

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def args(**values):
    from grpo_schema.engine.profiles.open_r1_args import OpenR1ScriptArgs

    return OpenR1ScriptArgs(**values)


def answer(code: str, language: str = "python") -> list[dict]:
    return [{"role": "assistant", "content": f"<think>\nok\n</think>\n<answer>\n```{language}\n{code}```\n</answer>"}]


def columns(rows: list[dict]) -> dict:
    return {key: [row.get(key) for row in rows] for key in rows[0]}


def score(name: str, completions: list, rows: list[dict], **settings) -> list:
    return open_r1.REGISTRY[name](args(**settings))(completions=completions, **columns(rows))


SUM = bank.PROBLEMS[0]  # a + b, three tests; the third needs 64-bit integers in C++


def verifiable(*cases) -> dict:
    return {
        "verification_info": {
            "language": "python",
            "test_cases": [{"input": given, "output": expected, "type": "stdin_stdout"} for given, expected in cases],
        }
    }


def test_code_is_the_pass_rate_and_binary_code_its_threshold():
    row = verifiable(*SUM.tests)
    completions = [
        answer(SUM.python),
        answer("a, b = map(int, input().split())\nprint(a + b if a > 0 else 0)\n"),  # 2 of 3
        [{"role": "assistant", "content": "I would add them."}],  # no code
        answer("print(", "python"),  # a syntax error: exits 1 on every test
        answer(SUM.python, "cpp"),
    ]  # not a ```python block: no code
    assert score("code", completions, [row] * 5) == pytest.approx([1.0, 2 / 3, 0.0, 0.0, 0.0])
    assert score("binary_code", completions, [row] * 5) == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_code_compares_lines_as_open_r1_does():
    """Lines compared stripped, as far as the shorter output goes; the last ```python block is the code."""
    row = verifiable(("", "3\n4\n"))
    two_blocks = [{"role": "assistant", "content": "```python\nprint(0)\n```\nbetter:\n```python\nprint(' 3 ')\n```"}]
    assert score("code", [answer("print(3)"), two_blocks, answer("print(4)")], [row] * 3) == [1.0, 1.0, 0.0]


def test_a_test_out_of_time_scores_the_whole_completion_zero():
    """open-r1's evaluation script has no handler for subprocess's timeout: one slow test and the sandbox returns no
    number, which scores 0.0, though other tests passed."""
    from grpo_runtime.data.code_execution import Limits

    row = verifiable(("1\n", "1\n"), ("2\n", "2\n"), ("0\n", "0\n"))
    slow = "n = int(input())\nwhile n == 0: pass\nprint(n)"
    reward = open_r1.REGISTRY["code"](args())
    assert reward.limits.time_s == 5.0  # open-r1's limit; 1 s here, so that the test does not wait 5
    reward.limits = Limits(time_s=1.0, memory_mb=reward.limits.memory_mb)
    assert reward(completions=[answer(slow), answer("print(input())")], **columns([row, row])) == [0.0, 1.0]
    assert score("code", [answer("print(input())")], [verifiable()]) == [0.0]  # no tests: no number either


def codeforces(problem, language: str) -> dict:
    return bank.codeforces_row(problem, language, "prompt")


@needs_gxx
@pytest.mark.parametrize(
    "mode, expected",
    [
        ("pass_fail", [1.0, 0.0, -1.0, -0.1]),
        ("partial", [1.0, 2 / 3, -1.0, -0.1]),
        ("weighted_sum", [1.1, 0.1 * 2 / 3, -1.0, -0.1]),
    ],
)
def test_cf_code_scores_by_the_recipes_mode(mode, expected):
    row = codeforces(SUM, "cpp")
    overflow = '#include <cstdio>\nint main(){int a,b; std::scanf("%d %d",&a,&b); std::printf("%d\\n",a+b);}\n'
    completions = [
        answer(SUM.cpp, "cpp"),
        answer(overflow, "cpp"),
        answer(SUM.cpp, "python"),
        answer("int main( {", "cpp"),
    ]
    got = score("cf_code", completions, [row] * 4, code_eval_scoring_mode=mode, code_eval_test_batch_size=2)
    assert got == pytest.approx(expected)


def test_cf_code_python_with_a_checker_files_and_yes_no():
    divisor, parity = bank.PROBLEMS[3], bank.PROBLEMS[4]
    rows = [codeforces(divisor, "python"), codeforces(divisor, "python"), codeforces(parity, "python")]
    completions = [
        answer(divisor.python),  # prints the largest divisor: the checker accepts any
        answer("print(1)"),  # not a divisor above 1
        answer(parity.python),
    ]  # writes yes/no to output.txt where YES/NO is expected
    assert score("cf_code", completions, rows, code_eval_scoring_mode="partial") == [1.0, 0.0, 1.0]


def test_cf_code_has_no_score_without_tests_or_a_language_it_runs():
    no_tests = dict(codeforces(SUM, "python"), official_tests=[])
    kotlin = dict(codeforces(SUM, "python"), language="kotlin")
    assert score("cf_code", [answer(SUM.python)] * 2, [no_tests, kotlin]) == [None, None]


def test_cf_code_adds_the_generated_tests_of_cf_tests_folder(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    row = codeforces(SUM, "python")
    contest = int(row["id"].split("/")[0])
    pq.write_table(
        pa.table({"problem_id": [row["id"]], "input": ["0 0\n"], "output": ["1\n"]}),  # wrong on purpose
        tmp_path / f"test_cases_{contest:04d}.parquet",
    )
    monkeypatch.setenv("CF_TESTS_FOLDER", str(tmp_path))
    assert score("cf_code", [answer(SUM.python)], [row], code_eval_scoring_mode="partial") == [0.75]


def ioi(subtask: int = 2, **changes) -> dict:
    return dict(bank.ioi_row(bank.IOI_SUBTASKS[subtask], "problem"), **changes)


@needs_gxx
def test_ioi_code_is_the_subtasks_score():
    wrong_big = "long long sum_two(int a, int b) { return a + b; }\n"  # int overflow: fails test 2-01 only
    completions = [
        answer(bank.IOI_SOLUTION, "cpp"),
        answer(wrong_big, "cpp"),
        answer("", "cpp"),
        answer("long long sum_two(int a, int b) { return a + ; }", "cpp"),
        answer(wrong_big, "cpp"),
    ]
    rows = [ioi(), ioi(), ioi(), ioi(), ioi(1)]  # the last: subtask 1, without the large test
    assert score("ioi_code", completions, rows, code_eval_test_batch_size=3) == [1.0, 0.0, 0.0, 0.0, 1.0]


@needs_gxx
def test_ioi_code_takes_a_checkers_partial_score_rounded_to_the_precision():
    checker = (
        '#include <cstdio>\nint main(int argc, char **argv) {\n  std::printf("0.3333\\n");\n'
        '  std::fprintf(stderr, "partially correct\\n");\n}\n'
    )
    row = ioi(
        1, grader_files=bank.ioi_row(bank.IOI_SUBTASKS[1], "p")["grader_files"] + [["checker/checker.cpp", checker]]
    )
    assert score("ioi_code", [answer(bank.IOI_SOLUTION, "cpp")], [row], code_eval_test_batch_size=-1) == [0.33]


def test_code_format_reads_a_language_column():
    completions = [answer("x", "cpp"), answer("x", "python")]
    assert score("code_format", completions, [{"language": "cpp"}] * 2) == [1.0, 0.0]
    assert score("code_format", completions, [{"other": 1}] * 2, code_language="python") == [0.0, 1.0]
