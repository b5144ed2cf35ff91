"""EvalAgent: scores an essay against a rubric with reasons that quote it, in its language.

Per criterion the rules decide first (a signal absent from every sentence; the style check's
findings for expression); the model is asked only for the rest (`judge.Judge`: evidence
sentences, then the level, or one whole-essay answer in `whole` mode). Every reason names the
essay's sentences it is about with their line numbers, says what they show and what is
missing, and `to_next` is one change to this essay anchored at a quoted sentence. A judgement
that fails its checks after one re-ask is shown as "could not be judged" (level None).

`log.progress` hears "criterion 2 of 5 (evidence) — about 40 s left" before each criterion;
`partial()` gives what was judged so far when the person stops the run. Evaluations with every
criterion judged are cached by (rubric, essay, model) in the store.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from duckflow.apps.smartao.ask import AgentLog, EssayError
from duckflow.apps.smartao.evidence import candidates, sentences
from duckflow.apps.smartao.judge import (
    Estimate,
    Judge,
    Judgement,
    compose,
    expression_judgement,
    fix_first,
    rule_judgement,
    words,
)
from duckflow.apps.smartao.rubric import (
    DEFAULT_RUBRIC,
    RUBRICS,
    Criterion,
    Evaluation,
    Rubric,
    is_expression,
    total_score,
)
from duckflow.apps.smartao.text import language

MODES = ("auto", "steps", "whole")


def choose_mode(model: Any, mode: str) -> str:
    """`auto`: small questions for local and scripted models, one whole-essay question for cloud models."""
    if mode != "auto":
        return mode
    from duckflow.llm.constrain import backend_of

    return "whole" if backend_of(model) == "cloud" else "steps"


class EvalAgent:
    name = "EvalAgent"

    def __init__(self, model: Any, *, token_guard: Any = None, store: Any = None, mode: str = "auto") -> None:
        if mode not in MODES:
            raise EssayError(f"unknown evaluation mode {mode!r}", hint="one of: " + ", ".join(MODES))
        self.model, self.token_guard, self.store, self.mode = model, token_guard, store, mode
        self._partial: tuple[Rubric, str, str, str, list[Judgement]] | None = None

    async def run(self, text: str, rubric_path: str | Path = DEFAULT_RUBRIC, *, session: str,
                  log: AgentLog, essay_id: str = "", copied: list[tuple[int, int]] | None = None) -> Evaluation:
        """`copied`: character spans found in references; their sentences are not counted."""
        from duckflow.apps.smartao.style import grammar_check
        from duckflow.core.agent import Agent

        rubric, sha = RUBRICS.load(rubric_path)
        essay_sha = hashlib.sha256(text.encode()).hexdigest()
        model_name = str(getattr(self.model, "name", self.model))
        mode = choose_mode(self.model, self.mode)
        lang = language(text)
        if self.store is not None and not copied:
            cached = self.store.cached_evaluation(sha, essay_sha, f"{model_name}:{mode}")
            if cached is not None:
                return Evaluation(rubric.name, sha, cached["scores"], cached["total"], cached=True,
                                  language=lang, mode=mode)
        items = [s for s in sentences(text)
                 if not any(a < s.end and s.start < b and (min(b, s.end) - max(a, s.start)) * 2 >= s.end - s.start
                            for a, b in copied or [])]
        if not items:
            raise EssayError("the essay has no sentences of its own to evaluate",
                             hint="write the essay as sentences (a heading alone is not evaluated)")
        findings = grammar_check(text, lang)
        agent = Agent(self.name, words("eval.steps_system" if mode == "steps" else "eval.system", lang),
                      model=self.model, token_guard=self.token_guard, max_turns=1)
        judge = Judge(agent, self.model, text, lang, items, session, log, say=log.progress)
        self._partial = (rubric, sha, lang, mode, judge.judged)
        decided: dict[str, Judgement] = {}
        caps: dict[str, int] = {}
        finding_quotes: dict[str, list[Any]] = {}
        for c in rubric.criteria:
            levels = sorted(lv.score for lv in c.levels)
            j = rule_judgement(c.id, items, lang, levels, read_levels=mode == "steps")
            if j is None and is_expression(c) and findings:
                j, cap, where = expression_judgement(findings, text, items, lang, levels)
                if cap is not None:
                    caps[c.id] = cap
                finding_quotes[c.id] = where
            if j is not None:
                decided[c.id] = j
        asked = [c for c in rubric.criteria if c.id not in decided]
        note = self._findings_note(findings, text, lang)
        if mode == "whole":
            judge.est = Estimate(1)
            self._say(log, words("eval.reading", lang, n=len(rubric.criteria)))
            for c in rubric.criteria:
                if c.id in decided:
                    judge.judged.append(decided[c.id])
            got = await judge.whole(self._rubric_text(rubric, asked, lang), note, [c.id for c in asked],
                                    {c.id: sorted(lv.score for lv in c.levels) for c in asked},
                                    lambda cid, item: Judgement(cid, item.level, judge._quotes(item.sentences),
                                                                item.shows.strip(), item.missing.strip()))
            for c in asked:
                judge.judged.append(got[c.id])
        else:
            judge.est = Estimate(sum(1 if finding_quotes.get(c.id) or 0 < len(candidates(c.id, items, lang)) <= 3
                                     else 2 for c in asked))
            for i, c in enumerate(rubric.criteria, 1):
                left = judge.est.left()
                key = "eval.left" if left is not None and c.id not in decided else "eval.criterion"
                self._say(log, words(key, lang, i=i, n=len(rubric.criteria), name=c.id, s=left))
                if c.id in decided:
                    judge.judged.append(decided[c.id])
                    continue
                judge.judged.append(await self._ask_one(judge, c, lang, finding_quotes.get(c.id), note))
        for c in rubric.criteria:
            j = next(x for x in judge.judged if x.criterion == c.id)
            cap = caps.get(c.id)
            if cap is not None and j.level is not None and not j.problem:
                if j.level > cap:
                    first = findings[0]
                    j.cap_note = words("eval.capped", lang, cap=cap, n=len(findings),
                                       line=text.count("\n", 0, first.start) + 1, message=first.message)
                    j.level = cap
                j.to_next = fix_first(findings, text, lang)  # the errors found are the change to make
        ev = self._evaluation(rubric, sha, lang, mode, judge.judged)
        if self.store is not None and ev.judged == len(rubric.criteria) and not copied:
            self.store.save_evaluation(essay_id or essay_sha, essay_sha, sha, f"{model_name}:{mode}", ev)
        return ev

    def partial(self) -> Evaluation | None:
        """What was judged before the run was stopped (None before the first question)."""
        if self._partial is None:
            return None
        rubric, sha, lang, mode, judged = self._partial
        done = {j.criterion for j in judged}
        ev = self._evaluation(rubric, sha, lang, mode, [j for j in judged if j.criterion in done],
                              only=[c for c in rubric.criteria if c.id in done])
        ev.stopped, ev.planned = True, len(rubric.criteria)
        return ev

    async def _ask_one(self, judge: Judge, c: Criterion, lang: str, quotes: list[Any] | None, note: str) -> Judgement:
        levels = sorted(lv.score for lv in c.levels)
        top = next(lv for lv in c.levels if lv.score == levels[-1]).describe(lang)
        j = Judgement(c.id)
        if not quotes:  # the rules pick the sentences carrying the criterion's signal when few do
            found = candidates(c.id, judge.items, lang)
            quotes = found if len(found) <= 3 and len(found) < len(judge.items) else None
        j.quotes = quotes or await judge.evidence(c.label(lang), top)
        if not j.quotes:
            j.problem = words("eval.problem.no_quote", lang)
            return j
        descriptions = [x for lv in c.levels for x in (lv.description, lv.ja)]
        return await judge.level(j, c.label(lang), c.levels_text(lang), levels, note if is_expression(c) else "",
                                 descriptions)

    @staticmethod
    def _say(log: AgentLog, message: str) -> None:
        if log.progress is not None:
            log.progress(message)

    @staticmethod
    def _findings_note(findings: list[Any], text: str, lang: str) -> str:
        if not findings:
            return ""
        listed = "; ".join(f"{text.count(chr(10), 0, f.start) + 1}: {f.message}" for f in findings[:6])
        return words("eval.findings", lang, n=len(findings), list=listed)

    @staticmethod
    def _rubric_text(rubric: Rubric, asked: list[Criterion], lang: str) -> str:
        return "\n".join(f"- {c.id} ({c.label(lang)}): " + "; ".join(
            f"{lv.score} = {lv.describe(lang)}" for lv in sorted(c.levels, key=lambda x: x.score)) for c in asked)

    def _evaluation(self, rubric: Rubric, sha: str, lang: str, mode: str, judged: list[Judgement],
                    only: list[Criterion] | None = None) -> Evaluation:
        scores: list[dict[str, Any]] = []
        for c in only if only is not None else rubric.criteria:
            j = next(x for x in judged if x.criterion == c.id)
            entry: dict[str, Any] = {"criterion": c.id, "name": c.name, "max": c.max_score, "weight": c.weight}
            if j.problem or j.level is None:
                entry.update(level=None, judged=False, by=j.by, quotes=[], to_next="",
                             reason=words("eval.not_judged", lang, why=j.problem or words("eval.problem.no_answer", lang)))
            else:
                reason, to_next = compose(j, lang, c.max_score)
                entry.update(level=j.level, judged=True, by=j.by, reason=reason, to_next=to_next,
                             quotes=[{"n": q.n, "text": q.text, "line": q.line, "paragraph": q.paragraph}
                                     for q in j.quotes])
            scores.append(entry)
        levels = {str(s["criterion"]): s["level"] for s in scores}
        return Evaluation(rubric.name, sha, scores, total_score(rubric, levels), language=lang, mode=mode)
