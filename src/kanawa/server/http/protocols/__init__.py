"""One module per wire protocol, each a thin adapter from a run's chunks to its wire format."""

__all__: list[str] = []
