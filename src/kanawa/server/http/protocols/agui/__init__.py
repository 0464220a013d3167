"""AG-UI over kanawa's runs: the routes (:mod:`.routes`), a ``RunAgentInput`` as a run's input
(:mod:`.inputs`), and a run's chunks as AG-UI events (:mod:`.events`)."""

__all__: list[str] = []
