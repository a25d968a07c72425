"""An MCP server (streamable HTTP, JSON answers) that lets `initialize` and `tools/list`
through but answers `tools/call` 401 with an OAuth challenge, as a server that guards only its
tools does. No SDK: the 401 must come from the transport, mid-session.

    python3 guard_server.py PORT
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
BASE = f"http://127.0.0.1:{PORT}"
CHALLENGE = f'Bearer error="invalid_token", resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer(405)

    def do_DELETE(self):
        self.answer(200)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        msg = json.loads(raw or b"{}")
        method, rid = msg.get("method"), msg.get("id")
        session = [("Mcp-Session-Id", "s1")]
        if rid is None:
            return self.answer(202, headers=session)
        if method == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "guard", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "description": "Echoes.",
                                 "inputSchema": {"type": "object", "properties": {}}}]}
        elif method == "tools/call":
            return self.answer(401, {"error": "invalid_token"},
                               [("WWW-Authenticate", CHALLENGE)])
        else:
            result = {}
        self.answer(200, {"jsonrpc": "2.0", "id": rid, "result": result}, session)


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
