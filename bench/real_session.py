#!/usr/bin/env python3
"""A long pith session against a real OpenAI-compatible server, measured.

Runs `pith run --format json` turn after turn on one session (`-c`), through a small recording
proxy so every request body pith sends is kept, and reports: turns, failed turns, compactions
(tokens before -> after, summary length), the window pith used, and whether the facts the user
gave early on are still in the last request.

    python3 bench/real_session.py --server http://127.0.0.1:8080 --context 4096 --turns 30

`--context 0` leaves the window unconfigured, so pith has to ask the server (llama.cpp /props).
The server is not started here: run one (e.g. llama.cpp's llama-server) yourself.
"""

import argparse
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

REQUESTS = []


def proxy_handler(upstream):
    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _forward(self, method):
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else None
            if body and self.path.endswith("/chat/completions"):
                try:
                    REQUESTS.append(json.loads(body))
                except ValueError:
                    pass
            req = urllib.request.Request(upstream + self.path, data=body, method=method)
            for k in ("content-type", "authorization"):
                if self.headers.get(k):
                    req.add_header(k, self.headers[k])
            try:
                resp = urllib.request.urlopen(req, timeout=900)
                status, headers = resp.status, resp.headers
            except urllib.error.HTTPError as e:
                resp, status, headers = e, e.code, e.headers
            self.send_response(status)
            for k, v in headers.items():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            while True:
                chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
                if not chunk:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def do_GET(self):
            self._forward("GET")

        def do_POST(self):
            self._forward("POST")

    return Proxy


FACTS = [
    "The project codename is BLUE-HERON-7.",
    "Never use tabs; indent with four spaces.",
    "The database lives at /srv/data/ledger.db.",
]

TASKS = [
    "List the files in this directory.",
    "Read README.md and tell me in one sentence what the project does.",
    "Write a Python function that adds two numbers, in a file add.py.",
    "Explain what a context window is, in two sentences.",
    "Search the files for the word TODO.",
    "What did I tell you about indentation?",
    "Give me three tips for writing good commit messages.",
    "Read add.py and suggest one improvement.",
    "Summarise what we have done so far in three bullet points.",
    "Write a haiku about compilers.",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default="http://127.0.0.1:8080")
    ap.add_argument("--context", type=int, default=4096, help="0: not configured")
    ap.add_argument("--output", type=int, default=0, help="0: not configured")
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--pith", default=os.path.join(os.path.dirname(__file__), "../target/debug/pith"))
    ap.add_argument("--keep", action="store_true", help="keep the temp dirs")
    args = ap.parse_args()

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), proxy_handler(args.server))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}/v1"

    root = tempfile.mkdtemp(prefix="pith-real-")
    ws, data = os.path.join(root, "ws"), os.path.join(root, "data")
    os.makedirs(ws)
    with open(os.path.join(ws, "README.md"), "w") as f:
        f.write("# ledger\n\nA small tool that reconciles bank statements against a ledger.\n"
                "TODO: support CSV exports.\n")
    model = "[models.\"real/model\"]\n"
    if args.context:
        model += f"context = {args.context}\n"
    if args.output:
        model += f"output = {args.output}\n"
    cfg = os.path.join(root, "pith.toml")
    with open(cfg, "w") as f:
        f.write(f'model = "real/model"\n\n[provider.real]\nkind = "openai"\nbase_url = "{base}"\n'
                f"max_retries = 2\n\n{model if (args.context or args.output) else ''}")
    env = dict(os.environ, PITH_DATA_DIR=data, PITH_CONFIG=cfg, HOME=root)

    stats = {"turns": 0, "failed": 0, "compactions": [], "errors": [], "windows": set(),
             "summary_tokens": [], "seconds": 0.0}
    prompts = [f"Remember this: {f}" for f in FACTS]
    prompts += [TASKS[i % len(TASKS)] for i in range(args.turns - len(prompts))]
    started = time.time()
    for i, prompt in enumerate(prompts):
        cmd = [args.pith, "run", "--format", "json", "--yes"] + (["-c"] if i else []) + [prompt]
        t0 = time.time()
        p = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True, timeout=3600)
        events = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        stats["turns"] += 1
        reason = next((e["reason"] for e in events if e["type"] == "turn_finished"), None)
        errs = [e["message"] for e in events if e["type"] == "error"]
        if p.returncode != 0 or errs:
            stats["failed"] += 1
            stats["errors"] += errs or [p.stderr.strip()[-300:]]
        for e in events:
            if e["type"] == "compaction_finished":
                stats["compactions"].append((i + 1, e["before"], e["after"], e["model_calls"]))
            if e["type"] == "context_usage":
                stats["windows"].add(e["window"])
            if e["type"] == "message" and e["message"].get("summary"):
                parts = [p for p in e["message"]["parts"] if p["type"] == "text" and not p.get("synthetic")]
                if parts:
                    stats["summary_tokens"].append(len(parts[0]["text"]) // 4)
            if e["type"] == "info":
                print(f"  info: {e['message']}", file=sys.stderr)
        used = [e for e in events if e["type"] == "context_usage"]
        last = used[-1] if used else {}
        print(f"turn {i + 1:2d} {reason or '?':>18} exit {p.returncode} {time.time() - t0:6.1f}s "
              f"context {last.get('used', '?')}/{last.get('window', '?')}"
              + (f"  ERROR {errs[0][:160]}" if errs else ""), file=sys.stderr)
    stats["seconds"] = time.time() - started

    last = json.dumps(REQUESTS[-1]) if REQUESTS else ""
    kept = [f for f in FACTS if f.split(" is ")[-1].rstrip(".") in last or f in last]
    print(json.dumps({
        "turns": stats["turns"],
        "failed_turns": stats["failed"],
        "compactions": len(stats["compactions"]),
        "compaction_before_after_calls": stats["compactions"],
        "every_compaction_shrank": all(a < b for _, b, a, _ in stats["compactions"]),
        "summary_tokens_approx": stats["summary_tokens"],
        "windows_seen": sorted(stats["windows"]),
        "requests": len(REQUESTS),
        "facts_in_last_request": f"{len(kept)}/{len(FACTS)}",
        "errors": stats["errors"][:5],
        "minutes": round(stats["seconds"] / 60, 1),
    }, indent=1))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"kept {root}", file=sys.stderr)


if __name__ == "__main__":
    main()
