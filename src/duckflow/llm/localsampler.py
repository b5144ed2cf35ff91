"""A grammar checked on the chosen token, not on the whole vocabulary: constrained decoding at the free rate.

llama-cpp-python 0.3.36 puts the grammar sampler first in its chain (`Llama._init_sampler`),
so every token runs the grammar over all 151,936 candidates of Qwen2.5's vocabulary before
top-k cuts them to 40: the 1.5B model decoded 1.14-1.17× slower with the single-call grammar
than without (issue 33). llama.cpp's own sampler (`common/sampling.cpp`, `common_sampler_sample`)
does it the other way round, and so does this: the chain without the grammar picks a token, the
grammar checks that one token; only when it is refused are the candidates rebuilt from the
logits, the grammar applied to all of them and the chain run again. Both the chain and the
grammar then accept the token. At the low temperatures used here the reply is the one the
grammar-first order picks (greedy: the same argmax of the allowed tokens); the saving is the
full-vocabulary grammar pass on every token the model already writes in the protocol.

`install(llm)` makes a loaded `Llama` build this sampler whenever a call has a grammar.
`duckflow bench decode` measures the grammar's cost against free decoding.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any


class GrammarLast:
    """Stands in for llama-cpp-python's `LlamaSampler` (`sample`, `close`) when a call has a grammar."""

    def __init__(self, chain: Any, model: Any, grammar: Any, n_vocab: int) -> None:
        import llama_cpp
        import numpy as np

        self._lib = llama_cpp
        self.chain = chain  # the call's sampler chain, built without the grammar
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        if not self.grammar:
            raise ValueError("llama.cpp could not build the grammar")
        self.n_vocab = n_vocab
        self.buf = (llama_cpp.llama_token_data * n_vocab)()
        self.view = np.ctypeslib.as_array(self.buf)
        self.ids = np.arange(n_vocab, dtype=self.view["id"].dtype)
        self.one = (llama_cpp.llama_token_data * 1)()
        self.refused = 0  # tokens the grammar refused, for the bench

    def _candidates(self, ctx: Any, idx: int) -> Any:
        import numpy as np

        logits = self._lib.llama_get_logits_ith(ctx.ctx, idx)
        self.view["id"] = self.ids
        self.view["logit"] = np.ctypeslib.as_array(logits, shape=(self.n_vocab,))
        self.view["p"] = 0.0
        return self._lib.llama_token_data_array(data=self.buf, size=self.n_vocab, selected=-1, sorted=False)

    def _pick(self, cur: Any) -> int:
        self._lib.llama_sampler_apply(self.chain.sampler, ctypes.byref(cur))
        if not 0 <= cur.selected < cur.size:
            raise RuntimeError("the sampler chain chose no token")
        return int(cur.data[cur.selected].id)

    def allowed(self, token: int) -> bool:
        self.one[0] = self._lib.llama_token_data(token, 0.0, 0.0)
        single = self._lib.llama_token_data_array(data=self.one, size=1, selected=-1, sorted=False)
        self._lib.llama_sampler_apply(self.grammar, ctypes.byref(single))
        return not math.isinf(self.one[0].logit)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        token = self._pick(self._candidates(ctx, idx))
        if not self.allowed(token):
            self.refused += 1
            cur = self._candidates(ctx, idx)
            self._lib.llama_sampler_apply(self.grammar, ctypes.byref(cur))
            token = self._pick(cur)
        self._lib.llama_sampler_accept(self.grammar, token)
        self._lib.llama_sampler_accept(self.chain.sampler, token)
        return token

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self.grammar, token)
        self._lib.llama_sampler_accept(self.chain.sampler, token)

    def reset(self) -> None:
        self._lib.llama_sampler_reset(self.grammar)
        self._lib.llama_sampler_reset(self.chain.sampler)

    def close(self) -> None:
        if self.grammar:
            self._lib.llama_sampler_free(self.grammar)
            self.grammar = None
        self.chain.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit llama_cpp may be gone
            pass


def install(llm: Any) -> None:
    """Make `llm` (a llama_cpp.Llama) check a call's grammar on the chosen token (see the module text)."""
    original = llm._init_sampler

    def init_sampler(*args: Any, grammar: Any = None, **kwargs: Any) -> Any:
        chain = original(*args, grammar=None, **kwargs)
        if grammar is None:
            return chain
        return GrammarLast(chain, llm._model, grammar, llm._n_vocab)

    llm._init_sampler = init_sampler
