#!/usr/bin/env python3
"""A small HTTP/1.1 server on 127.0.0.1 that serves a directory and
misbehaves on request, for testing ireepkg's network client.

    fault_server.py --root DIR [--port N] [--watch-stdin] [--max-seconds S]

Binds 127.0.0.1 (a free port unless --port is given), then prints the port
number on a line of its own on stdout: that line means it is ready.
tests/cli/netfix.py starts and stops it (see fault_server() there).

Faults are chosen per request, by leading path segments that are stripped
before the file is looked up, so one served file can be reached many ways:

    /a.bin                      served normally (ETag, If-None-Match -> 304)
    /delay-300/a.bin            waits 300 ms, then serves (models latency)
    /rate-2048/a.bin            sends the body at 2048 KiB/s (models a
                                connection of limited bandwidth)
    /fail-2/a.bin               the first 2 requests of this URL answer 500,
                                later ones are served
    /status-404/a.bin           always answers 404 (any code)
    /busy-3/a.bin               the first request of this URL answers 503
                                with Retry-After: 3; later ones are served
    /truncate/a.bin             announces the full length, sends half, closes
    /corrupt/a.bin              the right length, one byte changed
    /reset/a.bin                sends half, then resets the connection
    /drip-2000/a.bin            headers, then one byte after every 2000 ms
    /oversize/a.bin             the file followed by as many bytes again,
                                with a Content-Length that says so
    /endless/a.bin              no Content-Length, random bytes until the
                                client hangs up
    /redirect/a.bin             302 to /a.bin
    /redirect-loop/a.bin        302 to itself, forever

Segments combine in order: /delay-200/fail-1/a.bin.

Faults can also be attached to paths without changing URLs (for clients
that build their own URLs from a base), through the control URLs:

    POST /_control/faults  {"/index/": ["truncate"], "/a.bin": ["fail-1"]}
                           a request whose path (after any fault segments)
                           starts with a key gets that key's faults too;
                           replaces the previous table
    GET  /_control/log     {"requests": [{"method", "path", "file", "faults",
                           "status", "if_none_match", "user_agent", "start",
                           "end"}, ...] in order of arrival ("status" and
                           "end" are null while a request is in flight),
                           "max_in_flight": n}
    POST /_control/reset   forgets the log, the counters and the faults

It stops on SIGTERM, after --max-seconds (default 900), and, with
--watch-stdin, when its stdin is closed (its parent died).
"""
import argparse
import hashlib
import http.server
import json
import os
import re
import socket
import struct
import sys
import threading
import time
import urllib.parse

FAULT_SEGMENT = re.compile(
    r"^(delay-\d+|rate-\d+|fail-\d+|busy-\d+|status-\d{3}|truncate|corrupt|reset|drip-\d+|"
    r"oversize|endless|redirect|redirect-loop)$")

# Endless and dripping bodies stop by themselves after this long.
MAX_STREAM_SECONDS = 60


class State:
    """What every handler thread shares."""

    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.lock = threading.Lock()
        self.log = []
        self.fail_counts = {}
        self.faults = {}
        self.in_flight = 0
        self.max_in_flight = 0

    def reset(self):
        with self.lock:
            self.log.clear()
            self.fail_counts.clear()
            self.faults.clear()
            self.max_in_flight = 0


def split_faults(path):
    """'/delay-5/truncate/a/b.bin' -> (['delay-5', 'truncate'], '/a/b.bin')"""
    parts = path.split("/")[1:]
    faults = []
    while len(parts) > 1 and FAULT_SEGMENT.match(parts[0]):
        faults.append(parts.pop(0))
    return faults, "/" + "/".join(parts)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ireepkg-fault-server"
    state: State = None  # set in main()
    verbose = False

    def log_message(self, format, *args):
        if self.verbose:
            sys.stderr.write("fault_server: " + (format % args) + "\n")

    # --- plumbing ---------------------------------------------------------

    def send_response(self, code, message=None):
        self.sent_status = code
        super().send_response(code, message)

    def send_simple(self, code, text="", extra_headers=()):
        body = text.encode()
        self.send_response(code)
        for k, v in extra_headers:
            self.send_header(k, v)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return code

    def send_json(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def hard_close(self, reset):
        """Closes the connection now: with a TCP reset, or a plain close."""
        self.close_connection = True
        try:
            self.wfile.flush()
        except OSError:
            pass
        sock = self.connection
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                            struct.pack("ii", 1, 0))
        # detach() so that no later shutdown() sends a FIN before the reset.
        os.close(sock.detach())

    def handle(self):
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError, TimeoutError):
            pass  # clients hang up on bad bodies: that is the point

    def finish(self):
        try:
            super().finish()
        except OSError:
            pass

    # --- requests ---------------------------------------------------------

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        if path == "/_control/reset":
            self.state.reset()
            return self.send_json({"ok": True})
        if path == "/_control/faults":
            table = json.loads(data or b"{}")
            with self.state.lock:
                self.state.faults = {k: list(v) for k, v in table.items()}
            return self.send_json({"ok": True})
        return self.send_simple(404, "unknown control URL\n")

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/_control/log":
            with self.state.lock:
                snapshot = json.dumps({"requests": self.state.log,
                                       "max_in_flight": self.state.max_in_flight})
            return self.send_json(json.loads(snapshot))
        faults, file_path = split_faults(url.path)
        with self.state.lock:
            for prefix, extra in self.state.faults.items():
                if file_path.startswith(prefix):
                    faults += extra
            self.state.in_flight += 1
            self.state.max_in_flight = max(self.state.max_in_flight,
                                           self.state.in_flight)
        # Logged as it arrives; "status" and "end" stay None until answered.
        entry = {"method": self.command, "path": self.path, "file": file_path,
                 "faults": faults,
                 "if_none_match": self.headers.get("If-None-Match"),
                 "user_agent": self.headers.get("User-Agent"),
                 "start": time.time(), "status": None, "end": None}
        with self.state.lock:
            self.state.log.append(entry)
        self.sent_status = None
        try:
            status = self.answer(url, faults, file_path)
        except (BrokenPipeError, ConnectionResetError):
            # The client hung up (as it should on endless or dripping data).
            self.close_connection = True
            status = self.sent_status
        finally:
            with self.state.lock:
                entry["status"] = status
                entry["end"] = time.time()
                self.state.in_flight -= 1

    def answer(self, url, faults, file_path):
        """Sends the response; returns its status code."""
        self.rate = None
        for fault in faults:
            name, _, arg = fault.partition("-")
            if fault == "redirect-loop":
                hop = int(urllib.parse.parse_qs(url.query).get("hop", ["0"])[0])
                return self.send_simple(302, "", [
                    ("Location", f"{url.path}?hop={hop + 1}")])
            if name == "redirect":
                rest = [f for f in faults if f != "redirect"]
                target = "".join("/" + f for f in rest) + file_path
                return self.send_simple(302, "", [("Location", target)])
            if name == "delay":
                time.sleep(int(arg) / 1000)
            elif name == "rate":
                self.rate = max(1, int(arg)) * 1024
            elif name == "status":
                return self.send_simple(int(arg), f"status {arg} on request\n")
            elif name == "busy":
                with self.state.lock:
                    key = "busy:" + url.path
                    seen = self.state.fail_counts.get(key, 0)
                    self.state.fail_counts[key] = seen + 1
                if seen == 0:
                    return self.send_simple(503, "busy, come back later\n",
                                            [("Retry-After", arg)])
            elif name == "fail":
                with self.state.lock:
                    seen = self.state.fail_counts.get(url.path, 0)
                    self.state.fail_counts[url.path] = seen + 1
                if seen < int(arg):
                    return self.send_simple(500, "failing on request\n")

        content = self.read_file(file_path)
        if content is None:
            return self.send_simple(404, "not found\n")
        body_faults = [f for f in faults
                       if f.split("-")[0] in ("truncate", "corrupt", "reset",
                                              "drip", "oversize", "endless")]
        etag = '"' + hashlib.sha256(content).hexdigest()[:20] + '"'
        if not body_faults:
            inm = self.headers.get("If-None-Match")
            if inm and (inm.strip() == "*" or
                        etag in [t.strip() for t in inm.split(",")]):
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return 304
            return self.send_body(content, etag)
        fault = body_faults[0]
        name, _, arg = fault.partition("-")
        half = len(content) // 2
        if name == "corrupt":
            changed = bytearray(content)
            if changed:
                changed[half] ^= 0xFF
            return self.send_body(bytes(changed), etag)
        if name == "oversize":
            extra = content if content else b"x" * 1024
            return self.send_body(content + extra, None)
        if name == "endless":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            block = os.urandom(64 * 1024)
            deadline = time.time() + MAX_STREAM_SECONDS
            while time.time() < deadline:
                self.wfile.write(block)
            self.hard_close(reset=False)
            return 200
        # truncate, reset, drip: announce the whole body.
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(content)))
        self.send_header("ETag", etag)
        self.end_headers()
        if name == "drip":
            deadline = time.time() + MAX_STREAM_SECONDS
            for i in range(len(content)):
                time.sleep(int(arg) / 1000)
                if time.time() > deadline:
                    break
                self.wfile.write(content[i:i + 1])
                self.wfile.flush()
            self.hard_close(reset=False)
            return 200
        self.wfile.write(content[:half])
        self.hard_close(reset=(name == "reset"))
        return 200

    def send_body(self, content, etag):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(content)))
        if etag:
            self.send_header("ETag", etag)
        self.end_headers()
        if self.command == "HEAD":
            return 200
        if not self.rate:
            self.wfile.write(content)
            return 200
        # Paced: never ahead of `rate` bytes per second since the start.
        start, sent, chunk = time.monotonic(), 0, 16 * 1024
        while sent < len(content):
            ahead = sent / self.rate - (time.monotonic() - start)
            if ahead > 0:
                time.sleep(ahead)
            self.wfile.write(content[sent:sent + chunk])
            sent += chunk
        return 200

    def read_file(self, file_path):
        rel = urllib.parse.unquote(file_path).lstrip("/")
        full = os.path.realpath(os.path.join(self.state.root, rel))
        if not (full == self.state.root or
                full.startswith(self.state.root + os.sep)):
            return None
        if not os.path.isfile(full):
            return None
        with open(full, "rb") as f:
            return f.read()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connect at once in the parallel tests.
    request_queue_size = 128


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, help="directory to serve")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--watch-stdin", action="store_true",
                    help="exit when stdin reaches end of file")
    ap.add_argument("--max-seconds", type=float, default=900,
                    help="exit after this long in any case")
    ap.add_argument("--verbose", action="store_true",
                    help="log every request on stderr")
    args = ap.parse_args()

    Handler.state = State(args.root)
    Handler.verbose = args.verbose
    server = Server(("127.0.0.1", args.port), Handler)

    def stop_later(seconds):
        time.sleep(seconds)
        os._exit(0)

    threading.Thread(target=stop_later, args=(args.max_seconds,),
                     daemon=True).start()
    if args.watch_stdin:
        def watch():
            while sys.stdin.buffer.read(4096):
                pass
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()

    print(server.server_address[1], flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
