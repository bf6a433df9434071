"""The bench's ``--server``: each worker's command line under Daphne, Uvicorn and
Granian, with the same port, backlog and websocket limits (no process starts)."""

from __future__ import annotations

import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench import servers
from bench.servers import Workers, server_command

APP = "narrator.asgi:application"


def _value(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        (
            "daphne",
            [
                *("-m", "daphne", "-e", "tcp:port=8750:interface=127.0.0.1:backlog=4096"),
                *("-v", "0", "--ping-interval", "20", "--ping-timeout", "30"),
                # make run's message limit (settings.WS_MAX_FRAME_BYTES), which
                # Daphne applies to what it sends too: the bench serves as it does.
                *("--websocket-max-message-size", "1048576", APP),
            ],
        ),
        (
            "uvicorn",
            [
                *("-m", "uvicorn", "--host", "127.0.0.1", "--port", "8750"),
                *("--backlog", "4096", "--lifespan", "off"),
                *("--loop", "uvloop", "--http", "httptools", "--ws", "websockets-sansio"),
                *("--ws-max-size", "65536", "--ws-per-message-deflate", "false"),
                *("--ws-ping-interval", "20", "--ws-ping-timeout", "30"),
                *("--log-level", "warning", "--no-access-log", APP),
            ],
        ),
        (
            "granian",
            [
                *("-m", "granian", "--interface", "asginl", "--host", "127.0.0.1"),
                *("--port", "8750", "--backlog", "4096", "--workers", "1"),
                *("--log-level", "warning", "--no-access-log", APP),
            ],
        ),
    ],
)
def test_each_server_serves_the_app_on_loopback_with_daphnes_backlog_and_limits(server, expected):
    assert server_command(server, APP, 8750) == expected


def test_an_unknown_server_is_refused():
    with pytest.raises(ValueError, match="unknown server 'hypercorn'"):
        server_command("hypercorn", APP, 8750)


class _Started:
    """Stands in for subprocess.Popen: records each command, starts nothing."""

    commands: list[list[str]] = []

    def __init__(self, command, **kwargs):
        _Started.commands.append(command)
        self.pid = 0


@pytest.mark.parametrize("server", servers.SERVERS)
def test_workers_start_one_process_per_port_under_the_chosen_server(server, monkeypatch, tmp_path):
    _Started.commands = []
    monkeypatch.setattr(servers.subprocess, "Popen", _Started)
    monkeypatch.setattr(servers, "wait_for_port", lambda port, proc: None)
    Workers(APP, [8750, 8751], {}, tmp_path, server=server).start()
    assert _Started.commands == [
        [sys.executable, *server_command(server, APP, port)] for port in (8750, 8751)
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"{server}-8750.log",
        f"{server}-8751.log",
    ]


@pytest.mark.parametrize("server", ["daphne", "uvicorn"])
def test_a_profiled_worker_runs_its_server_under_cprofile(server, monkeypatch, tmp_path):
    _Started.commands = []
    monkeypatch.setattr(servers.subprocess, "Popen", _Started)
    monkeypatch.setattr(servers, "wait_for_port", lambda port, proc: None)
    Workers(APP, [8750], {}, tmp_path, profile=tmp_path, server=server).start()
    (command,) = _Started.commands
    assert command[1:6] == ["-m", "cProfile", "-o", str(tmp_path / "narrator-8750.pstats"), "-m"]
    assert command[6:] == server_command(server, APP, 8750)[1:]


def test_granian_cannot_be_profiled_since_its_app_runs_in_a_child_process(tmp_path):
    with pytest.raises(CommandError, match="--profile needs --server daphne or uvicorn"):
        call_command("bench", "--server", "granian", "--profile", str(tmp_path))


def test_the_bench_command_offers_exactly_the_three_servers():
    with pytest.raises(CommandError, match="invalid choice: 'hypercorn'"):
        call_command("bench", "--server", "hypercorn")
