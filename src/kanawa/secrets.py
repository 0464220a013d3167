"""The one rule that keeps credentials out of everything kanawa shows or writes (DESIGN principle 5).

Every error message, exception chain, log record and trace field that may carry provider text goes
through :func:`mask`. It hides two kinds of text:

1. **the configured key values themselves**, wherever they appear: each adapter registers the key its
   client was built with (whether it came from ``api_key=``, an environment variable or a given
   client) and the values of credential-named headers it sends (``default_headers``); the provider
   environment variables (:data:`KEY_ENVIRONMENT_VARIABLES`) are read at masking time, so a key is
   masked even where no adapter was built. :func:`register_secret` adds values of your own.
2. **key-shaped text of every supported provider**: OpenAI ``sk-…``/``sk-proj-…``, Anthropic
   ``sk-ant-…``, Google ``AIza…``, GitHub and Slack tokens, ``Bearer``/``Basic`` credentials, the
   value after a credential-named header or field (``Authorization:``, ``x-api-key:``,
   ``x-goog-api-key:``, ``"api_key": "…"``, ``client_secret=…``) and credential query parameters
   (``?key=…``, ``&access_token=…``).

What it cannot promise: a server that transforms a key before echoing it (reversed, base64-encoded
on its own, only a fragment of a key that is not key-shaped) is beyond a text rule; and registered
values shorter than :data:`MIN_SECRET_LENGTH` characters are not masked (they would blank ordinary
words out of every message).

The same rule reaches logs through :class:`SecretMaskingFilter`, which :func:`install_log_filter`
puts on kanawa's loggers and on the loggers of the provider SDKs and their HTTP transports
(:data:`LOGGER_PREFIXES`), so a DEBUG line an SDK writes is masked before any handler formats it.
With the SDK versions this project locks (openai 3.54, anthropic 2.12, google-genai 3.4, httpx2 and
httpcore2 2.16) no SDK logs the credential it sends, even at DEBUG; what reaches their DEBUG lines is
what a server sends back (``httpcore2`` logs every response header), and that is what the filter
masks — ``tests/llm/test_key_echo.py`` captures every logger at DEBUG to prove it.

This module imports only the standard library: every layer may use it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import traceback
from collections.abc import Iterable, Mapping
from typing import Final

MASK: Final = "[REDACTED]"
"""What a secret is replaced with."""

MIN_SECRET_LENGTH: Final = 6
"""Registered values shorter than this are ignored (see the module docstring)."""

KEY_ENVIRONMENT_VARIABLES: Final = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "KANAWA_CHAT_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_AD_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
)
"""Environment variables whose values are always masked (the keys the adapters read)."""

LOGGER_PREFIXES: Final = (
    "kanawa",
    "openai",
    "anthropic",
    "google_genai",
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "aiohttp",
)
"""Logger trees :func:`install_log_filter` covers: kanawa's own, the SDKs' and their transports'."""

# ------------------------------------------------------------------------------- key-shaped text

_SECRET_NAME: Final = (
    r"(?:proxy-)?authorization|x-goog-api-key|x-api-key|api-key|[A-Za-z0-9_-]{0,40}api_?key"
    r"|[A-Za-z0-9_-]{0,40}(?:access|auth|refresh|bearer|session|id)[_-]token"
    r"|[A-Za-z0-9_-]{0,40}(?:secret|password)|passwd|(?:set-)?cookie"
)
_KEY_SHAPES: Final = re.compile(
    r"""
      \bsk-[A-Za-z0-9_\-]{16,}                   # OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-)
    | \bAIza[0-9A-Za-z_\-]{20,}                  # Google API keys
    | \bgh[pousr]_[A-Za-z0-9]{20,}               # GitHub tokens
    | \bgithub_pat_[A-Za-z0-9_]{20,}
    | \bxox[abprs]-[A-Za-z0-9\-]{10,}            # Slack tokens
    """,
    re.VERBOSE,
)
_SCHEME: Final = re.compile(r"\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=\-]{8,}", re.IGNORECASE)
_NAMED_VALUE: Final = re.compile(
    rf"""
    (?P<head>\b(?:{_SECRET_NAME})              # a credential-named header or field …
       ['"]?\s*[:=]\s*                         # … its separator (header, JSON, repr, query, env) …
       (?:b?['"])?                             # … an opening quote (also bytes: b'…')
       (?:(?:Bearer|Basic|Token)\s+)?)         # … and an auth scheme, which stays readable
    (?P<value>(?!\[REDACTED\]|(?:Bearer|Basic|Token)\s)[^\s'",;&)}}\]]{{4,}})
    """,
    re.IGNORECASE | re.VERBOSE,
)
_HEADER_TUPLE: Final = re.compile(
    rf"""(?P<head>\(b?['"](?:{_SECRET_NAME})['"],\s*b?['"](?:(?:Bearer|Basic|Token)\s+)?)"""
    r"""(?P<value>(?!\[REDACTED\]|(?:Bearer|Basic|Token)\s)[^'"]{4,})""",
    re.IGNORECASE,
)
"""Headers logged as ``(b'x-api-key', b'…')`` pairs (the HTTP transports' DEBUG lines)."""
_QUERY: Final = re.compile(
    r"(?P<head>[?&](?:key|api_?key|access_token|token|sig|signature)=)(?P<value>[^&#\s'\"]{4,})",
    re.IGNORECASE,
)

_SCHEME_WORDS: Final = ("bearer", "basic", "token")
_NAME_WORDS: Final = ("key", "token", "secret", "password", "passwd", "authorization", "cookie", "sig")
"""Cheap substring checks that skip the name-based patterns for text that cannot match them."""

_SECRET_KEY_NAMES: Final = frozenset(
    {
        "authorization",
        "proxy_authorization",
        "cookie",
        "set_cookie",
        "password",
        "passwd",
        "pwd",
        "secret",
        "token",
        "api_key",
        "apikey",
        "x_api_key",
        "x_goog_api_key",
        "credentials",
        "private_key",
    }
)
_SECRET_KEY_SUFFIXES: Final = ("_api_key", "_apikey", "_secret", "_password", "_token", "_private_key")


def is_secret_name(name: str) -> bool:
    """Whether a header, field or mapping key names a credential (``api_key``, ``X-Api-Key``,
    ``client_secret``, ``Authorization`` …). Counts such as ``max_tokens`` are not: only an exact
    ``token`` or a ``_token`` suffix is."""
    key = name.strip().lower().replace("-", "_")
    return key in _SECRET_KEY_NAMES or key.endswith(_SECRET_KEY_SUFFIXES)


# --------------------------------------------------------------------------- configured values


class _Registry:
    """The secret values registered so far, and one compiled pattern for them (rebuilt on change)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._key: frozenset[str] = frozenset()

    def add(self, value: str) -> None:
        with self._lock:
            self._values.add(value)

    def discard(self, value: str) -> None:
        with self._lock:
            self._values.discard(value)

    def pattern(self) -> re.Pattern[str] | None:
        environment = (os.environ.get(name, "").strip() for name in KEY_ENVIRONMENT_VARIABLES)
        with self._lock:
            values = frozenset(v for v in (*self._values, *environment) if len(v) >= MIN_SECRET_LENGTH)
            if values != self._key:
                self._key = values
                longest_first = sorted(values, key=len, reverse=True)
                self._pattern = re.compile("|".join(map(re.escape, longest_first))) if values else None
            return self._pattern


_REGISTRY = _Registry()


def register_secret(value: str | None) -> None:
    """Mask ``value`` everywhere from now on (blank, ``None`` and very short values are ignored)."""
    if isinstance(value, str) and len(value.strip()) >= MIN_SECRET_LENGTH:
        _REGISTRY.add(value.strip())


def forget_secret(value: str) -> None:
    """Stop masking a value registered with :func:`register_secret` (a rotated key, a test)."""
    _REGISTRY.discard(value.strip())


def register_headers(headers: Mapping[str, str] | None) -> None:
    """Register the values of credential-named headers (``Authorization``, ``x-api-key`` …), with and
    without their auth scheme, so a proxy token sent on every request is masked like a key."""
    for name, value in (headers or {}).items():
        if isinstance(value, str) and is_secret_name(name):
            register_secret(value)
            scheme, _, rest = value.strip().partition(" ")
            if rest and scheme.lower() in ("bearer", "basic", "token"):
                register_secret(rest)


def guard_credentials(*keys: object, headers: Mapping[str, str] | None = None) -> None:
    """What every adapter calls once its client is built: register the ``keys`` it will send (non-string
    values such as ``None`` are skipped) and the credential-named ``headers``, and install the log
    filter (the SDK is imported by then, so its loggers exist)."""
    for key in keys:
        if isinstance(key, str):
            register_secret(key)
    register_headers(headers)
    install_log_filter()


# ----------------------------------------------------------------------------------- masking


def mask(text: str) -> str:
    """``text`` with every registered value and every key-shaped substring replaced by :data:`MASK`."""
    if not text:
        return text
    known = _REGISTRY.pattern()
    if known is not None:
        text = known.sub(MASK, text)
    text = _KEY_SHAPES.sub(MASK, text)
    lowered = text.lower()
    if any(word in lowered for word in _SCHEME_WORDS):
        text = _SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    if any(word in lowered for word in _NAME_WORDS):
        for pattern in (_NAMED_VALUE, _HEADER_TUPLE, _QUERY):
            text = pattern.sub(lambda m: f"{m.group('head')}{MASK}", text)
    return text


def mask_value(value: object, *, _depth: int = 0) -> object:
    """A JSON-like value with secrets masked (containers are copied, never mutated).

    Strings go through :func:`mask_json_text`; a value under a credential-named key
    (:func:`is_secret_name`) becomes :data:`MASK` whatever its type (``None`` stays ``None``).
    Beyond 32 levels of nesting a container is replaced by :data:`MASK` (fail closed).
    """
    if isinstance(value, str):
        return mask_json_text(value)
    if isinstance(value, dict | list | tuple) and _depth > 32:
        return MASK
    if isinstance(value, dict):
        return {
            key: (MASK if item is not None else None)
            if isinstance(key, str) and is_secret_name(key)
            else mask_value(item, _depth=_depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [mask_value(item, _depth=_depth + 1) for item in value]
    return value


def mask_json_text(text: str) -> str:
    """:func:`mask`, except that JSON object/array text (tool arguments are raw JSON) is parsed and
    masked structurally, so ``{"api_key": "plain"}`` is caught by its key name too."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            return mask(text)
        masked = mask_value(parsed)
        if masked != parsed:
            return json.dumps(masked, ensure_ascii=False)
        return text
    return mask(text)


# ---------------------------------------------------------------------------------------- logs

_STANDARD_RECORD_FIELDS: Final = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class SecretMaskingFilter(logging.Filter):
    """Masks a log record in place: its message (arguments merged in), the text of its exception and
    stack, and string extras. Never drops a record.

    A record whose message changes gets ``msg`` = the masked text and ``args = None``; one whose
    exception text changes gets the masked text as ``exc_text`` and ``exc_info = None`` (the exception
    object itself would still carry the secret to a handler that formats it again).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the format: show what is there, masked
            message = f"{record.msg} {record.args!r}"
        masked = mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_info[1] is not None:
            text = record.exc_text or "".join(traceback.format_exception(record.exc_info[1]))
            clean = mask(text)
            if clean != text:
                record.exc_text, record.exc_info = clean.rstrip("\n"), None
        elif record.exc_text:
            record.exc_text = mask(record.exc_text)
        if record.stack_info:
            record.stack_info = mask(record.stack_info)
        for name, value in list(record.__dict__.items()):
            if name not in _STANDARD_RECORD_FIELDS and isinstance(value, str | dict | list | tuple):
                record.__dict__[name] = mask_value(value)
        return True


SECRET_FILTER: Final = SecretMaskingFilter()
"""The one filter instance every covered logger carries."""


def install_log_filter(*, prefixes: Iterable[str] = LOGGER_PREFIXES) -> None:
    """Put :data:`SECRET_FILTER` on the root logger of each prefix and on every logger that exists
    below it. Idempotent; adapters call it when they build their client (after the SDK is imported, so
    its module loggers exist) and :func:`kanawa._logging.get_logger` for kanawa's own loggers.

    A logger's filters see only the records created at that logger, not its children's: hence every
    existing logger of the tree, not only its root.
    """
    roots = tuple(prefixes)
    for root in roots:
        protect(logging.getLogger(root))
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and name.split(".", 1)[0] in roots:
            protect(logger)


def protect(logger: logging.Logger) -> logging.Logger:
    """Add :data:`SECRET_FILTER` to ``logger`` (once) and return it."""
    if SECRET_FILTER not in logger.filters:
        logger.addFilter(SECRET_FILTER)
    return logger


__all__ = [
    "KEY_ENVIRONMENT_VARIABLES",
    "LOGGER_PREFIXES",
    "MASK",
    "MIN_SECRET_LENGTH",
    "SECRET_FILTER",
    "SecretMaskingFilter",
    "forget_secret",
    "guard_credentials",
    "install_log_filter",
    "is_secret_name",
    "mask",
    "mask_json_text",
    "mask_value",
    "protect",
    "register_headers",
    "register_secret",
]
