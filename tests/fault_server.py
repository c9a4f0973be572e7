"""A hostile HTTP server on 127.0.0.1 for tests: it drips, floods or redirects on every path.

    with FaultServer("drip") as server:      # headers at once, then one body byte per `interval`
        client.get(server.url + "/anything")

Modes:
- `drip`: status and headers at once (Content-Length 100,000), then the body one byte per `interval`;
- `drip_headers`: the status line and headers themselves one byte per `interval`;
- `flood`: a 200 with no Content-Length and `size` bytes of body as fast as the socket takes them;
- `flood_declared`: the same with `Content-Length: size` said first;
- `redirect`: a 302 to `location` (which may carry credentials);
- `json`: a 200 with `body` (a JSON document), for a well-behaved answer.

Bounded and self-stopping: every answer stops when the client hangs up, or gives up after `max_s`
seconds (`HANG` by default: only a client that never hangs up meets it), the server's threads are
daemons, and leaving the `with` block shuts it down. What the tests count instead of timing:
`hits`, the requests it saw; `sent`, the body bytes it wrote; `hung_up`, the answers the client
cut off before their end (read `hung_up` with `eventually`: the server notices at its next write).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from helpers import HANG

CHUNK = 64 * 1024


class FaultServer:
    """See the module docstring."""

    def __init__(self, mode: str, *, interval: float = 0.2, size: int = 50_000_000, max_s: float = HANG,
                 location: str = "http://127.0.0.1:9/elsewhere", body: object = None) -> None:
        self.mode, self.interval, self.size, self.max_s = mode, interval, size, max_s
        self.location, self.body = location, body if body is not None else {}
        self.hits = 0
        self.sent = 0
        """Body bytes written to clients in all."""
        self.hung_up = 0
        """Answers the client cut off (it closed the connection while this server still wrote)."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _any(self) -> None:
                owner.hits += 1
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(min(length, 10_000_000))
                try:
                    owner._answer(self)
                except (BrokenPipeError, ConnectionResetError, TimeoutError, OSError):
                    owner.hung_up += 1  # the client hung up: that is the point

            do_GET = do_POST = do_PUT = do_DELETE = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def _answer(self, h: BaseHTTPRequestHandler) -> None:
        stop = time.monotonic() + self.max_s
        w = h.wfile
        if self.mode == "drip_headers":
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
            for i in range(len(head)):
                if time.monotonic() > stop:
                    return
                w.write(head[i : i + 1])
                w.flush()
                time.sleep(self.interval)
            return
        if self.mode == "redirect":
            h.send_response(302)
            h.send_header("Location", self.location)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        if self.mode == "json":
            data = json.dumps(self.body).encode()
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            w.write(data)
            return
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        if self.mode == "drip":
            h.send_header("Content-Length", "100000")  # under any cap: only the deadline can stop it
        elif self.mode == "flood_declared":
            h.send_header("Content-Length", str(self.size))
        else:
            h.send_header("Connection", "close")
        h.end_headers()
        w.flush()
        if self.mode == "drip":
            while time.monotonic() < stop:
                w.write(b" ")
                w.flush()
                self.sent += 1
                time.sleep(self.interval)
            return
        block = b'{"results": [{"text": "' + b"x" * (CHUNK - 24)
        sent = 0
        while sent < self.size and time.monotonic() < stop:
            w.write(block)
            sent += len(block)
            self.sent += len(block)
        h.close_connection = True

    def __enter__(self) -> "FaultServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
