"""The grammar checked on the chosen token (`llm/localsampler.py`) against llama.cpp's own grammar-first order.

At temperature 0 both orders pick the argmax of the tokens the grammar allows, so the replies
must be the same; a grammar the model would never follow on its own makes the chosen token be
refused on most steps, and the reply still follows the grammar exactly."""

from __future__ import annotations

import re

import pytest

from duckflow.llm.constrain import constrained
from duckflow.llm.local import LocalModel
from duckflow.llm.localmodels import resolve_local
from duckflow.llm.types import Message, complete
from duckflow.protocols.grammar import SymOpsGrammarSpec, symops_grammar
from tests.local.conftest import needs_llama

pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(900)]

MSGS = [Message("system", "Reply in Sym-Ops."), Message("user", "Create hi.py that prints hi, then run it.")]


async def _text(model: LocalModel, grammar: str, grammar_first: bool) -> str:
    import llama_cpp

    llm = model.llama
    installed = llm._init_sampler
    if grammar_first:  # llama-cpp-python's own chain: the grammar over the whole vocabulary first
        llm._init_sampler = llama_cpp.Llama._init_sampler.__get__(llm)
    try:
        resp = await complete(model, MSGS, settings=constrained(model, max_tokens=120, grammar=grammar,
                                                                temperature=0.0))
    finally:
        llm._init_sampler = installed
    return resp.text


async def test_the_reply_is_the_one_the_grammar_first_order_writes() -> None:
    model = LocalModel(resolve_local("smollm2", allow_pip=False), n_ctx=2048, n_threads=2)
    grammar = symops_grammar(SymOpsGrammarSpec(verbs=("create", "run"), create_paths=["hi.py"],
                                               commands=["python3 hi.py"], new_names=False,
                                               max_block_lines=6, thought_chars=60))
    ours = await _text(model, grammar, grammar_first=False)
    assert ours == await _text(model, grammar, grammar_first=True)
    assert ours.startswith("~ ") and ours.rstrip().splitlines()[-1] in ("~ next: DONE", "~ next: CONTINUE")


async def test_a_grammar_the_model_would_not_write_is_still_followed() -> None:
    model = LocalModel(resolve_local("smollm2", allow_pip=False), n_ctx=2048, n_threads=2)
    grammar = 'root ::= "QZX-" [0-9] [0-9] [0-9] "-" ( "alpha" | "omega" ) "\\n"'
    text = await _text(model, grammar, grammar_first=False)
    assert re.fullmatch(r"QZX-\d{3}-(alpha|omega)\n", text), text
    assert text == await _text(model, grammar, grammar_first=True)
