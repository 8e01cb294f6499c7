"""Test set-up helpers (tools installed for tests, offline environments)."""
