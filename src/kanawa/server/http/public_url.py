"""The address clients are told to use: never taken from a request's ``Host`` header on trust.

A URL the server writes for clients to follow (an A2A agent card's endpoint, where clients then send
their bearer keys) must not come from what the request claims: a request with ``Host: evil.example``
would otherwise get a card pointing at evil.example. In order:

1. ``KANAWA_PUBLIC_URL`` (``https://agents.example.com`` or with a path prefix,
   ``https://example.com/kanawa``): the address people reach the service at — what a server behind a
   proxy or load balancer must set;
2. the request's ``Host``, only when its host name is in ``KANAWA_ALLOWED_HOSTS`` (exact names, or
   ``*.example.com`` for any name under that domain); the scheme is the connection's;
3. the server's own address: where the connection arrived (the listening socket's address and port,
   which a client cannot choose; for ``--host 0.0.0.0`` the interface it reached).
"""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request

from kanawa.server.settings import HOST_HEADER, ServerSettings


def host_allowed(host: str, allowed: tuple[str, ...]) -> bool:
    """Whether ``host`` (a ``Host`` header: a name or bracketed IPv6 address, and a port) names one of
    ``allowed``: an exact name, or ``*.domain`` for any name under ``domain``."""
    match = HOST_HEADER.fullmatch(host)
    if match is None:
        return False
    name = match["name"].lower()
    return any(
        name == pattern or (pattern.startswith("*.") and name.endswith(pattern[1:])) for pattern in allowed
    )


def own_address(request: Request) -> str:
    """``scheme://host:port`` of the socket the request arrived on (module docstring, 3)."""
    server = request.scope.get("server")
    scheme = request.url.scheme
    if not server or server[1] is None:  # a Unix socket: no address a client could use
        return f"{scheme}://localhost"
    host, port = server
    if ":" in host:
        host = f"[{host}]"
    default = (scheme == "http" and port == 80) or (scheme == "https" and port == 443)
    return f"{scheme}://{host}" if default else f"{scheme}://{host}:{port}"


def public_base(request: Request, settings: ServerSettings) -> str:
    """The service's base URL for clients (module docstring), without a trailing slash."""
    if settings.public_url:
        return settings.public_url
    root = str(request.scope.get("root_path", "")).rstrip("/")
    host = request.headers.get("host", "")
    if settings.allowed_hosts and host_allowed(host, settings.allowed_hosts):
        return f"{request.url.scheme}://{host}{root}"
    return own_address(request) + root


def public_url(request: Request, settings: ServerSettings, *segments: str) -> str:
    """``public_base`` followed by ``segments``, each percent-encoded as one path segment."""
    return public_base(request, settings) + "".join("/" + quote(one, safe="") for one in segments)


__all__ = ["host_allowed", "own_address", "public_base", "public_url"]
