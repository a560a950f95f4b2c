/*
 * Tests for protocol/jsonschema*.c as a whole: schemas that must be refused
 * (with where and why), jsv_lookup, documents reached through the loader, and
 * real messages against upstream's reference schema (../shared/reference/...,
 * or $APP_SERVER_REFERENCE_SCHEMA; APP_SERVER_NO_REFERENCE=1 skips those when
 * it is absent). Keyword-level
 * tables are in test_jsonschema.c.
 *
 * JSON in the tables is written with ' for " (no JSON here needs a ').
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "protocol/jsonschema/jsonschema.h"
#include "tests/helpers/skip_note.h"
#include "jsonschema_util.h"
#include "protocol/xmalloc.h"

#define REFERENCE_DEFAULT "../shared/reference/codex-app-server-schema"
#define REFERENCE_BUNDLE  "codex_app_server_protocol.schemas.json"

static char reference_file[4096];

/* $APP_SERVER_REFERENCE_SCHEMA, else ../shared/... beside the repository (tests run from it). */
static const char *
reference_dir(void)
{
	const char *dir = getenv("APP_SERVER_REFERENCE_SCHEMA");

	dir = dir != NULL && *dir != '\0' ? dir : REFERENCE_DEFAULT;
	snprintf(reference_file, sizeof reference_file, "%s/%s", dir, REFERENCE_BUNDLE);
	return dir;
}

/* Schemas that must be refused, with where and why. */
static void
test_bad_schemas(void **state)
{
	static const struct {
		const char *schema, *cause;
	} cases[] = {
		{"{'type':'strin'}", "schema #: `type` has an unknown type name"},
		{"{'type':3}", "`type` must be"},
		{"{'properties':{'a':{'minLength':-1}}}",
			"schema #/properties/a: `minLength` must be a non-negative integer"},
		{"{'properties':{'a':3}}", "schema #/properties/a: must be a schema"},
		{"{'items':[{},{'type':'x'}]}",
			"schema #/items/1: `type` has an unknown type name"},
		{"{'required':'a'}", "`required` must be an array of strings"},
		{"{'required':['a','a']}", "`required` lists `a` twice"},
		{"{'multipleOf':0}", "`multipleOf` must be greater than 0"},
		{"{'minimum':'1'}", "`minimum` must be a number"},
		{"{'exclusiveMinimum':true}", "`exclusiveMinimum` must be a number"},
		{"{'enum':3}", "`enum` must be an array"},
		{"{'anyOf':[]}", "`anyOf` must be a non-empty array of schemas"},
		{"{'not':3}", "`not` must be a schema"},
		{"{'$ref':'#/definitions/nope'}", "$ref `#/definitions/nope` points nowhere"},
		{"{'$ref':'http://elsewhere.test/s.json'}", "cannot resolve $ref"},
		{"{'$ref':'#/definitions/x/description','definitions':{'x':{'description':'d'}}}",
			"does not point at a schema"},
		{"{'$ref':'#/definitions/a','definitions':{'a':{'$ref':'#/definitions/b'},"
		 "'b':{'$ref':'#/definitions/a'}}}",
			"$ref cycle"},
		{"{'pattern':'(?=a)b'}",
			"pattern `(?=a)b`: lookaround assertions are not supported"},
		{"{'pattern':'\\\\p{L}'}", "not supported"},
		{"{'pattern':'a('}", "pattern `a(`"},
		{"{'pattern':'[]'}", "[] and [^] are not supported"},
		{"{'pattern':'[\\\\u0080-\\\\uffff]'}", "wider than 1024 characters"},
		{"{'pattern':'\\\\x00'}", "NUL is not supported"},
		{"{'pattern':'(?<=a)b'}", "lookaround"},
		{"{'pattern':'[\\\\D]'}", "inside a character class"},
		{"{'patternProperties':{'[z-a]':{}}}",
			"schema #/patternProperties: pattern `[z-a]`"},
		{"{'definitions':{'d':{'maxItems':1.5}}}", "schema #/definitions/d: `maxItems`"},
		{"{'dependencies':{'a':3}}", "schema #/dependencies/a: must be"},
		{"3", "a schema must be an object or a boolean"},
	};
	char *cause;
	json_t *schema;
	struct jsv *jsv;
	size_t i;
	int bad = 0;

	for (i = 0; i < nitems(cases); i++) {
		cause = NULL;
		schema = js_parse(cases[i].schema);
		jsv = jsv_compile(schema, &cause);
		if (jsv != NULL) {
			print_error("row %zu: %s accepted\n", i, cases[i].schema);
			bad++;
		} else if (cause == NULL || strstr(cause, cases[i].cause) == NULL) {
			print_error("row %zu: %s: want cause `%s`, got `%s`\n", i, cases[i].schema,
				cases[i].cause, cause ? cause : "(null)");
			bad++;
		}
		free(cause);
		jsv_free(jsv);
		json_decref(schema);
	}
	if (bad > 0)
		fail_msg("%d bad-schema rows failed", bad);
}

/* A pattern whose POSIX text would pass 256 KiB is refused; one just under it compiles. */
static void
test_pattern_ceiling(void **state)
{
	static const char cls[] = "[\\u0100-\\u04ff]"; /* 1,024 code points of 2 bytes */
	char *src = xcalloc(128 * (sizeof cls - 1) + 1, 1), *cause = NULL;
	json_t *schema;
	struct jsv *jsv;
	size_t i;

	(void)state;
	for (i = 0; i < 127; i++)
		memcpy(src + i * (sizeof cls - 1), cls, sizeof cls - 1);
	schema = json_pack("{s:s}", "pattern", src);
	jsv = jsv_compile(schema, &cause);
	assert_non_null(jsv);
	jsv_free(jsv);
	json_decref(schema);
	memcpy(src + 127 * (sizeof cls - 1), cls, sizeof cls - 1);
	schema = json_pack("{s:s}", "pattern", src);
	assert_null(jsv_compile(schema, &cause));
	assert_non_null(strstr(cause, "longer than 262144 bytes once translated"));
	free(cause);
	json_decref(schema);
	free(src);
}

/* jsv_lookup: same node twice, absent places, a broken schema compiled late. */
static void
test_lookup(void **state)
{
	json_t *schema = js_parse("{'definitions':{'A':{'type':'string'}},"
				  "'ns':{'Good':{'type':'integer'},'Bad':{'type':'nope'},"
				  "'UsesBad':{'items':{'$ref':'#/ns/Bad'}}}}");
	json_t *one = json_integer(1), *str = json_string("s");
	const struct jsv_node *a, *good;
	struct jsv *jsv;

	jsv = jsv_compile(schema, NULL);
	json_decref(schema);
	assert_non_null(jsv);
	a = jsv_lookup(jsv, "#/definitions/A");
	assert_non_null(a);
	assert_ptr_equal(a, jsv_lookup(jsv, "#/definitions/A"));
	assert_ptr_equal(jsv_root(jsv), jsv_lookup(jsv, "#"));
	assert_int_equal(jsv_validate(a, str, NULL), 0);
	assert_int_equal(jsv_validate(a, one, NULL), -1);
	assert_null(jsv_lookup(jsv, "#/definitions/Missing"));
	assert_null(jsv_lookup(jsv, "#/ns/Bad"));
	assert_null(jsv_lookup(jsv, "#/ns/Bad"));
	assert_null(jsv_lookup(jsv, "#/ns/UsesBad"));
	good = jsv_lookup(jsv, "#/ns/Good");
	assert_non_null(good);
	assert_int_equal(jsv_validate(good, one, NULL), 0);
	assert_int_equal(jsv_validate(good, str, NULL), -1);
	json_decref(one);
	json_decref(str);
	jsv_free(jsv);
	jsv_free(NULL);
}

/* The loader: a ref into another document, relative to a base URI. */
static json_t *
test_loader(const char *uri, void *arg)
{
	int *calls = arg;

	(*calls)++;
	if (strcmp(uri, "http://x.test/dir/other.json") == 0)
		return js_parse("{'definitions':{'n':{'type':'number','$comment':'remote'}}}");
	return NULL;
}

/* Refs to other documents go through the loader once per document. */
static void
test_remote(void **state)
{
	json_t *schema = js_parse("{'properties':{'a':{'$ref':'other.json#/definitions/n'},"
				  "'b':{'$ref':'other.json#/definitions/n'}}}");
	json_t *bad = js_parse("{'a':1,'b':'x'}");
	int calls = 0;
	struct jsv_options opts = {"http://x.test/dir/main.json", test_loader, &calls};
	struct jsv_error err;
	struct jsv *jsv = jsv_compile_with(schema, &opts, NULL);

	assert_non_null(jsv);
	assert_int_equal(calls, 1);
	assert_int_equal(jsv_validate(jsv_root(jsv), bad, &err), -1);
	assert_string_equal(err.path, "/b");
	assert_string_equal(err.keyword, "type");
	jsv_free(jsv);
	json_decref(bad);
	json_decref(schema);
}

/* The reference schema, or NULL after skipping/failing as the environment asks. */
static json_t *
reference_load(void)
{
	const char *no = getenv("APP_SERVER_NO_REFERENCE");
	json_error_t jerr;
	json_t *doc;

	reference_dir();
	doc = json_load_file(reference_file, 0, &jerr);

	if (doc == NULL && no != NULL && strcmp(no, "1") == 0)
		return NULL;
	if (doc == NULL)
		fail_msg("cannot load %s: %s (set APP_SERVER_REFERENCE_SCHEMA, or "
			 "APP_SERVER_NO_REFERENCE=1 to skip)",
			reference_file, jerr.text);
	return doc;
}

/* Validate instance text against a place in the reference schema; check the error. */
static void
reference_check(struct jsv *jsv, const char *where, const char *text, const char *path,
	const char *keyword, const char *message)
{
	const struct jsv_node *n = jsv_lookup(jsv, where);
	json_t *inst = js_parse(text);
	struct jsv_error err;
	int r;

	if (n == NULL)
		fail_msg("no schema at %s", where);
	r = jsv_validate(n, inst, &err);
	if (path == NULL && r != 0)
		fail_msg("%s: %s: want valid, got [%s] %s: %s", where, text, err.path, err.keyword,
			err.message);
	if (path != NULL) {
		if (r == 0)
			fail_msg("%s: %s: want invalid", where, text);
		if (strcmp(err.path, path) != 0 || strcmp(err.keyword, keyword) != 0 ||
			strstr(err.message, message) == NULL)
			fail_msg("%s: %s: want [%s] %s: %s, got [%s] %s: %s", where, text, path,
				keyword, message, err.path, err.keyword, err.message);
	}
	json_decref(inst);
}

/* Real messages against upstream's reference schema. */
static void
test_reference(void **state)
{
	json_t *doc = reference_load();
	char *cause = NULL;
	struct jsv *jsv;

	if (doc == NULL) {
		skip_note("test_jsonschema_ref: real messages against upstream's schema", 1,
			skip_note_why("APP_SERVER_NO_REFERENCE_WHY", "APP_SERVER_NO_REFERENCE=1"));
		skip();
	}
	jsv = jsv_compile(doc, &cause);
	json_decref(doc);
	if (jsv == NULL)
		fail_msg("reference schema rejected: %s", cause);
	reference_check(jsv, "#/definitions/ClientRequest",
		"{'id':7,'method':'command/exec','params':{'command':['ls','-la'],'cwd':'/tmp',"
		"'timeoutMs':5000,'sandboxPolicy':{'type':'workspaceWrite','writableRoots':['/tmp'],"
		"'networkAccess':false},'env':{'A':'1','B':null}}}",
		NULL, NULL, NULL);
	reference_check(jsv, "#/definitions/v2/CommandExecParams",
		"{'command':['ls'],'sandboxPolicy':{'type':'readOnly'},'size':{'rows':24,'cols':80},"
		"'tty':true,'processId':'p1','outputBytesCap':1048576}",
		NULL, NULL, NULL);
	reference_check(jsv, "#/definitions/ClientRequest",
		"{'id':7,'method':'command/exec','params':{'command':'ls -la'}}", "/params/command",
		"type", "expected array, got string");
	reference_check(jsv, "#/definitions/ClientRequest",
		"{'id':7,'method':'command/exec','params':{'command':['ls'],"
		"'sandboxPolicy':{'type':'readOnly','networkAccess':'yes'}}}",
		"/params/sandboxPolicy/networkAccess", "type", "expected boolean, got string");
	reference_check(jsv, "#/definitions/ClientRequest",
		"{'id':7,'method':'no/such/method','params':{}}", "/method", "enum",
		"value \"no/such/method\" is not one of \"initialize\"");
	reference_check(jsv, "#/definitions/ClientRequest",
		"{'id':1.5,'method':'command/exec','params':{'command':['ls']}}", "/id", "type",
		"expected string or integer, got number");
	reference_check(jsv, "#/definitions/v2/CommandExecParams", "{'cwd':'/'}", "", "required",
		"missing required property `command`");
	reference_check(jsv, "#/definitions/v2/CommandExecParams",
		"{'command':['ls'],'sandboxPolicy':'readOnly'}", "/sandboxPolicy", "type",
		"expected object or null, got string");
	reference_check(jsv, "#/definitions/v2/CommandExecParams",
		"{'command':['ls'],'size':{'rows':65536,'cols':80}}", "/size/rows", "format",
		"out of range for uint16");
	reference_check(jsv, "#/definitions/v2/CommandExecParams",
		"{'command':['ls'],'outputBytesCap':-1}", "/outputBytesCap", "minimum", "-1");
	jsv_free(jsv);
}

/* Every file of the reference directory compiles, and each one accepts its own examples of nothing
 * wrong. */
static void
test_reference_files(void **state)
{
	static const char *subs[] = {"", "/v1", "/v2"};
	char *dirs[3];
	struct dirent *d;
	json_error_t jerr;
	json_t *doc;
	struct jsv *jsv;
	char *path, *cause;
	size_t i;
	int files = 0;
	DIR *dir;

	if ((doc = reference_load()) == NULL) {
		skip_note("test_jsonschema_ref: upstream's schema files compiled", 1,
			skip_note_why("APP_SERVER_NO_REFERENCE_WHY", "APP_SERVER_NO_REFERENCE=1"));
		skip();
	}
	json_decref(doc);
	for (i = 0; i < nitems(dirs); i++)
		dirs[i] = xasprintf("%s%s", reference_dir(), subs[i]);
	for (i = 0; i < nitems(dirs); i++) {
		if ((dir = opendir(dirs[i])) == NULL)
			fail_msg("cannot open %s", dirs[i]);
		while ((d = readdir(dir)) != NULL) {
			if (strstr(d->d_name, ".json") == NULL)
				continue;
			path = xasprintf("%s/%s", dirs[i], d->d_name);
			if ((doc = json_load_file(path, 0, &jerr)) == NULL)
				fail_msg("%s: %s", path, jerr.text);
			cause = NULL;
			if ((jsv = jsv_compile(doc, &cause)) == NULL)
				fail_msg("%s: %s", path, cause);
			files++;
			jsv_free(jsv);
			json_decref(doc);
			free(path);
		}
		closedir(dir);
		free(dirs[i]);
	}
	assert_true(files > 100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_schemas),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_pattern_ceiling),
		cmocka_unit_test(test_remote),
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_reference_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
