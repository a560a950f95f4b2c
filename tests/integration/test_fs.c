/*
 * The fs/ file methods on the real daemon: each method's answer and its errors in upstream's
 * codes and wording (relative path, missing file, a folder where a file is needed, a symlink
 * loop, permission denied when not root), the readFile ceiling, and fs/writeFile's atomic
 * replace watched by a concurrent reader that must never see a torn file. The harness checks
 * every answer against the reference schema (Fs*Response).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "sandbox_util.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"

#define T_REPLY 10000

/* A request and its successful result (a new reference). */
static json_t *
call_ok(struct asc *c, const char *method, json_t *params)
{
	long long id = asc_request(c, method, params);
	json_t *m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	json_t *r = json_incref(asc_assert_result(m));

	json_decref(m);
	return r;
}

/* A request that must fail with exactly this code and message. */
static void
call_err(struct asc *c, const char *method, json_t *params, int code, const char *message)
{
	long long id = asc_request(c, method, params);
	json_t *m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	const char *got =
		json_string_value(json_object_get(json_object_get(m, "error"), "message"));

	asc_assert_error(m, code, NULL);
	if (message != NULL && (got == NULL || strcmp(got, message) != 0))
		fail_msg("%s: message \"%s\", want \"%s\"", method, got ? got : "", message);
	json_decref(m);
}

/* {"path": p} */
static json_t *
path_params(const char *p)
{
	return json_pack("{s:s}", "path", p);
}

/* Base64 of a C string (heap). */
static char *
b64(const char *s)
{
	size_t n = strlen(s);
	char *out = xmalloc(base64_encoded_len(n) + 1);

	base64_encode(s, n, out);
	out[base64_encoded_len(n)] = '\0';
	return out;
}

/* Write then read back; create folders; describe; list; copy; remove. */
static void
test_fs_methods(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *d = sbt_mkdir_in(c, "ws"), *f = xasprintf("%s/a/b/file.txt", d);
	char *dir = xasprintf("%s/a/b", d), *enc = b64("hello\n"), *copy = xasprintf("%s/copy", d);
	json_t *r;

	r = call_ok(c, "fs/createDirectory", path_params(dir));
	assert_int_equal(json_object_size(r), 0);
	json_decref(r);
	json_decref(
		call_ok(c, "fs/writeFile", json_pack("{s:s, s:s}", "path", f, "dataBase64", enc)));
	r = call_ok(c, "fs/readFile", path_params(f));
	assert_string_equal(json_string_value(json_object_get(r, "dataBase64")), enc);
	json_decref(r);
	r = call_ok(c, "fs/getMetadata", path_params(f));
	assert_true(json_is_true(json_object_get(r, "isFile")));
	assert_false(json_is_true(json_object_get(r, "isDirectory")));
	assert_int_equal(json_integer_value(json_object_get(r, "createdAtMs")), 0);
	assert_true(json_integer_value(json_object_get(r, "modifiedAtMs")) > 0);
	json_decref(r);
	r = call_ok(c, "fs/readDirectory", path_params(dir));
	json_t *e = json_array_get(json_object_get(r, "entries"), 0);
	assert_int_equal(json_array_size(json_object_get(r, "entries")), 1);
	assert_string_equal(json_string_value(json_object_get(e, "fileName")), "file.txt");
	json_decref(r);
	/* a folder copy needs recursive; with it, the tree is copied */
	char *src = xasprintf("%s/a", d);
	call_err(c, "fs/copy", json_pack("{s:s, s:s}", "sourcePath", src, "destinationPath", copy),
		-32600, "fs/copy requires recursive: true when sourcePath is a directory");
	json_decref(call_ok(c, "fs/copy",
		json_pack("{s:s, s:s, s:b}", "sourcePath", src, "destinationPath", copy,
			"recursive", 1)));
	char *copied = xasprintf("%s/copy/b/file.txt", d);
	sbt_assert_file(copied, "hello\n");
	json_decref(call_ok(c, "fs/remove", path_params(copy)));
	assert_int_equal(access(copy, F_OK), -1);
	/* force (the default) forgives a missing path; without it, error 2 */
	json_decref(call_ok(c, "fs/remove", path_params(copy)));
	call_err(c, "fs/remove", json_pack("{s:s, s:b}", "path", copy, "force", 0), -32603,
		"No such file or directory (os error 2)");
	free(copied);
	free(src);
	free(d);
	free(f);
	free(dir);
	free(enc);
	free(copy);
	asc_free(c);
}

/* Errors in upstream's codes and words. */
static void
test_fs_errors(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *d = sbt_mkdir_in(c, "err"), *missing = xasprintf("%s/missing", d);
	char *loop = xasprintf("%s/loop", d), *msg;

	call_err(c, "fs/readFile", path_params("relative/path"), -32600,
		"Invalid request: AbsolutePathBuf deserialized without a base path");
	call_err(c, "fs/getMetadata", path_params("x"), -32600,
		"Invalid request: AbsolutePathBuf deserialized without a base path");
	call_err(c, "fs/readFile", path_params(missing), -32603,
		"No such file or directory (os error 2)");
	msg = xasprintf("path `%s` is not a file", d);
	call_err(c, "fs/readFile", path_params(d), -32600, msg);
	free(msg);
	assert_int_equal(symlink(loop, loop), 0);
	call_err(c, "fs/readFile", path_params(loop), -32603, "Symbolic link loop (os error 40)");
	call_err(c, "fs/readDirectory", path_params(missing), -32603,
		"No such file or directory (os error 2)");
	call_err(c, "fs/createDirectory", json_pack("{s:s, s:b}", "path", d, "recursive", 0),
		-32603, "File exists (os error 17)");
	call_err(c, "fs/writeFile", json_pack("{s:s, s:s}", "path", missing, "dataBase64", "!!"),
		-32600, NULL);
	/* missing parents are not created by writeFile */
	char *deep = xasprintf("%s/no/such/file", d);
	call_err(c, "fs/writeFile", json_pack("{s:s, s:s}", "path", deep, "dataBase64", ""), -32603,
		"No such file or directory (os error 2)");
	free(deep);
	/* a file where a folder is needed */
	char *f = xasprintf("%s/plain", d), *under = xasprintf("%s/plain/x", d);
	sbt_put(f, "x");
	call_err(c, "fs/readDirectory", path_params(f), -32603, "Not a directory (os error 20)");
	call_err(c, "fs/readFile", path_params(under), -32603, "Not a directory (os error 20)");
	if (geteuid() != 0) {
		chmod(f, 0);
		call_err(c, "fs/readFile", path_params(f), -32603,
			"Permission denied (os error 13)");
		chmod(f, 0644);
	}
	/* past the ceiling: refused with a clear error, nothing built */
	char *big = xasprintf("%s/big", d);
	int fd = open(big, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 33 * 1024 * 1024), 0);
	close(fd);
	msg = xasprintf("fs/readFile: `%s` is %d bytes, more than the 33554432-byte limit", big,
		33 * 1024 * 1024);
	call_err(c, "fs/readFile", path_params(big), -32600, msg);
	free(msg);
	free(big);
	free(f);
	free(under);
	free(d);
	free(missing);
	free(loop);
	asc_free(c);
}

/* A chain of n folders "d" under path, a file "f" (and with fifo, a fifo "p") at the bottom. */
static void
make_deep(const char *path, int n, int fifo)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(mkdirat(fd, "d", 0755), 0);
		int sub = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(sub >= 0);
		close(fd);
		fd = sub;
	}
	int f = openat(fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(f >= 0);
	close(f);
	if (fifo)
		assert_int_equal(mkfifoat(fd, "p", 0644), 0);
	close(fd);
}

/* How many "d" folders deep a chain under path goes, and whether "f" is at its bottom. */
static int
deep_depth(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0, sub;

	assert_true(fd >= 0);
	while ((sub = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		close(fd);
		fd = sub;
		n++;
	}
	assert_int_equal(faccessat(fd, "f", F_OK, AT_SYMLINK_NOFOLLOW), 0);
	close(fd);
	return n;
}

/* Trees past 256 levels are copied and removed whole; a failed copy leaves nothing. */
static void
test_fs_deep_tree(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *d = sbt_mkdir_in(c, "deep"), *src = xasprintf("%s/src", d);
	char *dst = xasprintf("%s/dst", d), *bad = xasprintf("%s/bad", d);
	char *out = xasprintf("%s/out/copy", d), *top = xasprintf("%s/out", d);

	assert_int_equal(mkdir(src, 0755), 0);
	make_deep(src, 600, 0);
	json_decref(call_ok(c, "fs/copy",
		json_pack("{s:s, s:s, s:b}", "sourcePath", src, "destinationPath", dst, "recursive",
			1)));
	assert_int_equal(deep_depth(dst), 600);
	json_decref(call_ok(c, "fs/remove", path_params(dst)));
	assert_int_equal(access(dst, F_OK), -1);
	/* a fifo 600 levels down: refused, and the copy (and the parent it made) are gone */
	assert_int_equal(mkdir(bad, 0755), 0);
	make_deep(bad, 600, 1);
	call_err(c, "fs/copy",
		json_pack("{s:s, s:s, s:b}", "sourcePath", bad, "destinationPath", out, "recursive",
			1),
		-32600, "fs/copy only supports regular files, directories, and symlinks");
	assert_int_equal(access(top, F_OK), -1);
	json_decref(call_ok(c, "fs/remove", path_params(bad)));
	json_decref(call_ok(c, "fs/remove", path_params(src)));
	assert_int_equal(access(src, F_OK), -1);
	assert_int_equal(access(bad, F_OK), -1);
	free(d);
	free(src);
	free(dst);
	free(bad);
	free(out);
	free(top);
	asc_free(c);
}

struct reader {
	const char *path;
	size_t size;
	atomic_int stop;
	long reads, torn;
};

/* Read the file again and again: it must always be one whole version. */
static void *
reader_main(void *arg)
{
	struct reader *r = arg;
	char *buf = xmalloc(r->size + 1);

	while (!atomic_load(&r->stop)) {
		int fd = open(r->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, r->size + 1);
		close(fd);
		r->reads++;
		int ok = n == (ssize_t)r->size;
		for (ssize_t i = 1; ok && i < n; i++)
			ok = buf[i] == buf[0];
		r->torn += !ok;
	}
	free(buf);
	return NULL;
}

/* Atomic writeFile under a concurrent reader: never a torn or short file. */
static void
test_fs_atomic_write(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *d = sbt_mkdir_in(c, "atomic"), *f = xasprintf("%s/data", d);
	enum { SIZE = 256 * 1024 };
	char *plain = xmalloc(SIZE + 1), *enc[2];
	struct reader r = {.path = f, .size = SIZE};
	pthread_t th;

	for (int v = 0; v < 2; v++) {
		memset(plain, v ? 'b' : 'a', SIZE);
		plain[SIZE] = '\0';
		enc[v] = b64(plain);
	}
	json_decref(call_ok(
		c, "fs/writeFile", json_pack("{s:s, s:s}", "path", f, "dataBase64", enc[0])));
	chmod(f, 0600);
	assert_int_equal(pthread_create(&th, NULL, reader_main, &r), 0);
	for (int i = 0; i < (int)asc_load(60); i++)
		json_decref(call_ok(c, "fs/writeFile",
			json_pack("{s:s, s:s}", "path", f, "dataBase64", enc[i % 2])));
	atomic_store(&r.stop, 1);
	pthread_join(th, NULL);
	print_message("%ld reads during the writes, %ld torn\n", r.reads, r.torn);
	assert_true(r.reads > 0);
	assert_int_equal(r.torn, 0);
	/* the mode of the replaced file is kept */
	struct stat st;
	assert_int_equal(stat(f, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	free(enc[0]);
	free(enc[1]);
	free(plain);
	free(f);
	free(d);
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fs_methods),
		cmocka_unit_test(test_fs_errors),
		cmocka_unit_test(test_fs_atomic_write),
		cmocka_unit_test(test_fs_deep_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
