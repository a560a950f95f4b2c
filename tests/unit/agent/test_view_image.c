/*
 * view_image's pure parts and its read (agent/tools/view_image.h): the arguments and upstream's
 * texts for them, the formats told by their bytes, the texts of a missing path, a directory
 * and a file that is no image, the output item, and a cell's octet-stream URL typed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/tools/view_image.h"

static void
test_args(void **state)
{
	struct view_image v;
	char *cause = NULL;

	(void)state;
	assert_int_equal(view_image_args("{\"path\":\"a.png\"}", "/w", &v, &cause), 0);
	assert_string_equal(v.path, "/w/a.png");
	view_image_free(&v);
	assert_int_equal(view_image_args("{\"path\":\"/x/a.png\"}", "/w/", &v, &cause), 0);
	assert_string_equal(v.path, "/x/a.png");
	view_image_free(&v);
	assert_int_equal(view_image_args("{\"file\": \"img.png\"}", "/w", &v, &cause), -1);
	assert_string_equal(cause,
		"failed to parse function arguments: missing field `path` at "
		"line 1 column 19"); /* recorded: vi_badargs */
	free(cause);
	assert_int_equal(view_image_args("{\"path\":1}", "/w", &v, &cause), -1);
	free(cause);
	assert_int_equal(view_image_args("nope", "/w", &v, &cause), -1);
	assert_non_null(strstr(cause, "failed to parse function arguments: "));
	free(cause);
}

static void
test_sniff(void **state)
{
	(void)state;
	assert_string_equal(
		view_image_sniff((const unsigned char *)"\x89PNG\r\n\x1a\n....", 12), "image/png");
	assert_string_equal(
		view_image_sniff((const unsigned char *)"\xff\xd8\xff\xe0", 4), "image/jpeg");
	assert_string_equal(view_image_sniff((const unsigned char *)"GIF89a..", 8), "image/gif");
	assert_string_equal(
		view_image_sniff((const unsigned char *)"RIFF\0\0\0\0WEBPVP8 ", 16), "image/webp");
	assert_null(view_image_sniff((const unsigned char *)"not really a png", 16));
	assert_null(view_image_sniff((const unsigned char *)"\x89PNG", 4));
}

static void
test_load(void **state)
{
	char dir[] = "/tmp/test_vi_unit.XXXXXX", *p;
	struct view_image v = {0};
	FILE *f;
	json_t *o;

	(void)state;
	assert_non_null(mkdtemp(dir));
	v.path = strdup(dir);
	view_image_load(&v);
	p = NULL;
	assert_int_equal(asprintf(&p, "image path `%s` is not a file", dir) > 0, 1);
	assert_string_equal(v.error, p);
	free(p);
	view_image_free(&v);

	assert_int_equal(asprintf(&v.path, "%s/nope.png", dir) > 0, 1);
	view_image_load(&v);
	assert_int_equal(asprintf(&p,
				 "unable to locate image at `%s/nope.png`: No such file or "
				 "directory (os error 2)",
				 dir) > 0,
		1);
	assert_string_equal(v.error, p);
	free(p);
	view_image_free(&v);

	assert_int_equal(asprintf(&v.path, "%s/a.txt", dir) > 0, 1);
	f = fopen(v.path, "w");
	fputs("just text\n", f);
	fclose(f);
	view_image_load(&v);
	assert_string_equal(v.error, "unable to process image: invalid or unsupported image data");
	unlink(v.path);
	view_image_free(&v);

	assert_int_equal(asprintf(&v.path, "%s/a.gif", dir) > 0, 1);
	f = fopen(v.path, "w");
	fwrite("GIF89a\1\0\1\0", 1, 10, f);
	fclose(f);
	view_image_load(&v);
	assert_null(v.error);
	assert_string_equal(v.mime, "image/gif");
	assert_string_equal(v.b64, "R0lGODlhAQABAA==");
	o = view_image_output(&v, "c1");
	assert_string_equal(json_string_value(json_object_get(o, "call_id")), "c1");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(o, "output"), 0), "image_url")),
		"data:image/gif;base64,R0lGODlhAQABAA==");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(o, "output"), 0), "detail")),
		"high");
	json_decref(o);
	o = view_image_cell(&v);
	assert_string_equal(json_string_value(json_object_get(o, "image_url")),
		"data:application/octet-stream;base64,R0lGODlhAQABAA==");
	json_decref(o);
	o = view_image_item(&v, "c1");
	assert_string_equal(json_string_value(json_object_get(o, "type")), "imageView");
	json_decref(o);
	unlink(v.path);
	view_image_free(&v);
	rmdir(dir);
}

static void
test_typed_url(void **state)
{
	char *u;

	(void)state;
	u = view_image_typed_url("data:application/octet-stream;base64,iVBORw0KGgoAAAANSUhEUg==");
	assert_string_equal(u, "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==");
	free(u);
	u = view_image_typed_url(
		"data:application/octet-stream;base64,bm90IGFuIGltYWdlIGF0IGFsbA==");
	assert_string_equal(u, "data:application/octet-stream;base64,bm90IGFuIGltYWdlIGF0IGFsbA==");
	free(u);
	u = view_image_typed_url("https://example.com/a.png");
	assert_string_equal(u, "https://example.com/a.png");
	free(u);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_sniff),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_typed_url),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
