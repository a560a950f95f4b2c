/*
 * Dynamic tools (thread/start.dynamicTools) end to end, compared with upstream 0.169 on the
 * same mock script (tests/fixtures/dynamic_tools/upstream/<scenario>.json, recorded by
 * tests/fixtures/dynamic_tools/record.py; upstream is not needed here): per scenario, the
 * turn's notifications and server requests in order, the dynamicToolCall items, the outputs
 * the model got (contentItems as function_call_output), and the tools it was offered. Also
 * what upstream's recordings cannot show: a late answer after an interrupt is ignored, the
 * tools survive thread/resume (upstream keeps them in session_meta), every message checked
 * against the experimental schema by the harness.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define FIXTURES "tests/fixtures/dynamic_tools/upstream/"
#define PNG                                                                                        \
	"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAA"  \
	"AMBAQDJ/pLvAAAAAElFTkSuQmCC"

/* record.py's DYN: a function and a namespace. */
static const char dyn_tools[] =
	"[{`type`:`function`,`name`:`lookup`,`description`:`Look a word up.`,`inputSchema`:"
	"{`type`:`object`,`properties`:{`word`:{`type`:`string`}},`required`:[`word`],"
	"`additionalProperties`:false}},{`type`:`namespace`,`name`:`crm`,`description`:`The CRM.`,"
	"`tools`:[{`type`:`function`,`name`:`find_contact`,`description`:`Find a contact.`,"
	"`inputSchema`:{`type`:`object`,`properties`:{`q`:{`type`:`string`}}}}]}]";

#define FC(id, word)                                                                               \
	"{`ev`:`function_call`,`call_id`:`" id "`,`name`:`lookup`,`arguments`:{`word`:`" word "`}}"
#define MSG                                                                                        \
	",{`events`:[{`ev`:`created`,`id`:`resp-1`},{`ev`:`message`,`id`:`m1`,`text`:`done`},"     \
	"{`ev`:`completed`,`id`:`resp-1`}]}"
#define SCRIPT(calls)                                                                              \
	"{`responses`:[{`events`:[{`ev`:`created`,`id`:`resp-0`}," calls                           \
	",{`ev`:`completed`,`id`:`resp-0`}]}" MSG "],`repeat`:true}"

struct dt_case {
	const char *name;   /* the fixture */
	const char *script; /* record.py's script of the scenario */
	const char *answer; /* per call: a result (JSON with `), "error", "interrupt" */
	const char *answer2;
};

static const struct dt_case cases[] = {
	{"answer", SCRIPT(FC("call-1", "cat")),
		"{`contentItems`:[{`type`:`inputText`,`text`:`a feline`},{`type`:`inputImage`,"
		"`imageUrl`:`" PNG "`}],`success`:true}",
		NULL},
	{"two", SCRIPT(FC("call-1", "cat") "," FC("call-2", "dog")),
		"{`contentItems`:[{`type`:`inputText`,`text`:`a feline`}],`success`:true}",
		"{`contentItems`:[{`type`:`inputText`,`text`:`a canine`}],`success`:false}"},
	{"error", SCRIPT(FC("call-1", "cat")), "error", NULL},
	{"interrupt", SCRIPT(FC("call-1", "cat")), "interrupt", NULL},
	{"nsraw",
		SCRIPT("{`type`:`response.output_item.done`,`item`:{`type`:`function_call`,"
		       "`call_id`:`call-1`,`name`:`find_contact`,`namespace`:`crm`,"
		       "`arguments`:`{\\`q\\`:\\`bob\\`}`}}"),
		"{`contentItems`:[{`type`:`inputText`,`text`:`bob@x`}],`success`:true}", NULL},
	{"texts", SCRIPT(FC("call-1", "cat")),
		"{`contentItems`:[{`type`:`inputText`,`text`:`one`},{`type`:`inputText`,"
		"`text`:`two`}],`success`:true}",
		NULL},
	{"empty", SCRIPT(FC("call-1", "cat")), "{`contentItems`:[],`success`:false}", NULL},
	{"badanswer", SCRIPT(FC("call-1", "cat")), "{`nope`:1}", NULL},
	{"badargs",
		SCRIPT("{`ev`:`function_call`,`call_id`:`call-1`,`name`:`lookup`,"
		       "`arguments`:`not json`}"),
		NULL, NULL},
};

struct dt_state {
	struct tt *f;
	const struct dt_case *c;
	int n;		  /* requests seen */
	json_t *last_req; /* the last item/tool/call (for a late answer) */
};

/* How the scenario answers item/tool/call. */
static json_t *
dt_answer(void *arg, const json_t *req)
{
	struct dt_state *s = arg;
	const char *a = s->n++ == 0 ? s->c->answer : s->c->answer2;
	json_t *p = json_object_get(req, "params"), *r;
	char *text;

	assert_string_equal(json_string_value(json_object_get(req, "method")), "item/tool/call");
	json_decref(s->last_req);
	s->last_req = json_incref((json_t *)req);
	if (a == NULL || strcmp(a, "error") == 0)
		return NULL;
	if (strcmp(a, "interrupt") == 0) {
		asc_request(s->f->c, "turn/interrupt",
			json_pack("{s:O, s:O}", "threadId", json_object_get(p, "threadId"),
				"turnId", json_object_get(p, "turnId")));
		return TT_NO_ANSWER;
	}
	text = tt_script(a);
	r = json_loads(text, 0, NULL);
	free(text);
	assert_non_null(r);
	return r;
}

/* A thread with the dynamic tools on f's daemon; its id becomes f's. */
static void
dt_thread(struct tt *f)
{
	char *text = tt_script(dyn_tools);
	json_t *r = tt_call(f, "thread/start",
		json_pack("{s:s, s:s, s:s, s:o}", "cwd", f->workspace, "approvalPolicy", "never",
			"sandbox", "read-only", "dynamicTools", json_loads(text, 0, NULL)));

	free(text);
	free(f->thread_id);
	f->thread_id = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "thread"), "id")));
	json_decref(r);
	json_decref(asc_wait_notification(f->c, "thread/started", asc_timeout(5000)));
}

/* The function_call_output items of a body, as call_id and output only. */
static json_t *
dt_outputs(const json_t *body)
{
	json_t *out = json_array(), *it;
	size_t i;

	json_array_foreach(json_object_get(body, "input"), i, it)
	{
		if (strcmp(json_string_value(json_object_get(it, "type")) ?: "",
			    "function_call_output") == 0)
			json_array_append_new(out,
				json_pack("{s:O, s:O}", "call_id", json_object_get(it, "call_id"),
					"output", json_object_get(it, "output")));
	}
	return out;
}

/* The dynamic tools a body offered (lookup, crm). */
static json_t *
dt_tools(const json_t *body)
{
	json_t *out = json_array(), *t;
	const char *n;
	size_t i;

	json_array_foreach(json_object_get(body, "tools"), i, t)
	{
		n = json_string_value(json_object_get(t, "name"));
		if (n != NULL && (strcmp(n, "lookup") == 0 || strcmp(n, "crm") == 0))
			json_array_append(out, t);
	}
	return out;
}

static void
dt_run(const struct dt_case *c)
{
	struct tt_opts o = {0};
	struct tt f;
	struct dt_state s = {0};
	char *script = tt_script(c->script), *path = xasprintf(FIXTURES "%s.json", c->name);
	json_t *want = json_load_file(path, 0, NULL), *msgs, *recs, *seq, *items, *it, *v, *wo;
	size_t i;

	if (want == NULL)
		fail_msg("no fixture %s", path);
	o.script = script;
	o.experimental = 1;
	tt_start(&f, &o);
	dt_thread(&f);
	s.f = &f;
	s.c = c;
	msgs = tt_turn(&f, "hi", NULL, dt_answer, &s);
	seq = json_array();
	tt_sequence(seq, msgs);
	tt_assert_upstream("the turn's sequence", json_object_get(want, "sequence"), seq);
	items = json_array();
	json_array_foreach(msgs, i, it)
	{
		json_t *item = json_object_get(json_object_get(it, "params"), "item");

		if (strcmp(json_string_value(json_object_get(it, "method")) ?: "",
			    "item/completed") != 0 ||
			strcmp(json_string_value(json_object_get(item, "type")),
				"dynamicToolCall") != 0)
			continue;
		v = json_deep_copy(item);
		assert_true(json_integer_value(json_object_get(v, "durationMs")) >= 0);
		json_object_del(v, "startedAtMs");
		json_object_del(v, "completedAtMs");
		json_object_del(v, "durationMs");
		json_array_append_new(items, v);
	}
	tt_assert_upstream("the dynamicToolCall items", json_object_get(want, "items"), items);
	recs = mm_records(&f.mm);
	wo = json_array();
	json_array_foreach(json_object_get(want, "outputs"), i, it) json_array_append_new(wo,
		json_pack("{s:O, s:O}", "call_id", json_object_get(it, "call_id"), "output",
			json_object_get(it, "output")));
	v = dt_outputs(tt_request_body(recs, json_array_size(recs) - 1));
	if (strcmp(c->name, "badargs") == 0) {
		/* the parser's own words follow (serde's upstream, jansson's here) */
		const char *pre = "failed to parse function arguments: ";

		assert_int_equal(json_array_size(v), 1);
		assert_int_equal(
			strncmp(json_string_value(json_object_get(json_array_get(v, 0), "output")),
				pre, strlen(pre)),
			0);
	} else if (strcmp(c->name, "interrupt") != 0)
		tt_assert_upstream("the outputs the model got", wo, v);
	json_decref(v);
	v = dt_tools(tt_request_body(recs, 0));
	tt_assert_upstream("the dynamic tools offered", json_object_get(want, "tools"), v);
	json_decref(v);
	if (s.last_req != NULL && strcmp(c->name, "interrupt") == 0) {
		/* A late answer: ignored, nothing more is reported. */
		tt_late_answer(&f, s.last_req, "{\"contentItems\":[],\"success\":true}");
	}
	json_decref(wo);
	json_decref(recs);
	json_decref(items);
	json_decref(seq);
	json_decref(msgs);
	json_decref(s.last_req);
	json_decref(want);
	tt_stop(&f);
	free(script);
	free(path);
}

static void
test_answer(void **state)
{
	(void)state;
	dt_run(&cases[0]);
}

static void
test_two_calls_in_one_response(void **state)
{
	(void)state;
	dt_run(&cases[1]);
}

static void
test_error_answer(void **state)
{
	(void)state;
	dt_run(&cases[2]);
}

static void
test_never_answered_interrupt_ends_it(void **state)
{
	(void)state;
	dt_run(&cases[3]);
}

static void
test_namespace(void **state)
{
	(void)state;
	dt_run(&cases[4]);
}

static void
test_several_texts(void **state)
{
	(void)state;
	dt_run(&cases[5]);
}

static void
test_empty_failed(void **state)
{
	(void)state;
	dt_run(&cases[6]);
}

static void
test_invalid_answer(void **state)
{
	(void)state;
	dt_run(&cases[7]);
}

static void
test_bad_arguments(void **state)
{
	(void)state;
	dt_run(&cases[8]);
}

/* Upstream keeps dynamicTools in session_meta: a resumed thread offers them still. */
static void
test_kept_across_resume(void **state)
{
	struct tt_opts o = {0};
	struct tt f;
	struct dt_state s = {0};
	char *script = tt_script(cases[0].script);
	json_t *msgs, *r, *recs, *v, *want;

	(void)state;
	o.script = script;
	o.experimental = 1;
	tt_start(&f, &o);
	dt_thread(&f);
	s.f = &f;
	s.c = &cases[0];
	json_decref(tt_turn(&f, "hi", NULL, dt_answer, &s));
	asc_free(f.c);
	tt_respawn(&f); /* a new daemon: the thread is read back from its rollout */
	r = tt_call(&f, "thread/resume", json_pack("{s:s}", "threadId", f.thread_id));
	asc_assert_result(r);
	json_decref(r);
	s.n = 0;
	msgs = tt_turn(&f, "again", NULL, dt_answer, &s);
	recs = mm_records(&f.mm);
	want = json_load_file(FIXTURES "answer.json", 0, NULL);
	assert_non_null(want);
	v = dt_tools(tt_request_body(recs, json_array_size(recs) - 1));
	tt_assert_upstream(
		"the dynamic tools offered after resume", json_object_get(want, "tools"), v);
	json_decref(v);
	json_decref(want);
	json_decref(recs);
	json_decref(msgs);
	json_decref(s.last_req);
	tt_stop(&f);
	free(script);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_two_calls_in_one_response),
		cmocka_unit_test(test_error_answer),
		cmocka_unit_test(test_never_answered_interrupt_ends_it),
		cmocka_unit_test(test_namespace),
		cmocka_unit_test(test_several_texts),
		cmocka_unit_test(test_empty_failed),
		cmocka_unit_test(test_invalid_answer),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_kept_across_resume),
	};

	asc_ref_load();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
