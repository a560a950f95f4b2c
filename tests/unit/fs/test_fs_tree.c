/*
 * fs/remove and fs/copy on deep trees (server/fs/fs_tree.c, fs_tree_walk.c): any depth works
 * (past 256 levels, past PATH_MAX, past the fd limit), and a copy that fails leaves nothing
 * at its destination, neither a new folder nor entries made inside a folder that was there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <sys/resource.h>

#include "fs/fs.h"
#include "fs_test_util.h"

#define DEEP 3000 /* levels: 12 bytes each, far past PATH_MAX and a 1024-fd limit */

static char *dir;

static int
setup(void **state)
{
	dir = tu_mkdtemp();
	return 0;
}

static int
teardown(void **state)
{
	tu_rmtree(dir);
	free(dir);
	return 0;
}

/* Run op on a JSON text; 0 or the error (its message copied into msg). */
static int
run(fs_op_fn fn, char *msg, size_t cap, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	json_t *params, *result = NULL;
	struct fs_err err = {0};
	int r;

	va_start(ap, fmt);
	assert_true(vasprintf(&text, fmt, ap) > 0);
	va_end(ap);
	params = json_loads(text, 0, NULL);
	assert_non_null(params);
	r = fn(params, &result, &err);
	if (r < 0)
		snprintf(msg, cap, "%s", err.message ? err.message : "");
	else
		assert_non_null(result);
	json_decref(result);
	json_decref(params);
	fs_err_clear(&err);
	free(text);
	return r;
}

/* A chain of n folders level0000/level0001/... under path, a file "f<i>" in each; the last
 * folder also gets a symlink "ln" and, with fifo, a fifo "p" (which fs/copy refuses). */
static void
make_chain(const char *path, int n, int fifo)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%d", i);
		int f = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
		assert_true(f >= 0);
		assert_int_equal(write(f, name, strlen(name)), (ssize_t)strlen(name));
		close(f);
		snprintf(name, sizeof(name), "level%04d", i);
		assert_int_equal(mkdirat(fd, name, 0755), 0);
		int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(sub >= 0);
		close(fd);
		fd = sub;
	}
	assert_int_equal(symlinkat("../f0", fd, "ln"), 0);
	if (fifo)
		assert_int_equal(mkfifoat(fd, "p", 0644), 0);
	close(fd);
}

/* Check a chain made by make_chain (without its fifo) under path: every level and file. */
static void
check_chain(const char *path, int n)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char name[32], got[32], link[32];

	assert_true(fd >= 0);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		int f = openat(fd, name, O_RDONLY | O_CLOEXEC);
		assert_true(f >= 0);
		ssize_t k = read(f, got, sizeof(got) - 1);
		close(f);
		assert_true(k > 0);
		got[k] = '\0';
		assert_string_equal(got, name);
		snprintf(name, sizeof(name), "level%04d", i);
		int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		assert_true(sub >= 0);
		close(fd);
		fd = sub;
	}
	ssize_t k = readlinkat(fd, "ln", link, sizeof(link) - 1);
	assert_true(k > 0);
	link[k] = '\0';
	assert_string_equal(link, "../f0");
	close(fd);
}

/* The names in a folder, sorted and joined by spaces (heap). */
static char *
listing(const char *path)
{
	struct dirent **v;
	int n = scandir(path, &v, NULL, alphasort);
	char *out = xstrdup("");

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i]->d_name, ".") != 0 && strcmp(v[i]->d_name, "..") != 0) {
			char *o = xasprintf("%s%s%s", out, out[0] ? " " : "", v[i]->d_name);
			free(out);
			out = o;
		}
		free(v[i]);
	}
	free(v);
	return out;
}

/* A tree DEEP levels deep is copied whole and removed whole, with few fds to spare. */
static void
test_deep_copy_and_remove(void **state)
{
	char *src = tu_path(dir, "src"), *dst = tu_path(dir, "dst"), msg[256] = "";
	struct rlimit old, low = {256, 256};

	tu_mkdirs(src);
	make_chain(src, DEEP, 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	int r = run(fs_copy, msg, sizeof(msg),
		"{\"sourcePath\":\"%s\",\"destinationPath\":\"%s\",\"recursive\":true}", src, dst);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	if (r < 0)
		fail_msg("fs/copy: %s", msg);
	check_chain(dst, DEEP);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	r = run(fs_remove, msg, sizeof(msg), "{\"path\":\"%s\"}", dst);
	int r2 = run(fs_remove, msg, sizeof(msg), "{\"path\":\"%s\"}", src);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	if (r < 0 || r2 < 0)
		fail_msg("fs/remove: %s", msg);
	assert_int_equal(access(dst, F_OK), -1);
	assert_int_equal(access(src, F_OK), -1);
	free(src);
	free(dst);
}

/* A folder with many entries (several listing chunks) is removed and copied whole. */
static void
test_wide(void **state)
{
	char *src = tu_path(dir, "wide"), *dst = tu_path(dir, "wide2"), msg[256] = "";

	tu_mkdirs(src);
	for (int i = 0; i < 3000; i++) {
		char *p = tu_path(dir, "wide/a-rather-long-file-name-to-fill-chunks-%05d", i);
		tu_write(p, "x");
		free(p);
	}
	make_chain(src, 20, 0);
	if (run(fs_copy, msg, sizeof(msg),
		    "{\"sourcePath\":\"%s\",\"destinationPath\":\"%s\",\"recursive\":true}", src,
		    dst) < 0)
		fail_msg("fs/copy: %s", msg);
	char *a = listing(src), *b = listing(dst);
	assert_string_equal(a, b);
	free(a);
	free(b);
	check_chain(dst, 20);
	if (run(fs_remove, msg, sizeof(msg), "{\"path\":\"%s\"}", src) < 0)
		fail_msg("fs/remove: %s", msg);
	assert_int_equal(access(src, F_OK), -1);
	free(src);
	free(dst);
}

/* A copy that fails deep down leaves nothing: not the folders it made (parents included),
 * not what it made inside folders that were already there; what was there stays. */
static void
test_failed_copy_leaves_nothing(void **state)
{
	char *src = tu_path(dir, "src"), *msg = xmalloc(256);

	tu_mkdirs(src);
	make_chain(src, 400, 1);
	/* a new destination (and its missing parents) */
	assert_true(run(fs_copy, msg, 256,
			    "{\"sourcePath\":\"%s\",\"destinationPath\":\"%s/new/x/dst\","
			    "\"recursive\":true}",
			    src, dir) < 0);
	assert_string_equal(msg, "fs/copy only supports regular files, directories, and symlinks");
	char *p = tu_path(dir, "new");
	assert_int_equal(access(p, F_OK), -1);
	free(p);
	/* an existing destination, merged into: a file and a folder the copy also has */
	p = tu_path(dir, "have/level0000");
	tu_mkdirs(p);
	free(p);
	p = tu_path(dir, "have/keep");
	tu_write(p, "mine");
	free(p);
	p = tu_path(dir, "have/level0000/old");
	tu_write(p, "mine");
	free(p);
	assert_true(run(fs_copy, msg, 256,
			    "{\"sourcePath\":\"%s\",\"destinationPath\":\"%s/have\","
			    "\"recursive\":true}",
			    src, dir) < 0);
	p = tu_path(dir, "have");
	char *l = listing(p);
	assert_string_equal(l, "keep level0000");
	free(l);
	free(p);
	p = tu_path(dir, "have/level0000");
	l = listing(p);
	assert_string_equal(l, "old");
	free(l);
	free(p);
	free(src);
	free(msg);
}

/*
 * A single file whose copy fails half-way (a read error: /proc/self/mem is a regular file that
 * reads EIO at 0) leaves no file at a new destination, the old content at an existing one,
 * and no temporary name beside it.
 */
static void
test_failed_file_copy_leaves_nothing(void **state)
{
	char *msg = xmalloc(256), *p = tu_path(dir, "new"), *l;

	assert_true(
		run(fs_copy, msg, 256,
			"{\"sourcePath\":\"/proc/self/mem\",\"destinationPath\":\"%s\"}", p) < 0);
	assert_int_equal(access(p, F_OK), -1);
	free(p);
	p = tu_path(dir, "have");
	tu_write(p, "mine");
	assert_true(
		run(fs_copy, msg, 256,
			"{\"sourcePath\":\"/proc/self/mem\",\"destinationPath\":\"%s\"}", p) < 0);
	{
		char got[16] = "";
		int fd = open(p, O_RDONLY | O_CLOEXEC);

		assert_true(fd >= 0);
		assert_int_equal(read(fd, got, sizeof got - 1), 4);
		close(fd);
		assert_string_equal(got, "mine");
	}
	l = listing(dir);
	assert_string_equal(l, "have");
	free(l);
	free(p);
	free(msg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_deep_copy_and_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wide, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_copy_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_failed_file_copy_leaves_nothing, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
