"""StyleAgent: grammar_check → issues → change_map, for English and Japanese essays.

The rule checks run without a model and only propose fixes that are unambiguous (a doubled
word, a space before a comma, a ら抜き言葉, 。。). Findings that need judgement (mixed
です/ます and だ/である endings) are reported without a fix. With a model, the agent also
asks for issues as JSON quotes; a quote must occur exactly once in the text to become an
issue (otherwise it is reported as dropped, never guessed at a position).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from duckflow.apps.smartao.ask import AgentLog, ask_json, json_settings
from duckflow.apps.smartao.patch import Issue, PatchJSON, patch_from_issues
from duckflow.apps.smartao.text import language

_MISSPELLINGS = {
    "alot": "a lot", "definately": "definitely", "seperate": "separate", "recieve": "receive",
    "untill": "until", "occured": "occurred", "accomodate": "accommodate", "wich": "which",
    "beleive": "believe", "thier": "their", "goverment": "government", "enviroment": "environment",
    "begining": "beginning", "arguement": "argument", "tommorow": "tomorrow", "succesful": "successful",
    "irregardless": "regardless", "acheive": "achieve", "truely": "truly", "wierd": "weird",
}
_MODAL_OF = re.compile(r"\b(could|should|would|must|might) of\b", re.I)
_DOUBLED = re.compile(r"\b(\w+)(\s+)(\1)\b", re.I)
_SPACE_BEFORE = re.compile(r"(?<=\w)( +)([,.;:!?])(?!\w)")
_NO_SPACE_AFTER = re.compile(r"(?<=[a-z])([,;!?])(?=[A-Za-z])|(?<=[a-z]{2})(\.)(?=[A-Z][a-z]*\b)")
_LOWER_I = re.compile(r"(?<![\w.'’-])i(?=(?:\s|'m|'ve|'d|'ll|’m|’ve|’d|’ll)\b|[\s,;:!?]|$)")
_MULTI_SPACE = re.compile(r"(?<=\S)( {2,})(?=\S)")
_A_VOWEL = re.compile(r"\b([Aa]) (?=(?!one\b|once\b|use|usu|uni|eu|euro)[aeioAEIO]\w)")
_WORD = re.compile(r"\b[A-Za-z]+\b")
_NO_DOUBLE = {"that", "had", "is", "very", "bye", "no", "ha", "so"}

_JA_DOUBLE_PUNCT = re.compile(r"([。、])\1+")
_JA_DOUBLE_PARTICLE = re.compile(r"(?<=[\u4e00-\u9fff\u30a0-\u30ff])(を|が)\1")
_RA_NUKI = {"見れる": "見られる", "来れる": "来られる", "食べれる": "食べられる", "寝れる": "寝られる",
            "出れる": "出られる", "着れる": "着られる", "起きれる": "起きられる", "決めれる": "決められる",
            "考えれる": "考えられる", "続けれる": "続けられる", "信じれる": "信じられる"}
_JA_HALF_COMMA = re.compile(r"(?<=[\u3040-\u30ff\u4e00-\u9fff]),(?=[\u3040-\u30ff\u4e00-\u9fff])")
_JA_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]")
_POLITE = re.compile(r"(です|ます|でした|ました|ません|でしょう|ましょう)[」』）)]*[。！？!?]$")
# plain endings: だ・である, past た, ない, and a verb's or an adjective's plain form (思う。する。
# 大きい。), read only after the polite endings above failed to match
_PLAIN = re.compile(r"(である|だ|だった|であった|ない|た|[うくぐすつぬぶむる]|(?<!ださ)い|だろう)[」』）)]*[。！？!?]$")


def _english(text: str) -> Iterator[Issue]:
    for m in _WORD.finditer(text):
        fix = _MISSPELLINGS.get(m.group(0).lower())
        if fix:
            if m.group(0)[0].isupper():
                fix = fix[0].upper() + fix[1:]
            yield Issue(m.start(), m.end(), f"misspelling: {m.group(0)!r}", "spelling", fix)
    for m in _MODAL_OF.finditer(text):
        yield Issue(m.start(), m.end(), f"'{m.group(0)}' should be '{m.group(1)} have'", "modal-of",
                    f"{m.group(1)} have")
    for m in _DOUBLED.finditer(text):
        if m.group(1).lower() not in _NO_DOUBLE and not m.group(1).isdigit():
            yield Issue(m.start(2), m.end(3), f"repeated word {m.group(1)!r}", "doubled-word", "")
    for m in _SPACE_BEFORE.finditer(text):
        yield Issue(m.start(1), m.end(1), f"space before {m.group(2)!r}", "space-before-punct", "")
    for m in _NO_SPACE_AFTER.finditer(text):
        yield Issue(m.end(), m.end(), f"no space after {m.group(0)!r}", "space-after-punct", " ")
    for m in _LOWER_I.finditer(text):
        yield Issue(m.start(), m.end(), "the pronoun 'I' is written in capitals", "lowercase-i", "I")
    for m in _MULTI_SPACE.finditer(text):
        yield Issue(m.start(1), m.end(1), "several spaces between words", "multiple-spaces", " ")
    for m in _A_VOWEL.finditer(text):
        yield Issue(m.start(1), m.end(1), "'a' before a vowel sound should be 'an'", "a-an",
                    "An" if m.group(1) == "A" else "an")


def _japanese(text: str) -> Iterator[Issue]:
    for m in _JA_DOUBLE_PUNCT.finditer(text):
        yield Issue(m.start(), m.end(), f"「{m.group(1)}」が重なっています", "ja-double-punct", m.group(1))
    for m in _JA_DOUBLE_PARTICLE.finditer(text):
        yield Issue(m.start(), m.end(), f"助詞「{m.group(1)}」が重なっています", "ja-double-particle", m.group(1))
    for wrong, right in _RA_NUKI.items():
        for m in re.finditer(re.escape(wrong), text):
            yield Issue(m.start(), m.end(), f"ら抜き言葉: 「{wrong}」→「{right}」", "ja-ranuki", right)
    for m in _JA_HALF_COMMA.finditer(text):
        yield Issue(m.start(), m.end(), "和文中の半角カンマは「、」にします", "ja-half-comma", "、")
    polite: list[re.Match[str]] = []
    plain: list[re.Match[str]] = []
    for m in _JA_SENTENCE.finditer(text):
        s = m.group(0).strip()
        if _POLITE.search(s) or s.endswith(("ください。", "ございます。")):  # (a polite い ending)
            polite.append(m)
        elif _PLAIN.search(s):
            plain.append(m)
    if polite and plain:
        minority, style = (plain, "だ・である調") if len(plain) <= len(polite) else (polite, "です・ます調")
        for m in minority:
            yield Issue(m.start(), m.end(), f"文体が混在しています（この文は{style}）", "ja-mixed-style", None)


def grammar_check(text: str, lang: str | None = None) -> list[Issue]:
    """Rule findings for `text` ('en' or 'ja'; guessed when not given), sorted by position."""
    lang = lang or language(text)
    found = list(_japanese(text) if lang == "ja" else _english(text))
    if lang == "ja":  # English passages inside a Japanese essay get the English rules too
        found += [i for i in _english(text) if i.rule in ("spelling", "doubled-word", "modal-of")]
    seen: set[tuple[int, int, str]] = set()
    unique = []
    for issue in sorted(found, key=lambda i: (i.start, i.end, i.rule)):
        key = (issue.start, issue.end, issue.rule)
        if key not in seen:
            seen.add(key)
            unique.append(issue)
    return unique


class _ModelIssue(BaseModel):
    quote: str = Field(min_length=1, max_length=400, description="exact text from the essay")
    suggestion: str = Field(max_length=600, description="the corrected text for that quote")
    reason: str = Field(min_length=1, max_length=200)


class _ModelIssues(BaseModel):
    issues: list[_ModelIssue] = Field(default_factory=list, max_length=30)


@dataclass
class StyleResult:
    patch: PatchJSON
    issues: list[Issue]
    skipped: list[Issue]
    dropped_quotes: list[str] = field(default_factory=list)
    language: str = "en"
    text: str | None = None  # the essay the positions refer to (adds line, col, sentence)

    def report(self) -> dict[str, Any]:
        return {"language": self.language, "issues": [i.to_dict(self.text) for i in self.issues],
                "skipped": [i.to_dict(self.text) for i in self.skipped], "dropped_quotes": self.dropped_quotes}




class StyleAgent:
    """Rules always; a model (a `core.Agent`) adds findings when one is given."""

    name = "StyleAgent"

    def __init__(self, model: Any = None, *, token_guard: Any = None) -> None:
        self.model = model
        self.token_guard = token_guard
        self._agents: dict[str, Any] = {}

    def _agent(self, lang: str) -> Any:
        from duckflow.core.agent import Agent

        if lang not in self._agents:
            from duckflow.core.prompt_library import PromptLibrary

            system = PromptLibrary("duckflow.apps.smartao").get("style.system", lang)
            self._agents[lang] = Agent(self.name, system, model=self.model,
                                       settings=json_settings(self.model, _ModelIssues, 1200),
                                       token_guard=self.token_guard, max_turns=1)
        return self._agents[lang]

    async def run(self, text: str, *, session: str, log: AgentLog) -> StyleResult:
        lang = language(text)
        issues = grammar_check(text, lang)
        dropped: list[str] = []
        if self.model is not None:
            prompt = ("Essay:\n<<<\n" + text + "\n>>>\nList up to 15 problems as "
                      '{"issues": [{"quote": ..., "suggestion": ..., "reason": ...}]}. '
                      "Each quote must be copied exactly from the essay.")
            answer = await ask_json(self._agent(lang), prompt, _ModelIssues, session=session, log=log)
            for item in answer.issues:
                at = text.find(item.quote)
                if at < 0 or text.find(item.quote, at + 1) >= 0 or item.suggestion == item.quote:
                    dropped.append(item.quote)
                    continue
                issues.append(Issue(at, at + len(item.quote), item.reason, "model", item.suggestion))
        patch, skipped = patch_from_issues(text, issues)
        return StyleResult(patch, sorted(issues, key=lambda i: (i.start, i.end)), skipped, dropped, lang, text)
