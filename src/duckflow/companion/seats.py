"""Which model answers a companion turn: a cloud model only for coding, a local one otherwise (seed 003 §7).

A session opened on a cloud model keeps it for the routes in `routing.cloud_routes` (CODE by
default); every other turn (conversation, a plan, a question, data work ...) and every turn while
local-only mode is on is answered by a local model: the one given (`local_model=`), else the
Chat role's (`routing.llm.chat_model`, `models.roles.chat`) when it runs on this machine, else the
bundled model when it is installed. With none of them nothing is sent: `Seats.take` returns the
one line that says so, with the next step. A session opened on a local model uses it for
everything. A model brings its own codec and turn mode (a small local model writes Sym-Ops in
one constrained call per step), so the session switches all three together, between turns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from duckflow.companion.session import CompanionSession
    from duckflow.llm.types import Model

WHAT = {"CHAT": "conversation", "PLAN": "planning", "ANALYZE": "data analysis", "OPS": "operations work",
        "RESEARCH": "research"}  # what a route is, in a person's words
LOCAL_HINT = '`duckflow models install`, or models.roles.chat = "ollama:NAME" in the config'


@dataclass
class Seat:
    """A model with the codec and turn mode it writes in."""

    model: Model
    specialized: Model
    codec: Any
    mode: str

    @property
    def name(self) -> str:
        return str(getattr(self.model, "name", "?"))


def is_local(model: Any) -> bool:
    return bool(getattr(model, "is_local", True))


class Seats:
    """The session's model as opened (`home`) and, when that one is a cloud model, a local one for
    everything that is not coding; `take(route, local_only)` seats the right one."""

    def __init__(self, session: CompanionSession, config: Any, *, local_model: Model | None = None,
                 codec: Any = None, mode: str | None = None) -> None:
        self.session = session
        self.config = config
        self.home = Seat(session.model, session.specialized_model, session.codec, session.mode)
        self.asked_codec, self.asked_mode = codec, mode  # what the person asked for (--codec, --mode)
        self._local: Seat | None = self._seat(local_model) if local_model is not None else None
        self._looked = local_model is not None
        self.problem = ""  # why no local model could be loaded (said with the refusal)

    @property
    def cloud(self) -> bool:
        """Whether the session was opened on a cloud model (only then is anything switched)."""
        return not is_local(self.home.model)

    def allows_cloud(self, route: str, local_only: bool) -> bool:
        routes = getattr(getattr(self.config, "routing", None), "cloud_routes", None) or ["CODE"]
        return not local_only and route in routes

    def plan(self) -> str:
        """One line for a banner: who answers what ('' when the session's model is local)."""
        if not self.cloud:
            return ""
        local = self._local.name if self._local is not None else next(iter(self._candidates()), "")
        rest = (f"the rest goes to {local}" if local else
                f"other messages are not sent (a local model for them: {LOCAL_HINT})")
        return f"{self.home.name} is a cloud model: it answers coding only; {rest}"

    def take(self, route: str, local_only: bool) -> str:
        """Seat the model for a turn on `route`; '' when one is seated, else the line saying why
        nothing is sent (no local model for a turn a cloud model may not answer)."""
        if not self.cloud or self.allows_cloud(route, local_only):
            self._sit(self.home)
            return ""
        local = self.local()
        if local is None:
            return self.refusal(route, local_only)
        self._sit(local)
        return ""

    def local(self) -> Seat | None:
        """The local model for what is not coding (looked for once, loaded when first needed)."""
        if self._looked:
            return self._local
        self._looked = True
        for name in self._candidates():
            try:
                from duckflow.companion.models import load_model

                model = load_model(name, self.config)
            except Exception as exc:  # noqa: BLE001 - a model that cannot be loaded is said, not raised
                self.problem = f"{name} could not be loaded ({getattr(exc, 'message', None) or exc})"
                continue
            if is_local(model):
                self._local = self._seat(model)
                return self._local
        return None

    def _candidates(self) -> list[str]:
        from duckflow.companion.models import _local_model_installed
        from duckflow.config import resolve_role

        names: list[str] = []
        chat = resolve_role("chat", self.config) if getattr(self.config, "routing", None) is not None else None
        if chat and chat != self.home.name:
            names.append(chat)
        if _local_model_installed() and _bundled_installed(self.config):
            names.append("local:default")
        return names

    def _seat(self, model: Model) -> Seat:
        from duckflow.companion.turnmode import choose_mode
        from duckflow.core.codecs import resolve_codec
        from duckflow.errors import DuckflowError

        comp = self.config.companion
        wanted = self.asked_codec or comp.codec
        try:
            codec = resolve_codec(wanted, model)
        except DuckflowError:
            codec = resolve_codec(None, model)
        if getattr(codec, "name", "") == "dml" and hasattr(codec, "language"):
            codec.language = comp.language
        mode = choose_mode(self.asked_mode, comp.mode, model, model.name, comp.single_call_below_b)
        return Seat(model, model, codec, mode)

    def _sit(self, seat: Seat) -> None:
        s = self.session
        if s.model is seat.model and s.codec is seat.codec and s.mode == seat.mode:
            return
        s.model, s.specialized_model, s.codec, s.mode = seat.model, seat.specialized, seat.codec, seat.mode
        s.engine.main.model, s.engine.specialized.model = seat.model, seat.specialized

    def refusal(self, route: str, local_only: bool) -> str:
        """One line: nothing was sent, why, and what to do next."""
        name = self.home.name
        if local_only:
            why = f"local-only mode is on and {name} is a cloud model"
            step = f"set a local model ({LOCAL_HINT}), or send /cloud to allow it"
        else:
            what = WHAT.get(route, f"{route.lower()} work")
            why = f"this reads as {what}, and {name} is a cloud model, used here only for coding"
            step = f"send /code to send it as a coding task, or set a local model for the rest ({LOCAL_HINT})"
        problem = f" ({self.problem})" if self.problem else ""
        return f"Not sent: {why}{problem}. Next: {step}."


def _bundled_installed(config: Any) -> bool:
    """The bundled model (or models.local_path) is on this machine: nothing is downloaded for it."""
    if getattr(getattr(config, "models", None), "local_path", None):
        return True
    try:
        from duckflow.llm.localmodels import installed_bundled

        return bool(installed_bundled())
    except ImportError:
        return False
