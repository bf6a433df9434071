"""Loopback ports for the servers the tests start (Daphne processes)."""

from __future__ import annotations

import socket


def listening_socket(ports: range, start: int = 0) -> socket.socket:
    """A socket listening on 127.0.0.1 at the first free port of ``ports``
    (trying from index ``start``, wrapping round), inheritable so that a child
    process serves on it (``daphne --fd N`` with ``pass_fds``).

    Bound here, so no other process, this run's or another run's sharing the
    machine, can take the port between its choice and the server's start, and
    it accepts connections (queued) before the server is up. Close it in the
    parent once the child has it. RuntimeError if every port is taken.
    """
    for offset in range(len(ports)):
        port = ports[(start + offset) % len(ports)]
        sock = socket.socket()
        # Reuse a port whose old connections linger in TIME_WAIT (a server
        # restarted on its port); a port someone listens on still fails.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        sock.listen(128)
        sock.set_inheritable(True)
        return sock
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")
