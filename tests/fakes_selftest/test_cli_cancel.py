"""A hanging scripted reply lets cancel tests see the real CLIs abandon the HTTP request."""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path

import pytest

from tests.fakes.model_server import Reply, ScriptedModelServer
from tests.setup.agent_clis import AgentClis, claude_env, codex_env

pytestmark = pytest.mark.slow


def _spawn(
    cli: str, clis: AgentClis, server: ScriptedModelServer, tmp_path: Path
) -> subprocess.Popen[str]:
    work = tmp_path / "work"
    work.mkdir()
    if cli == "claude":
        env = claude_env(server.url, tmp_path / "home")
        argv = [clis.claude, "-p", "x", "--output-format", "stream-json", "--verbose"]
    else:
        env = codex_env(server.url, tmp_path / "home")
        argv = [clis.codex, "exec", "--json", "--skip-git-repo-check", "-C", work, "x"]
    return subprocess.Popen(
        [str(a) for a in argv],
        env=env,
        cwd=work,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


@pytest.mark.parametrize("mid_stream", [False, True], ids=["before-headers", "mid-stream"])
@pytest.mark.parametrize("cli", ["claude", "codex"])
def test_interrupted_cli_drops_the_hanging_request(
    cli: str,
    mid_stream: bool,
    agent_clis: AgentClis,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    server: ScriptedModelServer = request.getfixturevalue(
        "scripted_anthropic" if cli == "claude" else "scripted_responses"
    )
    release = threading.Event()
    server.push(Reply.text("never sent").after(release, mid_stream=mid_stream))
    process = _spawn(cli, agent_clis, server, tmp_path)
    try:
        server.wait_for_generations(1, timeout=60)
        process.send_signal(signal.SIGINT)
        abandoned = server.disconnects.get(timeout=30)
        assert abandoned.client_disconnected.is_set()
        process.communicate(timeout=30)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
        out, err = process.communicate()
        print(f"exit {process.returncode}\nstdout {out}\nstderr {err}")
