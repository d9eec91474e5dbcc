"""Speed-ups made for the benchmarks keep their outputs: RunPlan.to_dict() equals dataclasses.asdict() (which it
replaced) on every example at world sizes 1-8 where it has a plan, and returns fresh dicts; the pre-filtered
did-you-mean equals difflib.get_close_matches; the plan's ratios equal float(Fraction(...)); the loader's scalar memo is bounded."""

import dataclasses

from grpo_schema import check_file
from grpo_web.presets import PRESET_DIR as EXAMPLES


def test_plan_to_dict_equals_asdict():
    paths = sorted(EXAMPLES.glob("*.yaml"))
    plans = [check_file(path, world_size=size).plan for path in paths for size in range(1, 9)]
    plans = [plan for plan in plans if plan is not None]
    assert len(plans) > 50
    for plan in plans:
        fast = plan.to_dict()
        assert fast == dataclasses.asdict(plan)
        assert fast["inputs"] is not plan.inputs and fast["formulas"] is not plan.formulas


def test_close_matches_equal_difflib_on_misspelled_keys():
    import difflib
    import random
    import string

    from grpo_schema.engine.closematch import PreparedCandidates
    from grpo_schema.engine.keys import accepted_keys

    keys = sorted(accepted_keys(()))
    prepared = PreparedCandidates(keys)
    rng = random.Random(8)
    words = ["", "x" * 300, "a" * 250 + "b", "é" * 4] + keys[:50]
    for _ in range(400):
        word = list(rng.choice(keys))
        for _ in range(rng.randrange(1, 6)):
            at, edit = rng.randrange(len(word)), rng.randrange(3)
            if edit == 0:
                word[at] = rng.choice(string.ascii_lowercase + "_")
            elif edit == 1:
                word.insert(at, rng.choice(string.ascii_lowercase))
            elif len(word) > 1:
                del word[at]
        words.append("".join(word))
    words += ["".join(rng.choices(string.printable, k=rng.randrange(60))) for _ in range(100)]
    for cutoff in (0.6, 0.75):
        for n in (1, 3):
            for word in words:
                assert prepared.close_matches(word, n, cutoff) == difflib.get_close_matches(word, keys, n, cutoff), (
                    word,
                    n,
                    cutoff,
                )


def test_plan_ratios_equal_fractions():
    import random
    from fractions import Fraction

    from grpo_schema.engine.plan import _ratio

    rng = random.Random(3)
    for _ in range(20_000):
        a, b = rng.randrange(1, 1 << rng.choice((4, 16, 40, 63))), rng.randrange(1, 1 << rng.choice((4, 16, 40, 63)))
        assert _ratio(a, b) == float(Fraction(a, b))


def test_scalar_memo_is_bounded_and_changes_no_answer():
    from grpo_schema.engine.loader import load_yaml
    from grpo_schema.engine.yaml_build import _SCALAR_MEMO, MEMO_ENTRIES

    text = "a: [.nan, 1, 1.5, 2001-02-03, null, yes, '1', x]\na: [.nan, 1, 1.5, 2001-02-03, null, yes, '1', x]\n"
    first = load_yaml(text)  # values constructed by PyYAML, then from the memo
    again = load_yaml(text)
    assert repr(first) == repr(again)
    load_yaml("".join(f"k{i}: v{i}\n" for i in range(2 * MEMO_ENTRIES)))
    assert len(_SCALAR_MEMO) <= MEMO_ENTRIES
