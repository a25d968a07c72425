"""An OAuth-protected MCP server for pith's tests, built with the official Python SDK's auth
support (`mcp.server.auth`): one process is both the authorization server (metadata, dynamic
client registration, authorize, token with refresh, revocation) and the resource server
(streamable HTTP at /mcp, protected-resource metadata, tokens checked for their RFC 8707
resource).

    python3 oauth_server.py PORT [TTL] [--account EMAIL]
    # access tokens live TTL seconds (default 3600); with --account, the token response to a
    # code carries an OpenID id_token (unsigned) naming EMAIL, as an OIDC provider's does

The authorization endpoint approves at once (a test's "browser" follows its redirect). Test
controls, outside OAuth: POST /test/revoke-all revokes every token (access and refresh);
GET /test/stats says how many tokens were issued by code and by refresh, how many were revoked
(RFC 7009), and the resources the client named.
"""

import base64
import json
import secrets
import sys
import time

from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

ARGS = sys.argv[1:]
ACCOUNT = None
if "--account" in ARGS:
    i = ARGS.index("--account")
    ACCOUNT = ARGS[i + 1]
    del ARGS[i : i + 2]
PORT = int(ARGS[0])
TTL = int(ARGS[1]) if len(ARGS) > 1 else 3600
BASE = f"http://127.0.0.1:{PORT}"
RESOURCE = f"{BASE}/mcp"

STATS = {"by_code": 0, "by_refresh": 0, "resources": [], "refresh_rejected": 0, "revoked": 0}


class TokenWithIdentity(OAuthToken):
    """A token response with an OpenID `id_token` beside the OAuth fields."""

    id_token: str | None = None


def id_token(client_id):
    """An unsigned JWT naming ACCOUNT (pith reads it for display only)."""
    b64 = lambda v: base64.urlsafe_b64encode(json.dumps(v).encode()).rstrip(b"=").decode()
    claims = {"iss": BASE, "aud": client_id, "sub": "user-1", "email": ACCOUNT, "exp": int(time.time()) + 3600}
    return f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64(claims)}.sig"


class Provider:
    def __init__(self):
        self.clients = {}
        self.codes = {}
        self.access = {}
        self.refresh = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull):
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(32)
        STATS["resources"].append(params.resource)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def _issue(self, client_id, scopes, resource):
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + TTL,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            expires_in=TTL,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        STATS["by_code"] += 1
        token = self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)
        if ACCOUNT is None:
            return token
        return TokenWithIdentity(**token.model_dump(), id_token=id_token(client.client_id))

    async def load_refresh_token(self, client, refresh_token):
        found = self.refresh.get(refresh_token)
        if found is None:
            STATS["refresh_rejected"] += 1
        return found

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        # Rotated: the old refresh token is spent.
        if self.refresh.pop(refresh_token.token, None) is None:
            raise TokenError(error="invalid_grant", error_description="refresh token revoked")
        STATS["by_refresh"] += 1
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or (found.expires_at and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token):
        STATS["revoked"] += 1
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


provider = Provider()

server = MCPServer(
    "pith-oauth-test",
    instructions="An OAuth-protected server for pith's tests.",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=AnyHttpUrl(BASE),
        resource_server_url=AnyHttpUrl(RESOURCE),
        validate_token_resource=True,
        required_scopes=["mcp"],
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]
        ),
        revocation_options=RevocationOptions(enabled=True),
    ),
)


@server.tool()
def whoami() -> str:
    """Say which OAuth client is calling."""
    token = get_access_token()
    return f"signed in as client {token.client_id}" if token else "anonymous"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.custom_route("/test/revoke-all", methods=["POST"])
async def revoke_all(request: Request) -> JSONResponse:
    n = len(provider.access) + len(provider.refresh)
    provider.access.clear()
    provider.refresh.clear()
    return JSONResponse({"revoked": n})


@server.custom_route("/test/stats", methods=["GET"])
async def stats(request: Request) -> JSONResponse:
    return JSONResponse(STATS)


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=PORT)
