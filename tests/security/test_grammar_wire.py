"""The `grammar` of a single-call step on the wire: sent to a server on this machine, never to a
cloud provider. A grammar holds what the step may write — the task's paths, the commands and
every line of a file an edit may change — and the sanitizer masks messages, not settings: the
settings of a FallbackModel are made for its first (local) model, so a cloud fallback used to
receive the local primary's grammar with a file's secret in clear.

Real HTTP servers on 127.0.0.1 speaking the OpenAI wire format: one is the local llama.cpp-style
primary, the other is declared a cloud provider (`is_local=False`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from duckflow.companion.factory import open_session
from duckflow.companion.store import SessionStore
from duckflow.gate import Gate
from duckflow.llm.openai_compat import OpenAICompatModel
from duckflow.llm.retry import FallbackModel, RetryPolicy
from duckflow.llm.types import ModelSettings
from tests.helpers.companion import env  # noqa: F401
from tests.helpers.fakeserver import FakeServer, Reply, json_reply, openai_stream
from tests.helpers.fixtures import server  # noqa: F401

PATH = "/v1/chat/completions"
SECRET = "sk-proj-" + "Q7vX2mN9pL4kR8sT1wY6zA3bC5dE0fG" + "hJ2kL4mN6pQ8rS0tU"
STEP = ("~ edit calc.py\n#c0.9 #m0.8 #f0.9 #s0.9\n$ edit @ calc.py\n---\n<<<<<<< SEARCH\n"
        "    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n---\n~ next: DONE\n")


async def test_a_cloud_fallback_never_receives_the_local_grammar_with_file_text(env: Any) -> None:  # noqa: F811
    local, cloud = await FakeServer().start(), await FakeServer().start()
    try:
        local.default(PATH, json_reply({"error": {"message": "overloaded"}}, status=503))
        cloud.queue(PATH, Reply(chunks=openai_stream([STEP])))
        (env.root / "calc.py").write_text(f'API_KEY = "{SECRET}"\n\n\ndef add(a, b):\n    return a - b\n')
        primary = OpenAICompatModel("qwen-local", base_url=f"{local.url}/v1")
        remote = OpenAICompatModel("gpt-cloud", base_url=f"{cloud.url}/v1", api_key="sk-test",
                                   is_local=False)
        assert primary.is_local and not remote.is_local

        async def no_wait(_s: float) -> None:
            await asyncio.sleep(0)

        model = FallbackModel([primary, remote], policy=RetryPolicy(retries=0), sleep=no_wait)
        o = open_session(env.root, model=model, store=SessionStore(env.home / "sessions.db"),
                         gate=Gate(env.home / "gate.db"), codec="symops", mode="single-call")
        env.opened.append(o)
        await o.session.handle_message("Fix add in calc.py")
        sent_local = local.bodies(PATH)
        assert sent_local and "grammar" in sent_local[0]  # the local server got its grammar
        assert SECRET in sent_local[0]["grammar"]  # (the file's lines are in it)
        raw = b"".join(r.body for r in cloud.requests)
        body = cloud.bodies(PATH)[0]
        assert "grammar" not in body and "response_format" not in body
        assert SECRET.encode() not in raw  # the messages were masked, and nothing else carries it
    finally:
        await local.close()
        await cloud.close()


async def test_a_cloud_model_gets_no_local_constraint_keys_but_keeps_its_own(server: FakeServer) -> None:  # noqa: F811
    server.queue(PATH, Reply(chunks=openai_stream(["ok"])), Reply(chunks=openai_stream(["ok"])))
    cloud = OpenAICompatModel("gpt-cloud", base_url=f"{server.url}/v1", api_key="sk-test", is_local=False)
    llama = {"grammar": f'root ::= "{SECRET}"', "json_schema": {"enum": [SECRET]}, "seed": 0,
             "response_format": {"type": "json_object", "schema": {"enum": [SECRET]}}, "format": {}}
    async for _ in cloud.stream([], settings=ModelSettings(max_tokens=5, extra=llama)):
        pass
    own = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    async for _ in cloud.stream([], settings=ModelSettings(extra={"response_format": own})):
        pass
    first, second = server.bodies(PATH)
    assert SECRET not in str(first) and first["seed"] == 0 and first["max_tokens"] == 5
    assert not {"grammar", "json_schema", "response_format", "format"} & set(first)
    assert second["response_format"] == own  # OpenAI's structured output is the caller's to send
