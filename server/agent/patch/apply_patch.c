/*
 * apply_patch's outer layer (apply_patch.h): prepare + commit, and the texts the agent
 * sends back, worded as upstream words them:
 *   success  "Success. Updated the following files:\nA x\nM y\nD z\n" (adds, then updates
 *            by their destination, then deletes, each in patch order, paths as written);
 *   failure  "apply_patch verification failed: <why>" for a patch that does not parse or
 *            apply, "patch rejected: <why>" for a path that may not be written;
 *   as exec  "Exit code: N\nWall time: S seconds\nOutput:\n<output>" when the patch came
 *            through a shell command (upstream runs it as a process and formats it so).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "apply_patch_int.h"
#include "agent/diff/diff.h"
#include "protocol/buf.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"

int
apply_patch_commit(struct apply_patch_result *r, char **cause)
{
	char *ignored = NULL;
	int rc;

	if (cause == NULL)
		cause = &ignored;
	if (r->committed) {
		*cause = xstrdup("the patch was already applied");
		return -EALREADY;
	}
	if ((rc = ap_commit(r->plan, cause)) == 0)
		r->committed = 1;
	free(ignored);
	return rc;
}

int
apply_patch_apply(const struct patch *p, const char *cwd, const struct apply_patch_confine *confine,
	struct apply_patch_result **out, char **cause)
{
	int r;

	if ((r = apply_patch_prepare(p, cwd, confine, out, cause)) != 0)
		return r;
	if ((r = apply_patch_commit(*out, cause)) != 0) {
		apply_patch_result_free(*out);
		*out = NULL;
	}
	return r;
}

/* Order of changes: by path, bytewise; ties keep patch order. */
static int
apply_patch_cmp(const void *a, const void *b)
{
	const struct apply_patch_change *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c != 0 ? c : (x < y ? -1 : x > y);
}

void
apply_patch_sort_changes(struct apply_patch_result *r)
{
	qsort(r->changes, r->nchanges, sizeof(*r->changes), apply_patch_cmp);
}

char *
apply_patch_summary(const struct apply_patch_result *r)
{
	static const char tag[] = {'A', 'M', 'D'};
	static const enum apply_patch_kind order[] = {
		APPLY_PATCH_ADD, APPLY_PATCH_UPDATE, APPLY_PATCH_DELETE};
	struct buf b;
	size_t i, k, n;
	char *s, *fixed;

	buf_init(&b, (size_t)-1);
	buf_adds(&b, "Success. Updated the following files:\n");
	for (k = 0; k < 3; k++)
		for (i = 0; i < r->nchanges; i++)
			if (r->changes[i].kind == order[k])
				buf_printf(&b, "%c %s\n", tag[k], r->changes[i].shown);
	s = buf_steal(&b, &n);
	if (utf8_valid_prefix(s, n) == n)
		return s;
	fixed = utf8_lossy(s, n, &n);
	free(s);
	return fixed;
}

char *
apply_patch_failure_text(int err, const char *cause)
{
	return xasprintf("%s: %s",
		err == -EACCES ? "patch rejected" : "apply_patch verification failed",
		cause != NULL ? cause : "unknown error");
}

char *
apply_patch_exec_output(int exit_code, unsigned long duration_ms, const char *output)
{
	unsigned long tenths = (duration_ms + 50) / 100; /* Rust's round(): half away from 0 */

	if (tenths % 10 == 0)
		return xasprintf("Exit code: %d\nWall time: %lu seconds\nOutput:\n%s", exit_code,
			tenths / 10, output);
	return xasprintf("Exit code: %d\nWall time: %lu.%lu seconds\nOutput:\n%s", exit_code,
		tenths / 10, tenths % 10, output);
}

int
apply_patch_track(const struct apply_patch_result *r, struct diff_turn *t)
{
	const struct apply_patch_change *c;
	size_t i;
	int rc = 0;

	for (i = 0; i < r->nchanges && rc == 0; i++) {
		c = &r->changes[i];
		if (c->kind == APPLY_PATCH_ADD)
			rc = diff_turn_add(t, c->path, c->after.p, c->after.n,
				c->before.set ? c->before.p : NULL, c->before.n);
		else if (c->kind == APPLY_PATCH_DELETE)
			rc = diff_turn_delete(t, c->path, c->before.p, c->before.n);
		else
			rc = diff_turn_update(t, c->path, c->move_path, c->before.p, c->before.n,
				c->move_before.set ? c->move_before.p : NULL, c->move_before.n,
				c->after.p, c->after.n);
	}
	return rc;
}
