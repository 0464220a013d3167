"""Applications built on kanawa's agents: each subpackage is one product (``kanawa.apps.smartao``)."""
