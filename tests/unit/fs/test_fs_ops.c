/*
 * fs operations (server/fs/fs_ops.c, fs_tree.c, fs_path.c): every method, its answers and its
 * errors in upstream's wording and codes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <sys/wait.h>

#include "fs/fs.h"
#include "protocol/base64.h"
#include "fs_test_util.h"

static char *dir;

/* Run op with params built from a JSON text; returns result (or NULL) and fills err. */
static json_t *
call(fs_op_fn fn, struct fs_err *err, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;
	va_start(ap, fmt);
	assert_true(vasprintf(&text, fmt, ap) > 0);
	va_end(ap);
	json_t *params = json_loads(text, 0, NULL);
	assert_non_null(params);
	json_t *result = NULL;
	fs_err_clear(err);
	int r = fn(params, &result, err);
	if (r == 0)
		assert_non_null(result);
	else
		assert_null(result);
	json_decref(params);
	free(text);
	return result;
}

/* Assert an error code and message. */
static void
expect_err(fs_op_fn fn, int code, const char *msg, const char *fmt, const char *a, const char *b)
{
	struct fs_err err = {0};
	json_t *res = call(fn, &err, fmt, a, b);
	assert_null(res);
	assert_int_equal(err.code, code);
	assert_string_equal(err.message, msg);
	fs_err_clear(&err);
}

/* Assert success and return the result as compact JSON text (heap). */
static char *
expect_ok(fs_op_fn fn, const char *fmt, const char *a, const char *b)
{
	struct fs_err err = {0};
	json_t *res = call(fn, &err, fmt, a, b);
	if (res == NULL)
		fail_msg("unexpected error %d %s", err.code, err.message);
	char *s = json_dumps(res, JSON_COMPACT);
	json_decref(res);
	return s;
}

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

/* Relative paths are refused the way upstream's AbsolutePathBuf refuses them. */
static void
test_relative_path(void **state)
{
	const char *m = "Invalid request: AbsolutePathBuf deserialized without a base path";
	expect_err(fs_read_file, FS_ERR_REQUEST, m, "{\"path\":\"%s\"}", "rel/x", NULL);
	expect_err(fs_get_metadata, FS_ERR_REQUEST, m, "{\"path\":\"%s\"}", "", NULL);
	expect_err(fs_copy, FS_ERR_REQUEST, m, "{\"sourcePath\":\"/a\",\"destinationPath\":\"%s\"}",
		"b", NULL);
}

/* Textual normalization: dots, repeated and trailing slashes. */
static void
test_normalize(void **state)
{
	struct fs_err err = {0};
	char *out = NULL;
	assert_int_equal(fs_path_normalize("/a/./b//c/../d/", &out, &err), 0);
	assert_string_equal(out, "/a/b/d");
	free(out);
	assert_int_equal(fs_path_normalize("/../..", &out, &err), 0);
	assert_string_equal(out, "/");
	free(out);
	assert_int_equal(fs_path_normalize("//x/..//y", &out, &err), 0);
	assert_string_equal(out, "/y");
	free(out);
}

/* readFile: base64 of the bytes; missing, directory, fifo, loop, ENOTDIR. */
static void
test_read_file(void **state)
{
	char *f = tu_path(dir, "f"), *d = tu_path(dir, "d"), *fifo = tu_path(dir, "fifo");
	char *l1 = tu_path(dir, "l1"), *l2 = tu_path(dir, "l2");
	tu_write(f, "hi\n");
	tu_mkdirs(d);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(symlink(l2, l1), 0);
	assert_int_equal(symlink(l1, l2), 0);

	char *s = expect_ok(fs_read_file, "{\"path\":\"%s/./f\"}", dir, NULL);
	assert_string_equal(s, "{\"dataBase64\":\"aGkK\"}");
	free(s);
	expect_err(fs_read_file, FS_ERR_INTERNAL, "No such file or directory (os error 2)",
		"{\"path\":\"%s/missing\"}", dir, NULL);
	char *m = xasprintf("path `%s` is not a file", d);
	expect_err(fs_read_file, FS_ERR_REQUEST, m, "{\"path\":\"%s/d/\"}", dir, NULL);
	free(m);
	m = xasprintf("path `%s` is not a file", fifo);
	expect_err(fs_read_file, FS_ERR_REQUEST, m, "{\"path\":\"%s\"}", fifo, NULL);
	free(m);
	expect_err(fs_read_file, FS_ERR_INTERNAL, "Symbolic link loop (os error 40)",
		"{\"path\":\"%s\"}", l1, NULL);
	expect_err(fs_read_file, FS_ERR_INTERNAL, "Not a directory (os error 20)",
		"{\"path\":\"%s/x\"}", f, NULL);
	free(f), free(d), free(fifo), free(l1), free(l2);
}

/* readFile refuses a file past FS_READ_MAX with a clear request error. */
static void
test_read_file_ceiling(void **state)
{
	char *big = tu_path(dir, "big");
	int fd = open(big, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)FS_READ_MAX + 1), 0);
	close(fd);
	struct fs_err err = {0};
	json_t *res = call(fs_read_file, &err, "{\"path\":\"%s\"}", big);
	assert_null(res);
	assert_int_equal(err.code, FS_ERR_REQUEST);
	assert_non_null(strstr(err.message, "byte limit"));
	fs_err_clear(&err);
	free(big);
}

/*
 * Run fn in a child and expect EACCES. Root ignores modes, so as root the child becomes nobody;
 * any other user stays the files' owner, so the modes below deny the owner as well.
 */
static void
expect_denied(fs_op_fn fn, const char *params)
{
	int pfd[2];
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(2);
		json_t *p = json_loads(params, 0, NULL);
		json_t *res = NULL;
		struct fs_err err = {0};
		int r = fn(p, &res, &err);
		const char *msg = r < 0 ? err.message : "ok";
		if (write(pfd[1], msg, strlen(msg)) < 0)
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	char buf[256] = {0};
	ssize_t n = read(pfd[0], buf, sizeof(buf) - 1);
	close(pfd[0]);
	int st;
	waitpid(pid, &st, 0);
	assert_true(n > 0);
	assert_string_equal(buf, "Permission denied (os error 13)");
}

/* Permission denied, for reading, writing and listing, whoever runs the tests. */
static void
test_permission_denied(void **state)
{
	char *locked = tu_path(dir, "locked");
	tu_mkdirs(locked);
	char *f = tu_path(dir, "locked/f");
	tu_write(f, "secret");
	assert_int_equal(chmod(f, 0), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	char *p = xasprintf("{\"path\":\"%s\"}", f);
	expect_denied(fs_read_file, p);
	free(p);
	/* Searchable but not readable, by anyone: its entries cannot be listed. */
	assert_int_equal(chmod(locked, 0300), 0);
	p = xasprintf("{\"path\":\"%s\"}", locked);
	expect_denied(fs_read_directory, p);
	free(p);
	/* Searchable but not writable, by anyone: nothing can be made in it. */
	assert_int_equal(chmod(locked, 0500), 0);
	p = xasprintf("{\"path\":\"%s/new\",\"dataBase64\":\"\"}", locked);
	expect_denied(fs_write_file, p);
	free(p);
	/* Writable again, so that the teardown can remove it as a user too. */
	assert_int_equal(chmod(locked, 0700), 0);
	free(f);
	free(locked);
}

/* writeFile: new file, overwrite keeps the mode, base64 errors, no parents made. */
static void
test_write_file(void **state)
{
	char *f = tu_path(dir, "w");
	char *s = expect_ok(
		fs_write_file, "{\"path\":\"%s/x/../w\",\"dataBase64\":\"aGk=\"}", dir, NULL);
	assert_string_equal(s, "{}");
	free(s);
	assert_int_equal(chmod(f, 0751), 0);
	s = expect_ok(fs_write_file, "{\"path\":\"%s\",\"dataBase64\":\"aGVsbG8=\"}", f, NULL);
	free(s);
	struct stat st;
	assert_int_equal(stat(f, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0751);
	assert_int_equal(st.st_size, 5);
	expect_err(fs_write_file, FS_ERR_REQUEST,
		"fs/writeFile requires valid base64 dataBase64: Invalid symbol 33, offset 1.",
		"{\"path\":\"%s\",\"dataBase64\":\"a!Gk=\"}", f, NULL);
	expect_err(fs_write_file, FS_ERR_INTERNAL, "No such file or directory (os error 2)",
		"{\"path\":\"%s/nodir/x\",\"dataBase64\":\"\"}", dir, NULL);
	expect_err(fs_write_file, FS_ERR_INTERNAL, "Is a directory (os error 21)",
		"{\"path\":\"%s\",\"dataBase64\":\"\"}", dir, NULL);
	/* through a symlink: the target changes, the link stays a link */
	char *l = tu_path(dir, "wl");
	assert_int_equal(symlink("w", l), 0);
	s = expect_ok(fs_write_file, "{\"path\":\"%s\",\"dataBase64\":\"eHl6\"}", l, NULL);
	free(s);
	assert_int_equal(lstat(l, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(f, &st), 0);
	assert_int_equal(st.st_size, 3);
	free(l);
	free(f);
}

struct reader_state {
	const char *path;
	volatile int stop;
	int torn;
	int reads;
};

/* Keep reading the file; every read must see one whole version (all 'a' or all 'b'). */
static void *
reader_main(void *p)
{
	struct reader_state *rs = p;
	static char buf[70000];
	while (!rs->stop) {
		int fd = open(rs->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf));
		close(fd);
		if (n != 65536) {
			rs->torn++;
			continue;
		}
		for (ssize_t i = 1; i < n; i++) {
			if (buf[i] != buf[0]) {
				rs->torn++;
				break;
			}
		}
		rs->reads++;
	}
	return NULL;
}

/* A concurrent reader never sees a torn or partial file while writes replace it. */
static void
test_write_atomic_concurrent_reader(void **state)
{
	char *f = tu_path(dir, "atomic");
	size_t n = 65536;
	char *raw = xmalloc(n);
	memset(raw, 'a', n);
	tu_write(f, "");
	int fd = open(f, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_int_equal(write(fd, raw, n), (ssize_t)n);
	close(fd);
	struct reader_state rs = {.path = f};
	pthread_t t;
	pthread_create(&t, NULL, reader_main, &rs);
	json_t *pa = json_pack("{s:s,s:s}", "path", f, "dataBase64", "");
	char *b64[2];
	for (int k = 0; k < 2; k++) {
		memset(raw, k ? 'b' : 'a', n);
		b64[k] = xmalloc(n * 2);
		base64_encode(raw, n, b64[k]);
		b64[k][base64_encoded_len(n)] = '\0';
	}
	for (int i = 0; i < 200; i++) {
		json_object_set_new(pa, "dataBase64", json_string(b64[i & 1]));
		json_t *res = NULL;
		struct fs_err err = {0};
		assert_int_equal(fs_write_file(pa, &res, &err), 0);
		json_decref(res);
	}
	rs.stop = 1;
	pthread_join(t, NULL);
	assert_int_equal(rs.torn, 0);
	assert_true(rs.reads > 0);
	json_decref(pa);
	free(b64[0]), free(b64[1]), free(raw), free(f);
}

/* createDirectory: recursive by default; EEXIST / ENOENT / ENOTDIR as upstream. */
static void
test_create_directory(void **state)
{
	char *s = expect_ok(fs_create_directory, "{\"path\":\"%s/a/b/c\"}", dir, NULL);
	free(s);
	s = expect_ok(fs_create_directory, "{\"path\":\"%s/a/b/c\",\"recursive\":null}", dir, NULL);
	free(s);
	expect_err(fs_create_directory, FS_ERR_INTERNAL, "File exists (os error 17)",
		"{\"path\":\"%s/a\",\"recursive\":false}", dir, NULL);
	expect_err(fs_create_directory, FS_ERR_INTERNAL, "No such file or directory (os error 2)",
		"{\"path\":\"%s/x/y\",\"recursive\":false}", dir, NULL);
	char *f = tu_path(dir, "file");
	tu_write(f, "");
	expect_err(fs_create_directory, FS_ERR_INTERNAL, "File exists (os error 17)",
		"{\"path\":\"%s\"}", f, NULL);
	expect_err(fs_create_directory, FS_ERR_INTERNAL, "Not a directory (os error 20)",
		"{\"path\":\"%s/x\"}", f, NULL);
	free(f);
}

/* getMetadata: follows links, isSymlink of the path itself, key order, dangling = ENOENT. */
static void
test_get_metadata(void **state)
{
	char *f = tu_path(dir, "f"), *l = tu_path(dir, "l"), *dl = tu_path(dir, "dl");
	tu_write(f, "x");
	assert_int_equal(symlink("f", l), 0);
	assert_int_equal(symlink("nowhere", dl), 0);
	struct timespec ts[2] = {{.tv_sec = 1700000000, .tv_nsec = 123456789},
		{.tv_sec = 1700000000, .tv_nsec = 123456789}};
	assert_int_equal(utimensat(AT_FDCWD, f, ts, 0), 0);
	char *s = expect_ok(fs_get_metadata, "{\"path\":\"%s\"}", l, NULL);
	assert_string_equal(s,
		"{\"isDirectory\":false,\"isFile\":true,\"isSymlink\":true,"
		"\"createdAtMs\":0,\"modifiedAtMs\":1700000000123}");
	free(s);
	s = expect_ok(fs_get_metadata, "{\"path\":\"%s\"}", dir, NULL);
	assert_non_null(strstr(s, "\"isDirectory\":true,\"isFile\":false,\"isSymlink\":false"));
	free(s);
	expect_err(fs_get_metadata, FS_ERR_INTERNAL, "No such file or directory (os error 2)",
		"{\"path\":\"%s\"}", dl, NULL);
	free(f), free(l), free(dl);
}

/* readDirectory: names only; fifo neither file nor dir; dangling links left out. */
static void
test_read_directory(void **state)
{
	char *p = tu_path(dir, "d");
	tu_mkdirs(p);
	free(p);
	p = tu_path(dir, "f");
	tu_write(p, "");
	free(p);
	p = tu_path(dir, "fifo");
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	p = tu_path(dir, "dangling");
	assert_int_equal(symlink("nowhere", p), 0);
	free(p);
	p = tu_path(dir, "ld");
	assert_int_equal(symlink("d", p), 0);
	free(p);
	struct fs_err err = {0};
	json_t *res = call(fs_read_directory, &err, "{\"path\":\"%s\"}", dir);
	assert_non_null(res);
	json_t *entries = json_object_get(res, "entries");
	assert_int_equal(json_array_size(entries), 4);
	size_t i;
	json_t *e;
	int seen = 0;
	json_array_foreach(entries, i, e)
	{
		const char *n = json_string_value(json_object_get(e, "fileName"));
		int isd = json_is_true(json_object_get(e, "isDirectory"));
		int isf = json_is_true(json_object_get(e, "isFile"));
		if (strcmp(n, "d") == 0 || strcmp(n, "ld") == 0)
			assert_true(isd && !isf), seen++;
		else if (strcmp(n, "f") == 0)
			assert_true(!isd && isf), seen++;
		else if (strcmp(n, "fifo") == 0)
			assert_true(!isd && !isf), seen++;
	}
	assert_int_equal(seen, 4);
	json_decref(res);
	expect_err(fs_read_directory, FS_ERR_INTERNAL, "Not a directory (os error 20)",
		"{\"path\":\"%s/f\"}", dir, NULL);
}

/* remove: recursive+force defaults; force forgives only ENOENT; non-recursive ENOTEMPTY. */
static void
test_remove(void **state)
{
	char *p = tu_path(dir, "t/a/b");
	tu_mkdirs(p);
	free(p);
	p = tu_path(dir, "t/a/b/f");
	tu_write(p, "");
	free(p);
	p = tu_path(dir, "outside");
	tu_write(p, "keep");
	char *l = tu_path(dir, "t/a/link");
	assert_int_equal(symlink(p, l), 0);
	free(l);
	expect_err(fs_remove, FS_ERR_INTERNAL, "Directory not empty (os error 39)",
		"{\"path\":\"%s/t\",\"recursive\":false}", dir, NULL);
	char *s = expect_ok(fs_remove, "{\"path\":\"%s/t\"}", dir, NULL);
	free(s);
	struct stat st;
	assert_int_equal(stat(p, &st), 0); /* the link's target survived */
	s = expect_ok(fs_remove, "{\"path\":\"%s/t\"}", dir, NULL);
	free(s);
	expect_err(fs_remove, FS_ERR_INTERNAL, "No such file or directory (os error 2)",
		"{\"path\":\"%s/t\",\"force\":false}", dir, NULL);
	expect_err(fs_remove, FS_ERR_INTERNAL, "Not a directory (os error 20)",
		"{\"path\":\"%s/x\"}", p, NULL);
	free(p);
}

/* copy: files, trees with links copied as links, merges, refusals, self-copy. */
static void
test_copy(void **state)
{
	char *p = tu_path(dir, "src/in");
	tu_mkdirs(p);
	assert_int_equal(chmod(p, 0700), 0);
	free(p);
	p = tu_path(dir, "src/a");
	tu_write(p, "data");
	assert_int_equal(chmod(p, 0640), 0);
	free(p);
	p = tu_path(dir, "src/up");
	assert_int_equal(symlink("../../etc/passwd", p), 0);
	free(p);
	p = tu_path(dir, "src/in/rel");
	assert_int_equal(symlink("a", p), 0);
	free(p);

	expect_err(fs_copy, FS_ERR_REQUEST,
		"fs/copy requires recursive: true when sourcePath is a directory",
		"{\"sourcePath\":\"%s/src\",\"destinationPath\":\"%s/dst\"}", dir, dir);
	expect_err(fs_copy, FS_ERR_REQUEST,
		"fs/copy cannot copy a directory to itself or one of its descendants",
		"{\"sourcePath\":\"%s/src\",\"destinationPath\":\"%s/src/in/x\",\"recursive\":true}",
		dir, dir);
	char *s = expect_ok(fs_copy,
		"{\"sourcePath\":\"%s/src\",\"destinationPath\":\"%s/new/deep/dst\",\"recursive\":true}",
		dir, dir);
	free(s);
	char buf[64];
	p = tu_path(dir, "new/deep/dst/up");
	ssize_t n = readlink(p, buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "../../etc/passwd");
	free(p);
	struct stat st;
	p = tu_path(dir, "new/deep/dst/a");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	free(p);
	/* a second copy onto the now non-empty destination: File exists */
	expect_err(fs_copy, FS_ERR_INTERNAL, "File exists (os error 17)",
		"{\"sourcePath\":\"%s/src\",\"destinationPath\":\"%s/new/deep/dst\",\"recursive\":true}",
		dir, dir);
	/* file onto a folder, into a missing parent, onto itself (kept intact) */
	expect_err(fs_copy, FS_ERR_INTERNAL, "Is a directory (os error 21)",
		"{\"sourcePath\":\"%s/src/a\",\"destinationPath\":\"%s/new\"}", dir, dir);
	expect_err(fs_copy, FS_ERR_INTERNAL, "No such file or directory (os error 2)",
		"{\"sourcePath\":\"%s/src/a\",\"destinationPath\":\"%s/nope/x\"}", dir, dir);
	s = expect_ok(fs_copy, "{\"sourcePath\":\"%s/src/a\",\"destinationPath\":\"%s/src/./a\"}",
		dir, dir);
	free(s);
	p = tu_path(dir, "src/a");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 4);
	free(p);
	p = tu_path(dir, "fifo");
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	expect_err(fs_copy, FS_ERR_REQUEST,
		"fs/copy only supports regular files, directories, and symlinks",
		"{\"sourcePath\":\"%s/fifo\",\"destinationPath\":\"%s/fifo2\"}", dir, dir);
	expect_err(fs_copy, FS_ERR_INTERNAL, "No such file or directory (os error 2)",
		"{\"sourcePath\":\"%s/missing\",\"destinationPath\":\"%s/m\"}", dir, dir);
}

/* The method table knows every fs method and nothing else. */
static void
test_lookup(void **state)
{
	assert_ptr_equal(fs_op_lookup("fs/readFile"), fs_read_file);
	assert_ptr_equal(fs_op_lookup("fs/copy"), fs_copy);
	assert_null(fs_op_lookup("fs/watch"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_relative_path, setup, teardown),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test_setup_teardown(test_read_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_file_ceiling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_permission_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_file, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_write_atomic_concurrent_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_get_metadata, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
		cmocka_unit_test(test_lookup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
