#!/usr/bin/env python3
"""A ChatGPT backend and an OAuth issuer on loopback, for the account tests (stdlib only).

POST .../responses   the backend: wants `authorization: Bearer <access JWT>` whose exp has not
                     passed and that is not marked revoked, and `chatgpt-account-id` equal to
                     the token's account; else 401. Answers one short SSE response with the
                     x-codex-* rate-limit headers upstream parses.
POST /oauth/token    the issuer: grant_type refresh_token (JSON, as upstream sends it) gives new
                     tokens after --refresh-delay-ms; --refresh-fail CODE answers 401 with that
                     error code instead. The browser flow's form-encoded grants:
                     authorization_code (the code /oauth/authorize gave, the redirect_uri it
                     was given, and a code_verifier whose S256 is the code_challenge; else 400
                     invalid_grant; --exchange-fail CODE: 400 with that error) and the
                     id_token's token-exchange for an API key (--api-key KEY, else 401).
POST /api/accounts/deviceauth/usercode  device-code sign-in: {client_id} gives
                     {device_auth_id, user_code, interval} (the interval a string, as the
                     issuer sends it: --device-interval); --device-usercode-status CODE answers
                     CODE instead.
POST /api/accounts/deviceauth/token  the poll: 403 for the first --device-pending polls, then
                     {authorization_code, code_challenge, code_verifier}, the code exchangeable
                     at /oauth/token with redirect_uri {issuer}/deviceauth/callback;
                     --device-poll-status CODE answers CODE to every poll instead.
GET /oauth/authorize the user signing in: a 302 to redirect_uri with a fresh code and the state
                     (--authorize-error CODE: error=CODE instead of the code; --wrong-state:
                     another state).

--browse URL --out FILE plays the browser instead (no server): follows URL and its redirects
and writes {status, url, ctype, body} of the last answer to FILE.

Every request is appended to --log as one JSON line {path, headers, body}; --port-file gets the
port once listening. The tokens it hands out are fakes (header.payload.sig, unsigned).
"""
import argparse
import base64
import hashlib
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

ARGS = None
LOCK = threading.Lock()
COUNTER = [0]
CODES = {}  # authorization code -> (code_challenge, redirect_uri)
DEVICE_POLLS = [0]


def b64(obj):
    raw = json.dumps(obj).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def jwt(payload):
    return "%s.%s.sig" % (b64({"alg": "none"}), b64(payload))


def claims(token):
    try:
        part = token.split(".")[1]
        part += "=" * (-len(part) % 4)
        return json.loads(base64.urlsafe_b64decode(part))
    except Exception:
        return None


def new_tokens():
    with LOCK:
        COUNTER[0] += 1
        n = COUNTER[0]
    auth = {"chatgpt_account_id": ARGS.account, "chatgpt_plan_type": "plus",
            "chatgpt_user_id": "user-1"}
    return {
        "id_token": jwt({"email": "me@example.com", "https://api.openai.com/auth": auth}),
        "access_token": jwt({"exp": int(time.time()) + 3600, "n": n,
                             "https://api.openai.com/auth": auth}),
        "refresh_token": "rt-refreshed-%d" % n,
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body leave in two writes: without this a kept-alive client's delayed ACK
    # holds the body back 40 ms (the benches measure the daemon, not that)
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def record(self, body):
        line = {"t": time.time(), "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode("utf-8", "replace")}
        with LOCK:
            with open(ARGS.log, "a") as f:
                f.write(json.dumps(line) + "\n")

    def send(self, status, body, ctype="application/json", extra=None):
        data = body.encode()
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.record(b"")
        if self.path.startswith("/oauth/authorize"):
            return self.authorize()
        if self.path.endswith("/wham/usage") or self.path.endswith("/api/codex/usage"):
            return self.usage()
        if self.path.endswith("/wham/accounts/check"):
            return self.accounts_check()
        self.send(404, "{}")

    def authorized(self):
        """The live access token's claims when the bearer and account id are right, else None."""
        auth = self.headers.get("authorization", "")
        c = claims(auth[7:]) if auth.startswith("Bearer ") else None
        acct = (c or {}).get("https://api.openai.com/auth", {}).get("chatgpt_account_id")
        if c is None or c.get("revoked") or c.get("exp", 0) <= time.time() \
                or self.headers.get("chatgpt-account-id") != acct:
            return None
        return c

    def accounts_check(self):
        """The workspaces of the login (upstream asks after a sign-in: routing discovery)."""
        c = self.authorized()
        if c is None:
            return self.send(401, json.dumps({"detail": "Unauthorized"}))
        acct = c["https://api.openai.com/auth"]["chatgpt_account_id"]
        if ARGS.no_routing:  # a workspace list without this account: no routing to apply
            return self.send(200, json.dumps({"accounts": [], "account_ordering": []}))
        origin = "https://chatgpt.com"  # upstream wants an HTTPS origin (never dialled here)
        self.send(200, json.dumps({"accounts": [{"id": acct, "name": None,
                                                 "structure": "personal",
                                                 "workspace_backend_origin": origin,
                                                 "account_routing_override": "NO_CONSTRAINT"}],
                                   "account_ordering": [acct]}))

    def usage(self):
        """The backend's usage endpoint (what account/rateLimits/read asks upstream's way)."""
        if self.authorized() is None:
            return self.send(401, json.dumps({"detail": "Unauthorized"}))
        if ARGS.usage_status != 200:
            return self.send(ARGS.usage_status, json.dumps({"detail": "usage unavailable"}))
        now = int(time.time())
        body = {
            "plan_type": "pro", "account_id": "acct-1", "ordinary_usage_allowed": True,
            "rate_limit_reached_type": {"type": "rate_limit_reached"},
            "rate_limit": {
                "allowed": True, "limit_reached": False,
                "primary_window": {"used_percent": 17, "limit_window_seconds": 18000,
                                   "reset_after_seconds": 600, "reset_at": now + 600},
                "secondary_window": {"used_percent": 3, "limit_window_seconds": 604800,
                                     "reset_after_seconds": 86400, "reset_at": now + 86400},
            },
            "credits": {"has_credits": True, "unlimited": False, "balance": "12.5"},
            "additional_rate_limits": [{
                "limit_name": "GPT-5-Codex-Spark", "metered_feature": "codex_bengalfox",
                "rate_limit": {"allowed": True, "limit_reached": False,
                               "primary_window": {"used_percent": 70,
                                                  "limit_window_seconds": 900,
                                                  "reset_after_seconds": 60,
                                                  "reset_at": now + 60},
                               "secondary_window": None}}],
        }
        self.send(200, json.dumps(body))

    def do_POST(self):
        n = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(n)
        self.record(body)
        if self.path.startswith("/oauth/token"):
            return self.token(body)
        if self.path.endswith("/responses"):
            return self.backend()
        if self.path == "/api/accounts/deviceauth/usercode":
            return self.usercode(body)
        if self.path == "/api/accounts/deviceauth/token":
            return self.device_poll(body)
        self.send(404, "{}")

    def usercode(self, body):
        """Device code: the user code the user types at {issuer}/codex/device."""
        if ARGS.device_usercode_status:
            return self.send(ARGS.device_usercode_status, json.dumps({"error": "refused"}))
        try:
            req = json.loads(body)
        except ValueError:
            req = {}
        if req.get("client_id") != "app_EMoamEEZ73f0CkXaXp7hrann":
            return self.send(400, json.dumps({"error": "invalid_client"}))
        self.send(200, json.dumps({"device_auth_id": "dev-auth-1", "user_code": "MOCK-1234",
                                   "interval": ARGS.device_interval}))

    def device_poll(self, body):
        """Device code: pending (403) until the user has signed in, then a PKCE'd code."""
        if ARGS.device_poll_status:
            return self.send(ARGS.device_poll_status, json.dumps({"error": "refused"}))
        try:
            req = json.loads(body)
        except ValueError:
            req = {}
        if req.get("device_auth_id") != "dev-auth-1" or req.get("user_code") != "MOCK-1234":
            return self.send(400, json.dumps({"error": "invalid_request"}))
        with LOCK:
            COUNTER[0] += 1
            polls = DEVICE_POLLS[0] = DEVICE_POLLS[0] + 1
            code = "device-code-%d" % COUNTER[0]
        if polls <= ARGS.device_pending:
            return self.send(403, json.dumps({"error": "authorization_pending"}))
        verifier = "device-verifier-%d" % COUNTER[0]
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()) \
            .rstrip(b"=").decode()
        redirect = "http://127.0.0.1:%d/deviceauth/callback" % self.server.server_address[1]
        with LOCK:
            CODES[code] = (challenge, redirect)
        self.send(200, json.dumps({"authorization_code": code, "code_challenge": challenge,
                                   "code_verifier": verifier}))

    def authorize(self):
        """The sign-in page: straight back to the client's loopback callback."""
        q = parse_qs(urlsplit(self.path).query)
        one = lambda k: q.get(k, [""])[0]
        state = "not-" + one("state") if ARGS.wrong_state else one("state")
        if ARGS.authorize_error:
            back = {"error": ARGS.authorize_error, "error_description": "no entry",
                    "state": state}
        else:
            with LOCK:
                COUNTER[0] += 1
                code = "code-%d" % COUNTER[0]
                CODES[code] = (one("code_challenge"), one("redirect_uri"))
            back = {"code": code, "state": state}
        self.send_response(302)
        self.send_header("location", one("redirect_uri") + "?" + urlencode(back))
        self.send_header("content-length", "0")
        self.end_headers()

    def exchange(self, body):
        """grant_type=authorization_code: the PKCE check, then tokens."""
        f = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        with LOCK:
            want = CODES.pop(f.get("code", ""), None)
        verifier = f.get("code_verifier", "").encode()
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()) \
            .rstrip(b"=").decode()
        if ARGS.exchange_fail:
            return self.send(400, json.dumps({"error": ARGS.exchange_fail,
                                              "error_description": "code refused"}))
        if want is None or want != (challenge, f.get("redirect_uri")) \
                or f.get("client_id") != "app_EMoamEEZ73f0CkXaXp7hrann":
            return self.send(400, json.dumps({"error": "invalid_grant"}))
        self.send(200, json.dumps(new_tokens()))

    def token(self, body):
        if self.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            grant = parse_qs(body.decode()).get("grant_type", [""])[0]
            if grant == "authorization_code":
                return self.exchange(body)
            if ARGS.api_key:
                return self.send(200, json.dumps({"access_token": ARGS.api_key}))
            return self.send(401, json.dumps({"error": "invalid_request"}))
        if ARGS.refresh_delay_ms:
            time.sleep(ARGS.refresh_delay_ms / 1000.0)
        if ARGS.refresh_fail:
            return self.send(401, json.dumps({"error": {"code": ARGS.refresh_fail,
                                                        "message": "refused"}}))
        try:
            req = json.loads(body)
        except ValueError:
            return self.send(400, json.dumps({"error": "invalid_request"}))
        if req.get("grant_type") != "refresh_token" or not req.get("refresh_token") \
                or req.get("client_id") != "app_EMoamEEZ73f0CkXaXp7hrann":
            return self.send(400, json.dumps({"error": "invalid_request"}))
        self.send(200, json.dumps(new_tokens()))

    def backend(self):
        # an API key ("sk-mock", the benches' and the probes' key) is taken as is
        if self.headers.get("authorization", "") != "Bearer sk-mock" and self.authorized() is None:
            return self.send(401, json.dumps({"error": {"message": "Your authentication "
                                                        "token has expired.",
                                                        "code": "token_expired"}}))
        now = int(time.time())
        limits = {"x-codex-primary-used-percent": "42", "x-codex-primary-window-minutes": "300",
                  "x-codex-primary-reset-at": str(now + 600),
                  "x-codex-secondary-used-percent": "7",
                  "x-codex-secondary-window-minutes": "10080",
                  "x-codex-secondary-reset-at": str(now + 86400),
                  "x-codex-credits-has-credits": "true", "x-codex-credits-unlimited": "false",
                  "x-codex-credits-balance": "12.5",
                  "x-codex-other-primary-used-percent": "5.5",
                  "x-codex-other-limit-name": "Other"}
        events = [
            {"type": "response.created", "response": {"id": "resp-1"}},
            {"type": "response.output_item.done", "item": {
                "type": "message", "role": "assistant", "id": "msg-1",
                "content": [{"type": "output_text", "text": "Hello from ChatGPT."}]}},
            {"type": "response.completed", "response": {"id": "resp-1", "usage": {
                "input_tokens": 10, "output_tokens": 3, "total_tokens": 13}}},
        ]
        sse = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events)
        self.send(200, sse, "text/event-stream", limits)


def browse(url, out):
    """The user's browser on the sign-in: the issuer's page, then our callback and success."""
    import urllib.error
    import urllib.request
    try:
        r = urllib.request.urlopen(url, timeout=20)
        res = {"status": r.status, "url": r.geturl(), "ctype": r.headers.get("content-type"),
               "body": r.read().decode("utf-8", "replace")}
    except urllib.error.HTTPError as e:
        res = {"status": e.code, "url": e.geturl(), "ctype": e.headers.get("content-type"),
               "body": e.read().decode("utf-8", "replace")}
    except Exception as e:  # the test says what it expected
        res = {"status": 0, "url": url, "ctype": None, "body": str(e)}
    with open(out, "w") as f:
        json.dump(res, f)
    return 0


def main():
    global ARGS
    if len(sys.argv) == 5 and sys.argv[1] == "--browse":
        return browse(sys.argv[2], sys.argv[4])
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--account", default="acct-1")
    p.add_argument("--refresh-delay-ms", type=int, default=0)
    p.add_argument("--refresh-fail", default="")
    p.add_argument("--usage-status", type=int, default=200)
    p.add_argument("--authorize-error", default="")
    p.add_argument("--wrong-state", action="store_true")
    p.add_argument("--exchange-fail", default="")
    p.add_argument("--api-key", default="")
    p.add_argument("--device-interval", default="1")
    p.add_argument("--no-routing", action="store_true")
    p.add_argument("--device-pending", type=int, default=1)
    p.add_argument("--device-usercode-status", type=int, default=0)
    p.add_argument("--device-poll-status", type=int, default=0)
    ARGS = p.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
