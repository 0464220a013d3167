"""Where runs live while they stream: records, numbered chunks, checkpoints, and the readers the
writer feeds directly (:mod:`.base` holds the contract, :mod:`.memory` and :mod:`.redis` the two
stores). The lowest layer of the server: it imports nothing of the run layer or the HTTP layer and
knows nothing of run events, HTTP or any wire format. Internal to the server: nothing here is public
API (``kanawa.server`` lists what is)."""

__all__: list[str] = []
