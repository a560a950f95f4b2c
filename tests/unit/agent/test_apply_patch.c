/*
 * Tests for applying patches (server/agent/apply_patch_{plan,commit,path}.c): add, update,
 * move, delete, chunks, End of File, whitespace and punctuation tolerance, line endings;
 * a patch that does not apply, aims outside the writable roots or goes through a planted
 * symlink changes nothing on disk; a disk that changed since prepare is refused; a rename
 * that fails midway is rolled back (renameat is interposed to fail on demand); and the
 * fixture rollout's patch gives upstream's exact FileChange diff and model output.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/diff/diff.h"
#include "agent/patch/apply_patch.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

/* renameat, failing on the fail_rename-th call from now when set (1 = the next one). */
static int fail_rename;

int
renameat(int od, const char *o, int nd, const char *n)
{
	static int (*real)(int, const char *, int, const char *);

	if (real == NULL)
		real = (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
	if (fail_rename > 0 && --fail_rename == 0) {
		errno = EIO;
		return -1;
	}
	return real(od, o, nd, n);
}

static char *root; /* a fresh directory per test; the workspace is root/ws */

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int
setup(void **state)
{
	char tmpl[] = "/tmp/apply_patch_test.XXXXXX";

	(void)state;
	root = xstrdup(mkdtemp(tmpl));
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
	return 0;
}

/* root/<rel> (heap). */
static char *
at(const char *rel)
{
	return xasprintf("%s/%s", root, rel);
}

static void
put(const char *rel, const char *content)
{
	char *p = at(rel), *slash;
	FILE *f;

	for (slash = strchr(p + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(p, 0755);
		*slash = '/';
	}
	assert_non_null(f = fopen(p, "wb"));
	fwrite(content, 1, strlen(content), f);
	fclose(f);
	free(p);
}

/* The content of root/<rel>, or NULL when it does not exist. */
static char *
get(const char *rel)
{
	char *p = at(rel), *s;
	struct buf b;
	FILE *f = fopen(p, "rb");
	int c;

	free(p);
	if (f == NULL)
		return NULL;
	buf_init(&b, 1 << 24);
	while ((c = fgetc(f)) != EOF)
		buf_addc(&b, (char)c);
	fclose(f);
	s = buf_steal(&b, NULL);
	return s;
}

static void
expect(const char *rel, const char *content)
{
	char *s = get(rel);

	if (content == NULL) {
		if (s != NULL)
			fail_msg("%s should not exist, holds '%s'", rel, s);
		return;
	}
	if (s == NULL)
		fail_msg("%s does not exist", rel);
	if (strcmp(s, content) != 0)
		fail_msg("%s: '%s', want '%s'", rel, s, content);
	free(s);
}

/* No file of ours left behind in dir (temporaries and backups). */
static void
expect_clean(const char *rel)
{
	char *p = at(rel);
	DIR *d = opendir(p);
	struct dirent *e;
	char *ours = xasprintf(".apply_patch-%ld-", (long)getpid());

	free(p);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, ours, strlen(ours)) == 0)
			fail_msg("left behind: %s/%s", rel, e->d_name);
	free(ours);
	closedir(d);
}

/* root/<rel> does not exist at all (a directory made for the patch was removed). */
static void
expect_gone(const char *rel)
{
	struct stat st;
	char *p = at(rel);

	if (lstat(p, &st) == 0)
		fail_msg("%s still exists", rel);
	free(p);
}

/* Apply text with the workspace root/ws as cwd; returns the error, *res on success. */
static int
run(const char *text, const struct apply_patch_confine *c, struct apply_patch_result **res,
	char **cause)
{
	struct patch *p = NULL;
	char *cwd = at("ws");
	int r;

	mkdir(cwd, 0755);
	*res = NULL;
	*cause = NULL;
	if ((r = apply_patch_parse(text, strlen(text), &p, cause)) == 0)
		r = apply_patch_apply(p, cwd, c, res, cause);
	apply_patch_free(p);
	free(cwd);
	return r;
}

/* Apply, expecting success; returns the summary (heap). */
static char *
ok(const char *text, const struct apply_patch_confine *c)
{
	struct apply_patch_result *res;
	char *cause, *s;
	int r = run(text, c, &res, &cause);

	if (r != 0)
		fail_msg("apply failed (%d): %s", r, cause);
	s = apply_patch_summary(res);
	apply_patch_result_free(res);
	return s;
}

/* Apply, expecting failure r; returns the message (heap). */
static char *
bad(const char *text, const struct apply_patch_confine *c, int want)
{
	struct apply_patch_result *res;
	char *cause;
	int r = run(text, c, &res, &cause);

	if (r != want)
		fail_msg("apply returned %d, want %d (%s)", r, want, cause ? cause : "");
	assert_null(res);
	assert_non_null(cause);
	return cause;
}

#define P(body) "*** Begin Patch\n" body "*** End Patch"

static void
test_add_update_move_delete(void **state)
{
	char *s, *want;

	(void)state;
	put("ws/modify.txt", "line1\nline2\n");
	put("ws/delete.txt", "obsolete\n");
	put("ws/old/name.txt", "from\n");
	s = ok(P("*** Add File: nested/new.txt\n+created\n"
		 "*** Delete File: delete.txt\n"
		 "*** Update File: modify.txt\n@@\n-line2\n+changed\n"
		 "*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-from\n+to\n"),
		NULL);
	want = "Success. Updated the following files:\nA nested/new.txt\nM modify.txt\n"
	       "M renamed/dir/name.txt\nD delete.txt\n";
	assert_string_equal(s, want);
	free(s);
	expect("ws/nested/new.txt", "created\n");
	expect("ws/delete.txt", NULL);
	expect("ws/modify.txt", "line1\nchanged\n");
	expect("ws/old/name.txt", NULL);
	expect("ws/renamed/dir/name.txt", "to\n");
	expect_clean("ws");
	expect_clean("ws/renamed/dir");
}

static void
test_changes_and_diffs(void **state)
{
	struct apply_patch_result *res;
	char *cause, *path;

	(void)state;
	put("ws/multi.txt", "foo\nbar\nbaz\nqux\n");
	put("ws/src.txt", "line\n");
	assert_int_equal(run(P("*** Update File: multi.txt\n@@\n foo\n-bar\n+BAR\n@@\n baz\n-qux\n+"
			       "QUX\n*** Update File: src.txt\n*** Move to: dst.txt\n@@\n-line\n+"
			       "line2\n*** Delete File: dst.txt\n"),
				 NULL, &res, &cause),
		0);
	assert_int_equal(res->nchanges, 3);
	path = at("ws/multi.txt");
	assert_string_equal(res->changes[0].path, path);
	free(path);
	assert_int_equal(res->changes[0].kind, APPLY_PATCH_UPDATE);
	assert_null(res->changes[0].move_path);
	assert_string_equal(
		res->changes[0].diff, "@@ -1,4 +1,4 @@\n foo\n-bar\n+BAR\n baz\n-qux\n+QUX\n");
	path = at("ws/dst.txt");
	assert_string_equal(res->changes[1].move_path, path);
	assert_non_null(strstr(res->changes[1].diff, "@@ -1 +1 @@\n-line\n+line2\n\n\nMoved to: "));
	assert_string_equal(strstr(res->changes[1].diff, "Moved to: ") + 10, path);
	/* The delete sees the moved file's new content (hunks apply in order). */
	assert_int_equal(res->changes[2].kind, APPLY_PATCH_DELETE);
	assert_string_equal(res->changes[2].diff, "line2\n");
	free(path);
	apply_patch_result_free(res);
	expect("ws/multi.txt", "foo\nBAR\nbaz\nQUX\n");
	expect("ws/src.txt", NULL);
	expect("ws/dst.txt", NULL);
}

static void
test_eof_whitespace_and_endings(void **state)
{
	char *s;

	(void)state;
	put("ws/tail.txt", "a\nb\na\nb\n");
	put("ws/ws.txt", "foo   \n\tbar\t\nbaz\n");
	put("ws/dash.txt", "x \xe2\x80\x93 y\n\xe2\x80\x9cq\xe2\x80\x9d\n");
	put("ws/crlf.txt", "one\r\ntwo\r\nthree");
	put("ws/nonl.txt", "no newline");
	put("ws/blank.txt", "a\n\n");
	s = ok(P("*** Update File: tail.txt\n@@\n-a\n+A\n b\n*** End of File\n"
		 "*** Update File: ws.txt\n@@\n-foo\n-bar\n+FOO\n"
		 "*** Update File: dash.txt\n@@\n-x - y\n \"q\"\n+z\n"
		 "*** Update File: crlf.txt\n@@\n-two\n+TWO\n+2b\n"
		 "*** Update File: nonl.txt\n@@\n no newline\n+next\n"
		 "*** Update File: blank.txt\n@@\n+end\n"),
		NULL);
	free(s);
	/* End of File: the match is the last "a b", not the first. */
	expect("ws/tail.txt", "a\nb\nA\nb\n");
	expect("ws/ws.txt", "FOO\nbaz\n");
	/* Matched lines are replaced by the patch's own text, context lines too (upstream). */
	expect("ws/dash.txt", "\"q\"\nz\n");
	/* Each line keeps its ending; new lines take the file's; the end gets one. */
	expect("ws/crlf.txt", "one\r\nTWO\r\n2b\r\nthree\r\n");
	expect("ws/nonl.txt", "no newline\nnext\n");
	/* A pure addition goes before a final empty line, which stays. */
	expect("ws/blank.txt", "a\nend\n\n");
}

static void
test_add_overwrites_and_same_file_twice(void **state)
{
	char *s;

	(void)state;
	put("ws/dup.txt", "before\n");
	put("ws/self.txt", "keep\n");
	s = ok(P("*** Add File: dup.txt\n+after\n"
		 "*** Add File: .apply_patch-1-0.tmp\n+a user file named like our temporaries\n"
		 "*** Add File: twice.txt\n+one\n"
		 "*** Update File: twice.txt\n@@\n one\n+two\n"
		 "*** Update File: self.txt\n*** Move to: self.txt\n@@\n-keep\n+kept\n"),
		NULL);
	assert_string_equal(s,
		"Success. Updated the following files:\nA dup.txt\nA .apply_patch-1-0.tmp\n"
		"A twice.txt\nM twice.txt\nM self.txt\n");
	free(s);
	expect("ws/.apply_patch-1-0.tmp", "a user file named like our temporaries\n");
	expect("ws/dup.txt", "after\n");
	expect("ws/twice.txt", "one\ntwo\n");
	/* Upstream deletes a file moved onto itself; it is updated here. */
	expect("ws/self.txt", "kept\n");
}

static void
test_failures_change_nothing(void **state)
{
	char *m, *want, *abs;

	(void)state;
	put("ws/modify.txt", "line1\nline2\n");
	put("ws/keep.txt", "keep\n");
	abs = at("ws/modify.txt");
	/* A hunk that does not apply, after hunks that would: nothing written. */
	m = bad(P("*** Add File: created.txt\n+x\n*** Delete File: keep.txt\n"
		  "*** Update File: modify.txt\n@@\n-missing\n+x\n"),
		NULL, -EINVAL);
	want = xasprintf("Failed to find expected lines in %s:\nmissing", abs);
	assert_string_equal(m, want);
	free(m), free(want);
	m = bad(P("*** Update File: modify.txt\n@@ nowhere\n-line1\n"), NULL, -EINVAL);
	want = xasprintf("Failed to find context 'nowhere' in %s", abs);
	assert_string_equal(m, want);
	free(m), free(want), free(abs);
	expect("ws/created.txt", NULL);
	expect("ws/keep.txt", "keep\n");
	expect("ws/modify.txt", "line1\nline2\n");
	/* Missing files, a directory, an empty patch. */
	abs = at("ws/nope.txt");
	m = bad(P("*** Delete File: nope.txt\n"), NULL, -EINVAL);
	want = xasprintf("Failed to read %s: No such file or directory (os error 2)", abs);
	assert_string_equal(m, want);
	free(m), free(want);
	m = bad(P("*** Update File: nope.txt\n@@\n-a\n"), NULL, -EINVAL);
	want = xasprintf(
		"Failed to read file to update %s: No such file or directory (os error 2)", abs);
	assert_string_equal(m, want);
	free(m), free(want), free(abs);
	put("ws/dir/f", "x\n");
	abs = at("ws/dir");
	m = bad(P("*** Delete File: dir\n"), NULL, -EINVAL);
	want = xasprintf("Failed to read %s: Is a directory (os error 21)", abs);
	assert_string_equal(m, want);
	free(m), free(want);
	m = bad(P("*** Add File: dir\n+x\n"), NULL, -EINVAL);
	want = xasprintf("Failed to write file %s: Is a directory (os error 21)", abs);
	assert_string_equal(m, want);
	free(m), free(want), free(abs);
	m = bad(P(""), NULL, -EINVAL);
	assert_string_equal(m, "No files were modified.");
	free(m);
	/* Not UTF-8: cannot be updated, can be deleted. */
	put("ws/bin.dat", "\xff\xfe\n");
	m = bad(P("*** Update File: bin.dat\n@@\n-x\n"), NULL, -EINVAL);
	assert_non_null(strstr(m, "stream did not contain valid UTF-8"));
	free(m);
	free(ok(P("*** Delete File: bin.dat\n"), NULL));
	expect("ws/bin.dat", NULL);
	expect_clean("ws");
}

static void
test_confinement(void **state)
{
	const char *w[1], *ro[1];
	struct apply_patch_confine c = {0};
	char *ws = at("ws"), *out = at("outside"), *link, *m, *s;

	(void)state;
	w[0] = ws;
	c.writable = w;
	c.nwritable = 1;
	c.protect_dirs = 1;
	put("outside/target.txt", "secret\n");
	put("ws/in.txt", "in\n");
	put("ws/.git/config", "cfg\n");
	/* Outside by a relative path or an absolute one. */
	m = bad(P("*** Add File: ../outside/new.txt\n+x\n"), &c, -EACCES);
	assert_non_null(strstr(m, "writing outside of the writable roots: "));
	free(m);
	s = xasprintf(P("*** Update File: %s/target.txt\n@@\n-secret\n+stolen\n"), out);
	free(bad(s, &c, -EACCES));
	free(s);
	/* A symlink planted in the workspace: to a directory, to a file. */
	link = at("ws/link");
	assert_int_equal(symlink(out, link), 0);
	free(link);
	link = at("ws/filelink");
	s = xasprintf("%s/target.txt", out);
	assert_int_equal(symlink(s, link), 0);
	free(s);
	free(link);
	free(bad(P("*** Add File: link/evil.txt\n+x\n"), &c, -EACCES));
	free(bad(P("*** Update File: filelink\n@@\n-secret\n+stolen\n"), &c, -EACCES));
	/* A refused path anywhere fails the whole patch. */
	free(bad(P("*** Add File: fine.txt\n+x\n*** Add File: link/evil.txt\n+x\n"), &c, -EACCES));
	expect("ws/fine.txt", NULL);
	expect("outside/evil.txt", NULL);
	expect("outside/target.txt", "secret\n");
	/* Read-only inside the root: .git (protect_dirs) and a listed path. */
	m = bad(P("*** Update File: .git/config\n@@\n-cfg\n+x\n"), &c, -EACCES);
	assert_non_null(strstr(m, "is read-only (inside "));
	free(m);
	ro[0] = "sub/locked";
	s = at("ws/sub/locked");
	ro[0] = s;
	c.readonly = ro;
	c.nreadonly = 1;
	free(bad(P("*** Add File: sub/locked/x\n+x\n"), &c, -EACCES));
	free(ok(P("*** Add File: sub/open/x\n+x\n"), &c));
	/* Removing the link itself is inside the workspace: allowed, the target stays. */
	free(ok(P("*** Delete File: filelink\n*** Update File: in.txt\n@@\n-in\n+IN\n"), &c));
	expect("outside/target.txt", "secret\n");
	expect("ws/in.txt", "IN\n");
	expect("ws/.git/config", "cfg\n");
	free(s);
	free(ws);
	free(out);
}

/* A callback confinement that refuses one name. */
static int
deny_cb(void *arg, const char *path, enum apply_patch_op op, char **cause)
{
	(void)arg;
	if (strstr(path, "forbidden") == NULL)
		return 0;
	*cause = xasprintf("no %s of %s", op == APPLY_PATCH_REMOVE ? "removal" : "write", path);
	return -1;
}

static void
test_confine_callback(void **state)
{
	struct apply_patch_confine c = {.check_cb = deny_cb};
	char *m;

	(void)state;
	put("ws/forbidden.txt", "x\n");
	m = bad(P("*** Delete File: forbidden.txt\n"), &c, -EACCES);
	assert_true(strncmp(m, "no removal of /", 15) == 0);
	free(m);
	m = apply_patch_failure_text(-EACCES, "no write");
	assert_string_equal(m, "patch rejected: no write");
	free(m);
	free(ok(P("*** Add File: allowed.txt\n+x\n"), &c));
	expect("ws/forbidden.txt", "x\n");
}

static void
test_stale_disk_is_refused(void **state)
{
	struct apply_patch_result *res;
	struct patch *p;
	const char *t = P("*** Update File: a.txt\n@@\n-one\n+two\n");
	char *cause = NULL, *cwd = at("ws");

	(void)state;
	put("ws/a.txt", "one\n");
	assert_int_equal(apply_patch_parse(t, strlen(t), &p, &cause), 0);
	assert_int_equal(apply_patch_prepare(p, cwd, NULL, &res, &cause), 0);
	put("ws/a.txt", "changed meanwhile\n");
	assert_int_equal(apply_patch_commit(res, &cause), -ESTALE);
	assert_non_null(strstr(cause, "changed on disk since the patch was checked"));
	free(cause);
	expect("ws/a.txt", "changed meanwhile\n");
	apply_patch_result_free(res);
	apply_patch_free(p);
	free(cwd);
}

static void
test_rename_failure_rolls_back(void **state)
{
	struct apply_patch_result *res;
	char *cause;
	int k;

	(void)state;
	for (k = 1; k <= 4; k++) {
		put("ws/a.txt", "a\n");
		put("ws/c.txt", "c\n");
		/* Renames: a.txt in place, new/b.txt, c.txt away; fail the k-th. */
		fail_rename = k;
		assert_int_equal(run(P("*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: "
				       "new/b.txt\n+b\n*** Delete File: c.txt\n"),
					 NULL, &res, &cause),
			k <= 3 ? -EIO : 0);
		fail_rename = 0;
		if (k <= 3) {
			assert_non_null(strstr(cause, "Input/output error (os error 5)"));
			expect("ws/a.txt", "a\n");
			expect("ws/new/b.txt", NULL);
			expect("ws/c.txt", "c\n");
			expect_gone("ws/new");
			free(cause);
		} else {
			expect("ws/a.txt", "A\n");
			expect("ws/new/b.txt", "b\n");
			expect("ws/c.txt", NULL);
			apply_patch_result_free(res);
		}
		expect_clean("ws");
	}
}

static void
test_mode_kept(void **state)
{
	struct stat st;
	char *p = at("ws/run.sh");

	(void)state;
	put("ws/run.sh", "echo a\n");
	chmod(p, 0750);
	free(ok(P("*** Update File: run.sh\n@@\n-echo a\n+echo b\n"), NULL));
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	free(p);
}

/* The fixture rollout: exec_command "apply_patch <<'EOF' ... EOF" adding hello.txt. */
static void
test_fixture_rollout_patch(void **state)
{
	const char *cmd =
		"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+hi from a "
		"patch\n*** End Patch\nEOF\n";
	struct apply_patch_result *res;
	struct diff_turn *turn;
	struct patch *p;
	struct buf d;
	char *cause = NULL, *cwd = at("ws"), *path = at("ws/hello.txt"), *s, *o;
	int empty;

	(void)state;
	mkdir(cwd, 0755);
	assert_int_equal(apply_patch_intercept_script(cmd, &p, &cause), APPLY_PATCH_BODY);
	assert_int_equal(apply_patch_prepare(p, cwd, NULL, &res, &cause), 0);
	assert_int_equal(res->nchanges, 1);
	assert_string_equal(res->changes[0].path, path);
	assert_int_equal(res->changes[0].kind, APPLY_PATCH_ADD);
	assert_string_equal(res->changes[0].diff, "hi from a patch\n"); /* upstream's exactly */
	assert_int_equal(apply_patch_commit(res, &cause), 0);
	expect("ws/hello.txt", "hi from a patch\n");
	s = apply_patch_summary(res);
	assert_string_equal(s, "Success. Updated the following files:\nA hello.txt\n");
	o = apply_patch_exec_output(0, 3, s);
	/* The inner part of the rollout's function_call_output. */
	assert_string_equal(o,
		"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the "
		"following files:\nA hello.txt\n");
	free(o);
	o = apply_patch_exec_output(1, 1250, "x\n");
	assert_string_equal(o, "Exit code: 1\nWall time: 1.3 seconds\nOutput:\nx\n");
	free(o);
	turn = diff_turn_new(cwd, 1 << 20);
	assert_int_equal(apply_patch_track(res, turn), 0);
	buf_init(&d, 1 << 20);
	assert_int_equal(diff_turn_unified(turn, &d, &empty), 0);
	assert_string_equal(buf_str(&d),
		"diff --git a/hello.txt b/hello.txt\nnew file mode 100644\n"
		"index 0000000000000000000000000000000000000000.."
		"da9f0d1703c12475880f49f51ffe9a77e68268c8\n--- /dev/null\n"
		"+++ b/hello.txt\n@@ -0,0 +1 @@\n+hi from a patch\n");
	buf_free(&d);
	diff_turn_free(turn);
	assert_int_equal(apply_patch_commit(res, &cause), -EALREADY);
	free(cause);
	free(s);
	apply_patch_result_free(res);
	apply_patch_free(p);
	free(cwd);
	free(path);
	s = apply_patch_failure_text(-EINVAL, "invalid patch: x");
	assert_string_equal(s, "apply_patch verification failed: invalid patch: x");
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_add_update_move_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changes_and_diffs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eof_whitespace_and_endings, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_add_overwrites_and_same_file_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failures_change_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_confinement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_confine_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_disk_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename_failure_rolls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mode_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fixture_rollout_patch, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
