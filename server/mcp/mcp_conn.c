/*
 * One MCP server over stdio: the child (its own session, process group and cgroup, on the exec
 * engine), newline-delimited JSON-RPC 2.0 both ways, its stderr lines into our log.
 *
 * Rules: our ids are integers from 0 (upstream's); a message of the server is one line of at
 * most MCP_LINE_MAX bytes: a longer one is dropped, and when its head names a pending request
 * that request fails (a 50 MB answer is read, never a crash, never a stall of the loop on a
 * line without end). The server's own requests are answered at once: `ping` with {}, anything
 * else -32601; but elicitation/create is asked of the user (mcp_elicit.c).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_int.h"
#include "exec/exec.h"
#include "io/linebuf.h"
#include "io/log.h"
#include "protocol/xmalloc.h"
#include "sandbox/spawn/spawn.h"

extern char **environ;

static void mcp_conn_output(void *arg, int stream, const char *data, size_t n);
static void mcp_conn_done(struct exec_proc *p, void *arg);

/* What a server inherits of our environment: upstream's list (rmcp-client's defaults). */
static const char *const mcp_env_default[] = {"HOME", "LOGNAME", "PATH", "SHELL", "USER",
	"__CF_USER_TEXT_ENCODING", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"};

static size_t mcp_conn_budget; /* exec's capture budget: nothing is captured here */

/* Set NAME=value in env (a JSON object used as an ordered map). */
static void
mcp_env_set(json_t *env, const char *name, const char *value)
{
	if (name != NULL && value != NULL && name[0] != '\0' && strchr(name, '=') == NULL)
		json_object_set_new(env, name, json_string(value));
}

/* The child's environment: the defaults, env_vars (names of ours), then env (heap array). */
static char **
mcp_conn_env(const json_t *cfg)
{
	json_t *env = json_object(), *v;
	const char *k;
	char **envp;
	size_t i = 0, j;

	for (j = 0; j < nitems(mcp_env_default); j++)
		mcp_env_set(env, mcp_env_default[j], getenv(mcp_env_default[j]));
	json_array_foreach(json_object_get(cfg, "env_vars"), j, v)
		mcp_env_set(env, json_string_value(v), getenv(json_string_value(v) ?: ""));
	json_object_foreach((json_t *)json_object_get(cfg, "env"), k, v)
		mcp_env_set(env, k, json_string_value(v));
	envp = xcalloc(json_object_size(env) + 1, sizeof *envp);
	json_object_foreach(env, k, v) envp[i++] = xasprintf("%s=%s", k, json_string_value(v));
	json_decref(env);
	return envp;
}

static void
mcp_strv_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/*
 * Start the server's process: not sandboxed (upstream runs MCP servers with the user's rights;
 * they are the user's own programs), but in a session, process group and cgroup of its own so
 * that it and everything it starts die with it. 0, or -1 with *cause.
 */
int
mcp_conn_spawn(struct mcp_server *sv, char **cause)
{
	const json_t *args = json_object_get(sv->cfg, "args");
	const char *cwd = json_string_value(json_object_get(sv->cfg, "cwd"));
	struct spawn_opts so = {0};
	struct spawn_proc sp;
	struct exec_opts eo = {0};
	char **argv, **envp;
	size_t i;
	int r;

	argv = xcalloc(json_array_size(args) + 2, sizeof *argv);
	argv[0] = xstrdup(json_string_value(json_object_get(sv->cfg, "command")) ?: "");
	for (i = 0; i < json_array_size(args); i++)
		argv[i + 1] = xstrdup(json_string_value(json_array_get(args, i)) ?: "");
	envp = mcp_conn_env(sv->cfg);
	so.argv = argv;
	so.envp = envp;
	so.cwd = cwd != NULL ? cwd : sv->set->cwd;
	so.flags = SPAWN_CGROUP | SPAWN_STDIN_PIPE;
	r = spawn_start(&so, &sp, cause);
	mcp_strv_free(argv);
	mcp_strv_free(envp);
	if (r != 0)
		return -1;
	eo.loop = sv->set->o.loop;
	eo.q = sv->set->o.q;
	eo.cap = SIZE_MAX;
	eo.timeout = -1.;
	eo.streaming = 1;
	eo.stdin_enabled = 1;
	eo.output = mcp_conn_output;
	eo.budget = &mcp_conn_budget;
	eo.done = mcp_conn_done;
	eo.arg = sv;
	sv->out = linebuf_new(MCP_LINE_MAX);
	sv->err = linebuf_new(MCP_STDERR_LINE);
	sv->proc = exec_start(&eo, &sp);
	return 0;
}

/* Write one message (stolen) as a line. */
static int
mcp_conn_send(struct mcp_server *sv, json_t *msg, char **cause)
{
	char *text;
	const char *why = NULL;
	size_t n;
	int r = -1;

	if (sv->http != NULL) {
		json_object_set_new(msg, "jsonrpc", json_string("2.0"));
		return mcp_http_send(sv, msg, cause);
	}
	if (sv->proc == NULL || exec_state(sv->proc) != EXEC_RUNNING) {
		*cause = xasprintf("MCP server `%s` is not running", sv->name);
		json_decref(msg);
		return -1;
	}
	json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	text = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(msg);
	if (text == NULL) {
		*cause = xstrdup("out of memory");
		return -1;
	}
	n = strlen(text);
	text[n] = '\n'; /* the terminating NUL becomes the line's end */
	if (exec_write(sv->proc, text, n + 1, 0, &why) == 0)
		r = 0;
	else
		*cause = xasprintf("MCP server `%s`: %s", sv->name, why ?: "cannot write");
	free(text);
	return r;
}

int
mcp_conn_request(struct mcp_server *sv, const char *method, json_t *params, mcp_answer_fn fn,
	struct mcp_call *call, long long *id, char **cause)
{
	long long rid = sv->next_id++;
	json_t *msg = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id", (json_int_t)rid,
		"method", method, "params", params != NULL ? params : json_object());
	struct mcp_req *rq;

	if (mcp_conn_send(sv, msg, cause) != 0)
		return -1;
	rq = xcalloc(1, sizeof *rq);
	rq->id = rid;
	rq->fn = fn;
	rq->call = call;
	rq->next = sv->reqs;
	sv->reqs = rq;
	if (id != NULL)
		*id = rid;
	return 0;
}

int
mcp_conn_notify(struct mcp_server *sv, const char *method, json_t *params)
{
	char *cause = NULL;
	json_t *msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	int r;

	if (params != NULL)
		json_object_set_new(msg, "params", params);
	if ((r = mcp_conn_send(sv, msg, &cause)) != 0) {
		log_debug("mcp %s: %s", sv->name, cause);
		free(cause);
	}
	return r;
}

/* Take a pending request off the list (NULL when unknown). */
static struct mcp_req *
mcp_conn_take(struct mcp_server *sv, long long id)
{
	struct mcp_req **pp, *rq;

	for (pp = &sv->reqs; (rq = *pp) != NULL; pp = &rq->next)
		if (rq->id == id) {
			*pp = rq->next;
			return rq;
		}
	return NULL;
}

void
mcp_conn_forget(struct mcp_server *sv, long long id)
{
	free(mcp_conn_take(sv, id));
}

void
mcp_conn_answer(struct mcp_server *sv, long long id, json_t *result, int code, const char *error)
{
	struct mcp_req *rq = mcp_conn_take(sv, id);

	if (rq == NULL) {
		log_debug("mcp %s: answer to unknown request %lld", sv->name, id);
		return;
	}
	if (rq->call != NULL && code != 0)
		mcp_call_error(rq->call, code, error);
	else if (rq->call != NULL)
		mcp_call_finish(rq->call, result, error);
	else
		rq->fn(sv, result, error);
	free(rq);
}

void
mcp_conn_reply(struct mcp_server *sv, const json_t *id, json_t *result)
{
	json_t *msg = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
	char *cause = NULL;

	if (mcp_conn_send(sv, msg, &cause) != 0) {
		log_debug("mcp %s: %s", sv->name, cause);
		free(cause);
	}
}

/* A request of the server: answered at once, or its elicitation asked of the user. */
static void
mcp_conn_server_request(struct mcp_server *sv, const char *method, json_t *id, const json_t *params)
{
	json_t *msg = json_pack("{s:s, s:O}", "jsonrpc", "2.0", "id", id);
	char *cause = NULL;

	if (strcmp(method, "elicitation/create") == 0) {
		json_decref(msg);
		mcp_elicit_forward(sv, id, params);
		return;
	}
	if (strcmp(method, "ping") == 0)
		json_object_set_new(msg, "result", json_object());
	else
		json_object_set_new(msg, "error",
			json_pack("{s:i, s:s}", "code", -32601, "message", "Method not found"));
	if (mcp_conn_send(sv, msg, &cause) != 0) {
		log_debug("mcp %s: %s", sv->name, cause);
		free(cause);
	}
}

/* A notification of the server. */
static void
mcp_conn_notification(struct mcp_server *sv, const char *method, const json_t *params)
{
	if (strcmp(method, "notifications/progress") == 0)
		mcp_call_progress(sv, params);
	else if (strcmp(method, "notifications/tools/list_changed") == 0) {
		if (sv->listing)
			sv->relist = 1;
		else if (sv->state == MCP_READY)
			mcp_server_list_tools(sv);
	} else if (strcmp(method, "notifications/message") == 0)
		log_info("mcp %s: %s", sv->name,
			json_string_value(json_object_get(params, "data")) ?: "(log message)");
}

void
mcp_conn_dispatch(struct mcp_server *sv, json_t *m)
{
	json_t *id = json_object_get(m, "id"), *err = json_object_get(m, "error");
	const char *method = json_string_value(json_object_get(m, "method"));
	char *text;

	if (method != NULL && id != NULL)
		mcp_conn_server_request(sv, method, id, json_object_get(m, "params"));
	else if (method != NULL)
		mcp_conn_notification(sv, method, json_object_get(m, "params"));
	else if (json_is_integer(id) && err != NULL) {
		text = xstrdup(json_string_value(json_object_get(err, "message")) ?: "error");
		mcp_conn_answer(sv, json_integer_value(id), NULL,
			(int)json_integer_value(json_object_get(err, "code")) ?: -32603, text);
		free(text);
	} else if (json_is_integer(id))
		mcp_conn_answer(sv, json_integer_value(id), json_object_get(m, "result"), 0, NULL);
}

/* The id a too long line's head names ({"jsonrpc":"2.0","id":N,...}), or -1. */
static long long
mcp_conn_head_id(const char *line, size_t len)
{
	size_t n = len < 256 ? len : 256;
	const char *p = memmem(line, n, "\"id\"", 4);

	if (p == NULL)
		return -1;
	for (p += 4; p < line + n && (*p == ' ' || *p == ':'); p++)
		;
	if (p >= line + n || !isdigit((unsigned char)*p))
		return -1;
	return strtoll(p, NULL, 10);
}

/* One message line: parsed here, or beside the loop when big (1: the scan stops meanwhile). */
static int
mcp_conn_line_cb(void *arg, const char *line, size_t len, int oversized)
{
	struct mcp_server *sv = arg;
	json_error_t e;
	json_t *m;
	long long id;
	char *why;

	if (oversized) {
		log_warn("mcp %s: a message over %u bytes dropped", sv->name, MCP_LINE_MAX);
		if ((id = mcp_conn_head_id(line, len)) >= 0) {
			why = xasprintf("MCP server `%s` sent a message larger than %u MiB",
				sv->name, MCP_LINE_MAX >> 20);
			mcp_conn_answer(sv, id, NULL, 0, why);
			free(why);
		}
		return 0;
	}
	if (len == 0)
		return 0;
	if (len > MCP_PARSE_BIG && !sv->finishing && sv->proc != NULL &&
		mcp_parse_start(sv, line, len) == 0) {
		exec_hold(sv->proc, 0, 1);
		return 1;
	}
	if ((m = json_loadb(line, len, 0, &e)) == NULL || !json_is_object(m))
		log_info("mcp %s: not JSON-RPC on stdout: %.*s", sv->name,
			(int)(len > 200 ? 200 : len), line);
	else
		mcp_conn_dispatch(sv, m);
	json_decref(m);
	return 0;
}

/* Feed stdout bytes to the line buffer; those after a line gone to be parsed wait in pend. */
static void
mcp_conn_feed(struct mcp_server *sv, const char *data, size_t n)
{
	size_t avail, k;
	char *at;

	while (n > 0 && sv->parse == NULL && sv->out != NULL) {
		at = linebuf_space(sv->out, &avail);
		k = n < avail ? n : avail;
		memcpy(at, data, k);
		data += k;
		n -= k;
		linebuf_fill(sv->out, k, mcp_conn_line_cb, sv);
	}
	if (n > 0 && sv->parse != NULL) {
		/* at most one read (the stream is held from the parse's start) */
		sv->pend = xrealloc(sv->pend, sv->pend_len + n);
		memcpy(sv->pend + sv->pend_len, data, n);
		sv->pend_len += n;
	}
}

void
mcp_conn_parsed(struct mcp_server *sv, json_t *m, size_t len)
{
	char *pend;
	size_t n;

	log_info("mcp %s: a %zu-byte message parsed", sv->name, len);
	if (m == NULL || !json_is_object(m))
		log_info("mcp %s: not JSON-RPC on stdout (%zu bytes)", sv->name, len);
	else
		mcp_conn_dispatch(sv, m);
	if (sv->out == NULL)
		return;
	/* the lines behind it, then the bytes read after it */
	if (linebuf_resume(sv->out, mcp_conn_line_cb, sv) != 0)
		return;
	pend = sv->pend;
	n = sv->pend_len;
	sv->pend = NULL;
	sv->pend_len = 0;
	mcp_conn_feed(sv, pend, n);
	free(pend);
	if (sv->parse == NULL && sv->proc != NULL)
		exec_hold(sv->proc, 0, 0);
}

static int
mcp_conn_err_cb(void *arg, const char *line, size_t len, int oversized)
{
	struct mcp_server *sv = arg;

	(void)oversized;
	log_info("mcp %s stderr: %.*s", sv->name, (int)len, line);
	return 0;
}

/* Bytes of the server's stdout (stream 0) or stderr (1), as read. */
static void
mcp_conn_output(void *arg, int stream, const char *data, size_t n)
{
	struct mcp_server *sv = arg;
	size_t avail, k;
	char *at;

	if (stream == 0) {
		mcp_conn_feed(sv, data, n);
		return;
	}
	while (n > 0) {
		at = linebuf_space(sv->err, &avail);
		k = n < avail ? n : avail;
		memcpy(at, data, k);
		linebuf_fill(sv->err, k, mcp_conn_err_cb, sv);
		data += k;
		n -= k;
	}
}

void
mcp_conn_release(struct mcp_server *sv)
{
	mcp_parse_release(sv);
	linebuf_free(sv->out);
	linebuf_free(sv->err);
	sv->out = sv->err = NULL;
	free(sv->pend);
	sv->pend = NULL;
	sv->pend_len = 0;
}

/* The server's process is over (exited, or killed): what waited on it fails. */
static void
mcp_conn_done(struct exec_proc *p, void *arg)
{
	struct mcp_server *sv = arg;
	char *why = xasprintf("MCP server `%s` exited (code %d)", sv->name, exec_exit_code(p));

	sv->finishing = 1; /* its last line, if unterminated, is parsed here */
	linebuf_finish(sv->out, mcp_conn_line_cb, sv);
	sv->finishing = 0;
	exec_free(p);
	sv->proc = NULL;
	mcp_conn_release(sv);
	log_info("%s", why);
	if (sv->state == MCP_READY)
		sv->died = 1;
	mcp_server_failed(sv, sv->state == MCP_STARTING ? MCP_FAIL_EXIT : MCP_FAIL_OTHER, why);
	free(why);
}

void
mcp_conn_kill(struct mcp_server *sv, const char *error)
{
	struct mcp_req *rq;

	mcp_call_fail_all(sv, error);
	mcp_elicit_end_all(sv, 0);
	mcp_http_close(sv);
	while ((rq = sv->reqs) != NULL) {
		sv->reqs = rq->next;
		free(rq);
	}
	if (sv->proc != NULL)
		exec_kill(sv->proc);
}
