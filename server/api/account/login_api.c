/*
 * account/login/start {type:"chatgpt"} and account/login/cancel: the browser sign-in of
 * account/login_flow.h, one at a time per process, as upstream 0.169's app-server runs it
 * (observed side by side):
 *   start     answer {type:"chatgpt", loginId (a UUID v4), authUrl} once the callback server
 *             listens; a sign-in already pending is dropped first and told
 *             login/completed {success:false, error:"Login server error: Login cancelled"};
 *             a server that cannot listen: -32603 "failed to start login server: ..."
 *   end       login/completed {loginId, success, error}; signed in: then account/updated
 *   cancel    the pending id: {status:"canceled"}, then login/completed with "Login server
 *             error: Login was not completed" (the port is free by then); another id:
 *             {status:"notFound"}
 *   10 min    without an end: login/completed "Login timed out"
 * An API-key login drops a pending sign-in the same way a cancel does.
 *
 * account/login/start {type:"chatgptDeviceCode"} (account/login_device.h), as 0.169:
 *   start     answer {type:"chatgptDeviceCode", loginId, verificationUrl, userCode} once the
 *             issuer gave the code; only then is a pending sign-in dropped (its
 *             login/completed follows the answer); the issuer without device login (404):
 *             -32600 with its sentence; other failures -32603 "failed to request device
 *             code: ..."
 *   end       login/completed with the engine's sentence as is (no "Login server error: "
 *             prefix); a cancel, or another login replacing it: "Login was not completed";
 *             no 10-minute timer (the poll gives up after 15 minutes itself)
 */
#include <sys/random.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/login_device.h"
#include "account/login_flow.h"
#include "api/session.h"
#include "io/http.h"
#include "login_api.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"

#define LOGIN_TIMEOUT 600.0 /* upstream's LOGIN_CHATGPT_TIMEOUT */

static struct {
	struct login_flow *flow;     /* the pending browser sign-in, or NULL */
	struct login_device *device; /* the pending device-code sign-in, or NULL */
	/* a device-code start waiting for its user code (a pending sign-in stays till then) */
	struct login_device *starting;
	struct rpc *starting_rpc;
	struct rpc_req *starting_req;
	struct rpc *rpc;     /* the connection that started it */
	struct rpc_req *req; /* its login/start, until the server listens */
	struct ev_loop *loop;
	ev_timer timeout;
	char id[37];
	void (*signed_in)(struct rpc *r);
} login_api;

/* A UUID v4's text, as upstream's loginId. */
static void
login_api_uuid4(char out[37])
{
	unsigned char b[16] = {0};

	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
		for (size_t i = 0; i < sizeof b; i++)
			b[i] = (unsigned char)random();
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		b[13], b[14], b[15]);
}

/* Forget the pending sign-in (its port is free when this returns). */
static void
login_api_clear(void)
{
	login_flow_free(login_api.flow);
	login_api.flow = NULL;
	login_device_free(login_api.device);
	login_api.device = NULL;
	if (login_api.loop != NULL)
		ev_timer_stop(login_api.loop, &login_api.timeout);
}

/* account/login/completed for the sign-in id (error NULL: signed in). */
static void
login_api_completed(struct rpc *r, const char *id, const char *error)
{
	if (r == NULL)
		return;
	rpc_notify(r, "account/login/completed",
		json_pack("{s:s, s:b, s:o, s:n}", "loginId", id, "success", error == NULL, "error",
			error != NULL ? json_string(error) : json_null(), "onboardingEntrypoint"));
}

/* Drop the pending sign-in, telling whoever started it why (the server's own words get
 * upstream's prefix; the timeout's do not). */
static void
login_api_drop(const char *error, int server)
{
	struct rpc *r = login_api.rpc;
	struct rpc_req *req = login_api.req;
	char id[37];

	if (login_api.device != NULL) {
		/* 0.169 ends a device-code sign-in with this sentence however it is dropped */
		error = "Login was not completed";
		server = 0;
	} else if (login_api.flow == NULL)
		return;
	memcpy(id, login_api.id, sizeof id);
	login_api.req = NULL;
	login_api_clear();
	if (req != NULL) { /* still binding: the client never saw the id */
		rpc_reply_errorf(
			req, RPC_INTERNAL_ERROR, "failed to start login server: %s", error);
	} else if (server) {
		char *msg = xasprintf("Login server error: %s", error);

		login_api_completed(r, id, msg);
		free(msg);
	} else
		login_api_completed(r, id, error);
}

static void
login_api_started(void *arg, const char *auth_url, const char *error)
{
	struct rpc_req *req = login_api.req;

	(void)arg;
	login_api.req = NULL;
	if (error != NULL) {
		login_api_clear();
		rpc_reply_errorf(
			req, RPC_INTERNAL_ERROR, "failed to start login server: %s", error);
		return;
	}
	ev_timer_set(&login_api.timeout, LOGIN_TIMEOUT, 0.);
	ev_timer_start(login_api.loop, &login_api.timeout);
	rpc_reply(req,
		json_pack("{s:s, s:s, s:s}", "type", "chatgpt", "loginId", login_api.id, "authUrl",
			auth_url));
}

static void
login_api_done(void *arg, const char *error)
{
	struct rpc *r = login_api.rpc;
	char id[37], *msg = error != NULL ? xasprintf("Login server error: %s", error) : NULL;

	(void)arg;
	memcpy(id, login_api.id, sizeof id);
	login_api_clear();
	login_api_completed(r, id, msg);
	if (msg == NULL && r != NULL && login_api.signed_in != NULL)
		login_api.signed_in(r);
	free(msg);
}

static void
login_api_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	login_api_drop("Login timed out", 0);
}

void
login_api_chatgpt_start(struct session *s, struct rpc_req *req, void (*signed_in)(struct rpc *))
{
	static const struct login_flow_cbs cbs = {login_api_started, login_api_done};
	struct login_flow_opts o = {NULL, s->originator, -1};

	login_api_drop("Login cancelled", 1);
	login_api.loop = s->loop;
	login_api.rpc = s->rpc;
	login_api.req = req;
	login_api.signed_in = signed_in;
	ev_timer_init(&login_api.timeout, login_api_timeout_cb, LOGIN_TIMEOUT, 0.);
	login_api_uuid4(login_api.id);
	login_api.flow = login_flow_start(s->loop, http_default(), &o, &cbs, NULL);
}

/* The user code is known (or not): answer the start, then replace any pending sign-in. */
static void
login_api_device_started(
	void *arg, const char *url, const char *code, const char *error, int not_found)
{
	struct login_device *d = login_api.starting;
	struct rpc_req *req = login_api.starting_req;
	struct rpc *r = login_api.starting_rpc;
	char id[37];

	(void)arg;
	login_api.starting = NULL;
	login_api.starting_req = NULL;
	login_api.starting_rpc = NULL;
	if (error != NULL) {
		login_device_free(d); /* safe: the engine touches nothing after this callback */
		if (not_found)
			rpc_reply_error(req, RPC_INVALID_REQUEST, error, NULL);
		else
			rpc_reply_errorf(req, RPC_INTERNAL_ERROR,
				"failed to request device code: %s", error);
		return;
	}
	login_api_uuid4(id);
	rpc_reply(req,
		json_pack("{s:s, s:s, s:s, s:s}", "type", "chatgptDeviceCode", "loginId", id,
			"verificationUrl", url, "userCode", code));
	login_api_drop("Login was not completed", 1);
	login_api.device = d;
	login_api.rpc = r;
	memcpy(login_api.id, id, sizeof id);
}

static void
login_api_device_done(void *arg, const char *error)
{
	struct rpc *r = login_api.rpc;
	char id[37];

	(void)arg;
	memcpy(id, login_api.id, sizeof id);
	login_api_clear();
	login_api_completed(r, id, error);
	if (error == NULL && r != NULL && login_api.signed_in != NULL)
		login_api.signed_in(r);
}

void
login_api_device_start(struct session *s, struct rpc_req *req, void (*signed_in)(struct rpc *))
{
	static const struct login_device_cbs cbs = {
		login_api_device_started, login_api_device_done};

	if (login_api.starting != NULL) {
		/* two starts racing for a code: the later one wins, as upstream's last writer */
		login_device_free(login_api.starting);
		rpc_reply_errorf(login_api.starting_req, RPC_INTERNAL_ERROR,
			"failed to request device code: %s", "Login was not completed");
	}
	login_api.loop = s->loop;
	login_api.signed_in = signed_in;
	login_api.starting_rpc = s->rpc;
	login_api.starting_req = req;
	login_api.starting = login_device_start(s->loop, http_default(), NULL, &cbs, NULL);
}

int
login_api_cancel(const char *id)
{
	if ((login_api.flow == NULL && login_api.device == NULL) || login_api.req != NULL ||
		strcmp(id, login_api.id) != 0)
		return 0;
	return 1;
}

void
login_api_drop_pending(void)
{
	login_api_drop("Login was not completed", 1);
}

void
login_api_detach(struct session *s)
{
	if (login_api.starting_rpc == s->rpc) {
		login_device_free(login_api.starting);
		login_api.starting = NULL;
		login_api.starting_rpc = NULL;
		login_api.starting_req = NULL; /* rpc_free answers it */
	}
	if (login_api.rpc != s->rpc)
		return;
	/* the connection is gone: nobody to tell; its login/start is rpc_free's */
	login_api.req = NULL;
	login_api.rpc = NULL;
	login_api_clear();
}
