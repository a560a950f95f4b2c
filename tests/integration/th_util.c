/*
 * The thread tests' fixture on the wire (th_util.h): a CODEX_HOME (upstream's or an empty one),
 * the mock model answering "done", a daemon on them, and the calls the thread tests repeat.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "th_util.h"

/* config.toml in the home: upstream's fixture config pointed at our mock (when there is one). */
void
th_config(struct th *t)
{
	char *p = xasprintf("%s/config.toml", t->h.home);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fprintf(f,
		"model = \"mock-model\"\napproval_policy = \"never\"\nsandbox_mode = "
		"\"danger-full-access\"\nmodel_provider = \"mock_provider\"\n[features]\n"
		"remote_models = false\n[model_providers.mock_provider]\nname = \"Mock provider\"\n"
		"base_url = \"http://127.0.0.1:%d/v1\"\nwire_api = \"responses\"\n"
		"request_max_retries = 0\nstream_max_retries = 0\n",
		t->mock ? t->mm.port : 1);
	fclose(f);
	free(p);
}

/* A daemon on the home (initialized), with one more environment entry (or NULL). */
struct asc *
th_daemon_env(struct th *t, const char *extra)
{
	char *home = xasprintf("CODEX_HOME=%s", t->h.home);
	const char *env[] = {home, extra, NULL};
	struct asc_opts o = {.env = env,
		.inherit_codex_home = 1,
		.capture_stderr = getenv("TEST_TURN_VERBOSE") == NULL};
	struct asc *c = asc_spawn(&o);

	free(home);
	asc_initialize(c);
	return c;
}

struct asc *
th_daemon(struct th *t)
{
	return th_daemon_env(t, NULL);
}

/* A fixture: upstream's home (fixture) or an empty one, a mock answering "done" forever. */
void
th_start(struct th *t, int fixture)
{
	memset(t, 0, sizeof *t);
	if (fixture)
		tu_fixture_home(&t->h);
	else
		tu_empty_home(&t->h, "api");
	mm_start(&t->mm,
		"{\"responses\":[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message\","
		"\"id\":\"m\",\"text\":\"done\"},{\"ev\":\"completed\"}]}],\"repeat\":true}");
	t->mock = 1;
	th_config(t);
	t->c = th_daemon(t);
}

void
th_stop(struct th *t)
{
	asc_free(t->c);
	mm_stop(&t->mm);
	tu_home_free(&t->h);
}

json_t *
th_call(struct asc *c, const char *method, json_t *params)
{
	long long id = asc_request(c, method, params);

	return asc_wait_response(c, id, asc_timeout(TH_MS));
}

/* A -32600 (or code) error whose message starts with prefix. */
void
th_error(const json_t *r, int code, const char *prefix)
{
	const char *m;

	asc_assert_error(r, code, NULL);
	m = json_string_value(json_object_get(json_object_get(r, "error"), "message"));
	if (strncmp(m, prefix, strlen(prefix)) != 0)
		fail_msg("error \"%s\", expected it to start with \"%s\"", m, prefix);
}

/* thread/start in the workspace; the id (heap). The thread/started notification is taken. */
char *
th_new(struct th *t, json_t *extra)
{
	json_t *p = extra != NULL ? extra : json_object(), *r, *n;
	char *id;

	json_object_set_new(p, "cwd", json_string(t->h.ws));
	r = th_call(t->c, "thread/start", p);
	id = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "thread"), "id")));
	n = asc_wait_notification(t->c, "thread/started", asc_timeout(TH_MS));
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(n, "params"), "thread"), "id")),
		id);
	json_decref(n);
	json_decref(r);
	return id;
}

/* One text turn on a thread, to its turn/completed. */
void
th_turn(struct th *t, const char *id, const char *text)
{
	json_t *r = th_call(t->c, "turn/start",
		json_pack("{s:s, s:o}", "threadId", id, "input", tt_text(text)));

	asc_assert_result(r);
	json_decref(r);
	json_decref(asc_wait_notification(t->c, "turn/completed", asc_timeout(TH_MS)));
	/* The turn's other notifications are of no interest here. */
	while ((r = asc_next(t->c, 0)) != NULL)
		json_decref(r);
}

/* The ids of a list answer's data, in order, as one space-separated string (heap). */
char *
th_ids(const json_t *result)
{
	struct buf b;
	json_t *v;
	size_t i;

	buf_init(&b, 1 << 20);
	json_array_foreach(json_object_get(result, "data"), i, v)
	{
		buf_printf(&b, "%s%s", i ? " " : "", json_string_value(json_object_get(v, "id")));
	}
	return buf_steal(&b, NULL);
}

char *
th_last_request(struct th *t)
{
	json_t *recs = mm_records(&t->mm), *body, *it, *c;
	struct buf b;
	size_t i, j;

	assert_true(json_array_size(recs) > 0);
	body = tt_request_body(recs, json_array_size(recs) - 1);
	buf_init(&b, 1 << 20);
	json_array_foreach(json_object_get(body, "input"), i, it)
	{
		const char *role = json_string_value(json_object_get(it, "role"));

		if (role == NULL || (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0))
			continue;
		json_array_foreach(json_object_get(it, "content"), j, c)
		{
			const char *text = json_string_value(json_object_get(c, "text"));

			if (text != NULL && text[0] != '<') /* not the environment context */
				buf_printf(&b, "%s%s", b.len ? "|" : "", text);
		}
	}
	json_decref(recs);
	return buf_steal(&b, NULL);
}
