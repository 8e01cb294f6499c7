"""Fixtures for the desktop tests: fake sidecar processes that are always stopped."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from desktop.ipc.process import SidecarProcess
from tests.desktop.support import FakeSender, build_fake_process

FakeProcessFactory = Callable[..., SidecarProcess]


@pytest.fixture
def fake_process_factory(data_dir: Path, qapp: object) -> Iterator[FakeProcessFactory]:
    """Builds fake sidecar processes in the test's data dir; stops them all afterwards."""
    built: list[SidecarProcess] = []

    def build(extra_env: Mapping[str, str] | None = None, max_restarts: int = 3) -> SidecarProcess:
        process = build_fake_process(data_dir, extra_env, max_restarts)
        built.append(process)
        return process

    yield build
    for process in built:
        process.stop(timeout_ms=2000)
        process.deleteLater()


@pytest.fixture
def fake_sender() -> FakeSender:
    return FakeSender()
