/*
 * apply_patch: the Codex patch format, parsed, verified and applied as upstream's
 * codex-rs/apply-patch does (same grammar, leniencies, error wording and model-facing
 * texts), with three things upstream lacks:
 *   - all or nothing: every new content is computed and every path checked before the
 *     first write; writes go to temporary files beside their targets, then renames (moves
 *     and deletes last), with a rollback if a rename fails (docs/apply_patch.md);
 *   - confinement: every path written, moved or deleted is resolved through symlinks and
 *     checked against the caller's writable roots (or callback) before anything happens;
 *   - bounds on the patch, the files and the contents held (below).
 * The agent layer drives it in two steps so an approval can sit between them:
 * apply_patch_prepare (read, compute, check: the FileChange item and its diffs) and
 * apply_patch_commit (write). Both block on the disk: call them off the event loop.
 * Nothing here knows JSON-RPC; results are plain structs.
 */
#ifndef APPLY_PATCH_H
#define APPLY_PATCH_H

#include <stddef.h>

struct diff_turn;

#define APPLY_PATCH_MAX_TEXT   (8u << 20)   /* bytes of patch text */
#define APPLY_PATCH_MAX_FILES  1000	    /* file operations in one patch */
#define APPLY_PATCH_MAX_CHUNKS 20000	    /* @@ chunks in one patch */
#define APPLY_PATCH_MAX_FILE   (32u << 20)  /* bytes of one file read or written */
#define APPLY_PATCH_MAX_TOTAL  (256u << 20) /* bytes of all contents one patch holds */

/* A parsed patch (opaque). */
struct patch;

/*
 * Parse patch text as upstream does in its lenient mode: surrounding whitespace ignored, a
 * <<EOF / <<'EOF' / <<"EOF" heredoc wrapper stripped, markers matched after trimming.
 * 0, or -EINVAL with upstream's message in *cause ("invalid patch: ..." or
 * "invalid hunk at line N, ..."), or -E2BIG past a bound.
 */
int apply_patch_parse(const char *text, size_t len, struct patch **out, char **cause);
void apply_patch_free(struct patch *p);
/* The patch without its heredoc wrapper (lines joined by "\n"; borrowed). */
const char *apply_patch_text(const struct patch *p);
/* The file operations in the patch. */
size_t apply_patch_nfiles(const struct patch *p);
/* The directory a shell form cd'ed into ("cd sub && apply_patch <<EOF"), or NULL. */
const char *apply_patch_workdir(const struct patch *p);

/* What a command turned out to be. */
enum apply_patch_intercept {
	APPLY_PATCH_NOT,   /* not an apply_patch invocation: run it as a command */
	APPLY_PATCH_BODY,  /* a patch (*out) to verify and apply instead of running */
	APPLY_PATCH_ERROR, /* an apply_patch invocation that is wrong: *cause for the model */
};

/*
 * Recognise apply_patch in a command as upstream does: ["apply_patch"|"applypatch", patch],
 * or a shell (bash/zsh/sh -c|-lc, pwsh/powershell [-NoProfile] -Command, cmd /c) whose
 * whole script is `apply_patch <<'EOF' ... EOF`, optionally after `cd <dir> &&`. A bare
 * patch given as the command (or as the whole script) is an error, as upstream says.
 */
enum apply_patch_intercept apply_patch_intercept_argv(
	const char *const *argv, size_t argc, struct patch **out, char **cause);
/* The same for a script a shell runs with -lc (exec_command's cmd). */
enum apply_patch_intercept apply_patch_intercept_script(
	const char *script, struct patch **out, char **cause);

/* What is about to happen to a path. */
enum apply_patch_op {
	APPLY_PATCH_WRITE,  /* create or replace a file */
	APPLY_PATCH_REMOVE, /* delete a file (or a moved file's source) */
};

/*
 * Where a patch may write. Paths given to the check are absolute and free of symlinks
 * (resolved just before the check; the writes then walk the same directories refusing any
 * symlink, so a link planted in between cannot redirect them). With a callback, it alone
 * decides (0 allows; otherwise it may set *cause). Without one: a path is writable when it
 * is inside a writable root and not inside a read-only path; with protect_dirs, .git,
 * .codex and .agents at the top of each writable root are read-only too. Roots are
 * resolved through symlinks themselves. A NULL confinement allows everything.
 */
struct apply_patch_confine {
	int (*check_cb)(void *arg, const char *path, enum apply_patch_op op, char **cause);
	void *arg;
	const char *const *writable; /* absolute */
	size_t nwritable;
	const char *const *readonly; /* absolute */
	size_t nreadonly;
	int protect_dirs;
};

enum apply_patch_kind { APPLY_PATCH_ADD, APPLY_PATCH_DELETE, APPLY_PATCH_UPDATE };

/* A text that may be absent (set == 0). */
struct apply_patch_text {
	int set;
	char *p;
	size_t n;
};

/* One file operation of a verified patch, in patch order. */
struct apply_patch_change {
	enum apply_patch_kind kind;
	char *path;	 /* absolute: FileUpdateChange.path (a move's source) */
	char *move_path; /* absolute destination of a move, or NULL */
	char *diff;	 /* FileUpdateChange.diff: add/delete: the content; update: the unified
			    diff (1 line of context), then "\n\nMoved to: <dest>" for a move */
	char *shown;	 /* the path as the patch spelled it (the destination for a move) */
	struct apply_patch_text before;	     /* content before (add: what it replaced) */
	struct apply_patch_text after;	     /* content after (unset for a delete) */
	struct apply_patch_text move_before; /* what a move replaced at its destination */
};

struct apply_patch_plan;

struct apply_patch_result {
	char *cwd; /* the directory relative paths were resolved against */
	struct apply_patch_change *changes;
	size_t nchanges;
	int committed;
	struct apply_patch_plan *plan; /* what commit writes (internal) */
};

/*
 * Verify a patch against the disk without changing it: resolve paths against cwd (and the
 * patch's workdir), read, match every chunk, compute new contents and diffs, check every
 * path against the confinement. 0 with *out; -EINVAL (the patch does not apply, a file
 * cannot be read: upstream's message in *cause), -EACCES (a path is not writable), -E2BIG.
 */
int apply_patch_prepare(const struct patch *p, const char *cwd,
	const struct apply_patch_confine *confine, struct apply_patch_result **out, char **cause);
/*
 * Write a prepared patch: all of it or (barring a failed rollback) none of it. Fails with
 * -ESTALE when a file changed since apply_patch_prepare read it, else a negative errno and
 * "Failed to write file ...", nothing changed on disk.
 */
int apply_patch_commit(struct apply_patch_result *r, char **cause);
/* prepare + commit. */
int apply_patch_apply(const struct patch *p, const char *cwd,
	const struct apply_patch_confine *confine, struct apply_patch_result **out, char **cause);
void apply_patch_result_free(struct apply_patch_result *r);
/* The changes sorted by path, as upstream lists FileUpdateChange[] (in place). */
void apply_patch_sort_changes(struct apply_patch_result *r);

/* "Success. Updated the following files:\nA x\nM y\nD z\n" (adds, then updates, then deletes). */
char *apply_patch_summary(const struct apply_patch_result *r);
/*
 * What the model gets for a failure: "patch rejected: <cause>" for -EACCES, else
 * "apply_patch verification failed: <cause>" (upstream's wording for a patch that does not
 * parse or apply).
 */
char *apply_patch_failure_text(int err, const char *cause);
/*
 * An exec-style result as upstream formats apply_patch run as a command:
 * "Exit code: N\nWall time: S seconds\nOutput:\n<output>" (S rounded to 0.1 s, "0" not "0.0").
 */
char *apply_patch_exec_output(int exit_code, unsigned long duration_ms, const char *output);
/* Feed a committed result to the turn's diff tracker; 0 or -E2BIG. */
int apply_patch_track(const struct apply_patch_result *r, struct diff_turn *t);

#endif
