/*
 * Code mode's cells (codemode_run.h). A cell lives from its exec call until its host ends (or
 * the turn does): attached while an exec or wait call waits for its answer, detached after a
 * yield (the model polls it with wait). Ordering rules: nested calls go out one at a time and
 * only while a call is attached; a cell is freed only from its host's `gone` (or by
 * codemode_kill_all / codemode_free), never from inside one of its host's message callbacks.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codemode_cell.h"
#include "codemode_host.h"
#include "codemode_run.h"
#include "agent/tools/view_image.h"
#include "protocol/xmalloc.h"

struct cell {
	struct codemode *cm;
	char id[24];
	struct codemode_host *host;
	char *call_id; /* the exec / wait call attached, or NULL */
	int custom;
	size_t max_tokens;
	int64_t call_ms;
	ev_timer yield;
	json_t *items, *notes; /* since the last answer */
	json_t *queue;	       /* nested calls waiting: [{id, name, input}] */
	char nested[48];       /* the nested call running ("" none) */
	json_t *nested_call;   /* its item, kept until its answer (the agent borrows it) */
	char nested_name[64];
	long long nested_host_id;
	int finished; /* done came (or the host died) */
	int reported; /* the model heard the cell's end */
	int gone;     /* the host process is reaped */
	int ready;    /* the host began the script: yield_time_ms counts from there */
	char *error;  /* its error, or NULL */
	struct cell *next;
};

struct codemode {
	struct ev_loop *loop;
	struct outq *q;
	const struct codemode_ops *ops;
	void *arg;
	json_t *store, *tools;
	unsigned next_id;
	struct cell *cells;
};

static void cell_message(void *arg, json_t *msg);
static void cell_gone(void *arg);
static void cell_yield_cb(struct ev_loop *loop, ev_timer *w, int revents);
static const struct codemode_host_cbs cell_cbs = {cell_message, cell_gone};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct codemode *
codemode_new(struct ev_loop *loop, struct outq *q, const struct codemode_ops *ops, void *arg)
{
	struct codemode *cm = xcalloc(1, sizeof *cm);

	cm->loop = loop;
	cm->q = q;
	cm->ops = ops;
	cm->arg = arg;
	cm->store = json_object();
	cm->tools = json_array();
	cm->next_id = 1;
	return cm;
}

/* Unlink and free a cell (its host killed when still running). */
static void
cell_free(struct cell *c)
{
	struct cell **pp;

	for (pp = &c->cm->cells; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	ev_timer_stop(c->cm->loop, &c->yield);
	codemode_host_free(c->host);
	json_decref(c->items);
	json_decref(c->notes);
	json_decref(c->queue);
	json_decref(c->nested_call);
	free(c->call_id);
	free(c->error);
	free(c);
}

void
codemode_free(struct codemode *cm)
{
	if (cm == NULL)
		return;
	codemode_kill_all(cm);
	json_decref(cm->store);
	json_decref(cm->tools);
	free(cm);
}

void
codemode_set_tools(struct codemode *cm, const json_t *tools)
{
	json_decref(cm->tools);
	cm->tools = json_deep_copy(tools);
}

/* Answer the attached call in state st; the cell is detached. */
static void
cell_answer(struct cell *c, enum codemode_state st)
{
	double wall = (double)(now_ms() - c->call_ms) / 1000.0;
	json_t *out;
	char *call_id = c->call_id;
	const char *err = st == CODEMODE_FAILED ? c->error : NULL;

	if (call_id == NULL)
		return;
	c->call_id = NULL;
	c->reported = st != CODEMODE_RUNNING;
	ev_timer_stop(c->cm->loop, &c->yield);
	if (st == CODEMODE_TERMINATED) {
		char *s = xasprintf("Script terminated\nWall time %.1f seconds\nOutput:\n", wall);

		out = json_string(s); /* upstream answers a terminate with a plain string */
		free(s);
	} else
		out = codemode_output(st, c->id, wall, c->items, c->max_tokens, err);
	c->cm->ops->answer(c->cm->arg, call_id, c->custom, out, c->notes);
	json_decref(out);
	json_array_clear(c->items);
	json_array_clear(c->notes);
	free(call_id);
}

/* Attach a call to the cell: it is answered at the cell's end or after yield_ms. */
static void
cell_attach(struct cell *c, const char *call_id, int custom, long long yield_ms)
{
	c->call_id = xstrdup(call_id);
	c->custom = custom;
	c->call_ms = now_ms();
	ev_timer_set(&c->yield, (double)yield_ms / 1000.0, 0.);
	/* node's own start (100-300 ms, more on a loaded machine) is not the script's time */
	if (c->ready)
		ev_timer_start(c->cm->loop, &c->yield);
}

/* The next nested call, when none runs and a call is attached. */
static void
cell_pump(struct cell *c)
{
	json_t *next, *input;
	char *args;

	if (c->nested[0] != '\0' || c->call_id == NULL || json_array_size(c->queue) == 0)
		return;
	next = json_incref(json_array_get(c->queue, 0));
	json_array_remove(c->queue, 0);
	c->nested_host_id = json_integer_value(json_object_get(next, "id"));
	snprintf(c->nested, sizeof c->nested, "cm-%s-%lld", c->id, c->nested_host_id);
	snprintf(c->nested_name, sizeof c->nested_name, "%s",
		json_string_value(json_object_get(next, "name")) ?: "");
	input = json_object_get(next, "input");
	json_decref(c->nested_call);
	if (json_is_string(input)) /* a freeform tool's input (apply_patch's patch) */
		c->nested_call = json_pack("{s:s, s:s, s:s, s:O}", "type", "custom_tool_call",
			"call_id", c->nested, "name", c->nested_name, "input", input);
	else {
		args = json_dumps(input, JSON_COMPACT | JSON_ENCODE_ANY);
		c->nested_call = json_pack("{s:s, s:s, s:s, s:s}", "type", "function_call",
			"call_id", c->nested, "name", c->nested_name, "arguments",
			args != NULL ? args : "null");
		free(args);
	}
	json_decref(next);
	c->cm->ops->call(c->cm->arg, c->nested_call);
}

/* store(key, value): kept per thread, bounded. */
static void
cell_store(struct cell *c, const json_t *msg)
{
	const char *key = json_string_value(json_object_get(msg, "key"));
	json_t *v = json_object_get(msg, "value");
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (key != NULL && text != NULL && strlen(text) <= CODEMODE_STORE_BYTES &&
		(json_object_get(c->cm->store, key) != NULL ||
			json_object_size(c->cm->store) < CODEMODE_STORE_KEYS))
		json_object_set(c->cm->store, key, v);
	free(text);
}

/* One message from the cell's host. */
static void
cell_message(void *arg, json_t *msg)
{
	struct cell *c = arg;
	const char *t = json_string_value(json_object_get(msg, "t")) ?: "";
	const char *err;

	if (c->finished)
		return;
	if (strcmp(t, "ready") == 0 && !c->ready) {
		c->ready = 1;
		if (c->call_id != NULL && !c->finished)
			ev_timer_start(c->cm->loop, &c->yield);
	} else if (strcmp(t, "text") == 0 && json_array_size(c->items) < CODEMODE_ITEMS_MAX)
		json_array_append_new(c->items,
			json_pack("{s:s, s:O}", "type", "input_text", "text",
				json_object_get(msg, "text")));
	else if (strcmp(t, "image") == 0 && json_array_size(c->items) < CODEMODE_ITEMS_MAX) {
		char *url =
			view_image_typed_url(json_string_value(json_object_get(msg, "url")) ?: "");
		json_t *img = json_pack("{s:s, s:s}", "type", "input_image", "image_url", url);

		free(url);

		if (json_is_string(json_object_get(msg, "detail")))
			json_object_set(img, "detail", json_object_get(msg, "detail"));
		json_array_append_new(c->items, img);
	} else if (strcmp(t, "notify") == 0 && json_array_size(c->notes) < CODEMODE_ITEMS_MAX)
		json_array_append(c->notes, json_object_get(msg, "text"));
	else if (strcmp(t, "store") == 0)
		cell_store(c, msg);
	else if (strcmp(t, "call") == 0 && json_array_size(c->queue) < CODEMODE_ITEMS_MAX) {
		json_array_append(c->queue, msg);
		cell_pump(c);
	} else if (strcmp(t, "yield") == 0)
		cell_answer(c, CODEMODE_RUNNING);
	else if (strcmp(t, "done") == 0) {
		c->finished = 1;
		err = json_string_value(json_object_get(msg, "error"));
		c->error = err != NULL ? xstrdup(err) : NULL;
		cell_answer(c, err != NULL ? CODEMODE_FAILED : CODEMODE_COMPLETED);
	}
}

/* The host is gone: a cell that never said done failed; the cell goes. */
static void
cell_gone(void *arg)
{
	struct cell *c = arg;

	if (!c->finished) {
		c->finished = 1;
		c->error = xstrdup("exec host exited before the script ended");
		cell_answer(c, CODEMODE_FAILED);
	}
	c->gone = 1;
	if (c->reported)
		cell_free(c); /* else kept until a wait hears its end */
}

/* yield_time_ms passed: the model hears the cell runs on. */
static void
cell_yield_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct cell *c = (struct cell *)((char *)w - offsetof(struct cell, yield));

	(void)loop;
	(void)revents;
	cell_answer(c, CODEMODE_RUNNING);
}

/* An answer for a call that has no cell: "Script failed" with the error. */
static void
codemode_fail(struct codemode *cm, const char *call_id, int custom, const char *error)
{
	json_t *empty = json_array(),
	       *out = codemode_output(CODEMODE_FAILED, "", 0.0, empty, CODEMODE_MAX_TOKENS, error);

	cm->ops->answer(cm->arg, call_id, custom, out, empty);
	json_decref(out);
	json_decref(empty);
}

void
codemode_exec(struct codemode *cm, const char *call_id, const char *input, const char *cwd)
{
	struct codemode_pragma p;
	const char *code;
	char *cause = NULL;
	struct cell *c;
	json_t *start;

	if (codemode_pragma_parse(input, &p, &code, &cause) != 0) {
		codemode_fail(cm, call_id, 1, cause);
		free(cause);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->cm = cm;
	snprintf(c->id, sizeof c->id, "%u", cm->next_id++);
	c->max_tokens = p.max_tokens;
	c->items = json_array();
	c->notes = json_array();
	c->queue = json_array();
	ev_init(&c->yield, cell_yield_cb);
	if (codemode_host_start(cm->loop, cm->q, cwd, &cell_cbs, c, &c->host, &cause) != 0) {
		codemode_fail(cm, call_id, 1, cause);
		free(cause);
		json_decref(c->items);
		json_decref(c->notes);
		json_decref(c->queue);
		free(c);
		return;
	}
	c->next = cm->cells;
	cm->cells = c;
	start = json_pack("{s:s, s:s, s:O, s:O}", "t", "start", "code", code, "tools", cm->tools,
		"store", cm->store);
	codemode_host_send(c->host, start);
	json_decref(start);
	cell_attach(c, call_id, 1, p.yield_ms);
}

void
codemode_wait(struct codemode *cm, const char *call_id, const char *arguments)
{
	json_t *args = json_loads(arguments != NULL ? arguments : "", 0, NULL);
	const char *id = json_string_value(json_object_get(args, "cell_id"));
	json_t *y = json_object_get(args, "yield_time_ms"),
	       *mt = json_object_get(args, "max_tokens");
	struct cell *c;
	char *msg;

	for (c = cm->cells; c != NULL && id != NULL; c = c->next)
		if (strcmp(c->id, id) == 0 && c->call_id == NULL)
			break;
	if (id == NULL || c == NULL) {
		msg = xasprintf("exec cell %s not found", id != NULL ? id : "");
		codemode_fail(cm, call_id, 0, msg);
		free(msg);
		json_decref(args);
		return;
	}
	c->max_tokens = json_is_integer(mt) ? (size_t)json_integer_value(mt) : CODEMODE_MAX_TOKENS;
	cell_attach(c, call_id, 0, json_is_integer(y) ? json_integer_value(y) : CODEMODE_WAIT_MS);
	if (json_is_true(json_object_get(args, "terminate"))) {
		c->finished = 1;
		codemode_host_kill(c->host); /* gone frees the cell */
		cell_answer(c, CODEMODE_TERMINATED);
	} else if (c->finished) {
		cell_answer(c, c->error != NULL ? CODEMODE_FAILED : CODEMODE_COMPLETED);
		if (c->gone)
			cell_free(c);
	} else
		cell_pump(c);
	json_decref(args);
}

/* The cell whose nested call this is: 1 with *cp (NULL: its cell was killed), 0 if none. */
static int
cell_of_call(struct codemode *cm, const char *call_id, struct cell **cp)
{
	struct cell *c;

	if (cm == NULL || call_id == NULL || strncmp(call_id, "cm-", 3) != 0)
		return 0;
	for (c = cm->cells; c != NULL; c = c->next)
		if (strcmp(c->nested, call_id) == 0)
			break;
	*cp = c;
	return 1;
}

/* Settle the cell's nested call: its promise resolves to v, or rejects with it (error). */
static void
cell_settle(struct cell *c, const json_t *v, int error)
{
	json_t *res = json_pack("{s:s, s:I, s:O}", "t", "result", "id", c->nested_host_id,
		error ? "error" : "value", v);

	c->nested[0] = '\0';
	codemode_host_send(c->host, res);
	json_decref(res);
	cell_pump(c);
}

int
codemode_tool_result(struct codemode *cm, const char *call_id, const char *text)
{
	struct cell *c;
	json_t *v;

	if (!cell_of_call(cm, call_id, &c))
		return 0;
	if (c == NULL)
		return 1; /* its cell was killed (interrupt, the turn's end): nobody waits */
	v = codemode_tool_value(c->nested_name, text);
	/* exec_command's and the goal tools' refusals are errors to the script (upstream
	 * rejects the promise: recorded, cm_create_exists). */
	cell_settle(c, v,
		json_is_string(v) &&
			(strcmp(c->nested_name, "exec_command") == 0 ||
				strcmp(c->nested_name, "write_stdin") == 0 ||
				codemode_tool_is_goal(c->nested_name)));
	json_decref(v);
	return 1;
}

int
codemode_tool_json(struct codemode *cm, const char *call_id, const json_t *value, const char *error)
{
	struct cell *c;
	json_t *e;

	if (!cell_of_call(cm, call_id, &c))
		return 0;
	if (c != NULL && error != NULL) {
		cell_settle(c, (e = json_string(error)), 1);
		json_decref(e);
	} else if (c != NULL)
		cell_settle(c, value != NULL ? value : json_null(), 0);
	return 1;
}

const json_t *
codemode_tools(const struct codemode *cm)
{
	return cm != NULL ? cm->tools : NULL;
}

int
codemode_busy(const struct codemode *cm)
{
	for (const struct cell *c = cm != NULL ? cm->cells : NULL; c != NULL; c = c->next)
		if (c->call_id != NULL)
			return 1;
	return 0;
}

void
codemode_kill_all(struct codemode *cm)
{
	while (cm != NULL && cm->cells != NULL)
		cell_free(cm->cells);
}

unsigned
codemode_cells(const struct codemode *cm)
{
	unsigned n = 0;

	for (const struct cell *c = cm != NULL ? cm->cells : NULL; c != NULL; c = c->next)
		n++;
	return n;
}
