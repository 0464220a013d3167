"""The Vercel AI SDK's chat over kanawa's runs: the routes (:mod:`.routes`), ``useChat``'s request as
a run's input (:mod:`.inputs`), and a run's chunks as the UI message stream (:mod:`.events`)."""

__all__: list[str] = []
