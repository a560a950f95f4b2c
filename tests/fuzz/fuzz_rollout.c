/*
 * libFuzzer target for reading rollouts (server/thread/rollout/rollout_reader.c) and rebuilding
 * their turns (server/thread/history*.c): the input is written to a scratch file, which is then
 * read the ways the daemon reads one:
 *   - thread/read with turns: history_reader + history_feed + history_finish (live or not),
 *     as trees and in text mode, which must write exactly the turns the trees hold;
 *   - thread/turns/list pages: a window [from, to) of the file, sink mode, rollbacks ignored;
 *   - the index summary (rollout_summarize: head and tail) and the names file read backwards
 *     (names_load / names_lookup on a CODEX_HOME holding the input as session_index.jsonl);
 *   - a plain read of every record, raw and lean modes as chosen by the first byte;
 *   - rollout_scan_back and rollout_good_end on the file.
 * Torn and hostile lines must be skipped, never crash.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "protocol/buf.h"
#include "thread/history/history.h"
#include "thread/rollout/rollout_reader.h"
#include "thread/rollout/rollout_summary.h"
#include "thread/store/names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir[64], fuzz_path[128];

static void
fuzz_sink(void *arg, json_t *turn)
{
	json_array_append_new(arg, turn);
}

static int
fuzz_raw_all(const char *type, const char *ptype)
{
	return strcmp(type, "response_item") == 0;
}

static int
fuzz_back_cb(void *arg, const char *line, size_t len, off_t off)
{
	size_t *n = arg;

	if (len > 0 && (line[0] == '\n' || line[len - 1] == '\n'))
		abort(); /* lines come without their newline */
	return ++*n >= 64;
}

/* The history of [from, to) (to < 0: to the end); its turns unless sunk. */
static json_t *
fuzz_history(off_t from, off_t to, int sink, int live, int text)
{
	struct history *h = history_new();
	json_t *got = json_array(), *turns;
	char *cause = NULL;

	if (text)
		history_text(h);
	if (sink) {
		history_sink(h, fuzz_sink, got);
		history_ignore_rollbacks(h);
	}
	/* NULL only when the file cannot be read: the input was just written */
	if ((turns = history_read(h, fuzz_path, from, to, live, &cause)) == NULL)
		abort();
	history_free(h);
	json_decref(got);
	return turns;
}

/* Text mode (thread/read, resume) writes exactly the turns the tree mode builds. */
static void
fuzz_text_mode(int live)
{
	json_t *tree = fuzz_history(0, -1, 0, live, 0), *text = fuzz_history(0, -1, 0, live, 1);
	json_t *parsed;
	struct buf out;
	char *want, *got;

	buf_init(&out, 1u << 30);
	if (tree == NULL || text == NULL || history_turns_text(text, &out) != 0 ||
		(parsed = json_loadb(out.ptr, out.len, 0, NULL)) == NULL)
		abort();
	want = json_dumps(tree, JSON_COMPACT);
	got = json_dumps(parsed, JSON_COMPACT);
	if (strcmp(want, got) != 0) {
		fprintf(stderr, "text mode differs\n want %s\n  got %s\n", want, got);
		abort();
	}
	free(want);
	free(got);
	json_decref(parsed);
	json_decref(tree);
	json_decref(text);
	buf_free(&out);
}

/* Every record, with the reader's modes chosen by mode's bits. */
static void
fuzz_plain(unsigned mode)
{
	struct rollout_reader *r;
	struct rollout_rec rec;
	off_t last = 0;

	if (rollout_reader_open(fuzz_path, 0, -1, &r) != 0)
		abort();
	rollout_reader_lean(r, mode & 1);
	if (mode & 2)
		rollout_reader_raw(r, fuzz_raw_all);
	if (mode & 4)
		rollout_reader_filter(r, history_filter);
	while (rollout_reader_next(r, &rec) == 1) {
		if (rec.type == NULL || rec.ptype == NULL || rec.off < last)
			abort();
		last = rec.off;
		if (rec.root != NULL)
			json_decref(history_summary_items(json_object_get(rec.payload, "items")));
	}
	rollout_reader_skipped(r);
	rollout_reader_close(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct thread_meta m;
	unsigned mode = size > 0 ? data[0] : 0;
	off_t good = 0, cut = size > 0 ? (off_t)(data[size - 1] * size / 256) : 0;
	size_t nback = 0;
	char names[160];
	int fd;

	if (fuzz_dir[0] == '\0') {
		snprintf(fuzz_dir, sizeof fuzz_dir, "/tmp/fuzz_rollout.XXXXXX");
		if (mkdtemp(fuzz_dir) == NULL)
			abort();
		snprintf(fuzz_path, sizeof fuzz_path, "%s/rollout.jsonl", fuzz_dir);
	}
	snprintf(names, sizeof names, "%s/%s", fuzz_dir, NAMES_FILE);
	if ((fd = open(fuzz_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0 ||
		(size > 0 && write(fd, data, size) != (ssize_t)size))
		abort();

	fuzz_text_mode(mode & 8);
	json_decref(fuzz_history(cut, -1, 1, mode & 16, 0));
	json_decref(fuzz_history(0, cut, 1, 0, 0));
	fuzz_plain(mode);
	memset(&m, 0, sizeof m);
	rollout_summarize(fuzz_path, &m);
	thread_meta_clear(&m);
	rollout_scan_back(fd, (off_t)size, size, fuzz_back_cb, &nback);
	if (rollout_good_end(fd, &good) != 0 || good > (off_t)size)
		abort();
	close(fd);

	if (rename(fuzz_path, names) != 0)
		abort();
	json_decref(names_load(fuzz_dir));
	free(names_lookup(fuzz_dir, "019a0000-0000-7000-8000-000000000000"));
	unlink(names);
	return 0;
}
