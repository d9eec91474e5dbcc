"""The runs page's charts in headless Chromium (the chart module as the page loads it): a run-health finding that
held in many short stretches shades each one, and names its code once where it has room; labels never overlap,
so every one of them can be read."""

from __future__ import annotations

import pytest

from tests.support.form_page import page, server  # noqa: F401  (the fixtures: a live service, its form)

pytestmark = [pytest.mark.browser]

DRAW = """async (marks) => {
  const { lineChart } = await import('/static/js/chart.js');
  const points = Array.from({ length: 60 }, (_, i) => ({ x: i + 1, y: (i * 7) % 11 }));
  const figure = lineChart('completions/clipped_ratio', points, { marks });
  document.body.prepend(figure);
  const boxes = [...figure.querySelectorAll('text.health-mark-label')].map((t) => {
    const r = t.getBoundingClientRect(); return { text: t.textContent, left: r.left, right: r.right };
  });
  return { bands: figure.querySelectorAll('rect.health-mark').length, labels: boxes };
}"""


def test_a_finding_in_many_stretches_is_named_once_and_labels_never_overlap(page) -> None:  # noqa: F811
    stretches = [(2, 2), (5, 5), (7, 8), (10, 13), (15, 15), (17, 60)]  # the Demo's A006, as it was shown
    marks = [{"from": a, "to": b, "code": "GRPO-A006", "severity": "info"} for a, b in stretches]
    marks += [
        {"from": 3, "to": 4, "code": "GRPO-A001", "severity": "warning"},  # another finding beside it
        {"from": 40, "to": 44, "code": "GRPO-A007", "severity": "error"},
    ]
    drawn = page.evaluate(DRAW, marks)
    assert drawn["bands"] == len(marks)  # every stretch is shaded
    labels = sorted(drawn["labels"], key=lambda box: box["left"])
    assert [box["text"] for box in labels] == ["A006", "A007"]  # A001's room is A006's label: its band says it
    for before, after in zip(labels, labels[1:]):
        assert before["right"] <= after["left"], labels
