"""EvalAgent's judgements: evidence sentences first, then the level, each checked, in the essay's language.

Two ways to ask, one way to check. `steps` (the default for local models: small questions a
1.5B model can answer) asks per criterion for the numbers of the sentences it is about — the
answer is constrained to the numbers of the essay's own sentences — and then for the level with
those sentences in view. `whole` (for big models) asks for every criterion in one answer of the
same shape. The rules decide what needs no model (a signal absent from every sentence, the
style check's findings for expression), and those criteria are never asked.

Every model judgement is checked (`problems`): it must quote a sentence, be in the essay's
language, not deny what its level grants, not repeat another criterion's words, not only echo
the essay, and say what to add below the top. A failing one is asked again once with the
problem named, and then shown as "could not be judged" — never filled in.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from duckflow.apps.smartao.ask import AgentLog, EssayError, ask_json, json_settings
from duckflow.apps.smartao.evidence import (
    Sentence,
    anchor,
    clip,
    copies,
    denies,
    expression_rule,
    grounded,
    in_language,
    numbered,
    own_sentences,
    rubric_text,
    rule_absent,
    rule_level,
)
from duckflow.core.prompt_library import PromptLibrary

PROMPTS = PromptLibrary("duckflow.apps.smartao")


def words(key: str, lang: str, **values: Any) -> str:
    return PROMPTS.get(key, lang, **values)


@dataclass
class Judgement:
    criterion: str
    level: int | None = None
    quotes: list[Sentence] = field(default_factory=list)
    shows: str = ""
    missing: str = ""
    by: str = "model"        # "model" | "rules"
    problem: str = ""        # why it could not be judged (empty: judged)
    cap_note: str = ""
    to_next: str = ""


class _Evidence(BaseModel):
    sentences: list[int]


class _Level(BaseModel):
    level: int
    shows: str = Field(default="", max_length=300)
    missing: str = Field(default="", max_length=300)


class _WholeItem(_Level):
    criterion: str
    sentences: list[int] = Field(default_factory=list)


class _Whole(BaseModel):
    scores: list[_WholeItem]


def _num_t(n: int) -> Any:
    return Literal[tuple(range(1, n + 1))]


def evidence_schema(n: int) -> type[_Evidence]:
    """Sentence numbers 1..n, one to three of them: a constrained decoder can only quote the essay."""
    items_t: Any = list[_num_t(n)]  # type: ignore[misc]
    model: type[_Evidence] = create_model("EvidenceSentences", __base__=_Evidence,
                                          sentences=(items_t, Field(min_length=1, max_length=3)))
    return model


# characters each free-text field may take: bounded so the answer always closes within the
# call's max_tokens (a Japanese character is about one token; an English word about 1.3)
LIMITS = {"en": (160, 100), "ja": (60, 40)}


def level_schema(levels: list[int], lang: str = "en") -> type[_Level]:
    shows, missing = LIMITS.get(lang, LIMITS["en"])
    level_t: Any = Literal[tuple(sorted(levels))]
    model: type[_Level] = create_model("CriterionLevel", __base__=_Level, level=(level_t, ...),
                                       shows=(str, Field(min_length=2, max_length=shows)),
                                       missing=(str, Field(max_length=missing)))
    return model


def whole_schema(ids: list[str], levels: list[int], n: int, lang: str = "en") -> type[_Whole]:
    shows, missing = LIMITS.get(lang, LIMITS["en"])
    id_t: Any = Literal[tuple(ids)]
    level_t: Any = Literal[tuple(sorted(levels))]
    items_t: Any = list[_num_t(n)]  # type: ignore[misc]
    item: Any = create_model("CriterionJudgement", __base__=_WholeItem, criterion=(id_t, ...), level=(level_t, ...),
                             sentences=(items_t, Field(min_length=1, max_length=3)),
                             shows=(str, Field(min_length=2, max_length=shows)), missing=(str, Field(max_length=missing)))
    model: type[_Whole] = create_model("WholeJudgement", __base__=_Whole,
                                       scores=(list[item], Field(min_length=len(ids), max_length=len(ids))))
    return model


def problems(j: Judgement, essay: str, lang: str, levels: list[int], others: list[Judgement],
             descriptions: list[str] | None = None) -> list[str]:
    """Why a model's judgement cannot be shown, in the essay's language (empty: it can).
    `descriptions`: the criterion's level descriptions (what to add must not be one of them)."""
    from duckflow.apps.smartao.rubric import echoes

    out: list[str] = []
    said = f"{j.shows} {j.missing}"
    if not grounded(essay, j.quotes):
        out.append(words("eval.problem.no_quote", lang))
    if not in_language(said, lang):
        out.append(words("eval.problem.language", lang))
    if j.level is not None and sorted(levels).index(j.level) >= len(levels) / 2 and denies(j.shows, lang):
        out.append(words("eval.problem.contradiction", lang, level=f"{j.level}/{max(levels)}"))
    mine = own_sentences(j.shows) | own_sentences(j.missing)
    for other in others:
        if other.criterion != j.criterion and other.by == "model" and not other.problem and \
                mine & (own_sentences(other.shows) | own_sentences(other.missing)):
            out.append(words("eval.problem.repeated", lang, other=other.criterion))
            break
    below_top = j.level is not None and j.level < max(levels)
    if echoes(j.shows, essay) or copies(j.shows, essay, lang) or \
            (below_top and (echoes(j.missing, essay) or copies(j.missing, essay, lang))):
        out.append(words("eval.problem.echo", lang))
    asked = [words(f"eval.placeholder.{k}", lang) for k in ("shows", "missing")]
    if rubric_text(j.shows, asked) or rubric_text(j.missing, asked):
        out.append(words("eval.problem.placeholder", lang))
    if below_top and descriptions and rubric_text(j.missing, descriptions):
        out.append(words("eval.problem.rubric", lang))
    said_again = own_sentences(j.missing)
    if below_top and (len(j.missing.strip()) < 2 or (said_again and said_again <= own_sentences(j.shows))):
        out.append(words("eval.problem.no_missing", lang))  # nothing, or what is there said again
    return out


class Estimate:
    """Seconds per model question × questions still planned: "about 40 s left".

    The first question also pays for loading a local model, so once a second one is timed the
    first is left out of the mean."""

    def __init__(self, planned: int) -> None:
        self.planned = planned
        self.times: list[float] = []

    @property
    def done(self) -> int:
        return len(self.times)

    def timed(self, seconds: float) -> None:
        self.times.append(seconds)

    def left(self) -> int | None:
        if not self.times:
            return None
        sample = self.times[1:] or self.times
        return max(1, round(sum(sample) / len(sample) * max(0, self.planned - self.done)))


@dataclass
class Judge:
    """Runs the questions of one evaluation; `judged` fills as criteria are decided (Ctrl-C keeps it)."""

    agent: Any
    model: Any
    essay: str
    lang: str
    items: list[Sentence]
    session: str
    log: AgentLog
    judged: list[Judgement] = field(default_factory=list)
    say: Callable[[str], None] | None = None
    est: Estimate = field(default_factory=lambda: Estimate(0))

    def prefix(self) -> str:
        return words("eval.essay_head", self.lang) + "\n" + numbered(self.items) + "\n\n"

    async def _ask(self, prompt: str, schema: type[Any], max_tokens: int) -> Any:
        self.agent.settings = json_settings(self.model, schema, max_tokens, temperature=0.0)
        began = time.monotonic()
        try:
            return await ask_json(self.agent, prompt, schema, session=self.session, log=self.log)
        except EssayError as exc:
            if "no usable answer" in exc.message:
                return None
            raise
        finally:
            self.est.timed(time.monotonic() - began)

    def _quotes(self, numbers: list[int]) -> list[Sentence]:
        by_n = {s.n: s for s in self.items}
        seen: list[Sentence] = []
        for k in numbers:
            if k in by_n and by_n[k] not in seen:
                seen.append(by_n[k])
        return seen

    async def evidence(self, name: str, top: str) -> list[Sentence]:
        """The model's choice among all the essay's sentences (numbers only: quotes by construction)."""
        prompt = self.prefix() + words("eval.evidence_ask", self.lang, name=name, top=top)
        answer = await self._ask(prompt, evidence_schema(len(self.items)), 40)
        return [] if answer is None else self._quotes(answer.sentences)

    async def level(self, j: Judgement, name: str, levels_text: str, levels: list[int], note: str,
                    descriptions: list[str] | None = None) -> Judgement:
        quotes = "\n".join(f"[{q.n}] {q.text}" for q in j.quotes)
        base = self.prefix() + words("eval.level_ask", self.lang, name=name, levels=levels_text,
                                     quotes=quotes, note=note)
        prompt = base
        for attempt in range(2):
            answer = await self._ask(prompt, level_schema(levels, self.lang), 150)
            if answer is None:
                j.problem = words("eval.problem.no_answer", self.lang)
                return j
            j.level, j.shows, j.missing = answer.level, answer.shows.strip(), answer.missing.strip()
            found = problems(j, self.essay, self.lang, levels, self.judged, descriptions)
            if not found:
                j.problem = ""
                return j
            j.problem = found[0]
            if attempt == 0:
                prompt = base + "\n\n" + words("eval.reask", self.lang, name=name, problem="; ".join(found))
        return j

    async def whole(self, rubric_text: str, note: str, ids: list[str], levels: dict[str, list[int]],
                    take: Callable[[str, Any], Judgement]) -> dict[str, Judgement]:
        all_levels = sorted({x for v in levels.values() for x in v})
        schema = whole_schema(ids, all_levels, len(self.items), self.lang)
        base = self.prefix() + words("eval.whole_ask", self.lang, rubric=rubric_text, note=note, ids=", ".join(ids))
        prompt = base
        got: dict[str, Judgement] = {}
        for attempt in range(2):
            answer = await self._ask(prompt, schema, 80 + 150 * len(ids))
            if answer is None:
                break
            failed: list[str] = []
            for item in answer.scores:
                if item.criterion not in ids or (item.criterion in got and not got[item.criterion].problem):
                    continue
                j = take(item.criterion, item)
                if j.level not in levels[item.criterion]:
                    j.problem = words("eval.problem.no_answer", self.lang)
                else:
                    found = problems(j, self.essay, self.lang, levels[item.criterion],
                                     [g for g in got.values() if not g.problem])
                    j.problem = found[0] if found else ""
                got[item.criterion] = j
                if j.problem:
                    failed.append(words("eval.reask", self.lang, name=item.criterion, problem=j.problem))
            missing = [c for c in ids if c not in got]
            if not failed and not missing:
                break
            if attempt == 0:
                prompt = base + "\n\n" + "\n".join(failed + [words("eval.reask", self.lang, name=c,
                                                                    problem=words("eval.problem.no_answer", self.lang))
                                                             for c in missing])
        for c in ids:
            got.setdefault(c, Judgement(c, problem=words("eval.problem.no_answer", self.lang)))
        return got


def rule_judgement(cid: str, items: list[Sentence], lang: str, levels: list[int],
                   read_levels: bool = True) -> Judgement | None:
    """What the rules decide, in their own words: the lowest level when the criterion's signal
    is in no sentence, else (`read_levels`: small models) the level the text itself shows
    (`evidence.rule_level`)."""
    if rule_absent(cid, items, lang):
        return Judgement(cid, min(levels), anchor(cid, items), words(f"eval.rule.{cid}", lang),
                         words(f"eval.rule.{cid}_add", lang), by="rules")
    decided = rule_level(cid, items, lang, levels) if read_levels else None
    if decided is None:
        return None
    level, key, quotes = decided
    add = words(f"eval.rule.{key}_add", lang) if level < max(levels) else ""
    return Judgement(cid, level, quotes, words(f"eval.rule.{key}", lang), add, by="rules")


def expression_judgement(findings: list[Any], essay: str, items: list[Sentence], lang: str,
                         levels: list[int]) -> tuple[Judgement | None, int | None, list[Sentence]]:
    """(decided by rules, cap for the model, the sentences holding findings)."""
    where = [s for s in items if any(s.start <= f.start < s.end for f in findings)][:3]
    decided, cap = expression_rule(len(findings), levels)
    if decided is None:
        return None, cap, where
    j = Judgement("expression", decided, where or items[:1], words("eval.rule.expression", lang, n=len(findings)),
                  "", by="rules")
    j.to_next = fix_first(findings, essay, lang)
    return j, None, where


def fix_first(findings: list[Any], essay: str, lang: str) -> str:
    first = findings[0]
    return words("eval.fix_first", lang, n=len(findings), line=essay.count("\n", 0, first.start) + 1,
                 message=first.message)


_EN_ADD = re.compile(r"^(?:(?:the )?(?:essay|applicant|student|writer|you)\s+(?:must|should|needs? to|could|has to|"
                     r"does not|doesn't|lacks)\s+(?:add|include|give|provide|show|explain|describe|mention)?\s*"
                     r"(?:any\s+)?|(?:add|include)\s+)", re.I)
_EN_TAIL = re.compile(r"\s*(?:in order )?to reach the next level(?: of [\w ]+)?[.]?$", re.I)
_JA_TAIL = re.compile(r"(?:を(?:一文)?(?:加える|加えること|書く|書くこと|追加する|述べる)|が必要(?:です)?|を加える必要があります?|"
                      r"を書く必要があります?)[。]?$")
_JA_HEAD = re.compile(r"^(?:次のレベル(?:に届く|に達する)?(?:ために|には)[、,]?\s*)")


def tidy_missing(missing: str, lang: str) -> str:
    """What to add as a phrase that fits the templates ("add a sentence with …", 「…を一文加える」)."""
    t = missing.strip().rstrip("。.")
    if lang == "ja":
        return _JA_TAIL.sub("", _JA_HEAD.sub("", t)).strip()
    t = _EN_TAIL.sub("", _EN_ADD.sub("", t)).strip()
    return t[:1].lower() + t[1:] if t[:2] != t[:2].upper() else t


def compose(j: Judgement, lang: str, top: int) -> tuple[str, str]:
    """The reason and to_next a person reads, built around the quoted sentences."""
    quotes = "、".join if lang == "ja" else "; ".join
    q = quotes(words("eval.quote", lang, line=s.line, text=clip(s.text)) for s in j.quotes)
    shows = j.shows.strip()
    if shows and shows[-1] not in ".!?。！？":
        shows += "。" if lang == "ja" else "."
    missing = tidy_missing(j.missing, lang)
    if j.level is not None and j.level < top and missing:
        reason = words("eval.reason_missing", lang, quotes=q, shows=shows, missing=missing)
    else:
        reason = words("eval.reason", lang, quotes=q, shows=shows)
    to_next = j.to_next
    if not to_next and j.level is not None and j.level < top and missing and j.quotes:
        last = j.quotes[-1]
        key = "eval.to_next_expression" if j.criterion == "expression" else "eval.to_next"
        to_next = words(key, lang, paragraph=last.paragraph, text=clip(last.text, 40), missing=missing)
    return reason + j.cap_note, to_next


__all__ = ["Estimate", "Judge", "Judgement", "compose", "expression_judgement", "problems", "rule_judgement",
           "words"]
