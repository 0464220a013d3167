"""What a cassette keeps of an exchange: everything but credentials (DESIGN principle 5).

A cassette is meant to be committed next to the tests, so nothing that opens an account may reach it.
Before an exchange is kept, in memory or on disk:

* a header whose name is a credential's (``Authorization``, ``api-key``, ``x-api-key``,
  ``x-goog-api-key``, ``Cookie``, ``Set-Cookie`` … — :func:`kanawa.secrets.is_secret_name`) keeps its
  name and gets the value ``[REDACTED]``;
* every other header value, the URL (``?key=…`` query parameters included) and both bodies go through
  :func:`kanawa.secrets.mask`: the keys the adapters were built with (registered when their clients
  were made), the provider key variables' values, and key-shaped text of every supported provider;
* a body that is not UTF-8 text (an image a model returned) is kept as it came: no text rule applies
  to it.
"""

from __future__ import annotations

from collections.abc import Iterable

from kanawa.secrets import MASK, is_secret_name, mask
from kanawa.testing.cassette import Headers

DROPPED_RESPONSE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Response headers a cassette does not keep: its body is stored decoded and replayed whole, so
these no longer describe it."""


def scrub_headers(headers: Iterable[tuple[str, str]], *, drop: frozenset[str] = frozenset()) -> Headers:
    """Header pairs → a cassette's header mapping (lower-case names, lists of values), scrubbed."""
    kept: Headers = {}
    for name, value in headers:
        key = name.lower()
        if key in drop:
            continue
        kept.setdefault(key, []).append(MASK if is_secret_name(key) else mask(value))
    return kept


def scrub_body(body: bytes) -> bytes:
    """A body with every secret masked (UTF-8 text only; other bytes are kept as they are)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return body
    return mask(text).encode("utf-8")


def scrub_uri(uri: str) -> str:
    """A URL with credential query parameters and key-shaped text masked."""
    return mask(uri)


__all__ = ["DROPPED_RESPONSE_HEADERS", "scrub_body", "scrub_headers", "scrub_uri"]
