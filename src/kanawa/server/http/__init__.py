"""The server's HTTP face: the FastAPI app assembled from routers, authentication, limits, pages,
the streaming response and the direct sender, and one module per wire protocol under
:mod:`.protocols`. The top layer: it uses the run layer and the store; nothing below imports it.
Internal to the server: ``kanawa.server`` lists what is public."""

__all__: list[str] = []
