/*
 * app-client: a terminal client of app-server. It spawns the daemon as its child (or, with
 * --connect, reaches one listening on ws:// or unix://) and speaks the protocol; it never
 * reimplements the daemon's logic. Subcommands are assembled from their
 * files' table entries (cli.h): exec, chat and threads.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "conn.h"
#include "protocol/buf.h"

static const struct cli_cmd *const main_cmds[] = {
	&cmd_exec_entry, &cmd_chat_entry, &cmd_threads_entry, NULL};

/* Print every subcommand's synopsis. */
static void
main_usage(FILE *f)
{
	fputs("usage:", f);
	for (size_t i = 0; main_cmds[i] != NULL; i++)
		fprintf(f, "%s app-client %s\n", i == 0 ? "" : "      ", main_cmds[i]->usage);
	fputs("       app-client [--connect URL [--token-file FILE]] COMMAND ...\n", f);
	fputs("       app-client --help | --version\n\n", f);
	for (size_t i = 0; main_cmds[i] != NULL; i++)
		fprintf(f, "  %-8s %s\n", main_cmds[i]->name, main_cmds[i]->summary);
	fputs("\nThe daemon is $APP_SERVER_BIN, else app-server next to app-client, else app-server "
	      "on PATH.\n--connect URL ($APP_SERVER_URL): a daemon started with --listen "
	      "ws://HOST:PORT or\nunix:///PATH instead; --token-file FILE ($APP_SERVER_TOKEN: the "
	      "token itself): the bearer\ntoken its --ws-auth asks for.\n",
		f);
}

/* The token in a file, trimmed (as the daemon reads --ws-token-file); NULL with a message. */
static char *
main_token_file(const char *path)
{
	struct buf b;
	char chunk[4096], *tok = NULL;
	size_t start, end;
	ssize_t n;
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		fprintf(stderr, "app-client: --token-file %s: %s\n", path, strerror(errno));
		return NULL;
	}
	buf_init(&b, 64 << 10);
	while ((n = (ssize_t)fread(chunk, 1, sizeof chunk, f)) > 0)
		if (buf_add(&b, chunk, (size_t)n) != 0)
			break;
	fclose(f);
	for (start = 0; start < b.len && strchr(" \t\r\n", b.ptr[start]) != NULL; start++)
		;
	for (end = b.len; end > start && strchr(" \t\r\n", b.ptr[end - 1]) != NULL; end--)
		;
	if (end > start)
		tok = strndup(b.ptr + start, end - start);
	else
		fprintf(stderr, "app-client: --token-file %s: empty\n", path);
	buf_free(&b);
	return tok;
}

/* Dispatch to the subcommand named by argv[1]. */
int
main(int argc, char **argv)
{
	/* A write to a daemon that just died must be an error, not our death. */
	signal(SIGPIPE, SIG_IGN);
	srandom((unsigned)time(NULL) ^ (unsigned)getpid());
	const char *url = getenv("APP_SERVER_URL"), *token = getenv("APP_SERVER_TOKEN");
	char *file_token = NULL;
	int r = 2;

	/* The options before the command: where the daemon is. */
	while (argc > 2 &&
		(strcmp(argv[1], "--connect") == 0 || strcmp(argv[1], "--token-file") == 0)) {
		if (strcmp(argv[1], "--connect") == 0) {
			url = argv[2];
		} else {
			free(file_token);
			if ((token = file_token = main_token_file(argv[2])) == NULL)
				return 2;
		}
		argc -= 2, argv += 2;
	}
	if (url != NULL && *url != '\0')
		conn_set_target(url, token != NULL && *token != '\0' ? token : NULL);
	if (argc < 2 || strcmp(argv[1], "--connect") == 0 || strcmp(argv[1], "--token-file") == 0) {
		main_usage(stderr);
		free(file_token);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		main_usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("app-client %s\n", CLI_VERSION);
		return 0;
	}
	for (size_t i = 0; main_cmds[i] != NULL; i++)
		if (strcmp(argv[1], main_cmds[i]->name) == 0) {
			r = main_cmds[i]->main(argc - 1, argv + 1);
			free(file_token);
			return r;
		}
	fprintf(stderr, "app-client: unknown command %s\n", argv[1]);
	main_usage(stderr);
	free(file_token);
	return r;
}
