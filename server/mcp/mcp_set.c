/*
 * A thread's MCP servers: each started in parallel, through upstream's sequence
 * (`initialize` -> `notifications/initialized` -> `tools/list`, every page), ready or failed
 * within its startup_timeout_sec, its tools listed again on `notifications/tools/list_changed`,
 * started again at the next turn when it died after being ready.
 *
 * Rule: the owner hears each state change once (starting, then ready or failed); a server
 * failing twice (a timeout, then its exit) is reported once.
 */
#include <stdlib.h>
#include <string.h>

#include "mcp_int.h"
#include "exec/exec.h"
#include "io/linebuf.h"
#include "io/log.h"
#include "protocol/xmalloc.h"

static void mcp_startup_cb(struct ev_loop *, ev_timer *, int);

const char *
mcp_state_name(enum mcp_state st)
{
	switch (st) {
	case MCP_STARTING:
		return "starting";
	case MCP_READY:
		return "ready";
	case MCP_CANCELLED:
		return "cancelled";
	default:
		return "failed";
	}
}

static void
mcp_status(struct mcp_server *sv, const char *error)
{
	if (sv->set->o.status != NULL)
		sv->set->o.status(sv->set->o.arg, sv->name, sv->state, error);
	if (sv->state != MCP_STARTING && sv->set->settle != NULL)
		sv->set->settle(sv->set->settle_arg);
}

int
mcp_set_starting(const struct mcp_set *s)
{
	for (size_t i = 0; s != NULL && i < s->n; i++)
		if (s->sv[i].state == MCP_STARTING || s->sv[i].listing)
			return 1; /* a list_changed's listing counts: the next request gets it */
	return 0;
}

void
mcp_set_on_settle(struct mcp_set *s, void (*fn)(void *arg), void *arg)
{
	s->settle = fn;
	s->settle_arg = arg;
}

struct mcp_set *
mcp_set_new(const struct mcp_set_opts *o, const json_t *servers)
{
	struct mcp_set *s = xcalloc(1, sizeof *s);
	const char **names;
	const char *k;
	json_t *v;
	size_t i = 0;

	s->o = *o;
	s->o.approved = o->approved != NULL ? json_incref(o->approved) : json_object();
	s->cwd = o->cwd != NULL ? xstrdup(o->cwd) : NULL;
	s->o.cwd = s->cwd;
	s->n = json_object_size(servers);
	s->sv = xcalloc(s->n + 1, sizeof *s->sv);
	names = xcalloc(s->n + 1, sizeof *names);
	json_object_foreach((json_t *)servers, k, v) names[i++] = k;
	/* sorted by name: the order upstream lists servers and offers their tools in */
	for (i = 1; i < s->n; i++)
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	for (i = 0; i < s->n; i++) {
		struct mcp_server *sv = &s->sv[i];

		sv->set = s;
		sv->name = xstrdup(names[i]);
		sv->cfg = json_incref(json_object_get(servers, names[i]));
		sv->state = MCP_CANCELLED;
		sv->tool_timeout = json_number_value(json_object_get(sv->cfg, "tool_timeout_sec"));
		ev_init(&sv->startup, mcp_startup_cb);
	}
	free(names);
	return s;
}

/* Forget what a server's run left (its process is gone or going). */
static void
mcp_server_reset(struct mcp_server *sv)
{
	ev_timer_stop(sv->set->o.loop, &sv->startup);
	json_decref(sv->acc);
	sv->acc = NULL;
	sv->listing = sv->relist = 0;
}

void
mcp_set_free(struct mcp_set *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct mcp_server *sv = &s->sv[i];

		mcp_conn_kill(sv, "the thread was closed");
		mcp_server_reset(sv);
		exec_free(sv->proc); /* killed, its tree released */
		mcp_conn_release(sv);
		json_decref(sv->init);
		json_decref(sv->tools);
		json_decref(sv->cfg);
		free(sv->error);
		free(sv->name);
	}
	free(s->sv);
	free(s->cwd);
	json_decref(s->o.approved);
	free(s);
}

void
mcp_server_failed(struct mcp_server *sv, enum mcp_fail kind, const char *error)
{
	int report = sv->state == MCP_STARTING || sv->state == MCP_READY;

	if (report) {
		free(sv->error);
		sv->error = xstrdup(error);
		sv->fail = kind;
	}
	mcp_conn_kill(sv, error);
	mcp_server_reset(sv);
	sv->state = MCP_FAILED;
	if (report)
		mcp_status(sv, error);
}

/* startup_timeout_sec passed before the server was ready. */
static void
mcp_startup_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct mcp_server *sv = container_of(w, struct mcp_server, startup);
	double secs = json_number_value(json_object_get(sv->cfg, "startup_timeout_sec"));
	char *why;

	(void)loop;
	(void)revents;
	why = xasprintf("MCP client for `%s` timed out after %g seconds. Add or adjust "
			"`startup_timeout_sec` in your config.toml:\n[mcp_servers.%s]\n"
			"startup_timeout_sec = XX",
		sv->name, secs, sv->name);
	mcp_server_failed(sv, MCP_FAIL_TIMEOUT, why);
	free(why);
}

/* Whether enabled_tools / disabled_tools let a tool through. */
static int
mcp_tool_allowed(const json_t *cfg, const char *name)
{
	const json_t *on = json_object_get(cfg, "enabled_tools"), *v;
	size_t i;
	int in = !json_is_array(on);

	json_array_foreach(on, i, v) if (strcmp(json_string_value(v) ?: "", name) == 0) in = 1;
	json_array_foreach(json_object_get(cfg, "disabled_tools"), i,
		v) if (strcmp(json_string_value(v) ?: "", name) == 0) in = 0;
	return in;
}

static void mcp_list_answer(struct mcp_server *sv, json_t *result, const char *error);

/* Ask for a page of tools (cursor NULL: the first). */
static void
mcp_list_page(struct mcp_server *sv, const char *cursor)
{
	char *cause = NULL;
	json_t *params = cursor != NULL ? json_pack("{s:s}", "cursor", cursor) : json_object();

	if (mcp_conn_request(sv, "tools/list", params, mcp_list_answer, NULL, NULL, &cause) != 0) {
		mcp_server_failed(sv, MCP_FAIL_OTHER, cause);
		free(cause);
	}
}

void
mcp_server_list_tools(struct mcp_server *sv)
{
	sv->listing = 1;
	sv->relist = 0;
	sv->pages = 0;
	json_decref(sv->acc);
	sv->acc = json_array();
	mcp_list_page(sv, NULL);
}

/* A page of tools/list: the next one, or the list is complete (the server is ready). */
static void
mcp_list_answer(struct mcp_server *sv, json_t *result, const char *error)
{
	const char *next = json_string_value(json_object_get(result, "nextCursor"));
	json_t *t;
	size_t i;
	char *why;

	if (error != NULL || !json_is_array(json_object_get(result, "tools"))) {
		why = xasprintf("MCP server `%s`: tools/list failed: %s", sv->name,
			error != NULL ? error : "no tools in the answer");
		mcp_server_failed(sv, MCP_FAIL_OTHER, why);
		free(why);
		return;
	}
	json_array_foreach(json_object_get(result, "tools"), i,
		t) if (json_is_string(json_object_get(t, "name")) &&
		mcp_tool_allowed(sv->cfg, json_string_value(json_object_get(t, "name"))))
		json_array_append(sv->acc, t);
	if (next != NULL && next[0] != '\0' && ++sv->pages < MCP_LIST_PAGES) {
		mcp_list_page(sv, next);
		return;
	}
	json_decref(sv->tools);
	sv->tools = sv->acc;
	sv->acc = NULL;
	sv->listing = 0;
	if (sv->state == MCP_STARTING) {
		ev_timer_stop(sv->set->o.loop, &sv->startup);
		sv->state = MCP_READY;
		log_info("mcp %s: ready, %zu tools", sv->name, json_array_size(sv->tools));
		mcp_status(sv, NULL);
	}
	if (sv->relist)
		mcp_server_list_tools(sv);
	else if (sv->set->settle != NULL)
		sv->set->settle(sv->set->settle_arg); /* a model request may wait for this list */
}

/* initialize's answer: notifications/initialized, then the tools. */
static void
mcp_init_answer(struct mcp_server *sv, json_t *result, const char *error)
{
	char *why;

	if (error != NULL || !json_is_object(result)) {
		why = xasprintf("MCP server `%s`: initialize failed: %s", sv->name,
			error != NULL ? error : "no result");
		mcp_server_failed(sv, MCP_FAIL_OTHER, why);
		free(why);
		return;
	}
	json_decref(sv->init);
	sv->init = json_incref(result);
	mcp_conn_notify(sv, "notifications/initialized", NULL);
	mcp_http_initialized(sv); /* streamable HTTP: the server's own stream opens */
	mcp_server_list_tools(sv);
}

/* Start one server: its process, then initialize; its start-up clock runs from now. */
static void
mcp_server_start(struct mcp_server *sv)
{
	char *cause = NULL;
	json_t *params;

	sv->died = 0;
	sv->next_id = 0;
	sv->fail = MCP_FAIL_OTHER;
	sv->state = MCP_STARTING;
	mcp_status(sv, NULL);
	if (json_object_get(sv->cfg, "url") != NULL && mcp_http_open(sv, &cause) != 0) {
		mcp_server_failed(sv, MCP_FAIL_OTHER, cause);
		free(cause);
		return;
	}
	if (json_object_get(sv->cfg, "url") == NULL && mcp_conn_spawn(sv, &cause) != 0) {
		mcp_server_failed(sv, MCP_FAIL_SPAWN, cause);
		free(cause);
		return;
	}
	ev_timer_set(&sv->startup,
		json_number_value(json_object_get(sv->cfg, "startup_timeout_sec")), 0.);
	ev_timer_start(sv->set->o.loop, &sv->startup);
	params = json_pack("{s:s, s:{s:{s:{}, s:{}}}, s:{s:s, s:s, s:s}}", "protocolVersion",
		MCP_PROTOCOL_VERSION, "capabilities", "elicitation", "form", "url", "clientInfo",
		"name", "codex-mcp-client", "title", "Codex", "version", "0.169.0");
	if (mcp_conn_request(sv, "initialize", params, mcp_init_answer, NULL, NULL, &cause) != 0) {
		mcp_server_failed(sv, MCP_FAIL_OTHER, cause);
		free(cause);
	}
}

void
mcp_set_start(struct mcp_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (json_is_true(json_object_get(s->sv[i].cfg, "enabled")))
			mcp_server_start(&s->sv[i]);
}

void
mcp_set_turn_begin(struct mcp_set *s)
{
	for (size_t i = 0; s != NULL && i < s->n; i++)
		if (s->sv[i].died && s->sv[i].proc == NULL) {
			log_info("mcp %s: died, started again", s->sv[i].name);
			mcp_server_start(&s->sv[i]);
		}
}

void
mcp_set_resume(struct mcp_set *s)
{
	for (size_t i = 0; s != NULL && i < s->n; i++)
		if (s->sv[i].proc != NULL)
			exec_resume(s->sv[i].proc);
}

size_t
mcp_set_count(const struct mcp_set *s)
{
	return s != NULL ? s->n : 0;
}

const char *
mcp_set_name(const struct mcp_set *s, size_t i)
{
	return s->sv[i].name;
}

enum mcp_state
mcp_set_state(const struct mcp_set *s, size_t i)
{
	return s->sv[i].state;
}

const json_t *
mcp_set_tools(const struct mcp_set *s, size_t i)
{
	return s->sv[i].tools;
}

const char *
mcp_set_instructions(const struct mcp_set *s, size_t i)
{
	return json_string_value(json_object_get(s->sv[i].init, "instructions"));
}

const json_t *
mcp_set_server_info(const struct mcp_set *s, size_t i)
{
	return s->sv[i].init;
}

const json_t *
mcp_set_config(const struct mcp_set *s, size_t i)
{
	return s->sv[i].cfg;
}

void
mcp_set_owner(struct mcp_set *s, const struct mcp_set_opts *o)
{
	s->o.status = o->status;
	s->o.ask = o->ask;
	s->o.withdraw = o->withdraw;
	s->o.persist = o->persist;
	s->o.arg = o->arg;
	if (o->approved != NULL) {
		json_decref(s->o.approved);
		s->o.approved = json_incref(o->approved);
	}
}

const char *
mcp_set_last_error(const struct mcp_set *s, size_t i)
{
	return s->sv[i].state == MCP_FAILED ? s->sv[i].error : NULL;
}

/* A Duration as Rust's Debug prints it (1s, 2.5s, 500ms): upstream's timeout text. */
static char *
mcp_duration(double secs)
{
	return secs >= 1. ? xasprintf("%gs", secs) : xasprintf("%gms", secs * 1e3);
}

char *
mcp_set_error(const struct mcp_set *s, size_t i)
{
	const struct mcp_server *sv = &s->sv[i];
	const char *e = sv->error != NULL ? sv->error : "failed";
	char *d, *out;

	if (sv->state != MCP_FAILED)
		return NULL;
	switch (sv->fail) {
	case MCP_FAIL_EXIT:
		return xstrdup("handshaking with MCP server failed: connection closed: initialize "
			       "response: connection closed: initialize response");
	case MCP_FAIL_TIMEOUT:
		d = mcp_duration(
			json_number_value(json_object_get(sv->cfg, "startup_timeout_sec")));
		out = xasprintf(
			"timed out handshaking with MCP server after %s: deadline has elapsed", d);
		free(d);
		return out;
	case MCP_FAIL_SPAWN:
		/* upstream says the OS error alone */
		if (strncmp(e, "failed to spawn command: ", 25) == 0)
			e += 25;
		return xstrdup(e);
	default:
		return xstrdup(e);
	}
}

int
mcp_set_find(const struct mcp_set *s, const char *name)
{
	for (size_t i = 0; s != NULL && name != NULL && i < s->n; i++)
		if (strcmp(s->sv[i].name, name) == 0)
			return (int)i;
	return -1;
}
