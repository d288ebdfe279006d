"""Round trips between a store and its PostgreSQL server, counted on the wire (and, for the
benchmarks, made to cost what a network makes them cost).

:class:`Relay` is a loopback TCP relay between the store and the server: every byte passes
through it, and a round trip is counted each time the server answers after the client has sent
(bytes from the client, then bytes from the server). It counts what went over the wire, whatever
the code above did (pipelined statements, a statement run on another pooled connection alike),
without touching the client library. With ``delay``, every chunk is held that long before it is
passed on, in order, so each round trip costs twice the delay, as across a network.
"""

from __future__ import annotations

import contextlib
import heapq
import selectors
import socket
import threading
import time
from types import TracebackType
from urllib.parse import urlsplit, urlunsplit


class Relay:
    """``with Relay(url) as relay:`` open the store on ``relay.url``; ``relay.trips`` is the
    number of round trips so far (:meth:`reset` sets it back to zero); ``delay`` (seconds) is
    added to every crossing in each direction."""

    def __init__(self, url: str, delay: float = 0.0) -> None:
        parts = urlsplit(url)
        self._server = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._listener = socket.create_server(("127.0.0.1", 0))
        port = self._listener.getsockname()[1]
        netloc = parts.netloc.rsplit("@", 1)
        host = f"127.0.0.1:{port}"
        self.url = urlunsplit(
            parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host)
        )
        self.delay = delay
        self._lock = threading.Lock()
        self._trips = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._held: list[tuple[float, int, socket.socket, bytes]] = []
        self._order = 0

    @property
    def trips(self) -> int:
        with self._lock:
            return self._trips

    def reset(self) -> None:
        with self._lock:
            self._trips = 0

    def __enter__(self) -> Relay:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._listener.close()

    def _pass(self, peer: socket.socket, data: bytes) -> None:
        if not self.delay:
            with contextlib.suppress(OSError):
                peer.sendall(data)
            return
        self._order += 1
        heapq.heappush(self._held, (time.monotonic() + self.delay, self._order, peer, data))

    def _release(self) -> float:
        """Pass on what is due; returns how long until the next is."""
        now = time.monotonic()
        while self._held and self._held[0][0] <= now:
            _, _, peer, data = heapq.heappop(self._held)
            with contextlib.suppress(OSError):
                peer.sendall(data)
        return self._held[0][0] - now if self._held else 0.05

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        self._listener.setblocking(False)
        sel.register(self._listener, selectors.EVENT_READ, None)
        last: dict[int, str] = {}  # per client connection: who sent last
        while not self._stop.is_set():
            for key, _ in sel.select(timeout=min(0.05, self._release())):
                if key.data is None:
                    client, _ = self._listener.accept()
                    server = socket.create_connection(self._server)
                    for s in (client, server):
                        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    sel.register(client, selectors.EVENT_READ, (server, "client", client.fileno()))
                    sel.register(server, selectors.EVENT_READ, (client, "server", client.fileno()))
                    continue
                source = key.fileobj
                assert isinstance(source, socket.socket)
                peer, side, pair = key.data
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    for s in (source, peer):
                        with contextlib.suppress(KeyError, ValueError):
                            sel.unregister(s)
                        s.close()
                    continue
                if side == "server" and last.get(pair) == "client":
                    with self._lock:
                        self._trips += 1
                last[pair] = side
                self._pass(peer, data)
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        sel.close()
