/*
 * The harness's checks (harness.h): the reference schema, compiled once per process, and the
 * rules every line from the daemon must meet. Kinds are told apart by shape, as upstream does:
 * method+id is a server request, method alone a notification, id with result or error an
 * answer. Each kind has its own set of allowed top-level keys, so a stray "jsonrpc" or
 * "emittedAtMs" fails as surely as a schema violation. Also here: the assertions and /proc
 * readings tests use on what they receive.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "protocol/jsonschema/jsonschema.h"
#include "protocol/defs/defs.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"

#define ASC_SHOW	600 /* bytes of a bad line quoted in a failure */
#define ASC_DEFAULT_REF "../shared/reference/codex-app-server-schema"
#define ASC_BIG_BUNDLE	"codex_app_server_protocol.schemas.json"

/* The reference schemas, compiled once per process. */
static struct {
	int loaded;
	int disabled;
	long unchecked;	    /* messages not checked against it (disabled) */
	long unchecked_exp; /* results only the absent experimental bundle describes */
	char *dir;
	struct jsv *notif, *sreq, *error, *response, *all;
	struct jsv *exp; /* the experimental bundle beside it, for experimental methods' results */
} asc_ref;

/* A line shortened for a failure message (static buffer: failures end the test). */
const char *
asc_show(const char *raw)
{
	static char buf[ASC_SHOW + 32];
	size_t n = strlen(raw);

	if (n <= ASC_SHOW)
		return raw;
	snprintf(buf, sizeof buf, "%.*s... (%zu bytes)", ASC_SHOW, raw, n);
	return buf;
}

/* Read and compile one reference document. */
static struct jsv *
asc_ref_compile(const char *name)
{
	char *path = xasprintf("%s/%s", asc_ref.dir, name), *cause = NULL;
	json_error_t je;
	json_t *doc;
	struct jsv *jsv;

	if ((doc = json_load_file(path, 0, &je)) == NULL)
		fail_msg("reference schema %s: %s", path, je.text);
	if ((jsv = jsv_compile(doc, &cause)) == NULL)
		fail_msg("reference schema %s does not compile: %s", path, cause);
	json_decref(doc);
	free(path);
	return jsv;
}

/* At exit: how many messages went unchecked, and why (never a silent pass). */
static void
asc_ref_note(void)
{
	char *what = xasprintf("%s: daemon messages not checked against upstream's schema",
		program_invocation_short_name);

	skip_note(what, asc_ref.unchecked,
		skip_note_why("APP_SERVER_NO_REFERENCE_WHY", "APP_SERVER_NO_REFERENCE=1"));
	free(what);
	what = xasprintf("%s: results only upstream's experimental schema describes",
		program_invocation_short_name);
	skip_note(what, asc_ref.unchecked_exp,
		"no codex-app-server-schema-experimental beside the reference schema");
	free(what);
}

/* Find and compile the reference schema, or fail loudly unless told to run without it. */
void
asc_ref_load(void)
{
	const char *dir = getenv("APP_SERVER_REFERENCE_SCHEMA"),
		   *no = getenv("APP_SERVER_NO_REFERENCE");
	struct stat st;

	if (asc_ref.loaded)
		return;
	if (dir == NULL || *dir == '\0')
		dir = ASC_DEFAULT_REF;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		if (no != NULL && strcmp(no, "1") == 0) {
			asc_ref.loaded = asc_ref.disabled = 1;
			atexit(asc_ref_note);
			return;
		}
		fail_msg(
			"reference schema directory %s not found (run from the repository root, set "
			"APP_SERVER_REFERENCE_SCHEMA, or APP_SERVER_NO_REFERENCE=1 to skip)",
			dir);
	}
	asc_ref.dir = xstrdup(dir);
	asc_ref.notif = asc_ref_compile("ServerNotification.json");
	asc_ref.sreq = asc_ref_compile("ServerRequest.json");
	asc_ref.error = asc_ref_compile("JSONRPCError.json");
	asc_ref.response = asc_ref_compile("JSONRPCResponse.json");
	asc_ref.all = asc_ref_compile(ASC_BIG_BUNDLE);
	asc_ref.loaded = 1;
	atexit(asc_ref_note);
}

/* Validate v against a compiled node, failing the test with the line on a violation. */
static void
asc_validate(const struct jsv_node *node, const json_t *v, const char *what, const char *raw)
{
	struct jsv_error err;

	if (node == NULL)
		fail_msg("no reference schema for %s", what);
	if (jsv_validate(node, v, &err) != 0)
		fail_msg("daemon output violates the reference %s at \"%s\" (%s: %s): %s", what,
			err.path, err.keyword, err.message, asc_show(raw));
}

/*
 * A result type only upstream's experimental schema has (collaborationMode/list's), from
 * the `-experimental` folder beside the reference (generate-json-schema --experimental).
 */
static const struct jsv_node *
asc_ref_experimental(const char *name)
{
	static int tried;
	char *dir, *ptr, *path;
	const struct jsv_node *n;

	if (!tried) {
		tried = 1;
		dir = asc_ref.dir;
		asc_ref.dir = xasprintf("%s-experimental", dir);
		path = xasprintf("%s/%s", asc_ref.dir, ASC_BIG_BUNDLE);
		if (access(path, R_OK) == 0)
			asc_ref.exp = asc_ref_compile(ASC_BIG_BUNDLE);
		free(path);
		free(asc_ref.dir);
		asc_ref.dir = dir;
	}
	if (asc_ref.exp == NULL)
		return NULL; /* no experimental bundle beside the reference: unchecked, counted */
	ptr = xasprintf("#/definitions/v2/%s", name);
	n = jsv_lookup(asc_ref.exp, ptr);
	free(ptr);
	return n;
}

/* The reference node of a result type: upstream keeps v2 types under definitions/v2. */
static const struct jsv_node *
asc_ref_result(const char *name)
{
	const struct jsv_node *n;
	char *ptr = xasprintf("#/definitions/v2/%s", name);

	n = jsv_lookup(asc_ref.all, ptr);
	free(ptr);
	if (n == NULL) {
		ptr = xasprintf("#/definitions/%s", name);
		n = jsv_lookup(asc_ref.all, ptr);
		free(ptr);
	}
	if (n == NULL)
		n = asc_ref_experimental(name);
	return n;
}

/* The key an id is remembered under: its compact JSON text. */
char *
asc_id_key(const json_t *id)
{
	char *s = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);

	if (s == NULL)
		fail_msg("cannot encode a request id");
	return s;
}

/* Fail unless every top-level key of msg is one of the allowed ones. */
static void
asc_only_keys(const json_t *msg, const char *const *allowed, const char *kind, const char *raw)
{
	const char *k;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)msg, k, v)
	{
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(k, allowed[i]) == 0)
				break;
		if (allowed[i] == NULL)
			fail_msg("%s with unexpected key \"%s\": %s", kind, k, asc_show(raw));
	}
}

/* Check an error answer; the id may be null only for a line that had no usable id. */
static void
asc_check_error(json_t *sent, const json_t *msg, const char *raw)
{
	static const char *const keys[] = {"id", "error", NULL};
	json_t *id = json_object_get(msg, "id"), *copy;
	json_int_t code;
	char *key;

	asc_only_keys(msg, keys, "error", raw);
	code = json_integer_value(json_object_get(json_object_get(msg, "error"), "code"));
	if (json_is_null(id)) {
		if (code != -32700 && code != -32600)
			fail_msg("error with id null must be -32700 or -32600: %s", asc_show(raw));
		if (!asc_ref.disabled) {
			/* Our documented difference: check the rest as if the id were usable. */
			copy = json_deep_copy(msg);
			json_object_set_new(copy, "id", json_integer(0));
			asc_validate(jsv_root(asc_ref.error), copy, "JSONRPCError", raw);
			json_decref(copy);
		}
		return;
	}
	if (!asc_ref.disabled)
		asc_validate(jsv_root(asc_ref.error), msg, "JSONRPCError", raw);
	key = asc_id_key(id);
	json_object_del(sent, key);
	free(key);
}

/* Check a result against the result type of the method sent with that id. */
static void
asc_check_result(json_t *sent, const json_t *msg, const char *raw)
{
	static const char *const keys[] = {"id", "result", NULL};
	const struct pmethod *m = NULL;
	const char *method;
	char *key, *what;

	asc_only_keys(msg, keys, "response", raw);
	if (!asc_ref.disabled)
		asc_validate(jsv_root(asc_ref.response), msg, "JSONRPCResponse", raw);
	key = asc_id_key(json_object_get(msg, "id"));
	method = json_string_value(json_object_get(sent, key));
	if (method != NULL)
		m = defs_method_find(method, PM_REQUEST);
	if (m != NULL && m->result != NULL && !asc_ref.disabled) {
		const struct jsv_node *node = asc_ref_result(m->result);

		what = xasprintf("%s (result of %s)", m->result, method);
		if (node == NULL && asc_ref.exp == NULL)
			asc_ref.unchecked_exp++; /* only the experimental bundle has it, and it is
						    absent */
		else
			asc_validate(node, json_object_get(msg, "result"), what, raw);
		free(what);
	}
	json_object_del(sent, key);
	free(key);
}

/* Check one parsed line from the daemon; fails the test on any violation. */
void
asc_check_message(json_t *sent, const json_t *msg, const char *raw)
{
	static const char *const notif_keys[] = {"method", "params", "emittedAtMs", NULL};
	static const char *const sreq_keys[] = {"id", "method", "params", NULL};
	json_t *method = json_object_get(msg, "method"), *id = json_object_get(msg, "id");

	asc_ref.unchecked += asc_ref.disabled;
	if (json_object_get(msg, "jsonrpc") != NULL)
		fail_msg("message carries \"jsonrpc\": %s", asc_show(raw));
	if (method != NULL) {
		if (!json_is_string(method))
			fail_msg("method is not a string: %s", asc_show(raw));
		if (id != NULL) {
			asc_only_keys(msg, sreq_keys, "server request", raw);
			if (!asc_ref.disabled)
				asc_validate(jsv_root(asc_ref.sreq), msg, "ServerRequest", raw);
			return;
		}
		asc_only_keys(msg, notif_keys, "notification", raw);
		if (!json_is_integer(json_object_get(msg, "emittedAtMs")))
			fail_msg("notification without an integer emittedAtMs: %s", asc_show(raw));
		if (!asc_ref.disabled)
			asc_validate(jsv_root(asc_ref.notif), msg, "ServerNotification", raw);
		return;
	}
	if (id == NULL)
		fail_msg("message with neither method nor id: %s", asc_show(raw));
	if (json_object_get(msg, "error") != NULL && json_object_get(msg, "result") == NULL)
		asc_check_error(sent, msg, raw);
	else if (json_object_get(msg, "result") != NULL && json_object_get(msg, "error") == NULL)
		asc_check_result(sent, msg, raw);
	else
		fail_msg("response needs exactly one of result and error: %s", asc_show(raw));
}

/* Assert msg is an error with this code whose message contains `part`. */
void
asc_assert_error(const json_t *msg, int code, const char *part)
{
	json_t *err = json_object_get(msg, "error");
	const char *text = json_string_value(json_object_get(err, "message"));
	char *s;

	if (err == NULL || json_integer_value(json_object_get(err, "code")) != code ||
		text == NULL || (part != NULL && strstr(text, part) == NULL)) {
		s = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
		fail_msg("expected error %d containing \"%s\", got %s", code,
			part != NULL ? part : "", s != NULL ? s : "nothing");
	}
}

/* Assert msg is a success response and return its result. */
json_t *
asc_assert_result(const json_t *msg)
{
	json_t *r = json_object_get(msg, "result");
	char *s;

	if (r == NULL) {
		s = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
		fail_msg("expected a result, got %s", s != NULL ? s : "nothing");
	}
	return r;
}

/* VmRSS of a process in KiB, or -1. */
long
asc_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

/* Open file descriptors of a process, or -1. */
int
asc_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Send a line and return the next message (the caller frees it); fails the test on timeout. */
json_t *
asc_roundtrip(struct asc *c, const char *line, int timeout_ms)
{
	json_t *m;

	assert_int_equal(asc_send_line(c, line), 0);
	if ((m = asc_next(c, timeout_ms)) == NULL)
		fail_msg("no answer to: %s", line);
	return m;
}

/* Assert an error with this code, exact message (NULL: any) and raw id text (NULL: null). */
void
asc_expect_error(const json_t *msg, int code, const char *message, const char *id_text)
{
	char *got;

	asc_assert_error(msg, code, NULL);
	if (message != NULL)
		assert_string_equal(json_string_value(json_object_get(
					    json_object_get(msg, "error"), "message")),
			message);
	got = json_dumps(json_object_get(msg, "id"), JSON_ENCODE_ANY | JSON_COMPACT);
	assert_string_equal(got, id_text != NULL ? id_text : "null");
	free(got);
}
