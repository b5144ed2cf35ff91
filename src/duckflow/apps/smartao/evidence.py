"""An essay's numbered sentences, the rule signals per criterion, and the checks of a reason.

EvalAgent grounds every reason in the essay: the model picks sentence *numbers* from a
numbered list (`numbered`), so a quote is the essay's own text by construction, and each quote
carries its line and paragraph. The checks here say why a judgement cannot be shown: it quotes
nothing, its own words are not in the essay's language, it denies what its level grants (a
"none" reason under 3/4), or one of its sentences is another criterion's.

The rules decide what needs no model: a criterion whose signal is absent from every sentence
(no wish or reason to apply, no past action told, nothing learnt, no named programme) is at
the rubric's lowest level, and the style check's findings bound expression.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from duckflow.apps.smartao.text import is_heading_line, language, normalize

_JA_SPLIT = re.compile(r"[^。！？!?]+[。！？!?]*")
_EN_SPLIT = re.compile(r"[^.!?]+(?:[.!?]+[\"')\]]*|$)")


@dataclass(frozen=True)
class Sentence:
    n: int          # 1-based number in the list the model sees
    text: str       # the essay's own text (stripped)
    start: int      # offsets into the essay: text == essay[start:end]
    end: int
    line: int       # 1-based
    paragraph: int  # 1-based, headings and blank lines separate paragraphs


def sentences(essay: str) -> list[Sentence]:
    """The essay's body sentences in order (headings are not sentences)."""
    ja = language(essay) == "ja"
    out: list[Sentence] = []
    pos, line_no, para, in_para = 0, 0, 0, False
    for raw in essay.splitlines(keepends=True):
        line_no += 1
        body = raw.rstrip("\r\n")
        if not body.strip() or is_heading_line(body):
            in_para = False
            pos += len(raw)
            continue
        if not in_para:
            para, in_para = para + 1, True
        for m in (_JA_SPLIT if ja else _EN_SPLIT).finditer(body):
            piece = m.group(0)
            lead = len(piece) - len(piece.lstrip())
            text = piece.strip()
            if len(normalize(text)) < 2:
                continue
            start = pos + m.start() + lead
            out.append(Sentence(len(out) + 1, text, start, start + len(text), line_no, para))
        pos += len(raw)
    return out


def numbered(items: list[Sentence]) -> str:
    return "\n".join(f"[{s.n}] {s.text}" for s in items)


def clip(text: str, width: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


# --- rule signals: the lowest level when a criterion's signal is in no sentence -------------

_SIGNALS: dict[str, dict[str, re.Pattern[str]]] = {
    "motivation": {
        "en": re.compile(r"\b(want|wants|hope|wish|would like|plan|aim|dream|goal|interested|because|apply)\b", re.I),
        "ja": re.compile(r"志望|したい|学びたい|なりたい|目指|興味|関心|きっかけ|ため[にで]|からです"),
    },
    "evidence": {
        "en": re.compile(r"\b(i|we)\b[^.!?]*(?<!\bis )(?<!\bam )(?<!\bare )(?<!\bbe )\b(\w{3,}ed|was|were|did|made|led|took|ran|went|began|built|wrote|"
                         r"spent|met|found|won|saw|became|got|kept|held|gave|told|set|taught|brought|"
                         r"chose|sold|drew|grew|knew|thought|felt|left|paid|put|read)\b", re.I),
        "ja": re.compile(r"(ました|でした|[たっ]た|だった|した)[」』）)]*[。！!]"),
    },
    "reflection": {
        "en": re.compile(r"\b(learn|learned|learnt)\b|\b(taught me|realis|realiz|understood|discovered|"
                         r"changed (?:my|how|the way)|showed me|made me see|lesson)", re.I),
        "ja": re.compile(r"学んだ|学んで|学びました|学び取|分かりました|わかりました|分かった|わかった|実感|痛感|知りました|知った|感じました|教わ|身につけました|気づかされ"),
    },
    "fit": {
        "en": re.compile(r"\b(?:[A-Z][a-z]+ (?:University|College|Institute)|University of [A-Z]\w+|"
                         r"(?:programme|program|course|faculty|department|major|professor|lab|seminar)s?\b)"),
        "ja": re.compile(r"貴学|貴校|[\u4e00-\u9fff\u30a0-\u30ff]{2,}大学|学部|学科|研究室|ゼミ|講義|授業|プログラム"),
    },
}
# the rubric's higher levels read from the text (see `rule_level`)
_NUMBER = re.compile(r"\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
                     r"forty|fifty|sixty|hundred)\b|[一二三四五六七八九十百千]+(?:人|軒|回|年|件|部|か月|ヶ月|週|日|時間|キロ|割)", re.I)
_ROLE = {"en": re.compile(r"\b(?:led|lead|leading|organi[sz]ed|organi[sz]ing|captain|leader|president|chair|founded|started a)\b", re.I),
         "ja": re.compile(r"部長|リーダー|代表|班長|会長|企画|主導|立ち上げ")}
_VAGUE = {"en": re.compile(r"\blearn(?:ed|t)? (?:a lot|alot|many things|much|lots)\b", re.I),
          "ja": re.compile(r"(?:多く|いろいろ|色々|様々|さまざま)(?:の|な)こと")}
_LATER = {"en": re.compile(r"\b(?:since then|so i now|now i|i now|from then on|ever since)\b", re.I),
          "ja": re.compile(r"それ以来|それ以降|今では|以来|それからは")}
_SPECIFIC = {"en": re.compile(r"\b(?:Professor|Prof\.|Dr\.) [A-Z]|\bcourse on\b|\b(?:lab|laboratory|seminar)\b"),
             "ja": re.compile(r"教授|先生の|演習|ゼミ|研究室")}
_LINK = {"en": re.compile(r"\b(?:offers?|courses?|programme|program|curriculum|modules?)\b", re.I),
         "ja": re.compile(r"学べる|学ぶことができ|授業|講義|カリキュラム")}


def rule_level(criterion: str, items: list[Sentence], lang: str, levels: list[int]) -> tuple[int, str, list[Sentence]] | None:
    """The level the text itself shows, for the criteria the rubric defines by what is written
    (a 1-4 rubric): (level, the words' key, the sentences it rests on), or None for the model.

    evidence: the sentences telling what you did — none with a number or amount: listed without
    detail (2); with numbers and a role (led, organised, 部長, 企画): 4; with numbers: 3.
    reflection: "learned many things" only: 2; a change since ("so I now", それ以来): 4; else 3.
    fit: a professor, a course on…, a lab or seminar: 4; what the programme offers: 3; the
    programme named only: 2."""
    if len(levels) != 4 or criterion not in ("evidence", "reflection", "fit"):
        return None
    told = [s for s in items if _SIGNALS[criterion][lang].search(s.text)]
    if not told:
        return None
    low, two, three, top = sorted(levels)
    if criterion == "evidence":
        numbered_ = [s for s in told if _NUMBER.search(s.text)]
        if not numbered_:
            return two, "evidence_2", told[:3]
        if any(_ROLE[lang].search(s.text) for s in items):
            return top, "evidence_4", numbered_[:3]
        return three, "evidence_3", numbered_[:3]
    if criterion == "reflection":
        later = [s for s in items if _LATER[lang].search(s.text)]
        if later:
            return top, "reflection_4", (told[:1] + [s for s in later if s not in told[:1]])[:3]
        if all(_VAGUE[lang].search(s.text) for s in told):
            return two, "reflection_2", told[:3]
        return three, "reflection_3", [s for s in told if not _VAGUE[lang].search(s.text)][:3]
    specific = [s for s in items if _SPECIFIC[lang].search(s.text)]
    if specific:
        return top, "fit_4", specific[:3]
    linked = [s for s in told if _LINK[lang].search(s.text)]
    if linked:
        return three, "fit_3", linked[:3]
    return two, "fit_2", told[:3]


_ANCHOR = {"motivation": "first", "evidence": "first", "reflection": "last", "fit": "last"}


def rule_absent(criterion: str, items: list[Sentence], lang: str) -> bool:
    """True when no sentence carries the signal a level above the lowest needs."""
    pattern = _SIGNALS.get(criterion, {}).get(lang)
    return pattern is not None and bool(items) and not any(pattern.search(s.text) for s in items)


def candidates(criterion: str, items: list[Sentence], lang: str) -> list[Sentence]:
    """The sentences carrying the criterion's signal (all of them when it has none)."""
    pattern = _SIGNALS.get(criterion, {}).get(lang)
    if pattern is None:
        return list(items)
    return [s for s in items if pattern.search(s.text)] or list(items)


_SCHOOL = re.compile(r"universit|college|school|大学|学校|進学", re.I)


def anchor(criterion: str, items: list[Sentence]) -> list[Sentence]:
    """The sentence a rule's reason points at: where the missing part belongs (for fit, the
    sentence about going to university when there is one)."""
    if not items:
        return []
    if criterion == "fit":
        about = [s for s in items if _SCHOOL.search(s.text)]
        if about:
            return about[:1]
    return [items[-1] if _ANCHOR.get(criterion) == "last" else items[0]]


def expression_rule(findings: int, levels: list[int]) -> tuple[int | None, int | None]:
    """(level decided by the rules or None, the highest level the model may give or None).

    5 or more findings: the lowest level; 3-4: the level two below the top; 1-2: at most one
    below the top; none: the model decides."""
    levels = sorted(levels)
    if findings >= 5:
        return levels[0], None
    if findings >= 3:
        return levels[max(0, len(levels) - 3)], None
    if findings:
        return None, levels[max(0, len(levels) - 2)]
    return None, None


# --- checks of a judgement ------------------------------------------------------------------

_EN_DENIAL = re.compile(
    r"^(?:the (?:essay|text|applicant|writer|student)|it|this|they|you)?\s*(?:does not|doesn't|do not|don't|"
    r"did not|fails to|lacks|has no|have no|gives no|provides no|shows no|names no|mentions no)|"
    r"^(?:there (?:is|are) no|no|none|nothing)\b|"
    r"\b(?:not provide any|no concrete|no clear|no evidence|no reflection|no reason|no episode|not mention)",
    re.I)
_JA_DENIAL = re.compile(r"(?:ない|ありません|ません|なし|無い|欠けている|欠けています|不足している|不足しています)[。.]?$")
_JA_DENIAL_START = re.compile(r"^(?:本文|この文|エッセイ|志望理由書)?(?:に|には|は)?(?:何も|具体的な[^、。]*が?ない)")


def denies(words: str, lang: str) -> bool:
    """True when a judgement says the essay has nothing for the criterion."""
    t = words.strip()
    if lang == "ja":
        first = re.split(r"[。]", t, maxsplit=1)[0]
        return bool(_JA_DENIAL.search(first) or _JA_DENIAL_START.search(first))
    return bool(_EN_DENIAL.search(t))


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def in_language(words: str, lang: str) -> bool:
    """The judgement's own words are in the essay's language (quotes are removed first)."""
    own = unquoted(words)
    letters = [ch for ch in own if ch.isalpha()]
    if not letters:
        return False
    cjk = sum(1 for ch in letters if _CJK.match(ch))
    if lang == "ja":
        return cjk * 2 >= len(letters)  # mostly Japanese; a name in Latin letters is fine
    return cjk == 0


_QUOTED = re.compile(r"『[^』]*』|「[^」]*」|\"[^\"]*\"|“[^”]*”")


def unquoted(words: str) -> str:
    return _QUOTED.sub(" ", words)


def own_sentences(words: str) -> set[str]:
    """The normalised sentences of a judgement's own words (quotes removed), for repetition."""
    parts = re.split(r"(?<=[.!?。！？])\s*", unquoted(words))
    return {n for p in parts if len(n := normalize(p)) >= 6}


def grounded(essay: str, quotes: list[Sentence]) -> bool:
    """Every quote is the essay's text at its offsets, and there is at least one."""
    return bool(quotes) and all(essay[q.start:q.end] == q.text for q in quotes)


def copies(words: str, essay: str, lang: str) -> bool:
    """True when the judgement's own words (quotes removed) copy a run of the essay: 15
    characters in Japanese, 50 in English — a copied sentence, not a judgement of it."""
    run = 15 if lang == "ja" else 50
    own = normalize(unquoted(words))
    text = normalize(essay)
    if lang == "ja":
        own, text = own.replace(" ", ""), text.replace(" ", "")
    return any(own[i:i + run] in text for i in range(0, max(0, len(own) - run + 1)))


def rubric_text(words: str, descriptions: list[str]) -> bool:
    """True when what to add is (nearly) a level's description from the rubric: most character
    trigrams shared both ways (a part of it, like "your role", is a real thing to add)."""
    mine = normalize(words).replace(" ", "")
    if len(mine) < 4:
        return False
    grams = {mine[i:i + 3] for i in range(len(mine) - 2)}
    for x in descriptions:
        d = normalize(x).replace(" ", "")
        theirs = {d[i:i + 3] for i in range(len(d) - 2)}
        if theirs and len(grams & theirs) >= 0.6 * max(len(grams), len(theirs)):
            return True
    return False
