"""kanawa's loggers, all under ``kanawa``.

A library logs; the application decides where logs go. The ``kanawa`` logger gets a ``NullHandler``
so that, when an application has configured no logging, Python's last-resort handler does not print
kanawa's warnings (retries, trace I/O problems) to its stderr. Done here, not in ``kanawa/__init__``,
so that ``import kanawa`` does not pay for importing :mod:`logging`.

Every logger handed out here carries :data:`kanawa.secrets.SECRET_FILTER`, so a key that reaches a log
record (in the message, its arguments, an exception's text or an extra) is masked before any handler
sees it (DESIGN principle 5).
"""

from __future__ import annotations

import logging

from kanawa.secrets import protect

_ROOT = protect(logging.getLogger("kanawa"))
if not any(isinstance(handler, logging.NullHandler) for handler in _ROOT.handlers):
    _ROOT.addHandler(logging.NullHandler())


def get_logger(name: str) -> logging.Logger:
    """The logger ``name`` (which should start with ``kanawa``), with the secret-masking filter."""
    return protect(logging.getLogger(name))
