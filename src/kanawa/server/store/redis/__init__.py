""":class:`RedisRunStore`: runs in Redis, so any worker can stream, resume or cancel any run.

The package's modules, read in this order:

- :mod:`.scripts` — the settings, the Lua scripts and how a write is packed on the wire;
- :mod:`.hub` — :class:`StreamHub`: one ``XREAD BLOCK`` connection per process, fanning entries out;
- :mod:`.commit` — the group commit of all runs' writes, and a run's writer-side upkeep;
- :mod:`.store` — :class:`RedisRunStore` itself (its docstring has the key layout).
"""

from __future__ import annotations

from kanawa.server.store.redis.hub import StreamHub
from kanawa.server.store.redis.store import RedisRunStore

__all__ = ["RedisRunStore", "StreamHub"]
