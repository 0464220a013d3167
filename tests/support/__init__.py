"""Helpers shared by several test packages (real services started for the suite)."""
