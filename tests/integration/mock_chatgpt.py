#!/usr/bin/env python3
"""A ChatGPT backend and an OAuth issuer on loopback, for the account tests (stdlib only).

POST .../responses   the backend: wants `authorization: Bearer <access JWT>` whose exp has not
                     passed and that is not marked revoked, and `chatgpt-account-id` equal to
                     the token's account; else 401. Answers one short SSE response with the
                     x-codex-* rate-limit headers upstream parses.
POST /oauth/token    the issuer: grant_type refresh_token (JSON, as upstream sends it) gives new
                     tokens after --refresh-delay-ms; --refresh-fail CODE answers 401 with that
                     error code instead.

Every request is appended to --log as one JSON line {path, headers, body}; --port-file gets the
port once listening. The tokens it hands out are fakes (header.payload.sig, unsigned).
"""
import argparse
import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()
COUNTER = [0]


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

    def log_message(self, fmt, *args):
        pass

    def record(self, body):
        line = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
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
        if self.path.endswith("/wham/usage") or self.path.endswith("/api/codex/usage"):
            return self.usage()
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
        self.send(404, "{}")

    def token(self, body):
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


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--account", default="acct-1")
    p.add_argument("--refresh-delay-ms", type=int, default=0)
    p.add_argument("--refresh-fail", default="")
    p.add_argument("--usage-status", type=int, default=200)
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
