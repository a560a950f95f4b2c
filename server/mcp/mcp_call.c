/*
 * tools/call (and other requests: mcp_request) on a ready server: the request carries a
 * progressToken (the request's id), the server's notifications/progress for it reach the caller,
 * tool_timeout_sec bounds the wait. Rule: `done` runs exactly once per call, last; after it the
 * handle is gone.
 */
#include <stdlib.h>
#include <string.h>

#include "mcp_int.h"
#include "protocol/xmalloc.h"

static void mcp_call_timeout_cb(struct ev_loop *, ev_timer *, int);

/* Unlink a call from its server's list. */
static void
mcp_call_unlink(struct mcp_call *c)
{
	struct mcp_call **pp;

	for (pp = &c->sv->calls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	ev_timer_stop(c->sv->set->o.loop, &c->timeout);
}

void
mcp_call_error(struct mcp_call *c, int code, const char *error)
{
	if (c->cbs.code != NULL)
		*c->cbs.code = code;
	mcp_call_finish(c, NULL, error);
}

void
mcp_call_finish(struct mcp_call *c, const json_t *result, const char *error)
{
	struct mcp_call_cbs cbs = c->cbs;

	mcp_elicit_withdraw_call(c); /* still waiting on the user: the question is taken back */
	mcp_call_unlink(c);
	free(c);
	if (error == NULL && !json_is_object(result))
		error = "the MCP server's answer had no result";
	cbs.done(cbs.arg, error == NULL ? result : NULL, error);
}

/* A call of a ready server, listed on it, not sent yet; NULL with *cause when not ready. */
static struct mcp_call *
mcp_call_new(struct mcp_server *sv, const struct mcp_call_cbs *cbs, char **cause)
{
	struct mcp_call *c;

	if (sv->state != MCP_READY) {
		*cause = xasprintf(
			"MCP server `%s` is not ready (%s)", sv->name, mcp_state_name(sv->state));
		return NULL;
	}
	c = xcalloc(1, sizeof *c);
	c->sv = sv;
	c->cbs = *cbs;
	c->id = -1;
	if (c->cbs.code != NULL)
		*c->cbs.code = 0;
	ev_timer_init(&c->timeout, mcp_call_timeout_cb, sv->tool_timeout, 0.);
	c->next = sv->calls;
	sv->calls = c;
	return c;
}

/* Send the request of call c (params stolen); the tool timeout runs from now. */
static int
mcp_call_request(struct mcp_call *c, const char *method, json_t *params, char **cause)
{
	if (mcp_conn_request(c->sv, method, params, NULL, c, &c->id, cause) != 0)
		return -1;
	ev_timer_start(c->sv->set->o.loop, &c->timeout);
	return 0;
}

/* Send method to a ready server as a call (params stolen). */
static struct mcp_call *
mcp_call_start(struct mcp_server *sv, const char *method, json_t *params,
	const struct mcp_call_cbs *cbs, char **cause)
{
	struct mcp_call *c = mcp_call_new(sv, cbs, cause);

	if (c != NULL && mcp_call_request(c, method, params, cause) == 0)
		return c;
	if (c != NULL) {
		mcp_call_unlink(c);
		free(c);
	} else
		json_decref(params);
	return NULL;
}

void
mcp_call_send(struct mcp_call *c)
{
	json_t *params = c->held;
	char *cause = NULL;

	c->held = NULL;
	/* the progressToken is the request's id: the one mcp_conn_request gives it */
	json_object_set_new(
		json_object_get(params, "_meta"), "progressToken", json_integer(c->sv->next_id));
	if (mcp_call_request(c, "tools/call", params, &cause) != 0) {
		mcp_call_finish(c, NULL, cause);
		free(cause);
	}
}

struct mcp_call *
mcp_call_tool(struct mcp_set *s, size_t i, const char *tool, const json_t *args, const json_t *meta,
	const struct mcp_call_cbs *cbs, char **cause)
{
	struct mcp_server *sv = &s->sv[i];
	struct mcp_call *c;
	json_t *params, *m;

	m = json_is_object(meta) ? json_deep_copy(meta) : json_object();
	/* the progressToken is the request's id: the one mcp_conn_request gives it */
	json_object_set_new(m, "progressToken", json_integer(sv->next_id));
	params = json_pack("{s:o, s:s, s:o}", "_meta", m, "name", tool, "arguments",
		json_is_object(args) ? json_incref((json_t *)args) : json_object());
	if (!cbs->ask || mcp_elicit_remembered(sv, tool))
		return mcp_call_start(sv, "tools/call", params, cbs, cause);
	if ((c = mcp_call_new(sv, cbs, cause)) == NULL) {
		json_decref(params);
		return NULL;
	}
	if (mcp_elicit_approval(c, tool, args, params, cause) != 0) {
		mcp_call_unlink(c);
		free(c);
		return NULL;
	}
	return c;
}

int
mcp_call_remembered(const struct mcp_set *s, size_t i, const char *tool)
{
	return mcp_elicit_remembered(&s->sv[i], tool);
}

struct mcp_call *
mcp_request(struct mcp_set *s, size_t i, const char *method, json_t *params,
	const struct mcp_call_cbs *cbs, char **cause)
{
	return mcp_call_start(&s->sv[i], method, params, cbs, cause);
}

/* notifications/cancelled, then the call ends now. */
static void
mcp_call_abandon(struct mcp_call *c, const char *reason, const char *error)
{
	struct mcp_server *sv = c->sv;

	if (c->held != NULL) { /* not sent: the user was still being asked */
		mcp_call_finish(c, NULL, error);
		return;
	}
	mcp_conn_forget(sv, c->id);
	mcp_conn_notify(sv, "notifications/cancelled",
		json_pack("{s:I, s:s}", "requestId", (json_int_t)c->id, "reason", reason));
	mcp_call_finish(c, NULL, error);
	/* what it asked the user is cancelled too (upstream answers `cancel` after) */
	mcp_elicit_end_all(sv, 1);
}

void
mcp_call_cancel(struct mcp_call *c)
{
	if (c->res != NULL) {
		mcp_res_cancel(c);
		return;
	}
	mcp_call_abandon(c, "cancelled", "cancelled");
}

static void
mcp_call_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct mcp_call *c = container_of(w, struct mcp_call, timeout);
	char *why = xasprintf("timed out awaiting tools/call after %gs", c->sv->tool_timeout);

	(void)loop;
	(void)revents;
	mcp_call_abandon(c, "timed out", why);
	free(why);
}

void
mcp_call_progress(struct mcp_server *sv, const json_t *params)
{
	const json_t *tok = json_object_get(params, "progressToken");
	const json_t *total = json_object_get(params, "total");
	double t;
	struct mcp_call *c;

	if (!json_is_integer(tok))
		return;
	for (c = sv->calls; c != NULL && c->id != json_integer_value(tok); c = c->next)
		;
	if (c == NULL || c->cbs.progress == NULL)
		return;
	t = json_number_value(total);
	c->cbs.progress(c->cbs.arg, json_number_value(json_object_get(params, "progress")),
		json_is_number(total) ? &t : NULL,
		json_string_value(json_object_get(params, "message")));
}

void
mcp_call_fail_all(struct mcp_server *sv, const char *error)
{
	struct mcp_call *c;

	while ((c = sv->calls) != NULL) {
		mcp_conn_forget(sv, c->id);
		mcp_call_finish(c, NULL, error);
	}
}
