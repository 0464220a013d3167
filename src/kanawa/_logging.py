"""kanawa's loggers, all under ``kanawa``.

A library logs; the application decides where logs go. The ``kanawa`` logger gets a ``NullHandler``
so that, when an application has configured no logging, Python's last-resort handler does not print
kanawa's warnings (retries, trace I/O problems) to its stderr. Done here, not in ``kanawa/__init__``,
so that ``import kanawa`` does not pay for importing :mod:`logging`.
"""

from __future__ import annotations

import logging

_ROOT = logging.getLogger("kanawa")
if not any(isinstance(handler, logging.NullHandler) for handler in _ROOT.handlers):
    _ROOT.addHandler(logging.NullHandler())


def get_logger(name: str) -> logging.Logger:
    """The logger ``name`` (which should start with ``kanawa``)."""
    return logging.getLogger(name)
