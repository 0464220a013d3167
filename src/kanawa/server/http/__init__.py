"""The service's HTTP surface: routers, and one module per wire protocol under ``protocols/``."""
