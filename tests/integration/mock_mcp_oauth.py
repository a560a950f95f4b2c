#!/usr/bin/env python3
"""An OAuth-protected MCP server for test_mcp_oauth.c (stdlib only).

    mock_mcp_oauth.py PORT_FILE LOG_FILE

One listener on 127.0.0.1 (its port written to PORT_FILE) that is both:
  - the authorization server: RFC 9728 protected-resource metadata at
    /.well-known/oauth-protected-resource/mcp, RFC 8414 metadata at
    /.well-known/oauth-authorization-server, RFC 7591 registration at /register, /authorize
    (302 to the redirect_uri with code and state), /token (authorization_code with PKCE S256
    checked against the challenge /authorize got, refresh_token);
  - an MCP streamable-HTTP endpoint at /mcp (JSON answers; tools echo and slow) that answers
    401 with a WWW-Authenticate header to a POST without a valid bearer token.
Access tokens are at-N-<hex>, refresh tokens rt-N-<hex>, codes code-<hex> (logged: "issued"); a refresh revokes the access and refresh tokens
it replaces (rotation).
Control (GET, the test's levers): /_ctl/revoke (every access token invalid: the next MCP
POST gets 401), /_ctl/refuse-code, /_ctl/refuse-refresh, /_ctl/expires?s=N (expires_in of
the next tokens), /_ctl/refresh-delay?s=F.
LOG_FILE gets one JSON line per event: {"ev": "register"|"authorize"|"token"|"mcp"|...,
...}; "mcp" lines carry the method and the authorization header seen.
"""
import base64, hashlib, json, os, secrets, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs, urlencode

port_file, log_file = sys.argv[1], sys.argv[2]
lock = threading.Lock()
state = {
    "n": 0, "codes": {}, "access": set(), "refresh": {}, "clients": set(),
    "refuse_code": False, "refuse_refresh": False, "expires": 3600, "refresh_delay": 0.0,
}


def log(**kv):
    with lock, open(log_file, "a") as f:
        f.write(json.dumps(kv) + "\n")


def issue(client_id, scope):
    with lock:
        state["n"] += 1
        n = state["n"]
        at = "at-%d-%s" % (n, secrets.token_hex(8))
        rt = "rt-%d-%s" % (n, secrets.token_hex(8))
        state["access"].add(at)
        state["refresh"][rt] = {"client_id": client_id, "scope": scope}
    log(ev="issued", access=at, refresh=rt)
    return {"access_token": at, "token_type": "Bearer", "expires_in": state["expires"],
            "refresh_token": rt, "scope": scope}


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, body=None, ctype="application/json", headers=()):
        data = b"" if body is None else (body if isinstance(body, bytes) else
                                         json.dumps(body).encode())
        self.send_response(code)
        if body is not None:
            self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_port

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        u = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        if u.path == "/.well-known/oauth-protected-resource/mcp":
            return self.send(200, {"resource": self.base() + "/mcp",
                                   "authorization_servers": [self.base()],
                                   "scopes_supported": ["mcp.read", "mcp.write"]})
        if u.path == "/.well-known/oauth-authorization-server":
            b = self.base()
            return self.send(200, {
                "issuer": b, "authorization_endpoint": b + "/authorize",
                "token_endpoint": b + "/token", "registration_endpoint": b + "/register",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"]})
        if u.path == "/authorize":
            log(ev="authorize", query=q)
            code = "code-%s" % secrets.token_hex(8)
            with lock:
                state["codes"][code] = q
            loc = q["redirect_uri"] + "?" + urlencode({"code": code, "state": q.get("state", "")})
            return self.send(302, headers=[("Location", loc)])
        if u.path.startswith("/_ctl/"):
            what = u.path[len("/_ctl/"):]
            with lock:
                if what == "revoke":
                    state["access"].clear()
                elif what == "refuse-code":
                    state["refuse_code"] = True
                elif what == "refuse-refresh":
                    state["refuse_refresh"] = True
                elif what == "expires":
                    state["expires"] = int(q["s"])
                elif what == "refresh-delay":
                    state["refresh_delay"] = float(q["s"])
            return self.send(200, {})
        if u.path == "/mcp":
            return self.send(405)
        self.send(404, {"error": "not found"})

    def do_DELETE(self):
        self.send(200)

    def do_POST(self):
        u = urlparse(self.path)
        raw = self.body()
        if u.path == "/register":
            reg = json.loads(raw)
            log(ev="register", body=reg)
            with lock:
                cid = "client-%d" % (len(state["clients"]) + 1)
                state["clients"].add(cid)
            return self.send(201, dict(reg, client_id=cid))
        if u.path == "/token":
            return self.token({k: v[0] for k, v in parse_qs(raw.decode()).items()})
        if u.path == "/mcp":
            return self.mcp(raw)
        self.send(404, {"error": "not found"})

    def refuse(self, why, desc):
        self.send(400, {"error": why, "error_description": desc})

    def token(self, f):
        log(ev="token", form=f)
        g = f.get("grant_type")
        if g == "authorization_code":
            with lock:
                a = state["codes"].pop(f.get("code"), None)
            if a is None or state["refuse_code"]:
                return self.refuse("invalid_grant", "the code is not valid")
            want = a.get("code_challenge")
            got = base64.urlsafe_b64encode(
                hashlib.sha256(f.get("code_verifier", "").encode()).digest()).rstrip(b"=")
            if a.get("code_challenge_method") != "S256" or got.decode() != want:
                return self.refuse("invalid_grant", "PKCE verification failed")
            if f.get("redirect_uri") != a.get("redirect_uri") or \
                    f.get("client_id") != a.get("client_id"):
                return self.refuse("invalid_grant", "redirect_uri or client_id differ")
            return self.send(200, issue(f["client_id"], a.get("scope", "")))
        if g == "refresh_token":
            time.sleep(state["refresh_delay"])
            with lock:
                old = state["refresh"].get(f.get("refresh_token"))
                ok = old is not None and not state["refuse_refresh"] and \
                    old["client_id"] == f.get("client_id")
                if ok:
                    del state["refresh"][f["refresh_token"]]
                    state["access"].clear()  # rotation: the old access token dies too
            if not ok:
                return self.refuse("invalid_grant", "the refresh token is not valid")
            return self.send(200, issue(old["client_id"], old["scope"]))
        self.refuse("unsupported_grant_type", g or "none")

    def mcp(self, raw):
        auth = self.headers.get("Authorization", "")
        m = json.loads(raw)
        log(ev="mcp", method=m.get("method"), id=m.get("id"), authorization=auth)
        if not auth.startswith("Bearer ") or auth[7:] not in state["access"]:
            return self.send(401, {"error": "invalid_token"}, headers=[(
                "WWW-Authenticate", 'Bearer resource_metadata="%s/.well-known/'
                'oauth-protected-resource/mcp"' % self.base())])
        if "id" not in m:
            return self.send(202)
        meth, p = m.get("method"), m.get("params") or {}
        if meth == "initialize":
            res = {"protocolVersion": p.get("protocolVersion", "2025-06-18"),
                   "capabilities": {"tools": {}},
                   "serverInfo": {"name": "oauth-mock", "version": "1.0"}}
        elif meth == "tools/list":
            schema = {"type": "object", "properties": {"text": {"type": "string"}}}
            res = {"tools": [{"name": "echo", "description": "Echo the text back.",
                              "inputSchema": schema, "annotations": {"readOnlyHint": True}}]}
        elif meth == "tools/call":
            text = (p.get("arguments") or {}).get("text", "")
            res = {"content": [{"type": "text", "text": "echo: " + text}], "isError": False}
        else:
            return self.send(200, {"jsonrpc": "2.0", "id": m["id"],
                                   "error": {"code": -32601, "message": "no " + str(meth)}})
        self.send(200, {"jsonrpc": "2.0", "id": m["id"], "result": res})


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.server_port))
os.rename(port_file + ".tmp", port_file)
srv.serve_forever()
