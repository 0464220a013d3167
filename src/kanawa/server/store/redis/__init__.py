""":class:`RedisRunStore`: runs in Redis, so any worker can stream, resume or cancel any run.

The package's modules, read in this order:

- :mod:`.scripts` — the settings, the Lua scripts and how a write is packed on the wire;
- :mod:`.hub` — :class:`StreamHub`: one ``XREAD BLOCK`` connection per process, fanning entries out;
- :mod:`.commit` — the group commit of all runs' writes, and a run's writer-side upkeep;
- :mod:`.store` — :class:`RedisRunStore` itself (its docstring has the key layout).

Internal to the server, like the rest of :mod:`kanawa.server.store`: import the store from
:mod:`.store`.
"""

__all__: list[str] = []
