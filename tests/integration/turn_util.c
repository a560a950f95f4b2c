/*
 * The turn tests' fixture (turn_util.h): mock model, daemon, workspace, thread, and a turn
 * driver that checks the turn rules on every turn it runs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define TT_TURN_MS 20000 /* a turn of these tests ends well within this */

void
mm_start(struct mm *m, const char *script)
{
	const char *bin = getenv("APP_SERVER_BIN");
	char *spath = NULL, line[64];
	int pfd[2], fd;
	FILE *f;

	memset(m, 0, sizeof *m);
	if (bin == NULL)
		bin = "build/app-server";
	snprintf(m->dir, sizeof m->dir, "/tmp/test_mm.XXXXXX");
	assert_non_null(mkdtemp(m->dir));
	m->record = xasprintf("%s/record.jsonl", m->dir);
	m->port_file = xasprintf("%s/port", m->dir);
	if (script != NULL) {
		spath = xasprintf("%s/script.json", m->dir);
		f = fopen(spath, "w");
		assert_non_null(f);
		fputs(script, f);
		fclose(f);
	}
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	m->pid = fork();
	assert_true(m->pid >= 0);
	if (m->pid == 0) {
		fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(pfd[1], 1);
		if (getenv("TEST_MODEL_VERBOSE") == NULL)
			dup2(fd, 2);
		if (spath != NULL)
			execl(bin, bin, "mock-model", "--listen", "127.0.0.1:0", "--script", spath,
				"--record", m->record, "--port-file", m->port_file, (char *)NULL);
		else
			execl(bin, bin, "mock-model", "--record", m->record, "--port-file",
				m->port_file, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	m->out = fdopen(pfd[0], "r");
	assert_non_null(fgets(line, sizeof line, m->out));
	m->port = (int)strtol(line, NULL, 10);
	assert_true(m->port > 0);
	free(spath);
}

void
mm_stop(struct mm *m)
{
	int status;
	char *p;

	kill(m->pid, SIGTERM);
	assert_int_equal(waitpid(m->pid, &status, 0), m->pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("mock-model ended with wait status %#x", status);
	fclose(m->out);
	unlink(m->record);
	unlink(m->port_file);
	p = xasprintf("%s/script.json", m->dir);
	unlink(p);
	free(p);
	rmdir(m->dir);
	free(m->record);
	free(m->port_file);
}

json_t *
mm_records(struct mm *m)
{
	json_t *all = json_array(), *v;
	FILE *f = fopen(m->record, "r");
	char *line = NULL;
	size_t cap = 0;

	while (f != NULL && getline(&line, &cap, f) > 0) {
		v = json_loads(line, 0, NULL);
		assert_non_null(v);
		json_array_append_new(all, v);
	}
	free(line);
	if (f != NULL)
		fclose(f);
	return all;
}

/* Write CODEX_HOME/config.toml pointing at the mock. */
static void
tt_config(struct tt *f, const struct tt_opts *o)
{
	char *path = xasprintf("%s/config.toml", f->home);
	FILE *cf = fopen(path, "w");

	assert_non_null(cf);
	fprintf(cf,
		"model = \"mock-model\"\napproval_policy = \"never\"\nsandbox_mode = "
		"\"read-only\"\nmodel_provider = \"mock_provider\"\n%s\n"
		"[model_providers.mock_provider]\nname = \"Mock provider for test\"\n"
		"base_url = \"http://127.0.0.1:%d/v1\"\nwire_api = \"%s\"\n"
		"request_max_retries = %d\nstream_max_retries = %d\n",
		o->config_extra != NULL ? o->config_extra : "", f->mm.port,
		o->wire != NULL ? o->wire : "responses", o->retries, o->retries);
	fclose(cf);
	free(path);
}

/*
 * What tt_start was given, copied: tt_respawn starts the daemon again with it after the
 * caller's arrays (often on its stack) are gone.
 */
#define TT_SAVED 16
static char *tt_env_copy[TT_SAVED + 1], *tt_args_copy[TT_SAVED + 1];
static const char *const *tt_env_saved;
static int tt_experimental_saved;
static const char *const *tt_args_saved;

/* Copy a NULL-terminated list into keep (at most TT_SAVED); keep, or NULL for NULL. */
static const char *const *
tt_save(char **keep, const char *const *list)
{
	size_t i;

	for (i = 0; keep[i] != NULL; i++) {
		free(keep[i]);
		keep[i] = NULL;
	}
	if (list == NULL)
		return NULL;
	for (i = 0; list[i] != NULL && i < TT_SAVED; i++)
		keep[i] = xstrdup(list[i]);
	keep[i] = NULL;
	return (const char *const *)keep;
}

void
tt_respawn(struct tt *f)
{
	const char *env[16];
	char *home = xasprintf("CODEX_HOME=%s", f->home);
	struct asc_opts ao = {0};
	size_t n = 0;
	json_t *r;

	env[n++] = home;
	for (size_t i = 0; tt_env_saved != NULL && tt_env_saved[i] != NULL && n < 15; i++)
		env[n++] = tt_env_saved[i];
	env[n] = NULL;
	ao.env = env;
	ao.args = tt_args_saved;
	ao.inherit_codex_home = 1;
	ao.capture_stderr = getenv("TEST_TURN_VERBOSE") == NULL;
	f->c = asc_spawn(&ao);
	free(home);
	if (!tt_experimental_saved) {
		asc_initialize(f->c);
		return;
	}
	r = asc_wait_response(f->c,
		asc_request(f->c, "initialize",
			json_pack("{s:{s:s, s:s}, s:{s:b}}", "clientInfo", "name", "asc-test",
				"version", "0.1", "capabilities", "experimentalApi", 1)),
		asc_timeout(5000));
	asc_assert_result(r);
	json_decref(r);
}

void
tt_start(struct tt *f, const struct tt_opts *o)
{
	static const struct tt_opts none;
	char tmpl[] = "/tmp/test_turn.XXXXXX";
	json_t *r, *res, *params;
	long long id;

	if (o == NULL)
		o = &none;
	memset(f, 0, sizeof *f);
	assert_non_null(mkdtemp(tmpl));
	f->home = xasprintf("%s/home", tmpl);
	f->workspace = xasprintf("%s/ws", tmpl);
	assert_int_equal(mkdir(f->home, 0700), 0);
	assert_int_equal(mkdir(f->workspace, 0700), 0);
	mm_start(&f->mm, o->script);
	tt_config(f, o);
	tt_env_saved = tt_save(tt_env_copy, o->env);
	tt_experimental_saved = o->experimental;
	tt_args_saved = tt_save(tt_args_copy, o->args);
	tt_respawn(f);
	params = json_pack("{s:s, s:o, s:s}", "cwd", f->workspace, "approvalPolicy",
		o->approval_policy == NULL	       ? json_string("never")
			: o->approval_policy[0] == '{' ? json_loads(o->approval_policy, 0, NULL)
						       : json_string(o->approval_policy),
		"sandbox", o->sandbox != NULL ? o->sandbox : "danger-full-access");
	id = asc_request(f->c, "thread/start", params);
	r = asc_wait_response(f->c, id, asc_timeout(5000));
	res = asc_assert_result(r);
	f->thread_id =
		xstrdup(json_string_value(json_object_get(json_object_get(res, "thread"), "id")));
	json_decref(r);
	json_decref(asc_wait_notification(f->c, "thread/started", asc_timeout(5000)));
}

/* rm -rf of a fixture folder. */
static void
tt_rmtree(const char *dir)
{
	char *cmd[] = {"rm", "-rf", (char *)dir, NULL};
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execvp("rm", cmd);
		_exit(127);
	}
	waitpid(pid, &st, 0);
}

void
tt_stop(struct tt *f)
{
	char *top = xstrdup(f->home);

	asc_free(f->c);
	mm_stop(&f->mm);
	*strrchr(top, '/') = '\0';
	tt_rmtree(top);
	free(top);
	free(f->home);
	free(f->workspace);
	free(f->thread_id);
}

json_t *
tt_text(const char *text)
{
	return json_pack("[{s:s, s:s, s:[]}]", "type", "text", "text", text, "text_elements");
}

/* The item rules on one message: started once, completed once, nothing after completed. */
static void
tt_check_item(json_t *seen, const json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));
	json_t *p = json_object_get(msg, "params"), *st;
	const char *id;

	if (m == NULL || p == NULL)
		return;
	if (strcmp(m, "item/started") == 0 || strcmp(m, "item/completed") == 0)
		id = json_string_value(json_object_get(json_object_get(p, "item"), "id"));
	else
		id = json_string_value(json_object_get(p, "itemId"));
	if (id == NULL || json_object_get(msg, "id") != NULL)
		return;
	st = json_object_get(seen, id);
	if (strcmp(m, "item/started") == 0) {
		if (st != NULL)
			fail_msg("item %s started twice", id);
		json_object_set_new(seen, id, json_string("started"));
	} else if (strcmp(m, "item/completed") == 0) {
		if (st == NULL || strcmp(json_string_value(st), "started") != 0)
			fail_msg("item %s completed without being started (or twice)", id);
		json_object_set_new(seen, id, json_string("completed"));
	} else if (st != NULL && strcmp(json_string_value(st), "completed") == 0)
		fail_msg("%s for item %s after its item/completed", m, id);
}

char tt_no_answer;

/* Answer a server request as the test says. */
static void
tt_answer(struct tt *f, const json_t *msg, tt_answer_fn answer, void *arg)
{
	json_t *result =
		answer != NULL ? answer(arg, msg) : json_pack("{s:s}", "decision", "accept");
	json_t *reply;
	char *line;

	if (result == TT_NO_ANSWER)
		return;
	if (result != NULL)
		reply = json_pack("{s:O, s:o}", "id", json_object_get(msg, "id"), "result", result);
	else
		reply = json_pack("{s:O, s:{s:i, s:s}}", "id", json_object_get(msg, "id"), "error",
			"code", -32000, "message", "the test refuses");
	line = json_dumps(reply, JSON_COMPACT);
	assert_int_equal(asc_send_line(f->c, line), 0);
	free(line);
	json_decref(reply);
}

json_t *
tt_collect(struct tt *f, tt_answer_fn answer, void *arg)
{
	json_t *msgs = json_array(), *seen = json_object(), *m, *asked = json_object(), *v;
	long long deadline = asc_now_ms() + asc_timeout(TT_TURN_MS);
	const char *method, *k;
	char key[32];

	for (;;) {
		m = asc_next(f->c, 100);
		if (m == NULL) {
			if (asc_now_ms() > deadline) {
				for (size_t i = 0; i < json_array_size(msgs); i++)
					fprintf(stderr, "  got: %.300s\n",
						json_string_value(json_object_get(
							json_array_get(msgs, i), "method"))
							?: "(answer)");
				fail_msg("no turn/completed within %d ms", asc_timeout(TT_TURN_MS));
			}
			continue;
		}
		json_array_append(msgs, m);
		tt_check_item(seen, m);
		method = json_string_value(json_object_get(m, "method"));
		if (method != NULL && json_object_get(m, "id") != NULL) {
			snprintf(key, sizeof key, "%lld",
				(long long)json_integer_value(json_object_get(m, "id")));
			/* item/tool/call is resolved by its item's completion (upstream's) */
			if (strcmp(method, "item/tool/call") != 0)
				json_object_set_new(asked, key, json_true());
			tt_answer(f, m, answer, arg);
		} else if (method != NULL && strcmp(method, "serverRequest/resolved") == 0) {
			snprintf(key, sizeof key, "%lld",
				(long long)json_integer_value(json_object_get(
					json_object_get(m, "params"), "requestId")));
			json_object_del(asked, key);
		}
		if (method != NULL && strcmp(method, "turn/completed") == 0) {
			json_decref(m);
			break;
		}
		json_decref(m);
	}
	/* What follows turn/completed at once: resolutions of withdrawn requests, no 2nd end. */
	while ((m = asc_next(f->c, 300)) != NULL) {
		method = json_string_value(json_object_get(m, "method"));
		if (method != NULL && strcmp(method, "turn/completed") == 0)
			fail_msg("a second turn/completed for one turn");
		if (method != NULL && strcmp(method, "serverRequest/resolved") == 0) {
			snprintf(key, sizeof key, "%lld",
				(long long)json_integer_value(json_object_get(
					json_object_get(m, "params"), "requestId")));
			json_object_del(asked, key);
		}
		json_array_append_new(msgs, m);
	}
	json_object_foreach(asked, k, v) fail_msg("server request %s was never resolved", k);
	json_object_foreach(seen, k, v) if (strcmp(json_string_value(v), "completed") != 0)
		fail_msg("item %s started but never completed", k);
	json_decref(seen);
	json_decref(asked);
	return msgs;
}

json_t *
tt_turn(struct tt *f, const char *text, json_t *params, tt_answer_fn answer, void *arg)
{
	json_t *r, *msgs;
	long long id;

	if (params == NULL)
		params = json_object();
	json_object_set_new(params, "threadId", json_string(f->thread_id));
	json_object_set_new(params, "input", tt_text(text));
	id = asc_request(f->c, "turn/start", params);
	r = asc_wait_response(f->c, id, asc_timeout(5000));
	asc_assert_result(r);
	msgs = tt_collect(f, answer, arg);
	json_array_insert_new(msgs, 0, r);
	return msgs;
}

json_t *
tt_find(const json_t *msgs, const char *method, size_t n)
{
	json_t *m;
	size_t i;

	json_array_foreach((json_t *)msgs, i, m)
	{
		const char *x = json_string_value(json_object_get(m, "method"));

		if (x != NULL && strcmp(x, method) == 0 && n-- == 0)
			return m;
	}
	return NULL;
}

size_t
tt_count(const json_t *msgs, const char *method)
{
	size_t n = 0;

	while (tt_find(msgs, method, n) != NULL)
		n++;
	return n;
}

json_t *
tt_item(const json_t *msgs, const char *type, size_t n)
{
	json_t *m, *item;

	for (size_t i = 0; (m = tt_find(msgs, "item/completed", i)) != NULL; i++) {
		item = json_object_get(json_object_get(m, "params"), "item");
		if (strcmp(json_string_value(json_object_get(item, "type")), type) == 0 && n-- == 0)
			return item;
	}
	return NULL;
}

long
tt_index(const json_t *msgs, const char *method)
{
	json_t *m;
	size_t i;

	json_array_foreach((json_t *)msgs, i, m)
	{
		const char *x = json_string_value(json_object_get(m, "method"));

		if (x != NULL && strcmp(x, method) == 0)
			return (long)i;
	}
	return -1;
}

json_t *
tt_completed(const json_t *msgs)
{
	json_t *m = tt_find(msgs, "turn/completed", 0);

	assert_non_null(m);
	return json_object_get(json_object_get(m, "params"), "turn");
}

char *
tt_path(const struct tt *f, const char *name)
{
	return xasprintf("%s/%s", f->workspace, name);
}

char *
tt_read(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *s = NULL;
	size_t cap = 0;
	ssize_t n;

	if (fp == NULL)
		return NULL;
	n = getdelim(&s, &cap, '\0', fp);
	fclose(fp);
	if (n < 0) {
		free(s);
		return xstrdup("");
	}
	return s;
}

char *
tt_script(const char *text)
{
	char *s = xstrdup(text);

	for (char *p = s; *p != '\0'; p++)
		if (*p == '`')
			*p = '"';
	return s;
}

json_t *
tt_request_body(const json_t *recs, size_t n)
{
	json_t *r = json_array_get(recs, n);

	assert_non_null(r);
	return json_object_get(r, "body");
}

const char *
tt_call_output(const json_t *body, const char *call_id)
{
	json_t *it;
	size_t i;

	json_array_foreach(json_object_get(body, "input"), i, it)
	{
		const char *type = json_string_value(json_object_get(it, "type"));
		const char *id = json_string_value(json_object_get(it, "call_id"));

		if (type != NULL && id != NULL && strcmp(id, call_id) == 0 &&
			(strcmp(type, "function_call_output") == 0 ||
				strcmp(type, "custom_tool_call_output") == 0))
			return json_string_value(json_object_get(it, "output"));
	}
	return NULL;
}

int
tt_body_has_text(const json_t *body, const char *needle)
{
	json_t *it, *part;
	size_t i, j;

	json_array_foreach(json_object_get(body, "input"), i, it)
	{
		json_array_foreach(json_object_get(it, "content"), j, part)
		{
			const char *t = json_string_value(json_object_get(part, "text"));

			if (t != NULL && strstr(t, needle) != NULL)
				return 1;
		}
	}
	return 0;
}

json_t *
tt_call(struct tt *f, const char *method, json_t *params)
{
	long long id = asc_request(f->c, method, params);

	return asc_wait_response(f->c, id, asc_timeout(10000));
}

void
tt_sequence(json_t *seq, const json_t *msgs)
{
	json_t *m, *p, *it, *st, *fl;
	const char *meth;
	size_t i, j;
	char buf[256];

	json_array_foreach(msgs, i, m)
	{
		if ((meth = json_string_value(json_object_get(m, "method"))) == NULL)
			continue;
		p = json_object_get(m, "params");
		if (strcmp(meth, "item/started") == 0 || strcmp(meth, "item/completed") == 0) {
			it = json_object_get(p, "item");
			if (strcmp(json_string_value(json_object_get(it, "type")), "userMessage") ==
				0)
				continue;
			snprintf(buf, sizeof buf, "%s:%s%s%s", meth,
				json_string_value(json_object_get(it, "type")),
				json_object_get(it, "status") != NULL ? ":" : "",
				json_string_value(json_object_get(it, "status")) ?: "");
		} else if (strcmp(meth, "thread/status/changed") == 0) {
			st = json_object_get(p, "status");
			snprintf(buf, sizeof buf, "%s:%s", meth,
				json_string_value(json_object_get(st, "type")));
			json_array_foreach(json_object_get(st, "activeFlags"), j, fl)
			{
				strncat(buf, ":", sizeof buf - strlen(buf) - 1);
				strncat(buf, json_string_value(fl), sizeof buf - strlen(buf) - 1);
			}
		} else if (strcmp(meth, "turn/completed") == 0)
			snprintf(buf, sizeof buf, "%s:%s", meth,
				json_string_value(
					json_object_get(json_object_get(p, "turn"), "status")));
		else if (strcmp(meth, "turn/started") == 0 || strcmp(meth, "item/tool/call") == 0 ||
			strcmp(meth, "item/tool/requestUserInput") == 0 ||
			strcmp(meth, "serverRequest/resolved") == 0)
			snprintf(buf, sizeof buf, "%s", meth);
		else
			continue;
		json_array_append_new(seq, json_string(buf));
	}
}

void
tt_assert_upstream(const char *what, const json_t *want, const json_t *got)
{
	char *w, *g;

	if (json_equal(want, got))
		return;
	w = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
	g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
	fail_msg("%s differs from upstream's:\n  upstream: %s\n  ours:     %s", what, w, g);
}

void
tt_late_answer(struct tt *f, const json_t *req, const char *result)
{
	char *line = xasprintf("{\"id\":%lld,\"result\":%s}",
		(long long)json_integer_value(json_object_get(req, "id")), result);

	assert_int_equal(asc_send_line(f->c, line), 0);
	free(line);
	assert_int_equal(asc_sync(f->c, asc_timeout(3000)), 0);
	assert_null(asc_next(f->c, 200));
}

char *
tt_calls_script(json_t *items)
{
	json_t *resps = json_array(), *item;
	char *text;
	size_t i;

	json_array_foreach(items, i, item)
	{
		json_array_append_new(resps,
			json_pack("{s:[{s:s}, {s:s, s:O}, {s:s}]}", "events", "ev", "created",
				"type", "response.output_item.done", "item", item, "ev",
				"completed"));
	}
	json_array_append_new(resps,
		json_pack("{s:[{s:s}, {s:s, s:s, s:s}, {s:s}]}", "events", "ev", "created", "ev",
			"message", "id", "m-end", "text", "done", "ev", "completed"));
	text = json_dumps(resps, JSON_COMPACT);
	json_decref(resps);
	json_decref(items);
	return text;
}

char *
tt_replace(char *s, const char *from, const char *to)
{
	char *at, *out;
	size_t pos = 0;

	while ((at = strstr(s + pos, from)) != NULL) {
		out = xasprintf("%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
		pos = (size_t)(at - s) + strlen(to);
		free(s);
		s = out;
	}
	return s;
}
