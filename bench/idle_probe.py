#!/usr/bin/python3
"""Holds 1000 idle keep-alive connections (each has made one request) and 100 that sent half a
request, then times 100 fresh clients' GET /count on a new connection each: p50 and p99 in ms.

    idle_probe.py PORT
"""
import socket
import sys
import time

port = int(sys.argv[1])
held = []
for _ in range(1000):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
    s.recv(4096)
    held.append(s)
for _ in range(100):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /count HTTP/1.1\r\nHost: x\r\n")
    held.append(s)
times = []
for _ in range(100):
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"GET /count HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    reply = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        reply += chunk
    s.close()
    times.append((time.perf_counter() - t0) * 1000)
    assert reply.startswith(b"HTTP/1.1 200"), reply[:80]
times.sort()
print(f"p50 {times[49]:.2f} ms  p99 {times[98]:.2f} ms  max {times[-1]:.2f} ms  (100 fresh GET /count)")
