/*
 * Shell snapshots, as upstream 0.169 takes them: once per thread, the user's login shell
 * (`bash -lc`, which reads /etc/profile, ~/.profile and ~/.bashrc) prints what it set up, and
 * that text is kept in $CODEX_HOME/shell_snapshots/<thread-id>.<nanos>.sh. A later tool call
 * of the form [shell, -lc, script] then runs as a non-login `bash -c` that sources the file
 * and execs [shell, -c, script]: the profile's cost is paid once per thread, not per call.
 *
 * Lifecycle (shell_snapshot.c), upstream's: taken at thread start on the exec engine (never
 * blocking the loop; begun SHELL_SNAPSHOT_DEFER later, or when a turn starts); a call that comes
 * before it is ready runs `bash -lc` as before; written as <id>.tmp-<nanos>, checked by sourcing it
 * with `set -e` in a fresh shell, then renamed; refreshed when the thread's cwd changes (the old
 * file stays in use until the new one is ready or failed); removed when the thread is unloaded and
 * when the daemon exits; files a dead daemon left are swept days later (shell_snapshot_sweep.c).
 *
 * The text (shell_snapshot_text.c): "# Snapshot file", `unalias -a`, shopt, functions,
 * "# setopts N" and `set -o` lines, "# aliases N" and aliases, "# exports (native
 * declarations)" and one `declare -x` per exported variable but PWD and OLDPWD. Sourcing it
 * and exec'ing a new shell keeps what survives an exec: the exported environment.
 */
#ifndef SHELL_SNAPSHOT_H
#define SHELL_SNAPSHOT_H

#include <stddef.h>
#include <time.h>

#include <ev.h>
#include <jansson.h>

#include "protocol/buf.h"

struct shell_words;
struct shell_snapshot;

#define SHELL_SNAPSHOT_DIR	 "shell_snapshots"
#define SHELL_SNAPSHOT_TIMEOUT	 10.0	    /* seconds for the login shell, and for the check */
#define SHELL_SNAPSHOT_MAX	 (1u << 20) /* bytes of capture output kept, at most */
#define SHELL_SNAPSHOT_RUNNING	 2	    /* captures at once in the daemon; others wait */
#define SHELL_SNAPSHOT_DEFER	 0.03	    /* seconds from thread start to the capture */
#define SHELL_SNAPSHOT_STALE_AGE (3 * 24 * 3600) /* seconds: upstream's retention */

/* What a snapshot is taken with (everything copied). */
struct shell_snapshot_opts {
	struct ev_loop *loop;
	const char *codex_home;	      /* the file goes to <codex_home>/shell_snapshots/ */
	const char *thread_id;	      /* its name's first part */
	const char *cwd;	      /* the login shell runs here; calls elsewhere do not use it */
	const char *shell;	      /* the login shell and the wrapper's shell (/bin/bash) */
	const json_t *sandbox_policy; /* the capture runs under the thread's policy */
};

/*
 * Start taking a snapshot (asynchronously). prev (stolen, may be NULL) is the thread's
 * current snapshot: still used until this one is ready or failed, then freed (its file
 * removed). Returns the new snapshot; it is never NULL (a failed one just has no file).
 */
struct shell_snapshot *shell_snapshot_start(
	const struct shell_snapshot_opts *o, struct shell_snapshot *prev);
/* Start the captures that wait now (a turn began), as far as SHELL_SNAPSHOT_RUNNING allows. */
void shell_snapshot_hurry(void);
/* Kill a capture still running, remove the files; accepts NULL. */
void shell_snapshot_free(struct shell_snapshot *s);
/* The cwd it was taken for (or is being taken for). */
const char *shell_snapshot_cwd(const struct shell_snapshot *s);
/* The ready file that serves a call in cwd, or NULL (not ready, failed, another cwd). */
const char *shell_snapshot_path(const struct shell_snapshot *s, const char *cwd);

/*
 * If argv is [shell, -lc, script, args...] and s serves cwd: the argv that runs it through the
 * snapshot instead, [snapshot shell, -c, wrapper], into out (empty on entry); keep[] (NULL
 * ended) are the variables the call's environment sets on purpose: they keep their values
 * whatever the file says. *envp is the call's environment. When nothing is kept, the shell is
 * the snapshot's and *envp the daemon's own, the wrapper's work is known in advance (the
 * check recorded the environment its exec hands on): out is then [shell, -c, script, args...]
 * and *envp that environment (borrowed from s, valid while s lives), one shell started
 * instead of two. 0 when out was filled, -1 when argv runs as it is.
 */
int shell_snapshot_wrap(const struct shell_snapshot *s, const char *cwd, const char *const *argv,
	size_t argc, const char *const *keep, char *const **envp, struct shell_words *out);

/*
 * shell_snapshot_sweep.c: remove the stale files of <codex_home>/shell_snapshots (files
 * SHELL_SNAPSHOT_STALE_AGE old whose thread has no rollout written since then); the number
 * removed. _start runs it on a detached thread (the first snapshot of a daemon does).
 */
int shell_snapshot_sweep(const char *codex_home, time_t now);
void shell_snapshot_sweep_start(const char *codex_home);

/* shell_snapshot_text.c: the script the login shell runs (bash). */
extern const char shell_snapshot_capture_script[];
/*
 * The file's text from the capture's output (out, n bytes; the profile may print before the
 * marker): appended to file. 0, or -1 when the output is not a capture's.
 */
int shell_snapshot_text(const char *out, size_t n, struct buf *file);
/*
 * The check's script: source path (set -e: a file that fails is no snapshot), then print the
 * environment an exec from there hands on (NUL-separated), when /usr/bin/env is there.
 */
char *shell_snapshot_check_script(const char *path);
/*
 * The environment a wrapper's exec of shell hands on, from the check's output (n bytes), as
 * a NULL-ended array in one allocation (free it alone), `_` set as bash sets it for shell;
 * NULL when the output is not a whole dump or SHELLOPTS is exported (the check's `set -e`
 * would show in it).
 */
char **shell_snapshot_env(const char *out, size_t n, const char *shell);
/* The wrapper script: source path, keep keep[], exec argv as [argv0, -c, script, args]. */
char *shell_snapshot_wrapper(
	const char *path, const char *const *argv, size_t argc, const char *const *keep);

#endif
