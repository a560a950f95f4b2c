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
#include <unistd.h>

#include "account/login_cli.h"
#include "account/login_status.h"
#include "api/api.h"
#include "config/config.h"
#include "config/features.h"
#include "daemon.h"
#include "io/log.h"
#include "mockmodel/mockmodel.h"
#include "protocol/defs/defs.h"
#include "config/home.h"
#include "sandbox/sandbox.h"
#include "config/digest.h"
#include "transport/ws_auth.h"
#include "transport/ws_listen.h"
#include "transport/ws_proxy.h"
#include "protocol/version.h"
#include "protocol/xmalloc.h"
#include "protocol/gen/schema.h"
#include "protocol/gen/py.h"
#include "protocol/gen/ts.h"

static const char usage[] =
	"usage: app-server [app-server] [OPTIONS]\n"
	"       app-server login status\n"
	"       app-server login [--device-auth]  (sign in with ChatGPT)\n"
	"       app-server login --with-api-key   (the key on stdin)\n"
	"       app-server logout\n"
	"       app-server debug models [--bundled]\n"
	"       app-server mock-model [--listen HOST:PORT] [--script FILE] [--record FILE]\n"
	"                             [--port-file FILE]\n"
	"       app-server generate-json-schema --out DIR\n"
	"       app-server generate-ts --out DIR\n"
	"       app-server generate-python --out DIR\n"
	"       app-server sandbox [--policy JSON | --profile JSON] [--cwd DIR] -- CMD [ARG]...\n"
	"       app-server sandbox --check\n"
	"       app-server proxy [--sock PATH]\n"
	"       app-server --help | --version\n"
	"\n"
	"Serves the Codex app-server JSON-RPC protocol (v2) on stdin/stdout, one JSON\n"
	"message per line. Logs go to stderr; set APP_SERVER_LOG=error|warn|info|debug|trace.\n"
	"Options (upstream's `codex app-server` options; before or after `app-server`):\n"
	"  -c, --config <key=value>    override a config.toml key (value parsed as TOML, else a string)\n"
	"      --enable <FEATURE>      same as -c features.<FEATURE>=true (upstream's feature names)\n"
	"      --disable <FEATURE>     same as -c features.<FEATURE>=false\n"
	"      --strict-config         refuse to start when config.toml does not load\n"
	"      --print-startup-config  check the configuration, print it as JSON, and exit\n"
	"      --startup-client-info <JSON>  with --print-startup-config: the client's ClientInfo\n"
	"      --startup-sign-out      with --print-startup-config: accepted, nothing to sign out\n"
	"      --cloud-skills-snapshot <PATH>  accepted (the file must be readable); no cloud skills\n"
	"      --code-mode-host <URL>  accepted and unused: there is no code mode\n"
	"      --dangerously-bypass-hook-trust  run enabled hooks without their trust (upstream's)\n"
	"      --listen <URL>          stdio:// (the default; --stdio is the same), ws://IP:PORT\n"
	"                              (loopback unless --ws-auth), unix:///PATH or unix://\n"
	"      --analytics-default-enabled  accepted and does nothing: no analytics are sent\n"
	"      --ws-auth, --ws-token-file, --ws-token-sha256, --ws-shared-secret-file, --ws-issuer,\n"
	"      --ws-audience, --ws-max-clock-skew-seconds  WebSocket auth, as upstream's\n"
	"      --max-line-bytes <N>    longest input line (K/M/G suffixes; default 64M)\n"
	"      --max-inflight <N>      requests awaiting an answer before -32001\n"
	"  -h, --help                  this text;  -V, --version  upstream's version, then ours\n";

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

/* What the serving command line asked for besides the daemon's own options. */
struct main_cli {
	int print_startup, strict, stdio, sign_out;
	const char *listen, *client_info, *unknown_feature;
};

/*
 * The value of option `name` at argv[*i] ("--name value" or "--name=value"), advancing *i
 * past it; NULL when argv[*i] is not that option. A missing value is reported as upstream's
 * (clap's) and ends the program with 2.
 */
static const char *
main_value(int argc, char **argv, int *i, const char *name, const char *meta)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (strcmp(argv[*i], name) != 0)
		return NULL;
	if (*i + 1 >= argc) {
		fprintf(stderr,
			"error: a value is required for '%s %s' but none was supplied\n\n"
			"For more information, try '--help'.\n",
			name, meta);
		exit(2);
	}
	return argv[++*i];
}

/* --enable / --disable: -c features.<name>=<on>, for the feature names upstream knows. */
static int
main_feature(struct main_cli *cli, const char *name, int on)
{
	char *kv, *cause = NULL;
	int r = 0;

	if (!config_feature_known(name)) {
		if (cli->unknown_feature == NULL)
			cli->unknown_feature = name;
		return 0;
	}
	kv = xasprintf("features.%s=%s", name, on ? "true" : "false");
	if (config_add_override(kv, &cause) != 0) {
		fprintf(stderr, "app-server: %s\n", cause);
		free(cause);
		r = -1;
	}
	free(kv);
	return r;
}

/*
 * --listen: stdio:// (the default), ws://IP:PORT and unix:///PATH (daemon_ws.c), or off;
 * a URL upstream would not take is refused in its (clap's) words.
 */
static int
main_listen(const char *url)
{
	char *cause = NULL;
	int loopback;

	if (strcmp(url, "stdio://") == 0 || strcmp(url, "off") == 0 || strcmp(url, "unix://") == 0)
		return 0;
	if (strncmp(url, "unix://", 7) == 0 || strncmp(url, "ws://", 5) == 0) {
		if (ws_listen_check(url, &loopback, &cause) == 0)
			return 0;
		fprintf(stderr,
			"error: invalid value '%s' for '--listen <URL>': %s\n\n"
			"For more information, try '--help'.\n",
			url, cause);
		free(cause);
		return -1;
	}
	fprintf(stderr,
		"error: invalid value '%s' for '--listen <URL>': unsupported --listen URL `%s`; "
		"expected `stdio://`, `unix://`, `unix://PATH`, `ws://IP:PORT`, or `off`\n\n"
		"For more information, try '--help'.\n",
		url, url);
	return -1;
}

/* After the options: what --listen asks for, as upstream refuses it; 0 or the exit status. */
static int
main_listen_check(const char *url, int authed)
{
	char *cause = NULL;
	int loopback = 1;

	if (url == NULL || strcmp(url, "stdio://") == 0)
		return 0;
	if (strcmp(url, "off") == 0) {
		fputs("Error: no transport configured; use --listen or enable remote control\n",
			stderr);
		return 1;
	}
	(void)ws_listen_check(url, &loopback, &cause);
	free(cause);
	if (!loopback && !authed) {
		/* as upstream: a listener others can reach needs --ws-auth */
		fprintf(stderr,
			"Error: refusing to start non-loopback websocket listener %s without auth; "
			"configure `--ws-auth capability-token` or `--ws-auth signed-bearer-token`\n",
			url + 5);
		return 1;
	}
	return 0;
}

/*
 * --print-startup-config: upstream's answer for a configuration that loads (we read no
 * requirements.toml, so none), or its configLoad error; the exit status.
 */
static int
main_print_startup(void)
{
	char *cause = NULL, *msg;
	struct config *c = config_load(&cause);
	const char *err = c != NULL ? config_error(c) : cause;

	if (err == NULL) {
		printf("{\"appServerVersion\":\"%s\",\"configRequirements\":"
		       "{\"supportsIndependentSpeedModes\":true,\"requirements\":null}}\n",
			APP_SERVER_COMPAT_VERSION);
		config_free(c);
		return 0;
	}
	msg = xasprintf("failed to load configuration: %s", err);
	json_t *doc = json_pack("{s:{s:i, s:{s:s, s:n, s:n, s:n, s:s}, s:s}}", "error", "code",
		-32600, "data", "reason", "configLoad", "filePath", "line", "column", "detail", err,
		"message", msg);
	char *text = json_dumps(doc, JSON_COMPACT);

	puts(text != NULL ? text : "");
	fputs("Error: startup configuration unavailable\n", stderr);
	free(text);
	json_decref(doc);
	free(msg);
	free(cause);
	config_free(c);
	return 1;
}

/* The checks upstream makes once every argument was read; 0, or the exit status. */
static int
main_cli_check(const struct main_cli *cli)
{
	const char *needs = cli->client_info != NULL ? "--startup-client-info <STARTUP_CLIENT_INFO>"
		: cli->sign_out			     ? "--startup-sign-out"
						     : NULL;
	json_t *info;
	json_error_t je;

	if (cli->stdio && cli->listen != NULL) {
		fputs("error: the argument '--stdio' cannot be used with '--listen <URL>'\n",
			stderr);
		return 2;
	}
	if (needs != NULL && !cli->print_startup) {
		fprintf(stderr,
			"error: the following required arguments were not provided:\n"
			"  --print-startup-config\n\nUsage: app-server --print-startup-config %s\n",
			needs);
		return 2;
	}
	if (cli->client_info != NULL) {
		info = json_loads(cli->client_info, 0, &je);
		if (!json_is_object(info) || !json_is_string(json_object_get(info, "name")) ||
			!json_is_string(json_object_get(info, "version"))) {
			fprintf(stderr,
				"error: invalid value '%s' for '--startup-client-info "
				"<STARTUP_CLIENT_INFO>': expected a ClientInfo object {name, "
				"version}\n",
				cli->client_info);
			json_decref(info);
			return 2;
		}
		json_decref(info);
	}
	if (cli->unknown_feature != NULL) {
		fprintf(stderr, "Error: Unknown feature flag: %s\n", cli->unknown_feature);
		return 1;
	}
	return 0;
}

/* --strict-config: a config.toml (or -c) that does not load stops the start; the status. */
static int
main_strict(void)
{
	char *cause = NULL;
	struct config *c = config_load(&cause);
	const char *err = c != NULL ? config_error(c) : cause;
	int r = 0;

	if (err != NULL) {
		fprintf(stderr, "Error: %s\n", err);
		r = 1;
	}
	free(cause);
	config_free(c);
	return r;
}

/* The --ws-* option argv[i] starts with (its name), or NULL. */
static const char *
main_ws_option(const char *arg)
{
	static const char *const ws[] = {"--ws-auth", "--ws-token-file", "--ws-token-sha256",
		"--ws-shared-secret-file", "--ws-issuer", "--ws-audience",
		"--ws-max-clock-skew-seconds"};

	for (size_t k = 0; k < nitems(ws); k++)
		if (strncmp(arg, ws[k], strlen(ws[k])) == 0 &&
			(arg[strlen(ws[k])] == '\0' || arg[strlen(ws[k])] == '='))
			return ws[k];
	return NULL;
}

/* The control socket upstream's bare `unix://` and `proxy` use (malloc'd). */
static char *
main_control_socket(const char *home)
{
	return xasprintf("%s/app-server-control/app-server-control.sock", home);
}

/*
 * `proxy [--sock PATH]` (upstream's flag; --socket too): stdio bytes to the daemon's socket.
 * Upstream's -c/--enable/--disable are accepted: the daemon, not the proxy, reads config.
 */
static int
main_proxy(int argc, char **argv, const char *home)
{
	char *def = main_control_socket(home);
	const char *path = def, *v;
	int r;

	for (int i = 1; i < argc; i++) {
		if ((v = main_value(argc, argv, &i, "--sock", "<SOCKET_PATH>")) != NULL ||
			(v = main_value(argc, argv, &i, "--socket", "<SOCKET_PATH>")) != NULL)
			path = v;
		else if (main_value(argc, argv, &i, "-c", "<key=value>") == NULL &&
			main_value(argc, argv, &i, "--config", "<key=value>") == NULL &&
			main_value(argc, argv, &i, "--enable", "<FEATURE>") == NULL &&
			main_value(argc, argv, &i, "--disable", "<FEATURE>") == NULL) {
			fprintf(stderr, "app-server proxy: unknown argument %s\n", argv[i]);
			free(def);
			return 2;
		}
	}
	r = ws_proxy_main(path);
	free(def);
	return r;
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
	struct main_cli cli = {0};
	struct ws_auth_args ws_args = {0};
	struct ws_auth_crypto crypto = {digest_sha256, digest_hmac_sha256};
	struct ws_auth auth = {0};
	char *listen_url = NULL;
	const char *out = NULL, *v, *ws;
	char *home;
	int i = 1, r;

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
	if (argc > i && strcmp(argv[i], "sandbox") == 0) {
		free(home);
		return sandbox_cli_main(argc - i, argv + i);
	}
	if (argc > i && strcmp(argv[i], "proxy") == 0) {
		r = main_proxy(argc - i, argv + i, home);
		free(home);
		return r;
	}
	/* Upstream's options may come before or after `app-server`, and before a subcommand. */
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 ||
			strcmp(argv[i], "help") == 0) {
			fputs(usage, stdout);
			r = 0;
			goto out;
		} else if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
			/* upstream's form first: clients take the first x.y.z and gate on it */
			printf("codex-cli %s (app-server %s)\n", APP_SERVER_COMPAT_VERSION,
				APP_SERVER_VERSION);
			r = 0;
			goto out;
		} else if (strcmp(argv[i], "app-server") == 0) {
			/* upstream's subcommand, when options came first */
		} else if (strcmp(argv[i], "login") == 0) {
			if (argc == i + 2 && strcmp(argv[i + 1], "status") == 0)
				r = login_status_main(home, stderr);
			else if (argc == i + 2 && strcmp(argv[i + 1], "--with-api-key") == 0)
				r = login_cli_api_key(home, stdin, stderr);
			else if (argc == i + 1)
				r = login_cli_chatgpt(0, stdout, stderr);
			else if (argc == i + 2 && strcmp(argv[i + 1], "--device-auth") == 0)
				r = login_cli_chatgpt(1, stdout, stderr);
			else {
				fprintf(stderr,
					"app-server: only `login`, `login status`, `login "
					"--device-auth` and `login --with-api-key` are supported\n");
				r = 2;
			}
			goto out;
		} else if (strcmp(argv[i], "logout") == 0) {
			r = login_cli_logout(home, stderr);
			goto out;
		} else if (strcmp(argv[i], "debug") == 0) {
			if (argc < i + 2 || strcmp(argv[i + 1], "models") != 0) {
				fprintf(stderr, "app-server: only `debug models` is supported\n");
				r = 2;
			} else
				r = debug_models_main(argc - i - 1, argv + i + 1);
			goto out;
		} else if ((v = main_value(argc, argv, &i, "--listen", "<URL>")) != NULL) {
			if (cli.listen != NULL) {
				fputs("error: the argument '--listen <URL>' cannot be used multiple "
				      "times\n\nFor more information, try '--help'.\n",
					stderr);
				r = 2;
				goto out;
			}
			cli.listen = v;
			if (main_listen(v) != 0) {
				r = 2;
				goto out;
			}
		} else if (strcmp(argv[i], "--stdio") == 0) {
			cli.stdio = 1;
		} else if (strcmp(argv[i], "--analytics-default-enabled") == 0) {
			/* Upstream's VS Code extension passes it; we send no analytics at all. */
		} else if (strcmp(argv[i], "--strict-config") == 0) {
			cli.strict = 1;
		} else if (strcmp(argv[i], "--print-startup-config") == 0) {
			cli.print_startup = 1;
		} else if (strcmp(argv[i], "--startup-sign-out") == 0) {
			/* there is no managed auth path to sign out of */
			cli.sign_out = 1;
		} else if ((v = main_value(argc, argv, &i, "--startup-client-info",
				    "<STARTUP_CLIENT_INFO>")) != NULL) {
			cli.client_info = v;
		} else if ((v = main_value(argc, argv, &i, "--enable", "<FEATURE>")) != NULL) {
			if (main_feature(&cli, v, 1) != 0) {
				r = 2;
				goto out;
			}
		} else if ((v = main_value(argc, argv, &i, "--disable", "<FEATURE>")) != NULL) {
			if (main_feature(&cli, v, 0) != 0) {
				r = 2;
				goto out;
			}
		} else if ((v = main_value(argc, argv, &i, "--cloud-skills-snapshot", "<PATH>")) !=
			NULL) {
			/* no cloud skills here; upstream fails on a file it cannot read, as we do
			 */
			if (access(v, R_OK) != 0) {
				fprintf(stderr,
					"Error: cannot read skill snapshot: %s (os error %d)\n",
					strerror(errno), errno);
				r = 1;
				goto out;
			}
		} else if (strcmp(argv[i], "--dangerously-bypass-hook-trust") == 0) {
			/* upstream's top-level flag: the session flag bypass_hook_trust */
			char *cause = NULL;

			if (config_add_override("bypass_hook_trust=true", &cause) != 0) {
				fprintf(stderr, "app-server: %s\n", cause);
				free(cause);
				r = 2;
				goto out;
			}
		} else if (main_value(argc, argv, &i, "--code-mode-host", "<URL>") != NULL) {
			/* no code mode: the host is never contacted */
		} else if ((ws = main_ws_option(argv[i])) != NULL) {
			char *cause = NULL;

			v = main_value(argc, argv, &i, ws, "<VALUE>");
			if (ws_auth_arg(&ws_args, ws, v, &cause) != 0) {
				fprintf(stderr, "%s\n\nFor more information, try '--help'.\n",
					cause);
				free(cause);
				r = 2;
				goto out;
			}
		} else if ((v = main_value(argc, argv, &i, "--max-inflight", "<N>")) != NULL) {
			if (main_size(v, &opts.max_inflight) != 0) {
				fprintf(stderr, "app-server: bad --max-inflight %s\n", v);
				r = 2;
				goto out;
			}
		} else if ((v = main_value(argc, argv, &i, "--config", "<key=value>")) != NULL ||
			(v = main_value(argc, argv, &i, "-c", "<key=value>")) != NULL) {
			char *cause = NULL;

			if (config_add_override(v, &cause) != 0) {
				fprintf(stderr, "app-server: %s\n", cause);
				free(cause);
				r = 2;
				goto out;
			}
		} else if ((v = main_value(argc, argv, &i, "--max-line-bytes", "<N>")) != NULL) {
			if (main_size(v, &opts.max_line) != 0) {
				fprintf(stderr, "app-server: bad --max-line-bytes %s\n", v);
				r = 2;
				goto out;
			}
		} else {
			fprintf(stderr, "app-server: unknown argument %s\n%s", argv[i], usage);
			r = 2;
			goto out;
		}
	}
	if ((r = main_cli_check(&cli)) != 0)
		goto out;
	if (cli.print_startup) {
		r = main_print_startup();
		goto out;
	}
	if (cli.strict && (r = main_strict()) != 0)
		goto out;
	{
		char *cause = NULL;

		if (ws_auth_setup(&auth, &ws_args, &crypto, &cause) != 0) {
			fprintf(stderr, "Error: %s\n", cause);
			free(cause);
			r = 1;
			goto out;
		}
	}
	if ((r = main_listen_check(cli.listen, auth.mode != WS_AUTH_NONE)) != 0)
		goto out;
	opts.ws_auth = &auth;
	if (cli.listen != NULL && strcmp(cli.listen, "unix://") == 0) {
		/* upstream's default control socket: the one `proxy` connects to */
		char *sock = main_control_socket(home);

		listen_url = xasprintf("unix://%s", sock);
		free(sock);
		opts.listen = listen_url;
	} else if (cli.listen != NULL && strcmp(cli.listen, "stdio://") != 0)
		opts.listen = cli.listen;
	free(home);
	r = daemon_run(&opts);
	free(listen_url);
	ws_auth_clear(&auth);
	return r;
out:
	ws_auth_clear(&auth);
	free(home);
	return r;
}
