"""A2A 0.3's streaming methods on the same endpoint: ``message/stream`` and ``tasks/resubscribe``.

Clients still on A2A 0.3 name the methods ``message/send``, ``message/stream``, ``tasks/get``,
``tasks/cancel`` and ``tasks/resubscribe``. The unary ones go through the SDK's own 0.3 adapter in its
JSON-RPC dispatcher (``enable_v0_3_compat``) to the same :class:`.handler.RunTaskHandler`. The two
streaming ones are streamed by the route like their 1.0 twins (the run's writer sends the frames); this
module is what differs for them, all of it through the SDK's ``a2a.compat.v0_3`` types and converters:

- :func:`parse` reads a request as the SDK's 0.3 model and converts it to the 1.0 request the
  route already serves;
- :data:`V03` is the 0.3 :class:`~.frames.Dialect`: each event is the SDK's 0.3 conversion of the
  1.0 event (``kind``-tagged, ``final`` on the last status), and a text event's frame is the SDK's
  serialisation of a template event, split once per stream around its text;
- :func:`error_body` answers an A2A error with a code a 0.3 client knows, as the SDK's adapter does.
"""

from __future__ import annotations

import uuid
from typing import Any, Final, get_args

from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as v03
from a2a.types.a2a_pb2 import (
    Artifact,
    Part,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from a2a.utils.constants import PROTOCOL_VERSION_0_3
from a2a.utils.errors import (
    JSON_RPC_ERROR_CODE_MAP,
    A2AError,
    InvalidParamsError,
    InvalidRequestError,
    VersionNotSupportedError,
)

from kanawa.server.http.protocols.a2a.frames import RpcId
from kanawa.server.http.protocols.a2a.tasks import ARTIFACT_ID
from kanawa.server.http.protocols.run_parts import json_string

STREAMING: Final[dict[str, type[v03.SendStreamingMessageRequest] | type[v03.TaskResubscriptionRequest]]] = {
    "message/stream": v03.SendStreamingMessageRequest,
    "tasks/resubscribe": v03.TaskResubscriptionRequest,
}
"""The 0.3 methods the route streams itself, with the SDK's models of their requests."""
METHODS: Final = frozenset(
    model.model_fields["method"].default for model in get_args(v03.A2ARequest.model_fields["root"].annotation)
)
"""Every method name of A2A 0.3 (the SDK's 0.3 request union): a request naming one is a 0.3 request."""
_KNOWN_CODES: Final = frozenset(
    model.model_fields["code"].default for model in get_args(v03.A2AError.model_fields["root"].annotation)
)
"""The error codes A2A 0.3 defines (1.0 added some a 0.3 client cannot read)."""
_INTERNAL: Final = -32603


def parse(payload: dict[str, Any]) -> SendMessageRequest | SubscribeToTaskRequest:
    """The 1.0 request a 0.3 streaming request is (``InvalidRequestError`` when it is not one, as the
    SDK's adapter answers; ``InvalidParamsError`` when its content cannot be converted)."""
    model = STREAMING[str(payload.get("method"))]
    try:
        request = model.model_validate(payload)
    except Exception as exc:  # pydantic's ValidationError, or a recursion error on deep input
        raise InvalidRequestError(message="invalid request", data={"detail": str(exc)[:500]}) from None
    try:
        if isinstance(request, v03.SendStreamingMessageRequest):
            return conversions.to_core_send_message_request(request)  # type: ignore[arg-type]
        return conversions.to_core_subscribe_to_task_request(request)
    except Exception as exc:  # the converters fail on parts 1.0 cannot hold
        raise InvalidParamsError(message=f"invalid params: {exc}"[:500]) from None


def check_version(asked: str | None) -> None:
    """0.3 methods answer A2A 0.3 only (no header: 0.3, as the SDK's adapter takes it)."""
    if asked and asked.strip().split(".")[:2] != PROTOCOL_VERSION_0_3.split("."):
        raise VersionNotSupportedError(message=f"A2A version {asked[:20]!r} is not supported by 0.3 methods")


def error_body(rpc_id: RpcId, exc: A2AError) -> dict[str, Any]:
    """A JSON-RPC error response for ``exc`` with a code A2A 0.3 defines (others: internal error)."""
    code = JSON_RPC_ERROR_CODE_MAP.get(type(exc), _INTERNAL)
    error = v03.JSONRPCError(
        code=code if code in _KNOWN_CODES else _INTERNAL, message=exc.message, data=exc.data
    )
    return v03.JSONRPCErrorResponse(id=rpc_id, error=error).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )


def _dump(rpc_id: RpcId, event: StreamResponse) -> str:
    return conversions.to_compat_stream_response(event, rpc_id).model_dump_json(
        by_alias=True, exclude_none=True
    )


class Compat03:
    """A2A 0.3's stream shapes, made by the SDK's converters (the module docstring)."""

    def event(self, rpc_id: RpcId, event: Task | TaskStatusUpdateEvent) -> str:
        wrapped = (
            StreamResponse(task=event) if isinstance(event, Task) else StreamResponse(status_update=event)
        )
        return _dump(rpc_id, wrapped)

    def text_frame(self, rpc_id: RpcId, task_id: str, context_id: str, *, append: bool) -> tuple[str, str]:
        mark = "kanawa" + uuid.uuid4().hex
        artifact = Artifact(artifact_id=ARTIFACT_ID, parts=[Part(text=mark)])
        update = TaskArtifactUpdateEvent(
            task_id=task_id, context_id=context_id, artifact=artifact, append=append
        )
        head, tail = _dump(rpc_id, StreamResponse(artifact_update=update)).split(json_string(mark))
        return head, tail


V03: Final = Compat03()
"""A2A 0.3's dialect."""

__all__ = ["METHODS", "STREAMING", "V03", "Compat03", "check_version", "error_body", "parse"]
