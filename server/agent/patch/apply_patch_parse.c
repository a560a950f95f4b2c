/*
 * The apply_patch parser (apply_patch.h), following upstream's grammar and its lenient
 * mode exactly, quirks included, because models are trained against it:
 *
 *   start: begin_patch hunk* end_patch
 *   hunk: "*** Add File: " path LF ("+" line LF)*
 *       | "*** Delete File: " path LF
 *       | "*** Update File: " path LF ("*** Move to: " path LF)? chunk+
 *   chunk: ("@@" | "@@ " context) LF ((" " | "+" | "-") line LF | LF)+ ("*** End of File" LF)?
 *
 * - the whole text is trimmed (Unicode whitespace), split into lines ("\n", "\r\n");
 *   the first and last lines, trimmed, must be the Begin/End markers, else a heredoc
 *   wrapper (first line exactly <<EOF, <<'EOF' or <<"EOF", last line ending in EOF, at
 *   least 4 lines) is stripped and the check repeated;
 * - hunk headers are matched after trimming the line; "*** Move to: " and chunk lines are
 *   matched raw; the first chunk of a file may omit its "@@"; blank lines between chunks
 *   are skipped; a line inside a chunk that is empty counts as an empty context line;
 * - line numbers count from 1 at "*** Begin Patch" (not shifted by a heredoc wrapper), and
 *   messages use upstream's words.
 * Bounded: APPLY_PATCH_MAX_TEXT bytes, APPLY_PATCH_MAX_FILES hunks, APPLY_PATCH_MAX_CHUNKS.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "apply_patch_int.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define BEGIN_PATCH "*** Begin Patch"
#define END_PATCH   "*** End Patch"
#define ADD_FILE    "*** Add File: "
#define DELETE_FILE "*** Delete File: "
#define UPDATE_FILE "*** Update File: "
#define MOVE_TO	    "*** Move to: "
#define END_OF_FILE "*** End of File"
#define NO_LINES    "Update hunk does not contain any lines"

struct parser {
	const struct patch_span *l; /* the hunk lines */
	size_t n;
	size_t chunks; /* in all hunks so far */
	char **cause;
};

/* "invalid hunk at line N, <message>" into *cause; returns -EINVAL. */
static int __attribute__((format(printf, 3, 4)))
parse_hunk_error(struct parser *ps, size_t line, const char *fmt, ...)
{
	va_list ap;
	struct buf b;

	buf_init(&b, APPLY_PATCH_MAX_TEXT + 4096);
	buf_printf(&b, "invalid hunk at line %zu, ", line);
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (ps->cause != NULL)
		*ps->cause = buf_steal(&b, NULL);
	else
		buf_free(&b);
	return -EINVAL;
}

/* s without the prefix, when it starts with it. */
static int
parse_strip(struct patch_span s, const char *prefix, struct patch_span *rest)
{
	size_t n = strlen(prefix);

	if (s.n < n || memcmp(s.p, prefix, n) != 0)
		return 0;
	*rest = (struct patch_span){s.p + n, s.n - n};
	return 1;
}

/* A heap copy of a span (NUL-terminated; it may hold NULs of its own). */
static char *
parse_dup(struct patch_span s)
{
	char *p = xmalloc(s.n + 1);

	memcpy(p, s.p, s.n);
	p[s.n] = '\0';
	return p;
}

/* How many lines from l[0] one chunk body consumes (the chunk parser's own stop rules). */
static size_t
parse_chunk_extent(const struct patch_span *l, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (ap_span_eq(l[i], END_OF_FILE))
			return i + 1;
		if (l[i].n > 0 && l[i].p[0] != ' ' && l[i].p[0] != '+' && l[i].p[0] != '-')
			return i;
	}
	return n;
}

/*
 * One chunk at l[0, n): its "@@" line (optional when first), then its lines. *used gets
 * the lines consumed; line is l[0]'s line number.
 */
static int
parse_chunk(struct parser *ps, const struct patch_span *l, size_t n, size_t line, int first,
	struct patch_chunk *c, size_t *used)
{
	struct patch_span rest;
	size_t start = 1, i, body, k;

	memset(c, 0, sizeof(*c));
	if (ap_span_eq(l[0], "@@"))
		;
	else if (parse_strip(l[0], "@@ ", &rest)) {
		c->has_context = 1;
		c->context = rest;
	} else if (!first)
		return parse_hunk_error(ps, line,
			"Expected update hunk to start with a @@ context marker, got: '%.*s'",
			(int)l[0].n, l[0].p);
	else
		start = 0;
	if (start >= n)
		return parse_hunk_error(ps, line + 1, NO_LINES);
	body = parse_chunk_extent(l + start, n - start);
	c->old = xcalloc(body + 1, sizeof(*c->old));
	c->new = xcalloc(body + 1, sizeof(*c->new));
	for (i = start, k = 0; i < n; i++, k++) {
		struct patch_span s = l[i], t = {s.n > 0 ? s.p + 1 : s.p, s.n > 0 ? s.n - 1 : 0};

		if (ap_span_eq(s, END_OF_FILE)) {
			if (k == 0)
				return parse_hunk_error(ps, line + 1, NO_LINES);
			c->eof = 1;
			k++;
			break;
		}
		if (s.n > 0 && s.p[0] != ' ' && s.p[0] != '+' && s.p[0] != '-') {
			if (k == 0)
				return parse_hunk_error(ps, line + 1,
					"Unexpected line found in update hunk: '%.*s'. Every line "
					"should start with ' ' (context line), '+' (added line), or "
					"'-' (removed line)",
					(int)s.n, s.p);
			break;
		}
		if (s.n == 0 || s.p[0] != '+')
			c->old[c->nold++] = t;
		if (s.n == 0 || s.p[0] != '-')
			c->new[c->nnew++] = t;
	}
	*used = k + start;
	return 0;
}

/* Free what a chunk owns (its line arrays; the lines are the patch's). */
static void
parse_chunk_free(struct patch_chunk *c)
{
	free(c->old);
	free(c->new);
}

/* The chunks of an Update File, after its header (and Move to) lines. */
static int
parse_update(struct parser *ps, const struct patch_span *l, size_t n, size_t line,
	struct patch_hunk *h, size_t *used)
{
	struct buf chunks;
	struct patch_chunk c;
	size_t parsed = *used, k = 0;
	int r = 0;

	buf_init(&chunks, (size_t)APPLY_PATCH_MAX_CHUNKS * sizeof(c));
	while (parsed < n) {
		if (ap_trim(l[parsed]).n == 0) {
			parsed++;
			continue;
		}
		if (l[parsed].n > 0 && l[parsed].p[0] == '*')
			break;
		if (ps->chunks >= APPLY_PATCH_MAX_CHUNKS) {
			*ps->cause = xasprintf("invalid patch: more than %u chunks in one patch",
				APPLY_PATCH_MAX_CHUNKS);
			r = -E2BIG;
			break;
		}
		if ((r = parse_chunk(ps, l + parsed, n - parsed, line + parsed, chunks.len == 0, &c,
			     &k)) != 0) {
			parse_chunk_free(&c);
			break;
		}
		buf_add(&chunks, &c, sizeof(c)); /* room: the count is checked above */
		ps->chunks++;
		parsed += k;
	}
	h->nchunks = chunks.len / sizeof(c);
	h->chunks = (struct patch_chunk *)buf_steal(&chunks, NULL);
	if (r == 0 && h->nchunks == 0)
		r = parse_hunk_error(ps, line, "Update file hunk for path '%.*s' is empty",
			(int)h->path_len, h->path);
	*used = parsed;
	return r;
}

/* One file operation at l[0, n); *used gets the lines it spans. */
static int
parse_hunk(struct parser *ps, const struct patch_span *l, size_t n, size_t line,
	struct patch_hunk *h, size_t *used)
{
	struct patch_span first = ap_trim(l[0]), path, mv;
	struct buf contents;
	size_t i;

	memset(h, 0, sizeof(*h));
	*used = 1;
	if (parse_strip(first, ADD_FILE, &path)) {
		h->kind = APPLY_PATCH_ADD;
		buf_init(&contents, APPLY_PATCH_MAX_TEXT);
		for (i = 1; i < n && l[i].n > 0 && l[i].p[0] == '+'; i++) {
			buf_add(&contents, l[i].p + 1, l[i].n - 1); /* within the text's size */
			buf_addc(&contents, '\n');
		}
		*used = i;
		h->contents = buf_steal(&contents, &h->contents_len);
	} else if (parse_strip(first, DELETE_FILE, &path))
		h->kind = APPLY_PATCH_DELETE;
	else if (parse_strip(first, UPDATE_FILE, &path)) {
		h->kind = APPLY_PATCH_UPDATE;
		h->path = parse_dup(path);
		h->path_len = path.n;
		if (n > 1 && parse_strip(l[1], MOVE_TO, &mv)) {
			h->move = parse_dup(mv);
			h->move_len = mv.n;
			*used = 2;
		}
		return parse_update(ps, l, n, line, h, used);
	} else
		return parse_hunk_error(ps, line,
			"'%.*s' is not a valid hunk header. Valid hunk headers: '*** Add File: "
			"{path}', '*** Delete File: {path}', '*** Update File: {path}'",
			(int)first.n, first.p);
	h->path = parse_dup(path);
	h->path_len = path.n;
	return 0;
}

/* Free what a hunk owns. */
static void
parse_hunk_free(struct patch_hunk *h)
{
	size_t i;

	free(h->path);
	free(h->move);
	free(h->contents);
	for (i = 0; i < h->nchunks; i++)
		parse_chunk_free(&h->chunks[i]);
	free(h->chunks);
}

/* The Begin/End check on lines[0, n): 0, or -EINVAL with upstream's message. */
static int
parse_bounds(const struct patch_span *l, size_t n, const char **msg)
{
	if (n >= 1 && ap_span_eq(ap_trim(l[0]), BEGIN_PATCH) && n >= 2 &&
		ap_span_eq(ap_trim(l[n - 1]), END_PATCH))
		return 0;
	if (n >= 1 && !ap_span_eq(ap_trim(l[0]), BEGIN_PATCH))
		*msg = "The first line of the patch must be '*** Begin Patch'";
	else
		*msg = "The last line of the patch must be '*** End Patch'";
	return -EINVAL;
}

/* Split the (trimmed) buffer into lines as Rust's str::lines does. */
static size_t
parse_lines(char *s, size_t len, struct patch_span **out)
{
	size_t i, n = 0, start = 0, cap = 1;
	struct patch_span *l;

	for (i = 0; i < len; i++)
		cap += s[i] == '\n';
	l = xcalloc(cap, sizeof(*l));
	for (i = 0; i <= len && len > 0; i++) {
		if (i < len && s[i] != '\n')
			continue;
		l[n].p = s + start;
		l[n].n = i - start;
		if (i < len && l[n].n > 0 && l[n].p[l[n].n - 1] == '\r')
			l[n].n--;
		n++;
		start = i + 1;
	}
	*out = l;
	return n;
}

/* The hunks between the Begin and End lines. */
static int
parse_hunks(struct patch *p, const struct patch_span *l, size_t n, char **cause)
{
	struct parser ps = {l, n, 0, cause};
	struct buf hunks;
	struct patch_hunk h;
	size_t at = 0, used;
	int r = 0;

	buf_init(&hunks, (size_t)APPLY_PATCH_MAX_FILES * sizeof(h));
	while (at < n) {
		if ((r = parse_hunk(&ps, l + at, n - at, at + 2, &h, &used)) != 0 ||
			(r = buf_add(&hunks, &h, sizeof(h))) != 0) {
			if (r == -E2BIG)
				*cause = xasprintf("invalid patch: more than %u files in one patch",
					APPLY_PATCH_MAX_FILES);
			parse_hunk_free(&h);
			break;
		}
		at += used;
	}
	p->nhunks = hunks.len / sizeof(h);
	p->hunks = (struct patch_hunk *)buf_steal(&hunks, NULL);
	return r;
}

int
apply_patch_parse(const char *text, size_t len, struct patch **out, char **cause)
{
	struct patch *p = NULL;
	struct patch_span all, *l = NULL, *body;
	const char *msg = NULL;
	size_t n, nbody, i;
	struct buf joined;
	char *ignored = NULL;
	int r = -EINVAL;

	*out = NULL;
	if (cause == NULL)
		cause = &ignored;
	if (len > APPLY_PATCH_MAX_TEXT) {
		*cause =
			xasprintf("invalid patch: the patch is %zu bytes, more than the %u allowed",
				len, APPLY_PATCH_MAX_TEXT);
		return -E2BIG;
	}
	p = xcalloc(1, sizeof(*p));
	p->buf = xmalloc(len + 1);
	memcpy(p->buf, text, len);
	p->buf[len] = '\0';
	all = ap_trim((struct patch_span){p->buf, len});
	n = parse_lines((char *)all.p, all.n, &l);
	body = l;
	nbody = n;
	if (parse_bounds(l, n, &msg) != 0) {
		/* Lenient: a heredoc wrapper around the patch. */
		if (n >= 4 &&
			(ap_span_eq(l[0], "<<EOF") || ap_span_eq(l[0], "<<'EOF'") ||
				ap_span_eq(l[0], "<<\"EOF\"")) &&
			l[n - 1].n >= 3 && memcmp(l[n - 1].p + l[n - 1].n - 3, "EOF", 3) == 0 &&
			parse_bounds(l + 1, n - 2, &msg) == 0) {
			body = l + 1;
			nbody = n - 2;
		} else {
			*cause = xasprintf("invalid patch: %s", msg);
			goto out;
		}
	}
	buf_init(&joined, (size_t)-1);
	for (i = 0; i < nbody; i++) {
		buf_add(&joined, body[i].p, body[i].n);
		if (i + 1 < nbody)
			buf_addc(&joined, '\n');
	}
	p->text = buf_steal(&joined, NULL);
	if ((r = parse_hunks(p, body + 1, nbody - 2, cause)) != 0)
		goto out;
	*out = p;
	p = NULL;
	r = 0;
out:
	free(l);
	free(ignored);
	apply_patch_free(p);
	return r;
}

void
apply_patch_free(struct patch *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nhunks; i++)
		parse_hunk_free(&p->hunks[i]);
	free(p->hunks);
	free(p->text);
	free(p->buf);
	free(p->workdir);
	free(p);
}

const char *
apply_patch_text(const struct patch *p)
{
	return p->text;
}

size_t
apply_patch_nfiles(const struct patch *p)
{
	return p->nhunks;
}

const char *
apply_patch_workdir(const struct patch *p)
{
	return p->workdir;
}
