"""A scripted judge for EvalAgent's tests: answers each small question by reading which it is.

`Judge(answers)` is a ScriptedModel step (and a FakeServer reply source): for an evidence
question it answers the sentence numbers given for the criterion, for a level question the
next of the level answers given for it (the last one again after that), for a whole-essay
question every criterion at once. `asked` counts the questions per criterion.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

LABELS = {"motivation": ("Motivation", "志望動機の明確さ"), "evidence": ("Experience and evidence", "具体的な経験"),
          "reflection": ("Reflection and growth", "振り返りと成長"), "fit": ("Fit with the programme", "志望先との適合"),
          "expression": ("Structure and expression", "構成と表現")}


class Judge:
    def __init__(self, answers: dict[str, tuple[list[int], list[dict[str, Any]]]]) -> None:
        self.answers = answers
        self.asked: Counter[str] = Counter()
        self.prompts: list[str] = []

    def criterion(self, prompt: str) -> str:
        for cid, names in LABELS.items():
            if any(f"{'観点' if n[0] > 'z' else 'Criterion'}: {n}" in prompt or f"観点: {n}" in prompt for n in names):
                return cid
        raise AssertionError("no criterion in the question: " + prompt[-300:])

    def answer(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if '"scores"' in prompt:
            out = []
            for cid in re.findall(r"^- (\w+) \(", prompt, re.M):
                numbers, levels = self.answers[cid]
                k = min(self.asked[cid], len(levels) - 1)
                self.asked[cid] += 1
                out.append({"criterion": cid, "sentences": numbers, **levels[k]})
            return json.dumps({"scores": out}, ensure_ascii=False)
        cid = self.criterion(prompt)
        numbers, levels = self.answers[cid]
        if '"sentences"' in prompt:
            return json.dumps({"sentences": numbers})
        k = min(self.asked[cid], len(levels) - 1)
        self.asked[cid] += 1
        return json.dumps(levels[k], ensure_ascii=False)

    def __call__(self, messages: Any) -> Any:  # a ScriptedModel step
        from duckflow.llm.scripted import reply

        return reply(self.answer(messages[-1].content))

    def steps(self, n: int = 40) -> list[Any]:
        return [self] * n
