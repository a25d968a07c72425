#!/usr/bin/env python3
"""A minimal OpenAI-compatible mock for bench/run.sh (stdlib only).

POST /v1/chat/completions answers with a real chat-completions SSE stream: a role chunk,
content chunks, a finish chunk, a usage chunk (`choices: []`) and `data: [DONE]`. A request
with "stream": false gets a plain JSON completion. GET /v1/models lists one model.

    python3 bench/mock_server.py [--tokens N] [--rate TOKENS_PER_SECOND] [--port-file PATH]

--tokens   content chunks per answer (one "token" each; default 8)
--rate     stream that many tokens per second (default 0: as fast as possible)
--dump     write the body of the first chat request to this file (bench/vs_curl.sh replays it)
It binds 127.0.0.1 on a free port and prints the port on stdout (and to --port-file).
"""

import argparse
import os
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORDS = ["The", " answer", " is", " forty", "-two", ",", " as", " the", " bench",
         " mock", " says", " every", " time", " it", " is", " asked", "."]


def chunk(delta, finish=None):
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage_chunk(prompt, completion):
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "test-model",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    tokens = 8
    rate = 0.0
    dump = None

    def log_message(self, fmt, *args):  # quiet
        pass

    def _json(self, code, value):
        body = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": "not found", "type": "not_found"}})
            return
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        if self.dump and not os.path.exists(self.dump):
            with open(self.dump, "wb") as f:
                f.write(raw)
        prompt = max(1, len(raw) // 4)
        n = self.tokens
        text = [WORDS[i % len(WORDS)] for i in range(n)]
        if not req.get("stream", False):
            self._json(200, {
                "id": "chatcmpl-bench", "object": "chat.completion", "created": 1700000000,
                "model": "test-model",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "".join(text)}}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": n,
                          "total_tokens": prompt + n},
            })
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def send(value):
            self.wfile.write(b"data: " + json.dumps(value).encode() + b"\n\n")

        send(chunk({"role": "assistant", "content": ""}))
        interval = 1.0 / self.rate if self.rate > 0 else 0.0
        start = time.monotonic()
        for i, t in enumerate(text):
            if interval:
                due = start + i * interval
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            send(chunk({"content": t}))
            if interval:
                self.wfile.flush()
        send(chunk({}, "stop"))
        send(usage_chunk(prompt, n))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=8)
    ap.add_argument("--rate", type=float, default=0.0)
    ap.add_argument("--port-file")
    ap.add_argument("--dump", help="write the body of the first chat request to this file")
    args = ap.parse_args()
    Handler.tokens = args.tokens
    Handler.rate = args.rate
    Handler.dump = args.dump
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(port))
        import os
        os.replace(args.port_file + ".tmp", args.port_file)
    print(port, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
