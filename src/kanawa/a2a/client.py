"""One conversation turn with a remote A2A agent, over the official ``a2a-sdk`` client.

The story of one turn (:meth:`A2AConnection.stream`):

1. the agent card is fetched from ``<url>/.well-known/agent-card.json`` once per connection (the card
   says which transport and endpoint to use) and kept;
2. a text message goes out with ``SendStreamingMessage`` (``message/stream`` in A2A 0.3), over a fresh
   HTTP client carrying the configured headers (``Authorization: Bearer …``) and timeouts;
3. the remote agent's events come back and are translated once, here, into :class:`AnswerText`
   pieces: a direct ``Message`` answer, the text of artifact chunks as they stream (a new artifact
   after an earlier one starts on a new line), or a status message when the task ends without
   artifacts (``input-required``: the remote agent's question is its answer);
4. a task that ends ``failed``, ``rejected``, ``canceled`` or ``auth-required``, an HTTP error, a
   timeout or an unreachable server raises :class:`~kanawa.llm.errors.LLMError` (the loop's error
   for a remote model), with a message that names the URL and status but never a header value.

Credentials given here are registered with :mod:`kanawa.secrets`, so they are masked wherever an
error or a log line could repeat them.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx
from a2a.client import A2AClientError, A2AClientTimeoutError, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types.a2a_pb2 import (
    AgentCard,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskState,
)

from kanawa.llm.errors import LLMAuthError, LLMConnectionError, LLMError, LLMTimeoutError, error_for_status
from kanawa.secrets import guard_credentials

PROVIDER = "a2a"
"""The ``provider`` of the adapter that speaks to A2A agents (trace events and errors carry it)."""

DEFAULT_TIMEOUT = 120.0
"""Seconds one whole turn with a remote agent may take, from the request to its last event."""

DEFAULT_CONNECT_TIMEOUT = 10.0
"""Seconds to open the connection (an unreachable host fails fast, not after the whole timeout)."""

_FAILED: dict[int, str] = {
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_REJECTED: "rejected the request",
    TaskState.TASK_STATE_CANCELED: "was canceled",
    TaskState.TASK_STATE_AUTH_REQUIRED: "requires authentication",
}
"""Task states that end a turn without an answer, and how an error message says so."""


@dataclass(frozen=True, slots=True)
class AnswerText:
    """A piece of the remote agent's answer, in arrival order; ``task_id`` once the remote knows it."""

    text: str
    task_id: str | None = None


def public_url(url: str) -> str:
    """``url`` without user info, query or fragment: what an error message may show."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class A2AConnection:
    """How to reach one remote A2A agent: its base URL, headers and timeouts.

    Holds no open connection between turns (each turn opens its own HTTP client, so a connection is
    safe to share across event loops and runs); only the agent card is kept once fetched.
    """

    def __init__(
        self,
        url: str,
        *,
        bearer_token: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        scheme = urlsplit(url).scheme
        if scheme not in ("http", "https"):
            raise ValueError(f"an A2A agent URL must be http(s), not {public_url(url)!r}")
        for name, value in (("timeout", timeout), ("connect_timeout", connect_timeout)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
        self.url = url
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout)
        sent = dict(headers or {})
        if bearer_token is not None:
            sent["Authorization"] = f"Bearer {bearer_token}"
        self._headers = sent
        guard_credentials(bearer_token, headers=sent)
        self._card: AgentCard | None = None

    @property
    def shown_url(self) -> str:
        return public_url(self.url)

    async def stream(self, text: str) -> AsyncIterator[AnswerText]:
        """Send ``text`` as one user message and yield the answer as it arrives (see the module)."""
        try:
            async with asyncio.timeout(self.timeout):
                async for piece in self._turn(text):
                    yield piece
        except TimeoutError as exc:
            raise LLMTimeoutError(
                f"the A2A agent at {self.shown_url} did not answer within {self.timeout:g} s",
                provider=PROVIDER,
                model=self.shown_url,
            ) from exc
        except A2AClientError as exc:
            raise self._error(exc) from exc

    async def _turn(self, text: str) -> AsyncIterator[AnswerText]:
        timeout = httpx.Timeout(self.timeout, connect=self.connect_timeout)
        async with httpx.AsyncClient(headers=self._headers, timeout=timeout) as http:
            card = await self._agent_card(http)
            client = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
            request = SendMessageRequest(
                message=Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[Part(text=text)])
            )
            translate = _Translation(self.shown_url)
            async for event in client.send_message(request):
                for piece in translate(event):
                    yield piece
            for piece in translate.finish():
                yield piece

    async def _agent_card(self, http: httpx.AsyncClient) -> AgentCard:
        if self._card is None:
            self._card = await A2ACardResolver(http, self.url).get_agent_card()
        return self._card

    def _error(self, exc: A2AClientError) -> LLMError:
        """The loop's error for an SDK failure; the HTTP status when there was one, never the headers."""
        where = f"the A2A agent at {self.shown_url}"
        cause = exc.__cause__
        if isinstance(exc, A2AClientTimeoutError) or isinstance(cause, httpx.TimeoutException):
            return LLMTimeoutError(f"{where} timed out", provider=PROVIDER, model=self.shown_url)
        status = getattr(exc, "status_code", None)
        if isinstance(cause, httpx.HTTPStatusError):
            status = cause.response.status_code
        if isinstance(status, int):
            if status in (401, 403):
                return LLMAuthError(
                    f"{where} refused the credentials",
                    provider=PROVIDER,
                    model=self.shown_url,
                    status_code=status,
                )
            return error_for_status(
                status, f"{where} answered an error", provider=PROVIDER, model=self.shown_url
            )
        if isinstance(cause, httpx.TransportError):
            return LLMConnectionError(
                f"{where} could not be reached ({type(cause).__name__})",
                provider=PROVIDER,
                model=self.shown_url,
            )
        return LLMConnectionError(f"{where} failed: {exc.message}", provider=PROVIDER, model=self.shown_url)


class _Translation:
    """Turns one turn's ``StreamResponse`` events into answer text, exhaustively over the payloads."""

    __slots__ = ("_artifacts", "_status_text", "_task_id", "_url")

    def __init__(self, url: str) -> None:
        self._url = url
        self._artifacts: list[str] = []
        self._status_text = ""
        self._task_id: str | None = None

    def __call__(self, event: StreamResponse) -> list[AnswerText]:
        payload = event.WhichOneof("payload")
        if payload == "message":
            return self._text(_text_of(event.message.parts))
        if payload == "task":
            task = event.task
            self._task_id = task.id or self._task_id
            pieces: list[AnswerText] = []
            for artifact in task.artifacts:
                pieces += self._artifact(artifact.artifact_id, _text_of(artifact.parts))
            return pieces + self._status(task.status.state, task.status.message)
        if payload == "artifact_update":
            update = event.artifact_update
            self._task_id = update.task_id or self._task_id
            return self._artifact(update.artifact.artifact_id, _text_of(update.artifact.parts))
        if payload == "status_update":
            update = event.status_update
            self._task_id = update.task_id or self._task_id
            return self._status(update.status.state, update.status.message)
        return []  # an event kind this version does not know: nothing of the answer in it

    def finish(self) -> list[AnswerText]:
        """After the last event: a task that ended with only a status message answers with its text."""
        if not self._artifacts and self._status_text:
            return self._text(self._status_text)
        return []

    def _artifact(self, artifact_id: str, text: str) -> list[AnswerText]:
        if not text:
            return []
        if artifact_id and artifact_id not in self._artifacts:
            starts_new = bool(self._artifacts)
            self._artifacts.append(artifact_id)
            if starts_new:
                text = "\n" + text
        elif not artifact_id and not self._artifacts:
            self._artifacts.append("")
        return self._text(text)

    def _status(self, state: int, message: Message) -> list[AnswerText]:
        text = _text_of(message.parts)
        if state in _FAILED:
            said = f": {text[:300]}" if text else ""
            raise LLMError(
                f"the A2A agent at {self._url} {_FAILED[state]}{said}", provider=PROVIDER, model=self._url
            )
        if text:
            self._status_text = text
        return []

    def _text(self, text: str) -> list[AnswerText]:
        return [AnswerText(text, self._task_id)] if text else []


def _text_of(parts: Iterable[Part]) -> str:
    """The text parts of a message or artifact, joined (files and data parts are not text answers)."""
    return "".join(part.text for part in parts if part.HasField("text"))


__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "PROVIDER",
    "A2AConnection",
    "AnswerText",
    "public_url",
]
