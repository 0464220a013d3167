"""A remote A2A agent behind the :class:`~kanawa.llm.adapter.LLMAdapter` protocol the loop talks to.

To the loop, a remote agent is a model that answers a conversation with text: :class:`A2AModel` sends
the conversation's latest user turn to the agent (:class:`~kanawa.a2a.client.A2AConnection`) and
streams its answer back as :class:`~kanawa.types.TextDelta` events ending in one
:class:`~kanawa.types.ResponseCompleted` — so everything the loop does for a model (streaming events,
trace events, errors as :class:`~kanawa.loop.errors.LLMCallFailed`, handoff nesting) holds for it
unchanged. The remote agent runs its own tools: none are offered to it, and ``tools``,
``settings`` and ``response_schema`` are not sent (A2A has no place for them).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from kanawa.a2a.client import PROVIDER, A2AConnection
from kanawa.llm.adapter import ToolLike
from kanawa.llm.settings import ModelSettings
from kanawa.llm.tokens import count_message_tokens
from kanawa.types import (
    AssistantMessage,
    LLMResponse,
    Message,
    OutputSchema,
    ResponseCompleted,
    StopReason,
    StreamEvent,
    TextDelta,
    Usage,
    UserMessage,
)


class A2AModel:
    """The adapter for one remote A2A agent (``provider == "a2a"``, ``model`` = its URL)."""

    def __init__(self, connection: A2AConnection) -> None:
        self.connection = connection

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def model(self) -> str:
        return self.connection.shown_url

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> LLMResponse:
        """The whole answer (the turn still streams on the wire; the pieces are joined here)."""
        response: LLMResponse | None = None
        async for event in self.stream(messages):
            if isinstance(event, ResponseCompleted):
                response = event.response
        assert response is not None  # stream() always ends with ResponseCompleted or raises
        return response

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolLike] = (),
        settings: ModelSettings | None = None,
        response_schema: OutputSchema | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """The answer as it streams: one :class:`TextDelta` per piece, then :class:`ResponseCompleted`."""
        pieces: list[str] = []
        task_id: str | None = None
        async for piece in self.connection.stream(latest_user_text(messages)):
            pieces.append(piece.text)
            task_id = piece.task_id or task_id
            yield TextDelta(piece.text)
        answer = AssistantMessage(text="".join(pieces))
        yield ResponseCompleted(
            LLMResponse(
                answer, StopReason.END_TURN, usage=Usage(requests=1), model=self.model, response_id=task_id
            )
        )

    def count_tokens(self, content: str | Sequence[Message]) -> int:
        return count_message_tokens(content)

    def normalize_model_name(self, name: str | None = None) -> str:
        """A URL has no other spelling: ``name`` (or this agent's URL) as it is."""
        return self.model if name is None else name


def latest_user_text(messages: Sequence[Message]) -> str:
    """What the remote agent is sent: the text of the latest user turn (in a handoff, the handing
    agent's message when it gave one, else the user's last words); ``ValueError`` without one."""
    for message in reversed(messages):
        if isinstance(message, UserMessage) and message.text.strip():
            return message.text
    raise ValueError("nothing to send to the A2A agent: the conversation has no user text")


__all__ = ["A2AModel", "latest_user_text"]
