/*
 * app-server: command line. With no subcommand (or `app-server`, upstream's invocation) it
 * serves JSON-RPC on stdin/stdout; the other subcommands generate the schema, TypeScript
 * and Python types from the protocol tables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/config.h"
#include "daemon.h"
#include "io/log.h"
#include "mockmodel/mockmodel.h"
#include "protocol/defs/defs.h"
#include "config/home.h"
#include "sandbox/sandbox.h"
#include "protocol/version.h"
#include "protocol/xmalloc.h"
#include "protocol/gen/schema.h"
#include "protocol/gen/py.h"
#include "protocol/gen/ts.h"

static const char usage[] =
	"usage: app-server [app-server] [--listen stdio://] [--max-line-bytes N] [--max-inflight N]\n"
	"                  [--analytics-default-enabled] [-c key=value]...\n"
	"       app-server mock-model [--listen HOST:PORT] [--script FILE] [--record FILE]\n"
	"                             [--port-file FILE]\n"
	"       app-server generate-json-schema --out DIR\n"
	"       app-server generate-ts --out DIR\n"
	"       app-server generate-python --out DIR\n"
	"       app-server sandbox [--policy JSON | --profile JSON] [--cwd DIR] -- CMD [ARG]...\n"
	"       app-server sandbox --check\n"
	"       app-server --help | --version\n"
	"\n"
	"Serves the Codex app-server JSON-RPC protocol (v2) on stdin/stdout, one JSON\n"
	"message per line. Logs go to stderr; set APP_SERVER_LOG=error|warn|info|debug|trace.\n"
	"-c overrides a config.toml key (value parsed as TOML, else taken as a string).\n"
	"--analytics-default-enabled is accepted and does nothing: no analytics are sent.\n";

/* mkdir -p of the directory part of path. */
static int
main_mkdirs(const char *path)
{
	char *p = xstrdup(path), *s;
	int r = 0;

	for (s = p + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "app-server: mkdir %s: %s\n", p, strerror(errno));
			r = -1;
			break;
		}
		*s = '/';
	}
	free(p);
	return r;
}

/* Write text to dir/name, creating directories. */
static int
main_write(const char *dir, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f;
	int r = -1;

	if (main_mkdirs(path) != 0)
		goto out;
	if ((f = fopen(path, "we")) == NULL) {
		fprintf(stderr, "app-server: %s: %s\n", path, strerror(errno));
		goto out;
	}
	fputs(text, f);
	if (fclose(f) != 0) {
		fprintf(stderr, "app-server: %s: %s\n", path, strerror(errno));
		goto out;
	}
	r = 0;
out:
	free(path);
	return r;
}

static int
main_generate_schema(const char *dir)
{
	char *cause = NULL, *text, *line;
	json_t *files = schema_files(&cause), *doc;
	const char *name;
	int r = 0;

	if (files == NULL) {
		fprintf(stderr, "app-server: %s\n", cause);
		free(cause);
		return 1;
	}
	json_object_foreach(files, name, doc)
	{
		text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
		line = xasprintf("%s\n", text != NULL ? text : "");
		if (text == NULL || main_write(dir, name, line) != 0)
			r = 1;
		free(text);
		free(line);
	}
	json_decref(files);
	return r;
}

/* Write one generated source file (protocol.ts, protocol.py) from its renderer. */
static int
main_generate_one(const char *dir, const char *name, char *(*render)(char **cause))
{
	char *cause = NULL, *text = render(&cause);
	int r;

	if (text == NULL) {
		fprintf(stderr, "app-server: %s\n", cause);
		free(cause);
		return 1;
	}
	r = main_write(dir, name, text) != 0;
	free(text);
	return r;
}

/* Parse a byte count with an optional K/M/G suffix. */
static int
main_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || v == 0)
		return -1;
	switch (*end) {
	case 'K':
	case 'k':
		v <<= 10, end++;
		break;
	case 'M':
	case 'm':
		v <<= 20, end++;
		break;
	case 'G':
	case 'g':
		v <<= 30, end++;
		break;
	}
	if (*end != '\0')
		return -1;
	*out = (size_t)v;
	return 0;
}

int
main(int argc, char **argv)
{
	struct daemon_opts opts = {
		.max_line = 64 << 20,
		.out_high = 1 << 20,
		.out_low = 256 << 10,
		.max_inflight = 65536,
		.grace = 3.0,
	};
	const char *out = NULL;
	char *home;
	int i = 1;

	log_init();
	if (argc > 1 && strcmp(argv[1], "app-server") == 0)
		i++;
	if (argc > i &&
		(strcmp(argv[i], "generate-json-schema") == 0 ||
			strcmp(argv[i], "generate-ts") == 0 ||
			strcmp(argv[i], "generate-python") == 0)) {
		if (argc != i + 3 || strcmp(argv[i + 1], "--out") != 0) {
			fprintf(stderr, "app-server %s: --out DIR is required, and nothing else\n",
				argv[i]);
			fputs(usage, stderr);
			return 2;
		}
		out = argv[i + 2];
		if (strcmp(argv[i], "generate-ts") == 0)
			return main_generate_one(out, "protocol.ts", ts_render);
		if (strcmp(argv[i], "generate-python") == 0)
			return main_generate_one(out, "protocol.py", py_render);
		return main_generate_schema(out);
	}
	if (argc > i && strcmp(argv[i], "mock-model") == 0)
		return mockmodel_main(argc - i, argv + i);
	/* CODEX_HOME is read-only in every sandbox (docs/sandbox.md, protected paths). */
	home = home_path();
	sandbox_set_home(home);
	free(home);
	if (argc > i && strcmp(argv[i], "sandbox") == 0)
		return sandbox_cli_main(argc - i, argv + i);
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		} else if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
			printf("app-server %s (codex app-server protocol %s)\n", APP_SERVER_VERSION,
				APP_SERVER_COMPAT_VERSION);
			return 0;
		} else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
			if (strcmp(argv[++i], "stdio://") != 0) {
				fprintf(stderr,
					"app-server: only --listen stdio:// is supported\n");
				return 2;
			}
		} else if (strcmp(argv[i], "--analytics-default-enabled") == 0) {
			/* Upstream's VS Code extension passes it; we send no analytics at all. */
		} else if (strcmp(argv[i], "--max-inflight") == 0 && i + 1 < argc) {
			if (main_size(argv[++i], &opts.max_inflight) != 0) {
				fprintf(stderr, "app-server: bad --max-inflight %s\n", argv[i]);
				return 2;
			}
		} else if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) &&
			i + 1 < argc) {
			char *cause = NULL;

			if (config_add_override(argv[++i], &cause) != 0) {
				fprintf(stderr, "app-server: %s\n", cause);
				free(cause);
				return 2;
			}
		} else if (strcmp(argv[i], "--max-line-bytes") == 0 && i + 1 < argc) {
			if (main_size(argv[++i], &opts.max_line) != 0) {
				fprintf(stderr, "app-server: bad --max-line-bytes %s\n", argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "app-server: unknown argument %s\n%s", argv[i], usage);
			return 2;
		}
	}
	return daemon_run(&opts);
}
