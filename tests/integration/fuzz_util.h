/*
 * Between the fuzz test of the JSON-RPC input path (test_fuzz.c) and its two halves: the line
 * generator (fuzz_gen.c: PRNG, corpus, mutations, defusing) and the oracle that runs lines
 * against a daemon (fuzz_check.c: what each line owes, pipelined and one-at-a-time runs,
 * replay of a failure). Every file of tests/integration/ but the test_*.c ones is linked into
 * every integration binary, so every symbol here starts with fz_ and nothing here depends on
 * test_fuzz.c.
 */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "harness.h"

#define FZ_QUIET_MS 300	 /* listening for stray answers once all are in */
#define FZ_REPLY_MS 5000 /* one ordinary request's answer */

#define FZ_NITEMS(a) (sizeof(a) / sizeof((a)[0]))

/* A growing byte buffer, always NUL-terminated (the bytes may hold NULs of their own). */
struct fz_buf {
	char *p;
	size_t len, cap;
};

/* A xorshift64* generator: the whole run follows from its seed. */
struct fz_rng {
	uint64_t s;
};

/* What a run sends: the lines `seed` makes, after the handshake or not, to what limit. */
struct fz_plan {
	const char *name;
	uint64_t seed;
	size_t n;
	int handshake;
	size_t max_line; /* --max-line-bytes; 0: the default (64 MiB) */
};

/* fuzz_gen.c: append a C string to a buffer (an empty one becomes that string). */
void fz_buf_add(struct fz_buf *b, const char *s);
/* Parse a line as the daemon does: one trailing '\r' dropped, any JSON value accepted. */
json_t *fz_parse(const char *p, size_t len, json_error_t *je);
/* Build line number `index` of a run into b: a corpus message, mutated (or not), defused. */
void fz_generate(struct fz_rng *r, size_t index, struct fz_buf *b);

/* fuzz_check.c: the seed, APP_SERVER_FUZZ_SEED (any base strtoull reads) or the fixed one. */
uint64_t fz_seed(void);
/* The line count: APP_SERVER_FUZZ_LINES, else the default (a fifth of it when sanitized). */
size_t fz_lines(void);
/*
 * Run one plan against a fresh daemon, pipelined or one line at a time, and check the daemon
 * still serves and exits 0 on stdin EOF; fails the test, naming the first line answered
 * wrongly (a failed pipelined run is replayed one line at a time to find it).
 */
void fz_play(const struct fz_plan *plan, int isolate);
/* A cmocka teardown for tests calling fz_play: names the line or plan a failure stopped. */
int fz_teardown(void **state);

#endif
