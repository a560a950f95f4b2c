/*
 * libFuzzer target for apply_patch and the diff code (server/agent/).
 *
 * Build and run (from the repository root):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 -D_GNU_SOURCE \
 *       -I. -Iprotocol -Iserver \
 *       tests/fuzz/fuzz_apply_patch.c server/agent/apply_patch*.c server/agent/diff*.c \
 *       protocol/buf.c protocol/xmalloc.c protocol/utf8.c -o build/fuzz_apply_patch
 *   rm -rf build/fuzz-corpus && cp -r tests/fuzz/corpus/apply_patch build/fuzz-corpus
 *   ./build/fuzz_apply_patch -max_total_time=300 -max_len=4096 build/fuzz-corpus
 *
 * Input: one mode byte, then the data. Modes (byte % 4):
 *   0  parse the rest as a patch;
 *   1  the rest as a `bash -lc` script (interception, then parse);
 *   2  "<file>\0<patch>": a scratch workspace gets ws/a.txt = <file> (plus fixed files, a
 *      directory and a symlink pointing outside), the patch is applied with ws as the only
 *      writable root; afterwards the outside directory must be exactly as it was and no
 *      temporary file of ours may be left: anything else aborts (a finding);
 *   3  "<old>\0<new>": diff_unified with 0..3 lines of context, and the turn tracker.
 * Crashes found and fixed become cases in tests/unit/agent/.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/diff/diff.h"
#include "agent/patch/apply_patch.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

static char scratch[64];

static int
fuzz_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Write a file below the scratch directory. */
static void
fuzz_put(const char *rel, const void *p, size_t n)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", scratch, rel);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		abort();
	if (n > 0 && write(fd, p, n) != (ssize_t)n)
		abort();
	close(fd);
}

/* The outside directory holds exactly its one file, unchanged. */
static void
fuzz_check_outside(void)
{
	char path[256], buf[64];
	struct dirent *e;
	ssize_t k;
	DIR *d;
	int fd, n = 0;

	snprintf(path, sizeof(path), "%s/outside", scratch);
	if ((d = opendir(path)) == NULL)
		abort();
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	snprintf(path, sizeof(path), "%s/outside/secret", scratch);
	if (n != 1 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		abort();
	k = read(fd, buf, sizeof(buf));
	close(fd);
	if (k != 7 || memcmp(buf, "secret\n", 7) != 0)
		abort();
}

/* No temporary or backup of ours (".apply_patch-<pid>-<n>.tmp|bak") left anywhere. */
static int
fuzz_leftover_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	char ext[8] = "";
	long pid;
	unsigned long n;
	int end = 0;

	(void)st, (void)flag;
	if (sscanf(path + ftw->base, ".apply_patch-%ld-%lu.%3s%n", &pid, &n, ext, &end) == 3 &&
		path[ftw->base + (size_t)end] == '\0' && pid == (long)getpid() &&
		(strcmp(ext, "tmp") == 0 || strcmp(ext, "bak") == 0))
		abort();
	return 0;
}

static void
fuzz_apply(const char *data, size_t size)
{
	const char *nul = memchr(data, '\0', size), *text = nul != NULL ? nul + 1 : data;
	size_t flen = nul != NULL ? (size_t)(nul - data) : 0, tlen = size - (size_t)(text - data);
	char ws[128], outside[128], link[160], *cause = NULL;
	const char *roots[1] = {ws};
	struct apply_patch_confine c = {.writable = roots, .nwritable = 1, .protect_dirs = 1};
	struct apply_patch_result *res = NULL;
	struct patch *p = NULL;

	if (scratch[0] == '\0') {
		snprintf(scratch, sizeof(scratch), "/tmp/fuzz_apply_patch.XXXXXX");
		if (mkdtemp(scratch) == NULL)
			abort();
	}
	nftw(scratch, fuzz_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(ws, sizeof(ws), "%s/ws", scratch);
	snprintf(outside, sizeof(outside), "%s/outside", scratch);
	snprintf(link, sizeof(link), "%s/ws/out", scratch);
	if (mkdir(scratch, 0700) != 0 || mkdir(ws, 0755) != 0 || mkdir(outside, 0755) != 0)
		abort();
	fuzz_put("outside/secret", "secret\n", 7);
	fuzz_put("ws/a.txt", data, flen);
	fuzz_put("ws/b.txt", "one\ntwo\nthree\n", 14);
	snprintf(ws, sizeof(ws), "%s/ws/.git", scratch);
	mkdir(ws, 0755);
	snprintf(ws, sizeof(ws), "%s/ws", scratch);
	if (symlink(outside, link) != 0)
		abort();
	if (apply_patch_parse(text, tlen, &p, &cause) == 0 &&
		apply_patch_apply(p, ws, &c, &res, &cause) == 0) {
		free(apply_patch_summary(res));
		apply_patch_sort_changes(res);
	}
	fuzz_check_outside();
	nftw(ws, fuzz_leftover_cb, 16, FTW_PHYS);
	apply_patch_result_free(res);
	apply_patch_free(p);
	free(cause);
}

static void
fuzz_diff(const char *data, size_t size)
{
	const char *nul = memchr(data, '\0', size), *b = nul != NULL ? nul + 1 : data;
	size_t alen = nul != NULL ? (size_t)(nul - data) : size, blen = size - (size_t)(b - data);
	struct diff_turn *t = diff_turn_new("/w", 1 << 20);
	struct buf out;
	int empty;

	buf_init(&out, 1 << 22);
	diff_unified(data, alen, b, blen, (unsigned)(size % 4), "a/x", "b/x", &out);
	diff_turn_update(t, "/w/x", size % 2 ? "/w/y" : NULL, data, alen, NULL, 0, b, blen);
	diff_turn_add(t, "/w/z", b, blen, data, alen);
	diff_turn_unified(t, &out, &empty);
	diff_turn_free(t);
	buf_free(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	const char *data = (const char *)d + 1;
	struct patch *p = NULL;
	char *cause = NULL, *script;

	if (size < 1)
		return 0;
	size--;
	switch (d[0] % 4) {
	case 0:
		apply_patch_parse(data, size, &p, &cause);
		break;
	case 1:
		script = xmalloc(size + 1);
		memcpy(script, data, size);
		script[size] = '\0';
		apply_patch_intercept_script(script, &p, &cause);
		free(script);
		break;
	case 2:
		fuzz_apply(data, size);
		break;
	default:
		fuzz_diff(data, size);
	}
	apply_patch_free(p);
	free(cause);
	return 0;
}
