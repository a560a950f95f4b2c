/*
 * `login` (the browser sign-in) and `login --device-auth` from the command line, each on a
 * loop of its own, with upstream 0.169's words and exit statuses (observed; the device prompt
 * read from its login crate, since 0.169's CLI has no issuer override to record it against a
 * mock):
 *   login                 stderr "Starting local login server on http://localhost:PORT.\nIf
 *                         your browser did not open, navigate to this URL to authenticate:
 *                         \n\nURL\n\nOn a remote or headless machine? Use `codex login
 *                         --device-auth` instead."; the end: "Successfully logged in", 0, or
 *                         "Error logging in: <why>" (a /cancel: "Login cancelled"), 1
 *   login --device-auth   stdout the welcome with the verification URL and the user code
 *                         (ANSI colours, as upstream prints them); stderr "Successfully logged
 *                         in", 0, or "Error logging in: <why>", 1
 * The issuer is CODEX_APP_SERVER_LOGIN_ISSUER when set (ours here: upstream's CLI always asks
 * auth.openai.com), the callback port APP_SERVER_LOGIN_PORT (tests). No browser is opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/http.h"
#include "login_cli.h"
#include "login_device.h"
#include "login_flow.h"
#include "protocol/version.h"

#define ANSI_BLUE  "\x1b[94m"
#define ANSI_GRAY  "\x1b[90m"
#define ANSI_RESET "\x1b[0m"

struct cli_login {
	struct ev_loop *loop;
	FILE *out, *err;
	int status; /* the exit status, once known */
	int done;
};

/* The loopback port in the authorize URL's redirect_uri (for upstream's first line). */
static int
cli_port(const char *url)
{
	const char *p = strstr(url, "127.0.0.1%3A");

	return p != NULL ? (int)strtol(p + 12, NULL, 10) : 0;
}

static void
cli_end(struct cli_login *l, const char *error)
{
	if (error == NULL)
		fprintf(l->err, "Successfully logged in\n");
	else
		fprintf(l->err, "Error logging in: %s\n", error);
	l->status = error == NULL ? 0 : 1;
	l->done = 1;
	ev_break(l->loop, EVBREAK_ALL);
}

static void
cli_browser_started(void *arg, const char *auth_url, const char *error)
{
	struct cli_login *l = arg;

	if (error != NULL) {
		cli_end(l, error);
		return;
	}
	fprintf(l->err,
		"Starting local login server on http://localhost:%d.\nIf your browser did not "
		"open, navigate to this URL to authenticate:\n\n%s\n\nOn a remote or headless "
		"machine? Use `codex login --device-auth` instead.\n",
		cli_port(auth_url), auth_url);
	fflush(l->err);
}

static void
cli_done(void *arg, const char *error)
{
	cli_end(arg, error);
}

static void
cli_device_started(void *arg, const char *url, const char *code, const char *error, int not_found)
{
	struct cli_login *l = arg;

	(void)not_found;
	if (error != NULL) {
		cli_end(l, error);
		return;
	}
	fprintf(l->out,
		"\nWelcome to Codex [v" ANSI_GRAY "%s" ANSI_RESET "]\n" ANSI_GRAY
		"OpenAI's command-line coding agent" ANSI_RESET "\n\nFollow these steps to sign in "
		"with ChatGPT using device code authorization:\n\n1. Open this link in your "
		"browser and sign in to your account\n   " ANSI_BLUE "%s" ANSI_RESET "\n\n2. Enter "
		"this one-time code " ANSI_GRAY "(expires in 15 minutes)" ANSI_RESET
		"\n   " ANSI_BLUE "%s" ANSI_RESET "\n\n" ANSI_GRAY
		"Device codes are a common phishing target. Never "
		"share this code." ANSI_RESET "\n\n",
		APP_SERVER_COMPAT_VERSION, url, code);
	fflush(l->out);
}

int
login_cli_chatgpt(int device, FILE *out, FILE *err)
{
	static const struct login_flow_cbs flow_cbs = {cli_browser_started, cli_done};
	static const struct login_device_cbs device_cbs = {cli_device_started, cli_done};
	struct login_flow_opts o = {NULL, "codex_cli_rs", -1};
	struct cli_login l = {.out = out, .err = err, .status = 1};
	struct login_flow *f = NULL;
	struct login_device *d = NULL;
	struct http *h;

	if ((l.loop = ev_loop_new(EVFLAG_AUTO)) == NULL) {
		fprintf(err, "Error logging in: cannot create an event loop\n");
		return 1;
	}
	h = http_new(l.loop);
	if (device)
		d = login_device_start(l.loop, h, NULL, &device_cbs, &l);
	else
		f = login_flow_start(l.loop, h, &o, &flow_cbs, &l);
	while (!l.done && ev_run(l.loop, EVRUN_ONCE))
		;
	login_flow_free(f);
	login_device_free(d);
	http_free(h);
	ev_loop_destroy(l.loop);
	return l.status;
}
