"""A stub OAuth authorization server offering the device flow (RFC 8628), in front of an MCP
endpoint that only answers 401, for `pith mcp login --device` tests (starlette, which the MCP
SDK brings).

    python3 device_stub.py PORT

POST /mcp answers 401 with a resource_metadata challenge; the metadata names a device
authorization endpoint and dynamic registration. The token endpoint answers
`authorization_pending`, then `slow_down`, then `authorization_pending` until GET
/test/approve?user_code=CODE has been called and two polls were refused; then it issues a
token. GET /test/stats shows the polls (and when each came) and the `resource` each request
named.
"""

import secrets
import sys
import time

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

PORT = int(sys.argv[1])
BASE = f"http://127.0.0.1:{PORT}"
STATE = {
    "approved": set(),
    "codes": {},
    "polls": 0,
    "poll_times": [],
    "slowed": False,
    "resources": [],
    "issued": 0,
}


async def mcp(request: Request):
    return JSONResponse(
        {"error": "invalid_token"},
        status_code=401,
        headers={
            "WWW-Authenticate": f'Bearer resource_metadata="{BASE}/.well-known/oauth-protected-resource/mcp"'
        },
    )


async def prm(request: Request):
    return JSONResponse({"resource": f"{BASE}/mcp", "authorization_servers": [BASE]})


async def asm(request: Request):
    return JSONResponse(
        {
            "issuer": BASE,
            "authorization_endpoint": f"{BASE}/authorize",
            "token_endpoint": f"{BASE}/token",
            "registration_endpoint": f"{BASE}/register",
            "device_authorization_endpoint": f"{BASE}/device",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": [
                "authorization_code",
                "refresh_token",
                "urn:ietf:params:oauth:grant-type:device_code",
            ],
        }
    )


async def register(request: Request):
    body = await request.json()
    return JSONResponse(
        {"client_id": "device-client-" + secrets.token_hex(4), "redirect_uris": body.get("redirect_uris", [])},
        status_code=201,
    )


async def device(request: Request):
    form = await request.form()
    STATE["resources"].append(form.get("resource"))
    device_code = secrets.token_urlsafe(16)
    user_code = "WDJB-MJHT"
    STATE["codes"][device_code] = user_code
    return JSONResponse(
        {
            "device_code": device_code,
            "user_code": user_code,
            "verification_uri": f"{BASE}/activate",
            "expires_in": 120,
            "interval": 1,
        }
    )


async def token(request: Request):
    form = await request.form()
    STATE["resources"].append(form.get("resource"))
    if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:device_code":
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
    user_code = STATE["codes"].get(form.get("device_code"))
    if user_code is None:
        return JSONResponse({"error": "invalid_grant"}, status_code=400)
    STATE["polls"] += 1
    STATE["poll_times"].append(time.monotonic())
    if STATE["polls"] == 2:
        STATE["slowed"] = True
        return JSONResponse({"error": "slow_down"}, status_code=400)
    if user_code not in STATE["approved"] or STATE["polls"] < 3:
        return JSONResponse({"error": "authorization_pending"}, status_code=400)
    STATE["issued"] += 1
    return JSONResponse(
        {
            "access_token": "device-access-" + secrets.token_urlsafe(16),
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": "device-refresh-" + secrets.token_urlsafe(16),
        }
    )


async def approve(request: Request):
    STATE["approved"].add(request.query_params.get("user_code"))
    return JSONResponse({"approved": True})


async def stats(request: Request):
    return JSONResponse(
        {k: v for k, v in STATE.items() if k not in ("approved", "codes")}
    )


app = Starlette(
    routes=[
        Route("/mcp", mcp, methods=["POST", "GET"]),
        Route("/.well-known/oauth-protected-resource/mcp", prm),
        Route("/.well-known/oauth-authorization-server", asm),
        Route("/register", register, methods=["POST"]),
        Route("/device", device, methods=["POST"]),
        Route("/token", token, methods=["POST"]),
        Route("/test/approve", approve),
        Route("/test/stats", stats),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
