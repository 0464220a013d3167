"""``ServerSettings``: every knob of ``kanawa serve`` in one frozen object (keyword arguments first, then
``KANAWA_*`` environment variables, then defaults).

==============================  ==========================================================  ===========
variable                        meaning                                                     default
==============================  ==========================================================  ===========
``KANAWA_API_KEYS``             ``key:tenant,key2:tenant2`` (a key may be given as          none
                                ``sha256:<hex>`` so only its hash is configured)
``KANAWA_API_KEYS_FILE``        a file of ``key:tenant`` / ``sha256:<hex>:tenant`` lines    none
``KANAWA_REDIS_URL``            Redis for run streams and run records (any worker resumes)  in memory
``KANAWA_REDIS_PREFIX``         the prefix of every Redis key the server writes             kanawa:
``KANAWA_CELERY_BROKER``        runs execute on Celery workers (``kanawa worker``)          off
``KANAWA_CELERY_QUEUE``         the Celery queue runs are sent to                           kanawa-runs
``KANAWA_RUN_TTL``              seconds a finished (or abandoned) run stays resumable       3600
``KANAWA_RUN_BUFFER``           most chunks kept per run (oldest dropped beyond it)         10000
``KANAWA_SSE_PING``             seconds between keep-alive comments on an idle stream       15
``KANAWA_MAX_REQUEST_BYTES``    largest request body accepted (413 beyond)                  1048576
``KANAWA_MAX_HEAD_BYTES``       largest request head: request line and headers (431         32768
                                beyond, and the connection is closed)
``KANAWA_MAX_HEADERS``          most header lines in one request (431 beyond)               100
``KANAWA_HEAD_TIMEOUT``         seconds a request head may take to arrive (408 and the      10
                                connection closed beyond)
``KANAWA_RATE_LIMIT``           requests per minute per API key (429 beyond; 0 = off)       600
``KANAWA_MAX_RUNS``             runs one tenant may have running at once (429 beyond)       64
``KANAWA_TENANT_MAX_TOKENS``    a token budget per tenant over all its runs                 no limit
``KANAWA_TENANT_MAX_REQUESTS``  a model-request budget per tenant                           no limit
``KANAWA_TENANT_MAX_COST_USD``  a USD budget per tenant                                     no limit
``KANAWA_SERVE_AGENTS``         ``module:attr`` of the agent registry                       the demos
``KANAWA_SERVE_EXTENSIONS``     ``module:attr,...`` of the extensions to mount (the app and     none
                                every ``kanawa worker`` load the same ones)
``KANAWA_GC_FREEZE``            ``0`` keeps what the server made at startup in the cyclic   1
                                garbage collector's full passes (see below)
``KANAWA_GC_THRESHOLD``         new container objects between two young-generation          10000
                                collections while serving (``0``: Python's own, 700)
``KANAWA_SSE_WRITE_TIMEOUT``    seconds a stream's send may wait for a client that does     30
                                not read before the stream's connection is cut
``KANAWA_MAX_STREAMS``          event streams one tenant may have open in one server        256
                                process (429 beyond; 0 = off)
``KANAWA_MAX_RUN_STREAMS``      event streams open on one run in one server process         32
                                (429 beyond; 0 = off)
``KANAWA_MCP_SESSIONS``         MCP sessions one tenant may have open in one server         32
                                process: a new one ends the tenant's longest-idle session,
                                or gets 429 when every one is busy (0 = off)
``KANAWA_MCP_SESSION_IDLE``     seconds an MCP session may go without a request before it   300
                                ends
``KANAWA_MCP_EVENT_BYTES``      memory the MCP event log (kept for resumes) may use over    67108864
                                every session; the oldest streams are forgotten beyond it
``KANAWA_AUTH_FAILURES``        failed authentications per minute from one client address   30
                                (429 with ``Retry-After`` beyond, for that address; 0 = off)
``KANAWA_TENANT_RUN_BYTES``     memory a tenant's kept runs may use before its oldest       268435456
                                finished runs are evicted (0 = off)
``KANAWA_RUN_BYTES``            memory all kept runs may use before the oldest finished     1073741824
                                runs are evicted (0 = off)
``KANAWA_PUBLIC_URL``           the address clients reach the service at (an A2A card's     the socket's
                                endpoint URL is built from it, never from ``Host``)         address
``KANAWA_ALLOWED_HOSTS``        ``Host`` names trusted for those URLs when no public URL    none
                                is set (``a.example,*.b.example``)
``KANAWA_A2A_CARD_NEEDS_KEY``   ``1``: an A2A agent card needs the API key (401 without);   0
                                ``0``: without a key every name gets the same name-only
                                card
``KANAWA_A2A_LIST_BYTES``       the most bytes of tasks one A2A ``ListTasks`` page holds    1048576
                                (a page ends before the task that would pass it)
``KANAWA_CORS_ORIGINS``         origins whose browser pages may call the service            none
                                (``https://app.example,http://127.0.0.1:5173``; ``*``: any)
==============================  ==========================================================  ===========

:data:`ENVIRONMENT` maps each field to its variable; :meth:`ServerSettings.from_env` reads exactly
those, and the tests hold the table in docs/server.md and ``compose.yaml`` to them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Final, Self
from urllib.parse import urlsplit

ENVIRONMENT: Final[Mapping[str, str]] = MappingProxyType(
    {
        "api_keys": "KANAWA_API_KEYS",
        "api_keys_file": "KANAWA_API_KEYS_FILE",
        "redis_url": "KANAWA_REDIS_URL",
        "redis_prefix": "KANAWA_REDIS_PREFIX",
        "celery_broker": "KANAWA_CELERY_BROKER",
        "celery_queue": "KANAWA_CELERY_QUEUE",
        "run_ttl": "KANAWA_RUN_TTL",
        "run_buffer": "KANAWA_RUN_BUFFER",
        "sse_ping": "KANAWA_SSE_PING",
        "max_request_bytes": "KANAWA_MAX_REQUEST_BYTES",
        "max_head_bytes": "KANAWA_MAX_HEAD_BYTES",
        "max_headers": "KANAWA_MAX_HEADERS",
        "head_timeout": "KANAWA_HEAD_TIMEOUT",
        "rate_limit": "KANAWA_RATE_LIMIT",
        "max_runs": "KANAWA_MAX_RUNS",
        "tenant_max_tokens": "KANAWA_TENANT_MAX_TOKENS",
        "tenant_max_requests": "KANAWA_TENANT_MAX_REQUESTS",
        "tenant_max_cost_usd": "KANAWA_TENANT_MAX_COST_USD",
        "serve_agents": "KANAWA_SERVE_AGENTS",
        "serve_extensions": "KANAWA_SERVE_EXTENSIONS",
        "gc_freeze": "KANAWA_GC_FREEZE",
        "gc_threshold": "KANAWA_GC_THRESHOLD",
        "sse_write_timeout": "KANAWA_SSE_WRITE_TIMEOUT",
        "max_streams": "KANAWA_MAX_STREAMS",
        "max_run_streams": "KANAWA_MAX_RUN_STREAMS",
        "mcp_sessions": "KANAWA_MCP_SESSIONS",
        "mcp_session_idle": "KANAWA_MCP_SESSION_IDLE",
        "mcp_event_bytes": "KANAWA_MCP_EVENT_BYTES",
        "auth_failures": "KANAWA_AUTH_FAILURES",
        "tenant_run_bytes": "KANAWA_TENANT_RUN_BYTES",
        "run_bytes": "KANAWA_RUN_BYTES",
        "public_url": "KANAWA_PUBLIC_URL",
        "allowed_hosts": "KANAWA_ALLOWED_HOSTS",
        "a2a_card_needs_key": "KANAWA_A2A_CARD_NEEDS_KEY",
        "a2a_list_bytes": "KANAWA_A2A_LIST_BYTES",
        "cors_origins": "KANAWA_CORS_ORIGINS",
    }
)
"""The environment variable of each :class:`ServerSettings` field that has one."""

HOST_HEADER: Final = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?"
)
"""A ``Host`` header: a host name (or bracketed IPv6 address) and an optional port."""


def checked_public_url(value: str) -> str:
    """``value`` as the service's public base URL: ``http(s)://host[:port][/path]`` without
    credentials, query or fragment, returned without a trailing slash; ``ValueError`` otherwise."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ValueError(f"KANAWA_PUBLIC_URL must be an http(s) URL without query or fragment, not {value!r}")
    if parts.username or parts.password:
        raise ValueError("KANAWA_PUBLIC_URL must not carry credentials")
    return value.strip().rstrip("/")


def checked_origins(value: str | tuple[str, ...]) -> tuple[str, ...]:
    """Origins (comma-separated text, or a tuple) as browsers send them: ``scheme://host[:port]``,
    lower-cased, without a path; ``*`` for any origin. ``ValueError`` for anything else."""
    entries = value.split(",") if isinstance(value, str) else list(value)
    origins = []
    for entry in (one.strip() for one in entries):
        if not entry:
            continue
        if entry == "*":
            origins.append(entry)
            continue
        parts = urlsplit(entry)
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
            or parts.username
            or parts.password
        ):
            raise ValueError(
                f"KANAWA_CORS_ORIGINS: {entry!r} is not an origin (scheme://host[:port], no path)"
            )
        origins.append(f"{parts.scheme}://{parts.netloc.lower()}")
    return tuple(origins)


def checked_hosts(value: str | tuple[str, ...]) -> tuple[str, ...]:
    """Host names (comma-separated text, or a tuple), lower-cased; ``*.example.com`` stands for any
    name under example.com. ``ValueError`` for an entry that is not a host name (a scheme, a port,
    a bare ``*``)."""
    entries = value.split(",") if isinstance(value, str) else list(value)
    hosts = []
    for entry in (one.strip().lower() for one in entries):
        if not entry:
            continue
        name = entry[2:] if entry.startswith("*.") else entry
        match = HOST_HEADER.fullmatch(name)
        if match is None or match["name"] != name or name.startswith("["):
            raise ValueError(f"KANAWA_ALLOWED_HOSTS: {entry!r} is not a host name (no scheme, no port)")
        hosts.append(entry)
    return tuple(hosts)


def _env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, not {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    return value


def _env_float(name: str, default: float, *, minimum: float = 0.0) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    return value


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """What the app needs to know. Build with :meth:`from_env` (keyword overrides win over the
    environment); the dataclass itself never reads the environment."""

    _: KW_ONLY
    api_keys: str = ""
    api_keys_file: Path | None = None
    redis_url: str | None = None
    redis_prefix: str = "kanawa:"
    celery_broker: str | None = None
    celery_queue: str = "kanawa-runs"
    run_ttl: float = 3600.0
    run_buffer: int = 10_000
    sse_ping: float = 15.0
    max_request_bytes: int = 1_048_576
    max_head_bytes: int = 32_768
    max_headers: int = 100
    head_timeout: float = 10.0
    """Request head limits (:mod:`kanawa.server.http.head_limits`): enforced by the HTTP protocol."""
    rate_limit: int = 600
    max_runs: int = 64
    dev_key: str | None = None
    """With no keys configured: the generated development key (loopback clients only)."""
    tenant_max_tokens: int | None = None
    tenant_max_requests: int | None = None
    tenant_max_cost_usd: float | None = None
    """Per-tenant budgets (:mod:`kanawa.server.runs.budgets`): ``None`` = no limit of that kind."""
    serve_agents: str | None = None
    """``module:attr`` of the agent registry (``None``: the demo agents)."""
    serve_extensions: str | None = None
    """``module:attr`` names, comma-separated, of the :class:`~kanawa.server.runs.extensions.Extension`
    to mount (:func:`~kanawa.server.runs.loaders.load_extensions`). The app and every Celery worker read
    the same value, so a run's agents, its events' chunks and its per-process resources are the
    same wherever it executes (``None``: none)."""
    gc_freeze: bool = True
    """Once the server is up, collect and then freeze (``gc.freeze()``) what exists: the modules,
    the app and the agents — tens of thousands of objects that live as long as the process — are no
    longer walked by the cyclic garbage collector's full passes, which a busy server otherwise runs
    again and again over them (measured: ~9 % of a Redis-mode server's CPU at 1,000 streams)."""
    gc_threshold: int = 10_000
    """While the server is up, the cyclic garbage collector's first threshold (``gc.set_threshold``;
    the older generations' are kept; ``0`` leaves Python's 700). A stream makes and drops thousands
    of small containers (tasks, futures, an ASGI message per chunk, the cancelled tasks' exceptions
    and tracebacks when it ends), so at 700 a busy server collects its young generation hundreds
    of times a second, and every tenth of those every hundredth time walks everything alive: at
    1,000 streams that was ~20 % of the server's CPU. At 10,000 the garbage that cycles hold
    waits a little longer (a few MiB at most) for far fewer passes."""
    sse_write_timeout: float = 30.0
    """Seconds one send of a stream may wait for its client's socket; past it the stream's connection
    is cut (the client resumes with ``Last-Event-ID``). With the sends themselves capped
    (:data:`~kanawa.server.store.SEND_BYTES`) a client that stops reading holds a bounded amount of
    memory, and only this long."""
    max_streams: int = 256
    """Event streams (``POST /v1/runs`` and ``GET …/events``) one tenant may have open in one server
    process (``0``: no limit); 429 beyond."""
    max_run_streams: int = 32
    """Event streams open on one run in one server process (``0``: no limit); 429 beyond."""
    mcp_sessions: int = 32
    """MCP sessions (``/mcp``) one tenant may have open in one server process (``0``: no limit). A
    session holds a task and its streams' memory in the process that opened it, so a client that
    opens sessions and walks away must not pile them up: at the cap a new session ends the
    tenant's session that has been idle longest, and is refused (429) when every one is busy."""
    mcp_session_idle: float = 300.0
    """Seconds an MCP session may go without a request in flight before it ends (a client then opens
    a new one); an open ``GET /mcp`` stream counts as a request."""
    mcp_event_bytes: int = 64 * 1024 * 1024
    """Memory the MCP event log may take over every session of the process (the messages kept so that
    a cut stream resumes, as their JSON); beyond it the least recently written streams are forgotten.
    A session that ends frees its events at once."""
    auth_failures: int = 30
    """Failed authentications a minute from one client address (``0``: no limit); beyond, that
    address gets 429 with ``Retry-After`` for every request until its allowance refills."""
    tenant_run_bytes: int = 256 * 1024 * 1024
    """Memory a tenant's kept runs may take (their chunks, as stored) before its oldest finished runs
    are evicted (``0``: no limit)."""
    run_bytes: int = 1024 * 1024 * 1024
    """Memory all kept runs may take before the oldest finished runs are evicted (``0``: no limit)."""
    public_url: str | None = None
    """The base URL clients reach the service at (:mod:`kanawa.server.http.public_url`): URLs the
    server gives out (an A2A card's endpoint) are built from it. ``None``: from an allowed ``Host``,
    else from the address of the socket the request arrived on."""
    allowed_hosts: tuple[str, ...] = ()
    """``Host`` names (``*.example.com`` for a domain's) trusted to build those URLs when
    ``public_url`` is not set; any other ``Host`` is ignored."""
    a2a_card_needs_key: bool = False
    """An A2A agent card needs the API key (401 without one, like every route). Off (the default):
    a request without a key gets the same name-only card for every name, known or not — A2A clients
    read a card before they send a key, and nothing in it tells agents apart; with a key the card
    has the agent's ``description`` and ``skills``, and an unknown name is 404."""
    a2a_list_bytes: int = 1_048_576
    """The most bytes of tasks (as encoded) one A2A ``ListTasks`` page holds; the page ends before
    the task that would pass it and ``nextPageToken`` continues (a page holds one task at least,
    and each listed answer is cut: :mod:`kanawa.server.http.protocols.a2a.listing`)."""
    cors_origins: tuple[str, ...] = ()
    """Origins whose browser pages may call the service (:mod:`kanawa.server.http.cors`;
    ``("*",)``: any). None by default: no response carries CORS headers."""
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, **overrides: object) -> Self:
        """Settings from ``KANAWA_*`` variables, then ``overrides`` (``None`` values are ignored).

        Raises ``ValueError`` naming the variable when one is malformed."""
        env = ENVIRONMENT

        def text(name: str) -> str:
            return os.environ.get(env[name], "").strip()

        keys_file = text("api_keys_file")
        base = cls(
            api_keys=text("api_keys"),
            api_keys_file=Path(keys_file) if keys_file else None,
            redis_url=text("redis_url") or None,
            redis_prefix=text("redis_prefix") or "kanawa:",
            celery_broker=text("celery_broker") or None,
            celery_queue=text("celery_queue") or "kanawa-runs",
            run_ttl=_env_float(env["run_ttl"], 3600.0, minimum=1.0),
            run_buffer=_env_int(env["run_buffer"], 10_000, minimum=16),
            sse_ping=_env_float(env["sse_ping"], 15.0, minimum=0.05),
            max_request_bytes=_env_int(env["max_request_bytes"], 1_048_576, minimum=1024),
            max_head_bytes=_env_int(env["max_head_bytes"], 32_768, minimum=1024),
            max_headers=_env_int(env["max_headers"], 100, minimum=8),
            head_timeout=_env_float(env["head_timeout"], 10.0, minimum=0.1),
            rate_limit=_env_int(env["rate_limit"], 600),
            max_runs=_env_int(env["max_runs"], 64, minimum=1),
            tenant_max_tokens=_env_optional_int(env["tenant_max_tokens"]),
            tenant_max_requests=_env_optional_int(env["tenant_max_requests"]),
            tenant_max_cost_usd=_env_optional_float(env["tenant_max_cost_usd"]),
            serve_agents=text("serve_agents") or None,
            serve_extensions=text("serve_extensions") or None,
            gc_freeze=_env_bool(env["gc_freeze"], True),
            gc_threshold=_env_int(env["gc_threshold"], 10_000),
            sse_write_timeout=_env_float(env["sse_write_timeout"], 30.0, minimum=0.05),
            max_streams=_env_int(env["max_streams"], 256),
            max_run_streams=_env_int(env["max_run_streams"], 32),
            mcp_sessions=_env_int(env["mcp_sessions"], 32),
            mcp_session_idle=_env_float(env["mcp_session_idle"], 300.0, minimum=1.0),
            mcp_event_bytes=_env_int(env["mcp_event_bytes"], 64 * 1024 * 1024, minimum=65536),
            auth_failures=_env_int(env["auth_failures"], 30),
            tenant_run_bytes=_env_int(env["tenant_run_bytes"], 256 * 1024 * 1024),
            run_bytes=_env_int(env["run_bytes"], 1024 * 1024 * 1024),
            public_url=text("public_url") or None,
            allowed_hosts=checked_hosts(text("allowed_hosts")),
            a2a_card_needs_key=_env_bool(env["a2a_card_needs_key"], False),
            a2a_list_bytes=_env_int(env["a2a_list_bytes"], 1_048_576, minimum=65_536),
            cors_origins=checked_origins(text("cors_origins")),
        )
        given = {key: value for key, value in overrides.items() if value is not None}
        return replace(base, **given)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        if self.public_url is not None:
            object.__setattr__(self, "public_url", checked_public_url(self.public_url))
        object.__setattr__(self, "allowed_hosts", checked_hosts(self.allowed_hosts))
        object.__setattr__(self, "cors_origins", checked_origins(self.cors_origins))

    @property
    def keys_configured(self) -> bool:
        return bool(self.api_keys) or self.api_keys_file is not None


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"{name} must be 1 or 0 (true/false), not {raw!r}")


def _env_optional_int(name: str) -> int | None:
    text = os.environ.get(name, "").strip()
    return None if not text else _env_int(name, 0, minimum=1)


def _env_optional_float(name: str) -> float | None:
    text = os.environ.get(name, "").strip()
    return None if not text else _env_float(name, 0.0, minimum=0.0)


__all__ = [
    "ENVIRONMENT",
    "HOST_HEADER",
    "ServerSettings",
    "checked_hosts",
    "checked_origins",
    "checked_public_url",
]
