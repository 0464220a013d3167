"""A cassette: the HTTP exchanges of a test run, kept in a YAML file vcrpy can read.

The file has vcrpy's layout (``version: 1`` and a list of ``interactions``, each a ``request``
with ``method``/``uri``/``headers``/``body`` and a ``response`` with ``status: {code, message}``,
``headers`` and ``body: {string}``; header values are lists), so a cassette recorded by kanawa opens
in vcrpy and in any tool that reads vcrpy cassettes. Bodies are stored decoded (no gzip), as text when
they are UTF-8 (a streamed SSE body is its text, event after event) and as YAML ``!!binary``
otherwise. Every value in the file has been through :mod:`kanawa.testing.scrub` before it was kept.

Matching a request to a recorded one (:meth:`Cassette.take`) compares the parts named by
``match_on`` — by default the method, the path and the query, not the host and port, so a test that
points an SDK at a local server on a random port still replays — and plays each recorded exchange
once, in recorded order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias
from urllib.parse import parse_qsl, urlsplit

MatchPart: TypeAlias = Literal["method", "scheme", "host", "port", "path", "query", "body"]
DEFAULT_MATCH_ON: tuple[MatchPart, ...] = ("method", "path", "query")
_MATCH_PARTS = frozenset({"method", "scheme", "host", "port", "path", "query", "body"})

Headers: TypeAlias = dict[str, list[str]]


class CassetteError(Exception):
    """A cassette that cannot be used: a missing file in replay mode, a file that is not a cassette,
    or a request the cassette has no recording for."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and the response it got, as stored (already scrubbed)."""

    method: str
    uri: str
    request_headers: Headers
    request_body: bytes
    status: int
    reason: str
    response_headers: Headers
    response_body: bytes

    def to_vcr(self) -> dict[str, object]:
        return {
            "request": {
                "method": self.method,
                "uri": self.uri,
                "headers": self.request_headers,
                "body": _body_value(self.request_body),
            },
            "response": {
                "status": {"code": self.status, "message": self.reason},
                "headers": self.response_headers,
                "body": {"string": _body_value(self.response_body)},
            },
        }

    @classmethod
    def from_vcr(cls, data: object) -> Exchange:
        if not isinstance(data, Mapping):
            raise CassetteError("an interaction must be a mapping with 'request' and 'response'")
        request, response = data.get("request"), data.get("response")
        if not isinstance(request, Mapping) or not isinstance(response, Mapping):
            raise CassetteError("an interaction must be a mapping with 'request' and 'response'")
        status = response.get("status")
        body = response.get("body")
        if not isinstance(status, Mapping) or not isinstance(body, Mapping):
            raise CassetteError("a recorded response needs 'status: {code, message}' and 'body: {string}'")
        return cls(
            method=str(request.get("method", "GET")).upper(),
            uri=str(request.get("uri", "")),
            request_headers=_headers(request.get("headers")),
            request_body=_body_bytes(request.get("body")),
            status=int(status.get("code", 200)),
            reason=str(status.get("message", "")),
            response_headers=_headers(response.get("headers")),
            response_body=_body_bytes(body.get("string")),
        )


def _body_value(body: bytes) -> str | bytes:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body


def _body_bytes(value: object) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")


def _headers(value: object) -> Headers:
    if not isinstance(value, Mapping):
        return {}
    headers: Headers = {}
    for name, values in value.items():
        items = values if isinstance(values, list) else [values]
        headers[str(name).lower()] = [str(v) for v in items]
    return headers


@dataclass(frozen=True, slots=True)
class RequestKey:
    """The parts of a request that matching compares."""

    method: str
    scheme: str
    host: str
    port: int | None
    path: str
    query: tuple[tuple[str, str], ...]
    body: str

    @classmethod
    def of(cls, method: str, uri: str, body: bytes) -> RequestKey:
        parts = urlsplit(uri)
        return cls(
            method=method.upper(),
            scheme=parts.scheme,
            host=parts.hostname or "",
            port=parts.port,
            path=parts.path or "/",
            query=tuple(sorted(parse_qsl(parts.query, keep_blank_values=True))),
            body=_canonical_body(body),
        )

    def matches(self, other: RequestKey, match_on: Iterable[MatchPart]) -> bool:
        return all(getattr(self, part) == getattr(other, part) for part in match_on)


def _canonical_body(body: bytes) -> str:
    """JSON bodies compare by value (key order and spacing do not matter); others as text."""
    text = body.decode("utf-8", errors="replace")
    try:
        return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return text


@dataclass
class Cassette:
    """The exchanges of one cassette file, with which of them have been played back."""

    path: Path
    _: KW_ONLY
    match_on: tuple[MatchPart, ...] = DEFAULT_MATCH_ON
    exchanges: list[Exchange] = field(default_factory=list)
    played: set[int] = field(default_factory=set)
    misses: list[str] = field(default_factory=list)
    """``METHOD uri`` of each request that found no recording (a test fails on them)."""

    def __post_init__(self) -> None:
        unknown = set(self.match_on) - _MATCH_PARTS
        if unknown:
            raise ValueError(f"match_on parts must be among {sorted(_MATCH_PARTS)}, not {sorted(unknown)}")

    def take(self, method: str, uri: str, body: bytes) -> Exchange | None:
        """The first recorded exchange not played yet that matches this request (marked played)."""
        wanted = RequestKey.of(method, uri, body)
        for index, exchange in enumerate(self.exchanges):
            if index in self.played:
                continue
            recorded = RequestKey.of(exchange.method, exchange.uri, exchange.request_body)
            if recorded.matches(wanted, self.match_on):
                self.played.add(index)
                return exchange
        return None

    def record(self, exchange: Exchange) -> None:
        """Keep an exchange just recorded (it counts as played: a later request does not replay it)."""
        self.exchanges.append(exchange)
        self.played.add(len(self.exchanges) - 1)

    @classmethod
    def load(cls, path: Path, *, match_on: Sequence[MatchPart] = DEFAULT_MATCH_ON) -> Cassette:
        import yaml

        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise CassetteError(f"{path} is not a YAML cassette: {exc}") from None
        if not isinstance(data, Mapping) or not isinstance(data.get("interactions"), list):
            raise CassetteError(f"{path} is not a cassette (no 'interactions' list)")
        exchanges = [Exchange.from_vcr(item) for item in data["interactions"]]
        return cls(path, match_on=tuple(match_on), exchanges=exchanges)

    def save(self) -> None:
        import yaml

        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"interactions": [e.to_vcr() for e in self.exchanges], "version": 1}
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=120)
        self.path.write_text(text, encoding="utf-8")


__all__ = ["DEFAULT_MATCH_ON", "Cassette", "CassetteError", "Exchange", "MatchPart", "RequestKey"]
