/*
 * Shared by the conformance tests (test_conformance.c: methods and definitions against the
 * upstream reference; test_conformance_instances.c: instances judged by four schemas): the
 * reference and our schemas, loaded and compiled once per binary by conformance_setup. A
 * header of static functions, included once per test binary.
 *
 * The reference is ../shared/reference/codex-app-server-schema, or
 * $APP_SERVER_REFERENCE_SCHEMA; APP_SERVER_NO_REFERENCE=1 skips the tests when it is absent.
 */
#ifndef CONFORMANCE_UTIL_H
#define CONFORMANCE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/defs/defs.h"
#include "protocol/gen/schema.h"
#include "protocol/jsonschema/jsonschema.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"

#define REF_DEFAULT "../shared/reference/codex-app-server-schema"
#define REF_BUNDLE  "codex_app_server_protocol.schemas.json"
#define INSTANCES   "tests/fixtures/conformance_instances.json"

/* Skip a test that needs the reference, saying so (tests/helpers/skip_note.h). */
#define CONF_SKIP(what)                                                                            \
	do {                                                                                       \
		skip_note(what, 1,                                                                 \
			skip_note_why(                                                             \
				"APP_SERVER_NO_REFERENCE_WHY", "APP_SERVER_NO_REFERENCE=1"));      \
		skip();                                                                            \
	} while (0)
/* More instances, one file per protocol area, merged into the table above. */
static const char *const more_instances[] = {"tests/fixtures/fs/conformance_instances.json",
	"tests/fixtures/thread/conformance_instances.json",
	"tests/fixtures/profiles/conformance_instances.json",
	"tests/fixtures/skills/conformance_instances.json",
	"tests/fixtures/clients/conformance_instances.json",
	"tests/fixtures/config/conformance_instances.json",
	"tests/fixtures/requirements/conformance_instances.json",
	"tests/fixtures/review/conformance_instances.json",
	"tests/fixtures/history/conformance_instances.json",
	"tests/fixtures/shellcmd/conformance_instances.json",
	"tests/fixtures/user_input/conformance_instances.json",
	"tests/fixtures/account/conformance_instances.json",
	"tests/fixtures/hooks/conformance_instances.json",
	"tests/fixtures/mcp/conformance_instances.json",
	"tests/fixtures/providers/conformance_instances.json",
	"tests/fixtures/sections/conformance_instances.json"};

/*
 * Methods upstream marks experimental (#[experimental]): its generated schema leaves them
 * out, so they and their own types are compared with nothing; their instances are judged by
 * our two schemas only.
 */
static const char *const experimental_methods[] = {
	"fuzzyFileSearch/sessionStart",
	"fuzzyFileSearch/sessionUpdate",
	"fuzzyFileSearch/sessionStop",
	"collaborationMode/list",
};

/* True for a method upstream keeps experimental. */
static inline int
is_experimental(const char *method)
{
	for (size_t i = 0; i < nitems(experimental_methods); i++)
		if (strcmp(experimental_methods[i], method) == 0)
			return 1;
	return 0;
}

/* The per-message file of a type: under its folder, or at the top when it has none. */
static inline char *
message_path(const char *dir, const char *type)
{
	return dir != NULL ? xasprintf("%s/%s.json", dir, type) : xasprintf("%s.json", type);
}

/* Everything compiled once for the whole group. */
static struct {
	int skip;
	char *dir;
	json_t *ref_doc; /* the upstream bundle with every definition */
	struct jsv *ours, *ref;
	json_t *files; /* our schema tree: {path: document} */
	json_t *insts; /* {type: {valid: [...], invalid: [...]}} */
	struct file_jsv {
		char *key; /* "ours:v2/X.json" or "ref:v2/X.json" */
		struct jsv *jsv;
	} cache[512];
	size_t ncache;
} g;

/* Load the reference and compile both sides. */
static int
conformance_setup(void **state)
{
	const char *dir = getenv("APP_SERVER_REFERENCE_SCHEMA"),
		   *no = getenv("APP_SERVER_NO_REFERENCE");
	char *path, *cause = NULL;
	json_error_t je;
	json_t *defs, *doc;
	struct stat st;

	if ((g.insts = json_load_file(INSTANCES, 0, &je)) == NULL) {
		fprintf(stderr, "%s: %s (line %d)\n", INSTANCES, je.text, je.line);
		return -1;
	}
	for (size_t i = 0; i < nitems(more_instances); i++) {
		json_t *more = json_load_file(more_instances[i], 0, &je);

		if (more == NULL) {
			fprintf(stderr, "%s: %s (line %d)\n", more_instances[i], je.text, je.line);
			return -1;
		}
		json_object_update_missing(g.insts, more);
		json_decref(more);
	}
	if (dir == NULL || *dir == '\0')
		dir = REF_DEFAULT;
	if (stat(dir, &st) != 0) {
		if (no != NULL && strcmp(no, "1") == 0) {
			g.skip = 1;
			return 0;
		}
		fprintf(stderr,
			"reference schema %s not found (APP_SERVER_REFERENCE_SCHEMA, or "
			"APP_SERVER_NO_REFERENCE=1 to skip)\n",
			dir);
		return -1;
	}
	g.dir = xstrdup(dir);
	path = xasprintf("%s/%s", dir, REF_BUNDLE);
	g.ref_doc = json_load_file(path, 0, &je);
	free(path);
	if (g.ref_doc == NULL || (g.ref = jsv_compile(g.ref_doc, &cause)) == NULL) {
		fprintf(stderr, "reference bundle: %s\n", cause != NULL ? cause : je.text);
		return -1;
	}
	if ((defs = schema_definitions(&cause)) == NULL) {
		fprintf(stderr, "schema_definitions: %s\n", cause);
		return -1;
	}
	doc = json_pack("{s:o}", "definitions", defs);
	g.ours = jsv_compile(doc, &cause);
	json_decref(doc);
	if (g.ours == NULL || (g.files = schema_files(&cause)) == NULL) {
		fprintf(stderr, "our schema: %s\n", cause);
		return -1;
	}
	return 0;
}

/* Free what conformance_setup built. */
static int
conformance_teardown(void **state)
{
	for (size_t i = 0; i < g.ncache; i++) {
		free(g.cache[i].key);
		jsv_free(g.cache[i].jsv);
	}
	jsv_free(g.ours);
	jsv_free(g.ref);
	json_decref(g.ref_doc);
	json_decref(g.files);
	json_decref(g.insts);
	free(g.dir);
	return 0;
}

/* The upstream definition of a name: under definitions/v2 when it is there, else top level. */
static inline json_t *
ref_def(const char *name, const char **where)
{
	json_t *defs = json_object_get(g.ref_doc, "definitions"), *d;

	if ((d = json_object_get(json_object_get(defs, "v2"), name)) != NULL) {
		*where = "#/definitions/v2/";
		return d;
	}
	*where = "#/definitions/";
	return json_object_get(defs, name);
}

/* The pmethods entry whose params or result is this type, or NULL. */
static inline const struct pmethod *
message_of(const char *type)
{
	const struct pmethod *m;

	for (m = pmethods; m->method != NULL; m++)
		if ((m->params != NULL && strcmp(m->params, type) == 0) ||
			(m->result != NULL && strcmp(m->result, type) == 0))
			return m;
	return NULL;
}

/* The root node of a per-message file, ours or upstream's, compiled once. */
static inline const struct jsv_node *
file_node(int ours, const char *relpath)
{
	char *key = xasprintf("%s:%s", ours ? "ours" : "ref", relpath), *cause = NULL, *path;
	json_t *doc;
	struct jsv *jsv;

	for (size_t i = 0; i < g.ncache; i++) {
		if (strcmp(g.cache[i].key, key) == 0) {
			free(key);
			return jsv_root(g.cache[i].jsv);
		}
	}
	if (ours) {
		doc = json_incref(json_object_get(g.files, relpath));
	} else {
		path = xasprintf("%s/%s", g.dir, relpath);
		doc = json_load_file(path, 0, NULL);
		free(path);
	}
	if (doc == NULL)
		fail_msg("no schema file %s", key);
	if ((jsv = jsv_compile(doc, &cause)) == NULL)
		fail_msg("%s does not compile: %s", key, cause);
	json_decref(doc);
	assert_true(g.ncache < nitems(g.cache));
	g.cache[g.ncache].key = key;
	g.cache[g.ncache].jsv = jsv;
	g.ncache++;
	return jsv_root(jsv);
}

#endif
