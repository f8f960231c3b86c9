#!/usr/bin/env python3
"""The yardstick for flaky-server: the lab's original downstream was a small Python script.

The same job with the standard library only: /fast answers 200, every request but /count is
counted under a lock, /count answers {"count": N}; HTTP/1.1 keep-alive, one thread per
connection (ThreadingHTTPServer). Prints 'listening on http://HOST:PORT' like flaky-server.

As written, http.server sends a response's head and body in separate writes, and Nagle's
algorithm holds the second until the client's delayed ACK (~40 ms) -- the trap a naive server
falls into. `--nodelay` sets the handler's own switch for it (disable_nagle_algorithm), to show
the server with the trap removed as well.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
count = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as wrk and flaky-server use

    def do_GET(self):
        global count
        if self.path == "/count":
            with lock:
                body = json.dumps({"count": count}).encode()
            ctype = "application/json"
        else:
            with lock:
                count += 1
            body, ctype = (b"fast\n", "text/plain") if self.path == "/fast" else (b"no such endpoint\n", "text/plain")
        self.send_response(200 if self.path in ("/fast", "/count") else 404)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # no access log, as flaky-server without --log
        pass


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--nodelay"]
    Handler.disable_nagle_algorithm = "--nodelay" in sys.argv[1:]
    port = int(args[0]) if args else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
