/*
 * A WebSocket daemon for the integration tests (ws_util.c): started on a URL (port 0: any),
 * stopped with SIGTERM; and the process helpers they share. Every name carries the wst_
 * prefix: the Makefile links this file into every integration binary.
 */
#ifndef WS_UTIL_H
#define WS_UTIL_H

#include <sys/stat.h>
#include <sys/types.h>

#include <ftw.h>

struct wsd {
	pid_t pid;
	char dir[64];
	char *err, *out;
	char url[256];
	const char *token; /* the bearer token clients send (--ws-auth) */
	char *config;	   /* CODEX_HOME/config.toml written before the start, or NULL */
};

/* Monotonic seconds. */
double wst_now(void);
/* A file's first MiB as a string (heap; empty when it cannot be read). */
char *wst_slurp(const char *path);
/* Run argv with stdin /dev/null, stdout and stderr into files, extra env; the child's pid. */
pid_t wst_spawn(char *const argv[], const char *out, const char *err, char *const env[]);
/* Wait for pid up to secs; its status, or -1 (then it is killed). */
int wst_wait(pid_t pid, double secs);
/* The binary under test ($APP_SERVER_BIN, else build/app-server). */
const char *wst_bin(void);
/* Start a daemon listening on url, with an extra argument and env; wait for its banner. */
void wst_start(struct wsd *d, const char *url, const char *extra_arg, char *const env[]);
/* SIGTERM: it must exit 0 within 15 s, nothing on stdout; its folder is removed. */
void wst_stop(struct wsd *d);
/* nftw's callback removing each entry (FTW_DEPTH). */
int wst_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw);

#endif
