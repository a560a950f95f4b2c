/*
 * Asking the user, as upstream 0.169 does (recorded: tests/fixtures/mcp/upstream/elicit.json,
 * record_elicit.py): both a tool call's approval and a server's elicitation/create become an
 * mcpServer/elicitation/request the set's owner sends to the client.
 *  - Approval: params {_meta {codex_approval_kind "mcp_tool_call", persist ["session",
 *    "always"] (not when the tool's approval_mode is "prompt"), tool_annotations (when it has
 *    any), tool_description, tool_name, tool_params, tool_params_display [{display_name, name,
 *    value}]}, message "Allow the <server> MCP server to run tool \"<tool>\"?", mode "form",
 *    requestedSchema {properties {}, type object}, serverName}. accept sends the tools/call;
 *    decline or an error answer (-32601...) fails the call with MCP_REJECTED, cancel (or the
 *    client gone) with MCP_USER_CANCELLED; nothing reaches the server then. An accept whose
 *    _meta.persist is "session" remembers the tool for the thread's session (its later calls
 *    are not asked), "always" too and the owner writes approval_mode "approve" to config, as
 *    upstream; neither with approval_mode "prompt" (upstream offers them not, and takes such
 *    an answer as a plain accept).
 *  - Elicitation: params {_meta (the server's, or null), message, mode (form), requestedSchema,
 *    serverName} (url mode: url and elicitationId too); the client's action and content go back
 *    to the server ({action} alone without content), an error answer as decline; nobody to ask
 *    (no turn, approval policy never) declines at once without asking.
 * Rule: every question ends once: answered, taken back (the call cancelled, an interrupt: the
 * server hears `cancel`), or dropped with its server.
 */
#include <stdlib.h>
#include <string.h>

#include "mcp_int.h"
#include "io/log.h"
#include "protocol/xmalloc.h"

/* The tool's approval_mode in the server's config, or NULL. */
static const char *
mcp_elicit_mode(const struct mcp_server *sv, const char *tool)
{
	return json_string_value(json_object_get(
		json_object_get(json_object_get(sv->cfg, "tools"), tool), "approval_mode"));
}

int
mcp_elicit_remembered(const struct mcp_server *sv, const char *tool)
{
	const char *mode = mcp_elicit_mode(sv, tool);

	if (mode != NULL && strcmp(mode, "prompt") == 0)
		return 0; /* asked every time: upstream keeps no session key for it */
	return json_is_true(json_object_get(json_object_get(sv->set->o.approved, sv->name), tool));
}

/* The user's accept carried _meta.persist: remember the tool (and have it written). */
static void
mcp_elicit_persist(struct mcp_server *sv, const char *tool, const json_t *value)
{
	const char *p =
		json_string_value(json_object_get(json_object_get(value, "_meta"), "persist"));
	const char *mode = mcp_elicit_mode(sv, tool);
	struct mcp_set *s = sv->set;
	json_t *tools;

	if (p == NULL || (strcmp(p, "session") != 0 && strcmp(p, "always") != 0) ||
		(mode != NULL && strcmp(mode, "prompt") == 0))
		return;
	if (!json_is_object(tools = json_object_get(s->o.approved, sv->name))) {
		tools = json_object();
		json_object_set_new(s->o.approved, sv->name, tools);
	}
	json_object_set_new(tools, tool, json_true());
	log_info("mcp %s: tool %s approved for the session%s", sv->name, tool,
		strcmp(p, "always") == 0 ? " and always" : "");
	if (strcmp(p, "always") == 0 && s->o.persist != NULL)
		s->o.persist(s->o.arg, sv->name, tool);
}

/* A tool of the server by name (borrowed), or NULL. */
static const json_t *
mcp_elicit_tool(const struct mcp_server *sv, const char *name)
{
	const json_t *t;
	size_t i;

	json_array_foreach(sv->tools, i,
		t) if (strcmp(json_string_value(json_object_get(t, "name")) ?: "", name) ==
		0) return t;
	return NULL;
}

/* The approval request's params (new reference). */
static json_t *
mcp_elicit_approval_params(const struct mcp_server *sv, const char *name, const json_t *args)
{
	const json_t *tool = mcp_elicit_tool(sv, name), *v, *title;
	const json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
	const char *mode = mcp_elicit_mode(sv, name);
	json_t *meta = json_pack("{s:s}", "codex_approval_kind", "mcp_tool_call"), *display, *q;
	const char *k;
	char *msg;

	if (mode == NULL || strcmp(mode, "prompt") != 0)
		json_object_set_new(meta, "persist", json_pack("[s, s]", "session", "always"));
	if (json_is_object(json_object_get(tool, "annotations")))
		json_object_set(meta, "tool_annotations", json_object_get(tool, "annotations"));
	if (json_is_string(json_object_get(tool, "description")))
		json_object_set(meta, "tool_description", json_object_get(tool, "description"));
	json_object_set_new(meta, "tool_name", json_string(name));
	json_object_set_new(
		meta, "tool_params", json_is_object(args) ? json_deep_copy(args) : json_object());
	display = json_array();
	json_object_foreach((json_t *)args, k, v)
	{
		title = json_object_get(json_object_get(props, k), "title");
		json_array_append_new(display,
			json_pack("{s:s, s:s, s:O}", "display_name",
				json_is_string(title) ? json_string_value(title) : k, "name", k,
				"value", v));
	}
	json_object_set_new(meta, "tool_params_display", display);
	msg = xasprintf("Allow the %s MCP server to run tool \"%s\"?", sv->name, name);
	q = json_pack("{s:o, s:s, s:s, s:{s:{}, s:s}, s:s}", "_meta", meta, "message", msg, "mode",
		"form", "requestedSchema", "properties", "type", "object", "serverName", sv->name);
	free(msg);
	return q;
}

/* The action of a client's answer, or NULL. */
static const char *
mcp_elicit_action(int st, const json_t *value)
{
	const char *a = st == MCP_ANSWER_RESULT
		? json_string_value(json_object_get(value, "action"))
		: NULL;

	if (st == MCP_ANSWER_GONE)
		return "cancel";
	if (a == NULL || (strcmp(a, "accept") != 0 && strcmp(a, "cancel") != 0))
		return "decline"; /* an error answer, or no decision: declined, as upstream */
	return a;
}

/* The user answered a call's approval. */
static void
mcp_elicit_approved(void *ctx, int st, const json_t *value)
{
	struct mcp_call *c = ctx;
	const char *a = mcp_elicit_action(st, value);

	c->token = 0;
	if (strcmp(a, "accept") == 0) {
		mcp_elicit_persist(
			c->sv, json_string_value(json_object_get(c->held, "name")) ?: "", value);
		mcp_call_send(c);
		return;
	}
	json_decref(c->held);
	c->held = NULL;
	mcp_call_finish(c, NULL, strcmp(a, "cancel") == 0 ? MCP_USER_CANCELLED : MCP_REJECTED);
}

int
mcp_elicit_approval(
	struct mcp_call *c, const char *tool, const json_t *args, json_t *params, char **cause)
{
	struct mcp_set *s = c->sv->set;
	json_t *q = mcp_elicit_approval_params(c->sv, tool, args);

	c->held = params;
	if (s->o.ask == NULL || s->o.ask(s->o.arg, q, mcp_elicit_approved, c, &c->token) != 0) {
		if (s->o.ask == NULL)
			json_decref(q);
		json_decref(c->held);
		c->held = NULL;
		*cause = xstrdup(MCP_REJECTED);
		return -1;
	}
	return 0;
}

void
mcp_elicit_withdraw_call(struct mcp_call *c)
{
	struct mcp_set *s;

	if (c->held == NULL || c->sv == NULL)
		return;
	s = c->sv->set;
	if (s->o.withdraw != NULL)
		s->o.withdraw(s->o.arg, c->token);
	json_decref(c->held);
	c->held = NULL;
}

/* Take a question off its server's list. */
static void
mcp_elicit_unlink(struct mcp_elicit *e)
{
	struct mcp_elicit **pp;

	for (pp = &e->sv->elicits; *pp != NULL; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			break;
		}
}

/* The server hears the user's action (content with accept), the question is over. */
static void
mcp_elicit_reply(struct mcp_elicit *e, const char *action, const json_t *value)
{
	json_t *r = json_pack("{s:s}", "action", action);
	const json_t *content = json_object_get(value, "content");

	if (strcmp(action, "accept") == 0 && content != NULL && !json_is_null(content))
		json_object_set(r, "content", (json_t *)content);
	mcp_conn_reply(e->sv, e->id, r);
	json_decref(e->id);
	free(e);
}

static void
mcp_elicit_answered(void *ctx, int st, const json_t *value)
{
	struct mcp_elicit *e = ctx;

	mcp_elicit_unlink(e);
	mcp_elicit_reply(e, mcp_elicit_action(st, value), value);
}

/* params' member key (a new reference), or dflt (owned) where it has none. */
static json_t *
mcp_elicit_or(const json_t *params, const char *key, json_t *dflt)
{
	json_t *v = json_object_get(params, key);

	if (v == NULL)
		return dflt;
	json_decref(dflt);
	return json_incref(v);
}

void
mcp_elicit_forward(struct mcp_server *sv, const json_t *id, const json_t *params)
{
	struct mcp_set *s = sv->set;
	struct mcp_elicit *e = xcalloc(1, sizeof *e);
	const json_t *mode = json_object_get(params, "mode");
	json_t *q;

	e->sv = sv;
	e->id = json_incref((json_t *)id);
	q = json_pack("{s:o, s:o, s:o}", "_meta", mcp_elicit_or(params, "_meta", json_null()),
		"message", mcp_elicit_or(params, "message", json_string("")), "mode",
		json_is_string(mode) ? json_incref((json_t *)mode) : json_string("form"));
	if (json_is_string(mode) && strcmp(json_string_value(mode), "url") == 0) {
		json_object_set_new(q, "url", mcp_elicit_or(params, "url", json_null()));
		json_object_set_new(
			q, "elicitationId", mcp_elicit_or(params, "elicitationId", json_null()));
	} else
		json_object_set_new(q, "requestedSchema",
			mcp_elicit_or(params, "requestedSchema", json_object()));
	json_object_set_new(q, "serverName", json_string(sv->name));
	if (s->o.ask == NULL || s->o.ask(s->o.arg, q, mcp_elicit_answered, e, &e->token) != 0) {
		if (s->o.ask == NULL)
			json_decref(q);
		log_info("mcp %s: an elicitation declined (nobody to ask)", sv->name);
		mcp_elicit_reply(e, "decline", NULL);
		return;
	}
	e->next = sv->elicits;
	sv->elicits = e;
}

void
mcp_elicit_end_all(struct mcp_server *sv, int reply)
{
	struct mcp_set *s = sv->set;
	struct mcp_elicit *e;

	while ((e = sv->elicits) != NULL) {
		sv->elicits = e->next;
		if (s->o.withdraw != NULL)
			s->o.withdraw(s->o.arg, e->token);
		if (reply)
			mcp_elicit_reply(e, "cancel", NULL);
		else {
			json_decref(e->id);
			free(e);
		}
	}
}
