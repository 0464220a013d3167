"""A2A (agent-to-agent protocol 1.0, and 0.3's method names) server: every served agent at
``/a2a/{agent}`` (:mod:`.routes`; what they do, :mod:`.rpc`), built on the official ``a2a-sdk``
server components. An A2A task is a kanawa run (:mod:`.tasks`)."""

__all__: list[str] = []
