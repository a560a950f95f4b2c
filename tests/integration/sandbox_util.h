/*
 * Helpers shared by the sandbox integration tests (test_sandbox_fs.c, test_sandbox_sys.c): a
 * daemon after the handshake, command/exec params for `sh -c` under a policy given as JSON text
 * (single quotes for double quotes), the answer or error of a run, a run checked in one call,
 * and files on the host read back afterwards. The Makefile links this into every integration
 * binary, so every name here carries the sbt_ prefix (libcore's sandbox owns sbx_).
 */
#ifndef SANDBOX_UTIL_H
#define SANDBOX_UTIL_H

#include <jansson.h>

#include "harness.h"

#define SBT_REPLY 10000 /* ms for a sandboxed command that needs no waiting */

/* What a command/exec answered. */
struct sbt_out {
	int code;
	char *out, *err;
};

/* Free what an answer holds and clear it. */
void sbt_out_free(struct sbt_out *o);
/* A daemon after the handshake (experimentalApi on request), with extra environment. */
struct asc *sbt_daemon(int experimental, const char *const *env);
/* command/exec params: `sh -c script` in cwd, with extra fields (JSON text, may be NULL). */
json_t *sbt_sh(const char *cwd, const char *extra, const char *script);
/* Run params (stolen) to a success answer. */
void sbt_exec_ok(struct asc *c, json_t *params, struct sbt_out *o);
/* Run params (stolen); the error must have this code; its message (heap) is returned. */
char *sbt_exec_err(struct asc *c, json_t *params, int code);
/* Run a script and check its exit code and stdout (NULL: not checked). */
void sbt_expect(struct asc *c, const char *cwd, const char *extra, const char *script, int code,
	const char *stdout_);
/* A fresh directory inside the client's private one (heap path). */
char *sbt_mkdir_in(struct asc *c, const char *name);
/* Write a file. */
void sbt_put(const char *path, const char *text);
/* Assert a file holds text. */
void sbt_assert_file(const char *path, const char *text);
/* Whether dir/name exists (not following symlinks). */
int sbt_present(const char *dir, const char *name);
/* No protected placeholder (.git, .codex, .agents) left in dir. */
void sbt_assert_no_residue(const char *dir);

#endif
