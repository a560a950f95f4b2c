/*
 * app-client's subcommands. Each lives in its own file (cmd_<name>.c) and exports its table
 * entry; main.c collects them. A subcommand returns the process's exit status; it talks to the
 * daemon through conn.h and restores the terminal (tty.h) on every way out.
 */
#ifndef CLI_H
#define CLI_H

#define CLI_VERSION "0.1.0"
/* Exit status when the daemon is missing, dies, or refuses the request (as `docker run`). */
#define CLI_EXIT_DAEMON 125
/* Exit status when nothing to talk to is configured (no API key for a provider needing one). */
#define CLI_EXIT_CONFIG 78 /* EX_CONFIG */

struct cli_cmd {
	const char *name;
	int (*main)(int argc, char **argv); /* argv[0] is the subcommand's name */
	const char *usage;		    /* the synopsis lines, without "usage:" */
	const char *summary;
};

extern const struct cli_cmd cmd_exec_entry;
extern const struct cli_cmd cmd_chat_entry;
extern const struct cli_cmd cmd_threads_entry;

#endif
