/*
 * The streaming rollout reader (rollout_reader.h). One buffer of at most ROLLOUT_LINE_MAX plus
 * one read: [start, end) is unconsumed input, and a line longer than the ceiling is skipped up to
 * its '\n' without being kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rollout.h"
#include "rollout_chain.h"
#include "rollout_reader.h"
#include "rollout_writer.h"
#include "protocol/jscan.h"
#include "protocol/xmalloc.h"

#define READER_CHUNK (64 * 1024)

struct rollout_reader {
	struct rollout_chain *chain; /* the file and its bases (one part for a plain rollout) */
	off_t pos;		     /* virtual offset of buf[end] (rollout_chain.h) */
	off_t limit;		     /* stop reading here; -1: end of the file */
	char *buf;
	size_t cap, start, end;
	int eof, skipping, lean;
	rollout_filter_fn filter;
	int (*filter_arg)(void *arg, const char *type, const char *ptype);
	void *arg;
	rollout_filter_fn raw;
	json_t *root;
	char type[ROLLOUT_TYPE_MAX], ptype[ROLLOUT_TYPE_MAX];
	size_t skipped;
	const char *line; /* the last record's text, valid until the next call */
};

/* Open and position: from 0 is the start of the chain (the oldest base's first byte). */
int
rollout_reader_open(const char *path, off_t from, off_t to, struct rollout_reader **out)
{
	struct rollout_chain *c = NULL;
	struct rollout_reader *r;
	int e;

	if ((e = rollout_chain_open(path, -1, &c)) != 0)
		return e;
	r = xcalloc(1, sizeof *r);
	r->chain = c;
	r->pos = from == 0 ? c->v[0].voff : from;
	r->limit = to;
	r->cap = READER_CHUNK; /* below malloc's mmap threshold: no page faults per open */
	r->buf = xmalloc(r->cap);
	*out = r;
	return 0;
}

void
rollout_reader_filter(struct rollout_reader *r, rollout_filter_fn fn)
{
	r->filter = fn;
}

void
rollout_reader_filter_arg(struct rollout_reader *r,
	int (*fn)(void *arg, const char *type, const char *ptype), void *arg)
{
	r->filter_arg = fn;
	r->arg = arg;
}

/* Whether the filters (if any) want a record of these types. */
static int
rollout_reader_wants(struct rollout_reader *r, const char *type, const char *ptype)
{
	if (r->filter != NULL && !r->filter(type, ptype))
		return 0;
	return r->filter_arg == NULL || r->filter_arg(r->arg, type, ptype);
}

void
rollout_reader_raw(struct rollout_reader *r, rollout_filter_fn fn)
{
	r->raw = fn;
}

void
rollout_reader_lean(struct rollout_reader *r, int on)
{
	r->lean = on;
}

/* Parse a session_meta line with its bulky members replaced by null. */
static json_t *
rollout_load_lean(const char *line, size_t len)
{
	static const char *const keys[] = {"\"base_instructions\":", "\"dynamic_tools\":"};
	/* A value shorter than "null" ("", [], 1) makes the text longer: room for each key. */
	char *copy = xmalloc(len + 4 * nitems(keys) + 1);
	size_t n = len;
	json_t *root;

	memcpy(copy, line, len);
	for (size_t k = 0; k < nitems(keys); k++) {
		size_t kl = strlen(keys[k]);
		char *at = memmem(copy, n, keys[k], kl);
		const char *v, *ve;
		struct jspan span;

		if (at == NULL)
			continue;
		v = at + kl;
		if ((ve = jscan_skip(v, copy + n, &span)) == NULL)
			continue;
		/* The tail first: "null" may be longer than the value it replaces. */
		memmove((char *)v + 4, ve, (size_t)(copy + n - ve));
		memcpy((char *)v, "null", 4);
		n = (size_t)(v + 4 - copy) + (size_t)(copy + n - ve);
	}
	root = json_loadb(copy, n, 0, NULL);
	free(copy);
	return root;
}

/* Read more bytes at the end of the buffer, compacting or growing (to the ceiling) first. */
static int
rollout_reader_fill(struct rollout_reader *r)
{
	size_t want = READER_CHUNK;
	ssize_t k;
	off_t real = 0;
	int part;

	if (r->start > 0 && (r->start == r->end || r->cap - r->end < want)) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->cap - r->end < want) {
		size_t ncap = r->cap * 2;

		if (ncap > ROLLOUT_LINE_MAX + 2 * READER_CHUNK)
			ncap = ROLLOUT_LINE_MAX + 2 * READER_CHUNK;
		if (ncap > r->cap) {
			r->buf = xrealloc(r->buf, ncap);
			r->cap = ncap;
		}
		if (r->cap - r->end < want)
			want = r->cap - r->end;
	}
	if (r->limit != -1 && r->pos + (off_t)want > r->limit)
		want = r->pos < r->limit ? (size_t)(r->limit - r->pos) : 0;
	/* one part at a time: a base's kept bytes end at a line boundary, so lines never span */
	if ((part = rollout_chain_locate(r->chain, r->pos, &real)) < 0)
		want = 0;
	else if (r->chain->v[part].len >= 0 && real + (off_t)want > r->chain->v[part].len)
		want = (size_t)(r->chain->v[part].len - real);
	if (want == 0) {
		r->eof = 1;
		return 0;
	}
	do
		k = pread(r->chain->v[part].fd, r->buf + r->end, want, real);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -errno;
	if (k == 0)
		r->eof = 1;
	r->end += (size_t)k;
	r->pos += k;
	return 0;
}

/* Find `"type":"` from p onwards (within n bytes) and copy the value; returns the end or NULL. */
static const char *
rollout_peek_type(const char *p, size_t n, char out[ROLLOUT_TYPE_MAX])
{
	static const char key[] = "\"type\":\"";
	const char *hit = memmem(p, n, key, sizeof key - 1);
	size_t i = 0;

	if (hit == NULL)
		return NULL;
	hit += sizeof key - 1;
	while (hit + i < p + n && hit[i] != '"' && hit[i] != '\\' && i < ROLLOUT_TYPE_MAX - 1) {
		out[i] = hit[i];
		i++;
	}
	if (hit + i >= p + n || hit[i] != '"')
		return NULL;
	out[i] = '\0';
	return hit + i + 1;
}

/* The record type comes before "payload"; the payload type right after `"payload":{`. */
int
rollout_peek(
	const char *line, size_t len, char type[ROLLOUT_TYPE_MAX], char ptype[ROLLOUT_TYPE_MAX])
{
	static const char pkey[] = "\"payload\":";
	size_t head = len < 160 ? len : 160;
	const char *after = rollout_peek_type(line, head, type);
	const char *pl;

	if (after == NULL || line[0] != '{')
		return -1;
	pl = memmem(after, (size_t)(line + len - after) < 16 ? (size_t)(line + len - after) : 16,
		pkey, sizeof pkey - 1);
	if (pl == NULL)
		return -1;
	pl += sizeof pkey - 1;
	ptype[0] = '\0';
	if (pl < line + len && *pl == '{' && (size_t)(line + len - pl) > 9 &&
		memcmp(pl + 1, "\"type\":\"", 8) == 0)
		rollout_peek_type(
			pl, (size_t)(line + len - pl) < 80 ? (size_t)(line + len - pl) : 80, ptype);
	return 0;
}

/* Fill a record from a parsed line. */
int
rollout_rec_from(json_t *root, struct rollout_rec *rec)
{
	json_t *type, *ts, *ord, *payload, *ptype;

	if (!json_is_object(root))
		return -1;
	type = json_object_get(root, "type");
	if (!json_is_string(type))
		return -1;
	rec->root = root;
	rec->type = json_string_value(type);
	ts = json_object_get(root, "timestamp");
	rec->ms = 0;
	if (json_is_string(ts) && rollout_ts_parse(json_string_value(ts), &rec->ms) != 0)
		rec->ms = 0;
	ord = json_object_get(root, "ordinal");
	rec->ordinal = json_is_integer(ord) ? json_integer_value(ord) : -1;
	payload = json_object_get(root, "payload");
	rec->payload = payload;
	ptype = json_is_object(payload) ? json_object_get(payload, "type") : NULL;
	rec->ptype = json_is_string(ptype) ? json_string_value(ptype) : "";
	return 0;
}

/* Handle one complete line: 1 when it became rec, 0 when skipped. */
static int
rollout_reader_line_in(
	struct rollout_reader *r, const char *line, size_t len, off_t off, struct rollout_rec *rec)
{
	json_t *root;
	int peeked = 0;

	if (len == 0)
		return 0;
	if (r->filter != NULL || r->filter_arg != NULL || r->raw != NULL) {
		peeked = rollout_peek(line, len, r->type, r->ptype) == 0;
		if (peeked && !rollout_reader_wants(r, r->type, r->ptype))
			return 0;
	}
	if (peeked && r->raw != NULL && r->raw(r->type, r->ptype)) {
		json_decref(r->root);
		r->root = NULL;
		memset(rec, 0, sizeof *rec);
		rec->type = r->type;
		rec->ptype = r->ptype;
		rec->ordinal = -1;
		rec->off = off;
		rec->len = len;
		rec->line = r->line = line;
		return 1;
	}
	if (r->lean && len > 2048 && rollout_peek(line, len, r->type, r->ptype) == 0 &&
		strcmp(r->type, "session_meta") == 0)
		root = rollout_load_lean(line, len);
	else
		root = json_loadb(line, len, 0, NULL);
	if (root == NULL || rollout_rec_from(root, rec) != 0) {
		json_decref(root);
		r->skipped++;
		return 0;
	}
	if (!rollout_reader_wants(r, rec->type, rec->ptype)) {
		json_decref(root);
		return 0;
	}
	json_decref(r->root);
	r->root = root;
	rec->off = off;
	rec->len = len;
	rec->line = r->line = line;
	return 1;
}

/* Next wanted record. */
int
rollout_reader_next(struct rollout_reader *r, struct rollout_rec *rec)
{
	for (;;) {
		char *nl = memchr(r->buf + r->start, '\n', r->end - r->start);

		if (nl != NULL) {
			size_t len = (size_t)(nl - (r->buf + r->start));
			off_t off = r->pos - (off_t)(r->end - r->start);
			const char *line = r->buf + r->start;

			r->start += len + 1;
			if (r->skipping) {
				r->skipping = 0;
				continue;
			}
			if (rollout_reader_line_in(r, line, len, off, rec))
				return 1;
			continue;
		}
		if (r->end - r->start > ROLLOUT_LINE_MAX) {
			/* Longer than any record may be: drop what we hold, skip to its '\n'. */
			if (!r->skipping)
				r->skipped++;
			r->skipping = 1;
			r->start = r->end = 0;
		}
		if (r->eof)
			return 0; /* a last line without '\n' is a torn write: ignored */
		int e = rollout_reader_fill(r);
		if (e != 0)
			return e;
	}
}

const char *
rollout_reader_line(struct rollout_reader *r)
{
	return r->line;
}

size_t
rollout_reader_skipped(struct rollout_reader *r)
{
	return r->skipped;
}

off_t
rollout_reader_offset(struct rollout_reader *r)
{
	return r->pos - (off_t)(r->end - r->start);
}

void
rollout_reader_close(struct rollout_reader *r)
{
	if (r == NULL)
		return;
	json_decref(r->root);
	rollout_chain_free(r->chain);
	free(r->buf);
	free(r);
}

/*
 * Backwards over whole lines in chunks. buf[0, have) always holds file bytes [pos, pos + have):
 * the part not reported yet, which ends at a line boundary. A line longer than the window is
 * not reported; `end` must itself be a line boundary (rollout_good_end).
 */
int
rollout_scan_back(int fd, off_t end, size_t max,
	int (*cb)(void *arg, const char *line, size_t len, off_t off), void *arg)
{
	size_t cap = READER_CHUNK, have = 0;
	char *buf = xmalloc(cap);
	off_t pos = end;
	int r = 0;

	while (pos > 0 && (size_t)(end - pos) < max) {
		size_t want = pos < READER_CHUNK ? (size_t)pos : READER_CHUNK;
		ssize_t k;

		if (have + want > cap) {
			cap = have + want;
			buf = xrealloc(buf, cap);
		}
		memmove(buf + want, buf, have);
		k = pread(fd, buf, want, pos - (off_t)want);
		if (k != (ssize_t)want) {
			r = k < 0 ? -errno : -EIO;
			goto out;
		}
		pos -= (off_t)want;
		have += want;
		/* Report each line lying wholly in [0, have), last first. */
		while (have > 0) {
			size_t body = buf[have - 1] == '\n' ? have - 1 : have;
			char *nl = body > 0 ? memrchr(buf, '\n', body) : NULL;
			size_t start;

			if (nl != NULL)
				start = (size_t)(nl - buf) + 1;
			else if (body == 0)
				start = 0;
			else if (pos == 0)
				start = 0;
			else
				break; /* this line starts further back */
			if (body > start &&
				cb(arg, buf + start, body - start, pos + (off_t)start)) {
				r = 1;
				goto out;
			}
			have = start;
		}
		if (have > ROLLOUT_LINE_MAX)
			break;
	}
out:
	free(buf);
	return r;
}

/* Where the last complete line ends. */
int
rollout_good_end(int fd, off_t *good)
{
	struct stat st;
	char tail[4096];
	off_t pos;

	if (fstat(fd, &st) != 0)
		return -errno;
	pos = st.st_size;
	while (pos > 0) {
		size_t n = pos > (off_t)sizeof tail ? sizeof tail : (size_t)pos;
		ssize_t k = pread(fd, tail, n, pos - (off_t)n);
		char *nl;

		if (k != (ssize_t)n)
			return k < 0 ? -errno : -EIO;
		nl = memrchr(tail, '\n', n);
		if (nl != NULL) {
			*good = pos - (off_t)n + (nl - tail) + 1;
			return 0;
		}
		pos -= (off_t)n;
	}
	*good = 0;
	return 0;
}

/* Truncate the torn tail away. */
int
rollout_cut_torn(int fd, off_t good)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (st.st_size > good && ftruncate(fd, good) != 0)
		return -errno;
	return 0;
}
