"""Running served agents: the run manager, a run's execution, checkpoints, tenant budgets, Celery
workers, the servable-agent surface and the one translation of run events into chunks. The middle
layer of the server: it uses the store (:mod:`kanawa.server.store`) and never the HTTP layer.
Internal to the server: ``kanawa.server`` lists what is public."""

__all__: list[str] = []
