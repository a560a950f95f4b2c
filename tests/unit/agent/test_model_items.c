/*
 * The model's answer as wire items (server/agent/prompt/model_items.c): the agentMessage and
 * reasoning items' shapes as upstream 0.169 reports them, and the texts read out of the
 * model's Responses message and reasoning items.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>

#include "agent/prompt/model_items.h"

static void
test_message(void **state)
{
	json_t *m = model_items_message("msg_1", "hello");
	char *text = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);

	(void)state;
	assert_string_equal(text,
		"{\"delivery\":null,\"id\":\"msg_1\",\"memoryCitation\":null,\"moderation\":null,"
		"\"phase\":null,\"questions\":null,\"text\":\"hello\",\"type\":\"agentMessage\"}");
	free(text);
	json_decref(m);
}

static void
test_reasoning(void **state)
{
	json_t *sum = json_pack("[s]", "thinking"), *content = json_array();
	json_t *r = model_items_reasoning("rs_1", sum, content);
	char *text = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);

	(void)state;
	assert_string_equal(text,
		"{\"content\":[],\"id\":\"rs_1\",\"summary\":[\"thinking\"],\"type\":\"reasoning\"}");
	free(text);
	json_decref(r);
	json_decref(sum);
	json_decref(content);
}

static void
test_texts(void **state)
{
	json_t *msg = json_loads("{\"type\":\"message\",\"content\":[{\"type\":\"output_text\","
				 "\"text\":\"a\"},{\"type\":\"refusal\"},{\"type\":\"output_text\","
				 "\"text\":\"b\"}]}",
		0, NULL);
	json_t *rs = json_loads("{\"type\":\"reasoning\",\"summary\":[{\"text\":\"s1\"},"
				"{\"text\":3},{\"text\":\"s2\"}]}",
		0, NULL);
	json_t *sum, *content;
	struct buf b;

	(void)state;
	buf_init(&b, SIZE_MAX);
	buf_adds(&b, "stale");
	model_items_text(msg, &b);
	assert_string_equal(buf_str(&b), "ab"); /* reset first, the texts joined */
	buf_free(&b);
	sum = model_items_texts(rs, "summary");
	assert_int_equal(json_array_size(sum), 2);
	assert_string_equal(json_string_value(json_array_get(sum, 1)), "s2");
	content = model_items_texts(rs, "content"); /* absent: none */
	assert_int_equal(json_array_size(content), 0);
	json_decref(sum);
	json_decref(content);
	json_decref(msg);
	json_decref(rs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_message),
		cmocka_unit_test(test_reasoning),
		cmocka_unit_test(test_texts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
