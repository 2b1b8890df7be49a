#!/usr/bin/env python3
"""hostile_http.py - hostile HTTP clients for tests/integration/t_62 and
bench/serve_load.sh (load "hostile").

    hostile_http.py PORT MODE [--seconds S]

Talks to 127.0.0.1:PORT only, from loopback source addresses 127.0.0.x
(Linux routes all of 127.0.0.0/8 to lo), and stops after S seconds (30),
or at SIGINT/SIGTERM: every attack is bounded in connections, bytes and
time.  MODE:

  attack   all of these at once, until S seconds have passed:
           - slow clients: SLOW_PER_ADDR connections from each of
             SLOW_ADDRS source addresses (more than the server's connection
             limit in total), each sending its request one byte a second,
             opened again when the server closes them;
           - a connection flood: connect and close, up to FLOOD_RATE a
             second, FLOOD_MAX in all, from one address;
           - oversized request targets and headers, many headers, POST and
             PUT with bodies, GET with a body or chunked, garbage request
             lines; each answered with a 4xx or a closed connection;
           - the probe (below), from an address of its own.
  probe    only the probe: every PROBE_EVERY seconds one GET each of
           /healthz, /readyz, /metrics and /api/v1/summary on a new
           connection from 127.0.0.200, with a 5 s limit (503s of /readyz
           before its first 200 are counted as "/readyz starting").
  sql      SQL metacharacters in every parameter of every endpoint, once.

Prints one JSON object: counts of each outcome per class, and the probe's
status codes and latencies.  Exit status 0 unless the tool itself failed.
"""
import json
import signal
import socket
import sys
import threading
import time
import urllib.parse

HOST = "127.0.0.1"
SLOW_ADDRS = 6          # 6 x 16 (the per-address limit) > 64 connections
SLOW_PER_ADDR = 16
SLOW_RECONNECTS = 600
FLOOD_RATE = 200
FLOOD_MAX = 3000
PROBE_EVERY = 0.5
PROBE_ADDR = "127.0.0.200"
PROBE_PATHS = ["/healthz", "/readyz", "/metrics", "/api/v1/summary"]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.d = {}

    def add(self, cls, outcome, n=1):
        with self.lock:
            c = self.d.setdefault(cls, {})
            c[outcome] = c.get(outcome, 0) + n


def connect(port, src=None, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if src:
        s.bind((src, 0))
    s.connect((HOST, port))
    return s


def read_status(s, limit=5.0):
    """The status code of the first response on s, 0 if it closed first."""
    s.settimeout(limit)
    buf = b""
    try:
        while b"\r\n" not in buf and len(buf) < 65536:
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
    except (socket.timeout, ConnectionError, OSError):
        pass
    line = buf.split(b"\r\n", 1)[0].split()
    if len(line) >= 2 and line[0].startswith(b"HTTP/") and line[1].isdigit():
        return int(line[1])
    return 0


def request(port, raw, src=None, limit=5.0):
    """Sends raw bytes, returns (status, seconds); status 0: closed or
    refused without an answer, -1: could not connect."""
    t0 = time.monotonic()
    try:
        s = connect(port, src, limit)
    except OSError:
        return -1, time.monotonic() - t0
    try:
        try:
            s.sendall(raw)
        except OSError:
            pass  # the server may answer and close before reading it all
        st = read_status(s, limit)
    finally:
        s.close()
    return st, time.monotonic() - t0


def get(path, extra=b""):
    return (b"GET " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
            extra + b"Connection: close\r\n\r\n")


# --- attacks ---------------------------------------------------------------

def slow_clients(port, stop, st):
    """Each connection sends a valid request one byte a second; one the
    server closes is opened again (SLOW_RECONNECTS in all), so the slow
    clients keep pressing on the connection limit."""
    req = get("/api/v1/summary", b"X-Slow: " + b"s" * 200 + b"\r\n")
    socks = []
    budget = [SLOW_RECONNECTS]

    def open_one(src):
        try:
            s = connect(port, src, 2.0)
            s.setblocking(False)
            socks.append([s, 0, src])
            st.add("slow", "connected")
        except OSError:
            st.add("slow", "refused")

    for a in range(SLOW_ADDRS):
        for _ in range(SLOW_PER_ADDR):
            open_one("127.0.0.%d" % (10 + a))
    while not stop.is_set() and socks:
        for e in list(socks):
            s, pos, src = e
            try:
                s.send(req[pos:pos + 1])
                e[1] = pos + 1
                if e[1] >= len(req):
                    st.add("slow", "request_complete")
                    s.close()
                    socks.remove(e)
            except BlockingIOError:
                pass
            except OSError:
                st.add("slow", "closed_by_server")
                s.close()
                socks.remove(e)
                if budget[0] > 0:
                    budget[0] -= 1
                    open_one(src)
        stop.wait(1.0)
    st.add("slow", "open_at_end", len(socks))
    for e in socks:
        e[0].close()


def flood(port, stop, st):
    n = 0
    t0 = time.monotonic()
    while not stop.is_set() and n < FLOOD_MAX:
        try:
            s = connect(port, "127.0.0.2", 1.0)
            s.close()
            st.add("flood", "connected")
        except OSError:
            st.add("flood", "refused")
        n += 1
        ahead = n / FLOOD_RATE - (time.monotonic() - t0)
        if ahead > 0:
            stop.wait(ahead)


# (name, raw request) pairs; every one must get a 4xx or a closed connection.
def oversized():
    big = "a" * 20000
    return [
        ("uri_20k", get("/api/v1/anomalies?topic=" + big)),
        ("uri_100k", get("/api/v1/anomalies?topic=" + "b" * 100000)),
        ("path_20k", get("/" + "c" * 20000)),
        ("header_100k", get("/healthz", b"X-Big: " + b"h" * 100000 + b"\r\n")),
        ("headers_2000", get("/healthz", b"".join(
            b"X-H%d: v\r\n" % i for i in range(2000)))),
        ("post_body_1m", b"POST /api/v1/summary HTTP/1.1\r\nHost: x\r\n"
         b"Content-Length: 1048576\r\n\r\n" + b"p" * 1048576),
        ("put_body", b"PUT /metrics HTTP/1.1\r\nHost: x\r\n"
         b"Content-Length: 5\r\n\r\nhello"),
        ("get_body", b"GET /api/v1/summary HTTP/1.1\r\nHost: x\r\n"
         b"Content-Length: 10\r\n\r\n0123456789"),
        ("get_chunked", b"GET /api/v1/summary HTTP/1.1\r\nHost: x\r\n"
         b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
        ("bad_method", b"DELETE /api/v1/summary HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("garbage", b"\x00\xff\xfe GARBAGE\r\n\r\n"),
        ("no_version", b"GET /healthz\r\n\r\n"),
        ("http_2_0", b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n"),
        ("bad_escape", get("/api/v1/anomalies?topic=%zz%")),
        ("nul_escape", get("/api/v1/anomalies?producer=%00")),
        ("smuggle", b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 4"
         b"\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ]


def oversized_loop(port, stop, st, rounds):
    reqs = oversized()
    for _ in range(rounds):
        for name, raw in reqs:
            if stop.is_set():
                return
            code, _ = request(port, raw, "127.0.0.3")
            st.add("oversized", "%s:%d" % (name, code))


# --- the probe -------------------------------------------------------------

def probe(port, stop, st, lat, codes):
    """/readyz may say 503 while the audit starts (before its first
    published status): those, before its first 200, are counted apart as
    "/readyz starting"."""
    ready = False
    while not stop.is_set():
        for p in PROBE_PATHS:
            code, secs = request(port, get(p), PROBE_ADDR)
            key = p
            if p == "/readyz":
                if code == 200:
                    ready = True
                elif not ready and code == 503:
                    key = "/readyz starting"
            with st.lock:
                lat.append(secs)
                codes.setdefault(key, {})
                codes[key][code] = codes[key].get(code, 0) + 1
        stop.wait(PROBE_EVERY)


# --- SQL metacharacters ----------------------------------------------------

SQL = [
    "'", "''", "\"", "';", "' OR 1=1 --", "' OR '1'='1", "\" OR \"\"=\"",
    "1; DROP TABLE anomalies; --", "'; DELETE FROM pairs; --",
    "x' UNION SELECT * FROM pairs --", "%", "_", "%' OR producer LIKE '%",
    "1 OR 1=1", "0x10", "1e3", "-1", "9223372036854775808", "1/*", "*/",
    "`", "\\", "\\'", ")", "(", "NULL", "'||'", "1' AND sleep(5)--",
    "\x01\x7f", "\xff\xfe",
]
ENDPOINTS = {
    "summary": ["topic"],
    "anomalies": ["topic", "kind", "producer", "since", "limit", "cursor"],
    "producers": ["topic", "producer", "limit", "cursor"],
    "partitions": ["topic"],
}


LISTS = {"anomalies": "anomalies", "producers": "producers",
         "partitions": "partitions"}


def fetch(port, path, src):
    """GET path on a new connection: (status, body bytes); status 0 when
    there was no answer."""
    try:
        s = connect(port, src, 10.0)
    except OSError:
        return -1, b""
    buf = b""
    try:
        s.sendall(get(path))
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except OSError:
        pass
    finally:
        s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    line = head.split(b"\r\n", 1)[0].split()
    if len(line) >= 2 and line[1].isdigit():
        return int(line[1]), body
    return 0, body


def sql(port, st):
    """Each value in each parameter: a 400 (not a valid value), a 404 (the
    summary of a topic not audited here) or a 200 with an empty list (no
    topic or producer has that name), never anything else."""
    bad = []
    for ep, params in ENDPOINTS.items():
        for p in params:
            for v in SQL:
                q = urllib.parse.quote(v.encode("latin-1"), safe="")
                path = "/api/v1/%s?%s=%s" % (ep, p, q)
                code, body = fetch(port, path, "127.0.0.4")
                st.add("sql", str(code))
                ok = code == 400 or (code == 404 and ep == "summary")
                if code == 200 and ep in LISTS:
                    try:
                        ok = json.loads(body)[LISTS[ep]] == []
                    except (ValueError, KeyError):
                        ok = False
                if not ok:
                    bad.append([path, code, body[:200].decode("latin-1")])
    return bad


def main():
    port = int(sys.argv[1])
    mode = sys.argv[2]
    seconds = 30.0
    if "--seconds" in sys.argv:
        seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
    st = Stats()
    stop = threading.Event()
    lat, codes = [], {}
    out = {}
    if mode == "sql":
        out["bad"] = sql(port, st)
    else:
        threads = [threading.Thread(target=probe,
                                    args=(port, stop, st, lat, codes))]
        if mode == "attack":
            threads += [
                threading.Thread(target=slow_clients, args=(port, stop, st)),
                threading.Thread(target=flood, args=(port, stop, st)),
                threading.Thread(target=oversized_loop,
                                 args=(port, stop, st, 3)),
            ]
        for t in threads:
            t.start()
        # SIGINT or SIGTERM end the run early, with the figures printed.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        end = time.monotonic() + seconds
        while not stop.is_set() and time.monotonic() < end:
            time.sleep(0.2)
        stop.set()
        for t in threads:
            t.join(15)
        lat.sort()
        out["probe"] = {
            "requests": len(lat),
            "codes": codes,
            "p50_ms": round(lat[len(lat) // 2] * 1000, 1) if lat else None,
            "p99_ms": round(lat[(len(lat) * 99) // 100] * 1000, 1)
            if lat else None,
            "max_ms": round(lat[-1] * 1000, 1) if lat else None,
        }
    out["classes"] = st.d
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
