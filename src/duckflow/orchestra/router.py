"""Seed 003's router: explicit command → rule dictionary → classifier (≤1 call) → CHAT, plus session policy.

`MessageRouter.decide(InputMessage, SessionFlags)` returns a `RoutingDecision`. On top of the
general `duckflow.routing` parts it applies seed 003's policy:

- commands `/code /code1 /code2 /code3 /analyze /plan /ops /research /chat` and the mode
  commands `/local` (local_only on) and `/cloud` (off) count only at the start of a line;
- a CODE route while local_only is refused here (CHAT answers with how to lift it, §2.2, §5);
- LINE input always starts at CHAT (`line_forced_chat`, §2.6); Chat delegates with DELEGATE:;
- the classifier runs only when `routing.classifier.model` is set; a cloud one only when CHAT is
  in `routing.cloud_routes` (it sees every message first) and never while local_only; CODE from
  the classifier needs ≥ 0.8 and evidence quoted from a message
  that carries code vocabulary (§2.4);
- the declaration line (§8) is set when the route changes and is never set for CHAT;
- a coding task sticks: while one is under way (`SessionFlags.coding == "open"`) every message
  that names no route command stays CODE (a follow-up: "yes", "call it X instead", an answer);
  right after it ended ("ended") a message that goes on with it ("now add a test") stays CODE
  unless the rules or the classifier route it elsewhere; anything else leaves it;
- a task (`duckflow run "TASK"`, `decide(..., task=True)`) is coding by nature: CODE is not
  declared for it (another route is); the orchestrator lets it fall back to CODE (`fallback=`).
"""

from __future__ import annotations

import asyncio
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duckflow.errors import ConfigError
from duckflow.orchestra.contracts import InputMessage, RouteFlags, RoutingDecision
from duckflow.orchestra.settings import CODE_ROUTES, RoutingConfig
from duckflow.routing.rules import RuleRouter

if TYPE_CHECKING:
    from duckflow.llm.types import Model

OnEvent = Callable[[str, dict[str, Any]], None]

ROUTE_COMMANDS = {"code": "CODE", "code1": "CODE1", "code2": "CODE2", "code3": "CODE3", "analyze": "ANALYZE",
                  "plan": "PLAN", "ops": "OPS", "research": "RESEARCH", "chat": "CHAT"}
MODE_COMMANDS = ("local", "cloud")
_LINE_COMMAND = re.compile(r"^[ \t\u3000]*[/／]([A-Za-z][A-Za-z0-9]*)(?=\s|$)[ \t\u3000]*")  # ／: Japanese IME

LIFT_LOCAL = "Local-only mode is on, so CODE (a cloud Coder) is not called. Send /cloud to lift it, then ask again."
DECLARATIONS = {
    "en": {"PLAN": "Planning this step by step.", "ANALYZE": "Analysing this.", "OPS": "Handling this as operations.",
           "RESEARCH": "Researching this.", "CODE": "Switching to coding.", "CODE1": "Switching to coding (Coder1).",
           "CODE2": "Switching to coding (Coder2).", "CODE3": "Switching to careful coding (Coder3)."},
    "ja": {"PLAN": "段取りを組むね。", "ANALYZE": "整理して分析するね。", "OPS": "手順で案内するね。",
           "RESEARCH": "調べてまとめるね。", "CODE": "コーディングするね。", "CODE1": "コーディングするね。",
           "CODE2": "コーディングするね。", "CODE3": "高品質なコードを作るね。"},
}

# words that show a message is about code; the classifier's CODE needs one (plus quoted evidence)
_CODE_VOCAB = re.compile(
    r"\b(code|coding|function|method|class|bug|compile|refactor|implement|script|program|test|tests|api|"
    r"endpoint|library|module|variable|python|javascript|typescript|golang|rust|java|sql|regex|repo|"
    r"repository|commit|diff|patch|exception|error)\b|コード|関数|バグ|実装|リファクタ|スクリプト|プログラム|テスト|"
    r"例外|エラー|クラス|メソッド", re.I)


# how a message that goes on with what was just coded starts ("now add a test", "yes", "call it X instead")
_GOES_ON = re.compile(
    r"^\W*(now|also|and|then|next|yes|yeah|yep|ok|okay|sure|go ahead|do it|no|nope|not|instead|but|actually|"
    r"please|make|call|name|rename|add|change|remove|delete|drop|fix|use|try|put|move|keep|undo|revert|same|again|"
    r"one more|another|it|that|this|too|also|can you also|could you also|what about|how about)\b"
    r"|^\W*(はい|うん|じゃあ|では|次は|次に|あと|それと|それから|さらに|やっぱり|いや|名前を|テストも|それも|これも)", re.I)


def goes_on(text: str) -> bool:
    """Whether a message reads as going on with the work just done, not a new subject."""
    return bool(_GOES_ON.search(text.strip()))


def declaration_for(prev_route: str | None, route: str, language: str = "en") -> str:
    """§8: one line when the route changes; none for CHAT."""
    if route == "CHAT" or route == (prev_route or "CHAT"):
        return ""
    return DECLARATIONS.get(language, DECLARATIONS["en"]).get(route, "")


def strong_code_evidence(text: str, evidence: list[str]) -> bool:
    """The classifier's CODE evidence must be quoted from the message, and the message must be about code."""
    lowered = text.lower()
    quoted = [e for e in evidence if e.strip() and e.strip().lower() in lowered]
    return bool(quoted) and bool(_CODE_VOCAB.search(text))


CODING_STATES = ("", "open", "ended")  # SessionFlags.coding: no coding task / one under way / one just ended
STICKY = "follow-up:coding-task"  # the evidence of a route kept for a coding task


@dataclass
class SessionFlags:
    """What the router remembers per session: local_only, the previous route (seed 003 §13.1) and
    whether a coding task is under way ("open"), just ended ("ended") or not there ("")."""

    local_only: bool = False
    prev_route: str = "CHAT"
    coding: str = ""


@dataclass
class ParsedCommands:
    route_word: str | None
    modes: list[str]
    text: str


def parse_commands(text: str) -> ParsedCommands:
    """Commands at the start of a line (§2.2): the first route command decides; /local and /cloud apply in order."""
    route_word: str | None = None
    modes: list[str] = []
    kept: list[str] = []
    for line in text.splitlines():
        m = _LINE_COMMAND.match(line)
        word = m.group(1).lower() if m else ""
        if m and (word in MODE_COMMANDS or (word in ROUTE_COMMANDS and route_word is None)):
            if word in MODE_COMMANDS:
                modes.append(word)
            else:
                route_word = word
            line = line[m.end():]
            m2 = _LINE_COMMAND.match(line)  # "/local /plan ..." on one line
            while m2 and (m2.group(1).lower() in MODE_COMMANDS or
                          (m2.group(1).lower() in ROUTE_COMMANDS and route_word is None)):
                w2 = m2.group(1).lower()
                if w2 in MODE_COMMANDS:
                    modes.append(w2)
                else:
                    route_word = w2
                line = line[m2.end():]
                m2 = _LINE_COMMAND.match(line)
        kept.append(line)
    return ParsedCommands(route_word, modes, "\n".join(kept).strip())


def load_rules(path: str | Path | None = None) -> RuleRouter:
    """The rule dictionary: `path` (routing.rules_file) or the one shipped in orchestra/data/.

    The built-in dictionary is parsed and compiled once per process (a router per message is cheap).
    """
    if path is None:
        return _builtin_rules()
    return _load_rules(path)


@lru_cache(maxsize=1)
def _builtin_rules() -> RuleRouter:
    return _load_rules(None)


def _load_rules(path: str | Path | None) -> RuleRouter:
    try:
        if path is None:
            data = tomllib.loads(resources.files("duckflow.orchestra").joinpath("data/route_rules.toml")
                                 .read_text(encoding="utf-8"))
        else:
            from duckflow.safe_read import UnsafeFile, read_regular

            try:  # a regular file only (a FIFO or device must not hang the router)
                data = tomllib.loads(read_regular(Path(path).expanduser()).decode("utf-8"))
            except (UnsafeFile, UnicodeDecodeError) as exc:
                raise ConfigError(f"routing.rules_file {path}: {exc}", hint="point it at a TOML file") from None
    except FileNotFoundError as exc:
        raise ConfigError(f"routing.rules_file {path} does not exist", hint="fix the path or remove the key") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"rule dictionary {path or '(built-in)'}: not valid TOML ({exc})", hint="fix the file") from exc
    rules = data.get("rule", [])
    if not isinstance(rules, list):
        raise ConfigError(f"rule dictionary {path or 'built-in'}: [[rule]] entries expected")
    return RuleRouter.from_dicts(rules, lazy=path is None)  # the shipped file: compiled as tried


class MessageRouter:
    """Seed 003's routing policy around `duckflow.routing` (see the module docstring)."""

    def __init__(
        self,
        routing: RoutingConfig | None = None,
        *,
        classifier_model: Model | None = None,
        rules: RuleRouter | None = None,
        language: str = "en",
        on_event: OnEvent | None = None,
    ) -> None:
        self.config = routing or RoutingConfig()
        self.rules = rules if rules is not None else load_rules(self.config.rules_file)
        self.classifier_model = classifier_model
        self.language = language
        self.on_event = on_event
        self.classifier_calls = 0

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(kind, data)

    def _classifier(self, local_only: bool) -> Any:
        from duckflow.routing.classifier import LLMRouter
        from duckflow.routing.route import Route

        model = self.classifier_model
        if model is None or not self.config.classifier.enabled:
            return None
        if not self._classifier_allowed(local_only):
            return None  # §7: a cloud classifier would send messages that are not coding to the cloud
        cfg = self.config.classifier
        routes = [
            Route("CHAT", "conversation: explanations, advice, small talk, summaries"),
            Route("PLAN", "planning: steps, specifications, breaking work into tasks"),
            Route("ANALYZE", "data work: extracting, structuring, aggregating, analysing data"),
            Route("OPS", "operations: runbooks, incident response, checking settings of running systems"),
            Route("RESEARCH", "research: investigating, checking sources, latest information"),
            Route("CODE", "writing or changing code", min_confidence=cfg.min_confidence_for_code,
                  needs_evidence=True, evidence_check=strong_code_evidence),
        ]
        return LLMRouter(model, routes, min_confidence=cfg.min_confidence, fallback_route="CHAT",
                         on_event=self._emit)

    def _classifier_allowed(self, local_only: bool) -> bool:
        """A cloud classifier sees every message before its route is known: it is asked only when
        conversation may go to the cloud too (CHAT in routing.cloud_routes), never while local_only."""
        if getattr(self.classifier_model, "is_local", True):
            return True
        return not local_only and "CHAT" in self.config.cloud_routes

    async def decide(self, msg: InputMessage, flags: SessionFlags | None = None, *, task: bool = False,
                     fallback: str | None = None) -> RoutingDecision:
        """The route of one message; `flags` (the session's) is updated in place. `task`: the message
        is a task to carry out (`duckflow run`): coding by nature, so CODE is not declared (another
        route is); `fallback`: the route when nothing decides (default `routing.fallback_route`)."""
        flags = flags if flags is not None else SessionFlags()
        decision = await self._decide(msg, flags, fallback=fallback)
        decision.declaration = declaration_for("CODE" if task else flags.prev_route, decision.primary_route,
                                               self.language)
        flags.local_only = decision.flags.local_only
        if not decision.refused:
            flags.prev_route = decision.primary_route
        only_mode = bool(decision.notice) and not decision.text.strip()  # /local, /cloud: no subject
        if not decision.refused and not only_mode and msg.channel != "line":
            if decision.primary_route in CODE_ROUTES:
                flags.coding = "open"  # the conversation says when it ends (Orchestrator.coding)
            elif decision.source != "fallback" or flags.coding == "ended":
                flags.coding = ""  # another subject: a route command, a rule, the classifier, or no follow-up
        self._emit("router.decision", {"session_id": msg.session_id, "channel": msg.channel,
                                       "initial_route": decision.primary_route, **decision.public(),
                                       "classifier_route": decision.classifier_route,
                                       "classifier_confidence": decision.classifier_confidence,
                                       "error_reason": decision.error_reason})
        return decision

    async def _decide(self, msg: InputMessage, flags: SessionFlags, *, fallback: str | None = None
                      ) -> RoutingDecision:
        parsed = parse_commands(msg.user_text)
        local_only = flags.local_only
        for mode in parsed.modes:
            local_only = mode == "local"
        mode_flags = RouteFlags(local_only=local_only)
        notice = ""
        if parsed.modes and not parsed.text:  # only a mode switch: the router answers it
            notice = ("Local-only mode on: no cloud model is called until you send /cloud." if local_only
                      else "Local-only mode off: cloud models may be used for coding again.")
        base: dict[str, Any] = {"flags": mode_flags, "text": parsed.text, "notice": notice}

        if msg.channel == "line":
            return RoutingDecision(primary_route="CHAT", source="rules", confidence=1.0,
                                   reason="LINE input always starts at CHAT (line_forced_chat); Chat delegates",
                                   evidence=["channel:line", "line_forced_chat"], **base)
        if parsed.route_word is not None:
            route = ROUTE_COMMANDS[parsed.route_word]
            evidence = [f"command:/{parsed.route_word}"]
            if route in CODE_ROUTES and local_only:
                return self._refuse(route, "command", evidence, base)
            return RoutingDecision(primary_route=route, source="command", confidence=1.0,
                                   reason=f"explicit command /{parsed.route_word}", evidence=evidence, **base)
        if parsed.modes and not parsed.text:
            return RoutingDecision(primary_route=flags.prev_route if flags.prev_route else "CHAT", source="command",
                                   confidence=1.0, reason=f"explicit command /{parsed.modes[-1]}: {notice}",
                                   evidence=[f"command:/{m}" for m in parsed.modes], **base)

        text = parsed.text
        if flags.coding == "open" and not local_only:  # a follow-up of the coding task under way
            return self._sticky(base, "a coding task is under way")
        ruled = self.rules.match(text, {"local_only": local_only, "channel": msg.channel})
        if ruled is not None:
            if ruled.route in CODE_ROUTES and local_only:
                return self._refuse(ruled.route, "rules", ruled.evidence, base)
            return RoutingDecision(primary_route=ruled.route, source="rules", confidence=ruled.confidence,
                                   reason=ruled.reason, evidence=ruled.evidence, **base)

        notes: list[str] = []
        follow_up = flags.coding == "ended" and not local_only and goes_on(text)
        if follow_up and self._classifier(local_only) is None:
            return self._sticky(base, "it goes on with the coding task that just ended")
        classifier = self._classifier(local_only) if text.strip() else None
        error_reason: str | None = None
        if classifier is not None:
            self.classifier_calls += 1
            try:
                result = await asyncio.wait_for(classifier.classify(text), self.config.classifier.timeout_s)
            except TimeoutError:
                error_reason = f"classifier timed out after {self.config.classifier.timeout_s:g} s"
                self._emit("classifier.error", {"error": error_reason, "raw": ""})
            else:
                if result.decision is not None:
                    d = result.decision
                    if d.route in CODE_ROUTES and local_only:
                        return self._refuse(d.route, "classifier", d.evidence, base)
                    return RoutingDecision(primary_route=d.route, source="classifier", confidence=d.confidence,
                                           reason=d.reason, evidence=d.evidence, classifier_route=d.route,
                                           classifier_confidence=d.confidence, **base)
                error_reason = result.error
            notes.append(f"classifier: {error_reason}")
        elif self.classifier_model is None and text.strip():
            notes.append("classifier: not configured (routing.classifier.model)")
        elif text.strip() and not self._classifier_allowed(local_only):
            notes.append(f"classifier: {getattr(self.classifier_model, 'name', '?')} is a cloud model, not asked "
                         "(cloud models answer only routing.cloud_routes; local-only mode)")
        if follow_up:  # the classifier did not decide: it goes on with the coding task
            return self._sticky(base, "it goes on with the coding task that just ended",
                                notes=notes, error_reason=error_reason)
        fallback = fallback or self.config.fallback_route
        if fallback in CODE_ROUTES and local_only:
            fallback = "CHAT"
        reason = "no command, rule or classifier decided; safe fallback"
        if error_reason:
            reason += f" ({error_reason})"
        return RoutingDecision(primary_route=fallback, source="fallback", confidence=0.0, reason=reason,
                               evidence=[], error_reason=error_reason, notes=notes, **base)

    @staticmethod
    def _sticky(base: dict[str, Any], why: str, **extra: Any) -> RoutingDecision:
        """A follow-up of a coding task stays CODE (source `rules`: the session's rule); a route
        command (/chat, /plan ...) leaves it."""
        return RoutingDecision(primary_route="CODE", source="rules", confidence=1.0,
                               reason=f"a follow-up of the coding task: {why} (a route command such as /chat leaves it)",
                               evidence=[STICKY], **base, **extra)

    def _refuse(self, route: str, source: str, evidence: list[str], base: dict[str, Any]) -> RoutingDecision:
        """§2.2/§5: a CODE route while local_only is refused at the router; CHAT explains how to lift it."""
        return RoutingDecision(primary_route="CHAT", source=source,  # type: ignore[arg-type]
                               confidence=1.0, reason=f"{route} refused: {LIFT_LOCAL}",
                               evidence=[*evidence, "local_only"], refused=True,
                               error_reason="code_refused_local_only",
                               **{**base, "notice": LIFT_LOCAL})


def classifier_model_from_config(config: Any) -> Model | None:
    """The classifier's model when `routing.classifier.model` is set (a name or a role), else None."""
    name = config.routing.classifier.model
    if not name or not config.routing.classifier.enabled:
        return None
    from duckflow.config import resolve_role
    from duckflow.llm.registry import get_model

    roles = {"chat": "chat", "worker": "worker", "coder1": "coder1", "coder2": "coder2", "coder3": "coder3"}
    if name in roles:
        resolved = resolve_role(name, config)
        if resolved is None:
            return None
        name = resolved
    return get_model(name, config.models)


def build_router(config: Any, *, on_event: OnEvent | None = None, classifier_model: Model | None = None) -> MessageRouter:
    """A MessageRouter from a loaded `Config` (the classifier model built from routing.classifier.model)."""
    model = classifier_model if classifier_model is not None else classifier_model_from_config(config)
    return MessageRouter(config.routing, classifier_model=model, language=config.companion.language,
                         on_event=on_event)
