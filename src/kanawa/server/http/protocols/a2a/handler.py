"""The A2A request handler for the SDK's JSON-RPC dispatcher: the unary methods over kanawa's runs.

The dispatcher (``a2a.server.routes.JsonRpcDispatcher``) parses a request, checks it against the
A2A types and answers errors in the JSON-RPC shape; this handler answers the methods themselves for
one tenant and one agent, both put in the call's state by :class:`CallContext` (the bearer key's
tenant, never the request's own ``tenant`` field):

- ``SendMessage`` starts (or continues) the run and answers its task once the turn has ended or
  waits for input (``returnImmediately``: at once, ``working``);
- ``GetTask``, ``ListTasks`` read runs of the tenant (a list bounded in bytes: :mod:`.listing`);
  ``CancelTask`` cancels one and answers its task once the run has stopped;
- push notifications and the extended card are not offered (the card says so).

``SendStreamingMessage`` and ``SubscribeToTask`` never reach this handler: the route streams them
itself from the run's writer (:mod:`.rpc`, :mod:`.frames`), which the SDK's stream path cannot.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Final

from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, VERSION_HEADER
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from fastapi import HTTPException
from starlette.requests import Request

from kanawa.server.http.protocols.a2a.errors import a2a_error
from kanawa.server.http.protocols.a2a.listing import list_page
from kanawa.server.http.protocols.a2a.tasks import STATE, TERMINAL, owned_task, snapshot
from kanawa.server.http.protocols.a2a.turns import take_message, wait_for_turn
from kanawa.server.http.protocols.errors import REFUSALS, protocol_error
from kanawa.server.runs.manager import RunManager

TENANT: Final = "kanawa.tenant"
AGENT: Final = "kanawa.agent"
MANAGER: Final = "kanawa.manager"
ROUTE: Final = "kanawa.route"
LIST_BYTES: Final = "kanawa.list_bytes"
"""Keys of the call state :class:`CallContext` fills in."""
CANCEL_WAIT_S: Final = 30.0
"""How long ``CancelTask`` waits for the run to stop before answering with its task as it is."""


class CallContext(DefaultServerCallContextBuilder):
    """The SDK's call context plus who is calling (the route's authenticated tenant), which agent,
    the run manager, and the route's request state (where a refusal by a limit is left for the route
    to answer with its HTTP status: the SDK's 0.3 adapter would turn any exception into a JSON-RPC
    internal error). A request without an ``A2A-Version`` header is taken as the version its method
    name belongs to (1.0's names: 1.0; 0.3's: 0.3), as the route decided."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        headers = context.state.setdefault("headers", {})
        if not (headers.get(VERSION_HEADER) or headers.get(VERSION_HEADER.lower())):
            headers[VERSION_HEADER.lower()] = getattr(request.state, "a2a_version", PROTOCOL_VERSION_CURRENT)
        context.state[TENANT] = request.state.a2a_tenant
        context.state[AGENT] = request.state.a2a_agent
        context.state[MANAGER] = request.app.state.manager
        context.state[ROUTE] = request.state
        context.state[LIST_BYTES] = request.app.state.settings.a2a_list_bytes
        return context


def _caller(context: ServerCallContext) -> tuple[RunManager, str, str]:
    state = context.state
    return state[MANAGER], state[TENANT], state[AGENT]


class RunTaskHandler(RequestHandler):
    """A2A's unary methods, each a kanawa run seen as a task (module docstring)."""

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        manager, tenant, agent = _caller(context)
        try:
            turn = await take_message(manager, tenant, agent, params)
        except REFUSALS as exc:
            error = protocol_error(exc)
            assert error is not None
            answer = a2a_error(error)
            if isinstance(answer, HTTPException):  # a limit: the route answers its HTTP status
                context.state[ROUTE].a2a_refused = answer
            raise answer from None
        if not params.configuration.return_immediately:
            await wait_for_turn(manager.store, turn.record.run_id, turn.after)
        return await self._task(manager, tenant, agent, turn.record.run_id)

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        manager, tenant, agent = _caller(context)
        record = await owned_task(manager.store, tenant, agent, params.id)
        return None if record is None else await snapshot(manager.store, record)

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        manager, tenant, agent = _caller(context)
        record = await owned_task(manager.store, tenant, agent, params.id)
        if record is None:
            return None
        if STATE[record.status] in TERMINAL:
            raise TaskNotCancelableError(message=f"task {params.id} has already ended ({record.status})")
        await manager.cancel(record)
        await wait_for_turn(manager.store, record.run_id, record.last_seq, within=CANCEL_WAIT_S)
        return await self._task(manager, tenant, agent, record.run_id)

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        manager, tenant, agent = _caller(context)
        return await list_page(manager.store, tenant, agent, params, max_bytes=context.state[LIST_BYTES])

    async def _task(self, manager: RunManager, tenant: str, agent: str, run_id: str) -> Task:
        record = await owned_task(manager.store, tenant, agent, run_id)
        if record is None:  # expired between the two reads
            raise TaskNotFoundError
        return await snapshot(manager.store, record)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        for event in _streamed_by_the_route():
            yield event

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        for event in _streamed_by_the_route():
            yield event

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        raise PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        raise PushNotificationNotSupportedError

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError


def _streamed_by_the_route() -> tuple[Event, ...]:
    """Refuses: the route streams these methods itself (the module docstring)."""
    raise UnsupportedOperationError(message="streams are served by the A2A route, not the dispatcher")


__all__ = ["AGENT", "LIST_BYTES", "MANAGER", "ROUTE", "TENANT", "CallContext", "RunTaskHandler"]
