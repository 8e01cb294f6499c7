"""Fixtures for the host tests."""

from tests.sidecar.host.support import host, statuses

__all__ = ["host", "statuses"]
