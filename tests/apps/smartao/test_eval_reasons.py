"""EvalAgent's reasons quote the essay, in its language; a bad one is asked again once, then "could not be judged"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from duckflow.apps.smartao.ask import AgentLog
from duckflow.apps.smartao.eval_agent import EvalAgent
from duckflow.llm.scripted import ScriptedModel
from tests.apps.smartao.judges import Judge

# the student's essay of docs/smartao.md after `essay style` (one mixed-style sentence left)
JA = ("【志望動機】\n私は貴学の地域政策学科で、地方の交通について学びたいです。祖母が住む町では去年バスの本数が減り、"
      "祖母は病院に行けなくなりました。\n私はこの問題を解決したいと思う。\n\n【高校での活動】\n高校では生徒会で地域の清掃活動を"
      "企画しました、参加者は最初10人でしたが、SNSで呼びかけて40人に増えました。朝早く起きられるようになり、人を集める"
      "難しさも学びました。\n\n【将来の目標】\n将来は地域の人が移動に困らない町を作りたいです。\n")
EN = ("I want to study public health at Northfield University because of my grandmother's diabetes. "
      "For two years I helped her record her blood sugar every evening.\nI made a simple chart for her fridge. "
      "From this I learned that clear information changes what people do.\n")


def ja_answers(**override: tuple[list[int], list[dict[str, object]]]) -> dict[str, tuple[list[int], list[dict[str, object]]]]:
    answers = {
        "motivation": ([2], [{"level": 3, "shows": "祖母の通院の困難という身近な理由がある", "missing": "将来の目標とのつながり"}]),
        "evidence": ([4], [{"level": 3, "shows": "清掃活動を企画し参加者を増やした", "missing": "あなた自身が何を工夫したか"}]),
        "reflection": ([5], [{"level": 3, "shows": "人を集める難しさを学んだと書いている", "missing": "その学びをどう生かしたか"}]),
        "fit": ([1], [{"level": 2, "shows": "学科の名前だけが挙がっている", "missing": "学科のどの授業で何を学ぶか"}]),
        "expression": ([1, 3], [{"level": 4, "shows": "見出しで三つに分かれ読みやすい", "missing": ""}]),
    }
    answers.update(override)
    return answers


async def test_every_reason_quotes_the_essay_with_its_line_in_japanese_and_to_next_is_a_change_to_it() -> None:
    judge = Judge(ja_answers())
    ev = await EvalAgent(ScriptedModel(judge.steps())).run(JA, session="s", log=AgentLog())
    by = {s["criterion"]: s for s in ev.scores}
    assert ev.language == "ja" and ev.judged == 5
    # the model judged motivation from the sentences carrying its signal (the rules picked them)
    assert by["motivation"]["by"] == "model" and [q["line"] for q in by["motivation"]["quotes"]] == [2, 3]
    assert by["motivation"]["reason"] == ("2行目「私は貴学の地域政策学科で、地方の交通について学びたいです。」、3行目「私はこの問題を解決したいと思う。」"
                                          " — 祖母の通院の困難という身近な理由がある。足りないもの: 将来の目標とのつながり。")
    assert by["motivation"]["to_next"] == "第1段落の「私はこの問題を解決したいと思う。」の後に、将来の目標とのつながりを一文加える"
    # the rules read evidence (numbers and 企画: actions, results, role), reflection and fit from the text
    assert (by["evidence"]["by"], by["evidence"]["level"], by["evidence"]["quotes"][0]["line"]) == ("rules", 4, 6)
    assert by["reflection"]["level"] == 3 and by["reflection"]["to_next"] == (
        "第2段落の「朝早く起きられるようになり、人を集める難しさも学びました。」の後に、その学びで、その後の行動がどう変わったかを一文加える")
    assert by["fit"]["level"] == 2 and by["fit"]["quotes"][0]["text"] == "私は貴学の地域政策学科で、地方の交通について学びたいです。"
    for s in ev.scores:  # each quote is the essay's own text on the line it names
        for q in s["quotes"]:
            assert q["text"] in JA.splitlines()[q["line"] - 1]
    # one mixed-style sentence: the rules cap expression one below the top, and say what to fix
    assert by["expression"]["level"] == 3 and by["expression"]["to_next"].startswith("`duckflow essay style` が示す 1 件")
    assert "Criterion" not in judge.prompts[0] and "観点: 志望動機の明確さ" in judge.prompts[0]
    assert judge.asked == {"motivation": 1, "expression": 1}


async def test_a_none_reason_under_a_high_level_is_asked_again_then_could_not_be_judged() -> None:
    denial = {"level": 3, "shows": "志望する理由が書かれていません", "missing": "志望する理由"}
    judge = Judge(ja_answers(motivation=([2], [denial])))
    model = ScriptedModel(judge.steps())
    ev = await EvalAgent(model).run(JA, session="s", log=AgentLog())
    motivation = ev.scores[0]
    assert judge.asked["motivation"] == 2   # asked once more, never filled in
    assert motivation["level"] is None and not motivation["judged"] and motivation["to_next"] == ""
    assert motivation["reason"] == "判定できませんでした: レベル 3/4 なのに「ない」と述べています"
    assert any("レベル 3/4 なのに「ない」と述べています" in p for p in judge.prompts)
    assert ev.judged == 4 and ev.total == pytest.approx(100 * (0.25 * 4 / 4 + 0.2 * 3 / 4 + 0.15 * 2 / 4 + 0.15 * 3 / 4) / 0.75)


async def test_the_reask_is_enough_when_the_second_answer_is_sound() -> None:
    denial = {"level": 3, "shows": "志望する理由が書かれていません", "missing": "志望する理由"}
    fixed = {"level": 3, "shows": "祖母が通院できなくなったことが理由", "missing": "将来の目標"}
    ev = await EvalAgent(ScriptedModel(Judge(ja_answers(motivation=([2], [denial, fixed]))).steps())).run(
        JA, session="s", log=AgentLog())
    assert ev.scores[0]["level"] == 3 and ev.judged == 5


async def test_a_sentence_repeated_from_another_criterion_is_caught_even_when_it_is_not_the_first() -> None:
    same = "具体的な場面が一つ書かれている。"
    judge = Judge(ja_answers(
        motivation=([2], [{"level": 3, "shows": "祖母の通院が理由。" + same, "missing": "将来の目標"}]),
        expression=([3], [{"level": 3, "shows": "見出しで分かれている。" + same, "missing": "文体の統一"}])))
    ev = await EvalAgent(ScriptedModel(judge.steps())).run(JA, session="s", log=AgentLog())
    by = {s["criterion"]: s for s in ev.scores}
    assert by["motivation"]["judged"] and by["expression"]["reason"] == \
        "判定できませんでした: motivation の観点と同じ言葉を繰り返しています"


async def test_a_reason_in_the_wrong_language_is_not_shown() -> None:
    judge = Judge(ja_answers(motivation=([2], [{"level": 3, "shows": "The essay names a personal reason",
                                                "missing": "a goal"}])))
    ev = await EvalAgent(ScriptedModel(judge.steps())).run(JA, session="s", log=AgentLog())
    assert ev.scores[0]["reason"] == "判定できませんでした: 日本語で書かれていません" and judge.asked["motivation"] == 2


async def test_evidence_that_quotes_nothing_of_the_essay_is_not_shown() -> None:
    wishes = ("I want to be a teacher. I hope to help children read. I plan to work in my town. "
              "I would like to study education at Eastfield University. Last year I taught my brother to read.")
    judge = Judge({"motivation": ([99], [{"level": 3, "shows": "Several wishes are named.", "missing": "why"}]),
                   "evidence": ([5], [{"level": 3, "shows": "One episode of teaching.", "missing": "what changed"}]),
                   "reflection": ([5], [{"level": 2, "shows": "Nothing learnt is named.", "missing": "a lesson"}]),
                   "fit": ([4], [{"level": 2, "shows": "The university is named.", "missing": "a course"}]),
                   "expression": ([1], [{"level": 3, "shows": "Short clear sentences.", "missing": "paragraphs"}])})
    ev = await EvalAgent(ScriptedModel(judge.steps())).run(wishes, session="s", log=AgentLog())
    assert ev.scores[0]["reason"] == "could not be judged: it quotes no sentence of the essay"
    assert judge.asked["motivation"] == 0   # sentence 99 is not the essay's: the level is never asked


async def test_english_essay_english_words_and_rules_decide_what_they_can() -> None:
    story = "I want to become a nurse because care matters. I will study hard at Northfield University's nursing programme."
    judge = Judge({"motivation": ([1], [{"level": 2, "shows": "A reason is stated but stays general.",
                                         "missing": "the moment you decided this"}]),
                   "fit": ([2], [{"level": 2, "shows": "The programme is named.", "missing": "which course you want"}]),
                   "expression": ([1], [{"level": 3, "shows": "Two clear sentences.", "missing": "a paragraph per idea"}])})
    ev = await EvalAgent(ScriptedModel(judge.steps())).run(story, session="s", log=AgentLog())
    by = {s["criterion"]: s for s in ev.scores}
    assert ev.language == "en"
    assert by["evidence"]["by"] == "rules" and by["evidence"]["level"] == 1 and judge.asked["evidence"] == 0
    assert by["evidence"]["reason"] == ('line 1: "I want to become a nurse because care matters." — no sentence tells something you did. '
                                         "Missing: one thing you did yourself, and what came of it.")
    assert by["reflection"]["by"] == "rules" and by["reflection"]["level"] == 1
    assert by["fit"]["by"] == "rules" and by["fit"]["level"] == 3   # the programme is linked to the goal
    assert by["fit"]["to_next"] == ('In paragraph 1, after "I will study hard at Northfield Univers…", add a sentence '
                                    "with a named course, teacher or resource and how you would use it.")
    assert judge.asked == {"motivation": 1, "expression": 1}


async def test_whole_mode_asks_once_and_checks_each_criterion_the_same_way() -> None:
    denial = {"level": 4, "shows": "The essay does not provide any concrete evidence.", "missing": ""}
    judge = Judge({"motivation": ([1], [{"level": 3, "shows": "A personal reason is given.", "missing": "a future goal"}]),
                   "evidence": ([2], [denial]),
                   "reflection": ([4], [{"level": 3, "shows": "What was learnt is named.", "missing": "a later action"}]),
                   "fit": ([1], [{"level": 2, "shows": "The university is named.", "missing": "a course"}]),
                   "expression": ([3], [{"level": 4, "shows": "Clear and short.", "missing": ""}])})
    model = ScriptedModel(judge.steps())
    ev = await EvalAgent(model, mode="whole").run(EN, session="s", log=AgentLog())
    by = {s["criterion"]: s for s in ev.scores}
    assert len(model.requests) == 2 and ev.mode == "whole"   # one question, one re-ask
    assert by["evidence"]["level"] is None and by["motivation"]["level"] == 3
    assert by["motivation"]["reason"].startswith('line 1: "I want to study public health at Northfield')


async def test_progress_says_which_criterion_and_about_how_long_is_left() -> None:
    said: list[str] = []
    await EvalAgent(ScriptedModel(Judge(ja_answers()).steps())).run(JA, session="s", log=AgentLog(progress=said.append))
    assert said[:4] == ["観点 1/5（motivation）…", "観点 2/5（evidence）…", "観点 3/5（reflection）…", "観点 4/5（fit）…"]
    assert re.fullmatch(r"観点 5/5（expression）— 残り約\d+秒", said[4])   # after the first question is timed


def test_language_is_read_from_the_text() -> None:
    from duckflow.apps.smartao.text import language

    assert language(JA) == "ja" and language(EN) == "en"
    assert language("My dream is to work in 東京.") == "en"


async def test_the_drafts_explanations_follow_the_essays_language() -> None:
    from duckflow.apps.smartao.draft import DraftAgent
    from duckflow.llm.scripted import reply

    essay = "【志望動機】\n私は公衆衛生を学びたいです。祖母から記録の大切さを学びました。\n\n【活動】\n"
    result = await DraftAgent(ScriptedModel([reply('{"body": "短い"}')])).run(essay, session="s", log=AgentLog())
    assert [u["reason"] for u in result.unchanged] == [
        "新しい本文が元より短くなっています（2 < 31 文字）。元の文章のままにしています", "この節には深める本文がありません"]


def test_the_commands_own_words_follow_the_essays_language(tmp_path: Path) -> None:
    from tests.apps.smartao.test_essay_cli import duckflow

    essay = tmp_path / "essay.md"
    essay.write_text(JA.replace("起きられる", "起きれる"), encoding="utf-8")
    proc = duckflow("essay", "style", str(essay))
    assert proc.returncode == 0, proc.stderr
    assert "修正: 1 件（-4 +5 文字）" in proc.stdout and "書き出し先: " in proc.stdout


def test_the_estimate_leaves_out_the_first_question_once_a_second_is_timed() -> None:
    from duckflow.apps.smartao.judge import Estimate

    est = Estimate(6)
    assert est.left() is None
    est.timed(100.0)  # loading the model, then the first question
    assert est.left() == 500
    est.timed(10.0)
    assert est.left() == 40


async def test_a_copied_sentence_or_the_rubrics_words_are_not_a_judgement() -> None:
    copied = {"level": 3, "shows": "この文は、祖母が住む町では去年バスの本数が減り、祖母は病院に行けなくなりました。",
              "missing": "将来の目標"}
    rubric = {"level": 2, "shows": "文体が混ざっている", "missing": "明快で流れがよく誤りがない"}
    judge = Judge(ja_answers(motivation=([2], [copied]), expression=([3], [rubric])))
    ev = await EvalAgent(ScriptedModel(judge.steps())).run(JA, session="s", log=AgentLog())
    by = {s["criterion"]: s for s in ev.scores}
    assert by["motivation"]["reason"] == "判定できませんでした: 本文を写しているだけで評価になっていません"
    assert by["expression"]["reason"].startswith("判定できませんでした: 加えることがルーブリックの言葉のままです")
    assert judge.asked["motivation"] == judge.asked["expression"] == 2


async def test_what_to_add_that_only_says_what_is_there_again_is_not_shown() -> None:
    same = {"level": 3, "shows": "この文は具体的な経験を提供しています", "missing": "この文は具体的な経験を提供しています"}
    ev = await EvalAgent(ScriptedModel(Judge(ja_answers(motivation=([2], [same]))).steps())).run(
        JA, session="s", log=AgentLog())
    assert ev.scores[0]["reason"] == "判定できませんでした: 本文に何を加えるべきかを述べていません"


async def test_the_questions_own_words_given_back_are_not_an_answer() -> None:
    echo = {"level": 3, "shows": "これらの文から分かること（本文を写さず、自分の言葉で20字程度）",
            "missing": "この本文に加えるべき内容（15字程度の名詞句）"}
    ev = await EvalAgent(ScriptedModel(Judge(ja_answers(motivation=([2], [echo]))).steps())).run(
        JA, session="s", log=AgentLog())
    assert ev.scores[0]["reason"] == "判定できませんでした: 質問の文をそのまま返しています"
