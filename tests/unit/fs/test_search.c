/*
 * gitignore table (gitignore(5) semantics), the walk's precedence rules as upstream applies
 * them, and the search runner: results, cancellation mid-walk, sessions, and the loop staying
 * responsive during a search over 100,000 files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ev.h>
#include <time.h>

#include "fs_test_util.h"
#include "fs/search/fuzzy.h"
#include "fs/walk/gitignore.h"
#include "fs/search/search.h"
#include "fs/walk/walk.h"
#include "tests/helpers/skip_note.h"

struct gi_case {
	const char *pattern;
	const char *path;
	int is_dir;
	int want; /* enum gi_match */
};

/* From gitignore(5): each line's documented meaning. */
static const struct gi_case gi_cases[] = {
	{"*.o", "a.o", 0, GI_IGNORE},
	{"*.o", "dir/sub/a.o", 0, GI_IGNORE},
	{"*.o", "a.c", 0, GI_NONE},
	{"# comment", "# comment", 0, GI_NONE},
	{"\\#file", "#file", 0, GI_IGNORE},
	{"build/", "build", 1, GI_IGNORE},
	{"build/", "build", 0, GI_NONE},
	{"build/", "x/build", 1, GI_IGNORE},
	{"/root.txt", "root.txt", 0, GI_IGNORE},
	{"/root.txt", "sub/root.txt", 0, GI_NONE},
	{"doc/frotz", "doc/frotz", 0, GI_IGNORE},
	{"doc/frotz", "a/doc/frotz", 0, GI_NONE},
	{"foo/*", "foo/test.json", 0, GI_IGNORE},
	{"foo/*", "foo/bar/hello.c", 0, GI_NONE},
	{"**/foo", "foo", 0, GI_IGNORE},
	{"**/foo", "a/b/foo", 0, GI_IGNORE},
	{"**/foo/bar", "x/foo/bar", 0, GI_IGNORE},
	{"abc/**", "abc/x/y", 0, GI_IGNORE},
	{"abc/**", "abc", 1, GI_NONE},
	{"a/**/b", "a/b", 0, GI_IGNORE},
	{"a/**/b", "a/x/y/b", 0, GI_IGNORE},
	{"a/**/b", "a/xb", 0, GI_NONE},
	{"?.txt", "a.txt", 0, GI_IGNORE},
	{"?.txt", "ab.txt", 0, GI_NONE},
	{"[a-c].md", "b.md", 0, GI_IGNORE},
	{"[a-c].md", "d.md", 0, GI_NONE},
	{"[!a-c].md", "d.md", 0, GI_IGNORE},
	{"[^a-c].md", "a.md", 0, GI_NONE},
	{"[[:digit:]]x", "7x", 0, GI_IGNORE},
	{"\\!important", "!important", 0, GI_IGNORE},
	{"trail   ", "trail", 0, GI_IGNORE},
	{"sp\\ ", "sp ", 0, GI_IGNORE},
	{"a\\*b", "a*b", 0, GI_IGNORE},
	{"a\\*b", "axb", 0, GI_NONE},
	{"*", "x/.hidden", 0, GI_IGNORE},
	{"a*/b", "ab/b", 0, GI_IGNORE},
	{"a*/b", "a/x/b", 0, GI_NONE},
};

/* Each pattern alone decides its path as gitignore(5) says. */
static void
test_gitignore_table(void **state)
{
	int bad = 0;
	for (size_t i = 0; i < sizeof(gi_cases) / sizeof(gi_cases[0]); i++) {
		struct gi_list l = {0};
		gi_list_parse(&l, gi_cases[i].pattern, strlen(gi_cases[i].pattern));
		int got = gi_list_match(&l, gi_cases[i].path, gi_cases[i].is_dir);
		if (got != gi_cases[i].want) {
			print_message("%s | %s: got %d want %d\n", gi_cases[i].pattern,
				gi_cases[i].path, got, gi_cases[i].want);
			bad++;
		}
		gi_list_free(&l);
	}
	assert_int_equal(bad, 0);
}

/* Negation: the last matching line wins. */
static void
test_gitignore_negation(void **state)
{
	struct gi_list l = {0};
	const char *text = "*.log\n!keep.log\n";
	gi_list_parse(&l, text, strlen(text));
	assert_int_equal(gi_list_match(&l, "a.log", 0), GI_IGNORE);
	assert_int_equal(gi_list_match(&l, "keep.log", 0), GI_WHITELIST);
	gi_list_free(&l);
}

struct collect {
	char names[64][128];
	size_t n;
};

/* Search synchronously through the index API. */
static void
search_sync(const char *root, const char *query, struct collect *c)
{
	struct search_index *ix = NULL;
	struct search_result res;
	const char *roots[] = {root};
	assert_int_equal(search_index_build(&ix, roots, 1, NULL), 0);
	search_index_query(ix, query, NULL, &res);
	c->n = 0;
	for (size_t i = 0; i < res.n && c->n < 64; i++)
		snprintf(c->names[c->n++], 128, "%s", res.hits[i].path);
	search_result_free(&res);
	search_index_free(ix);
}

/* Is name among the results? */
static int
has(const struct collect *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++) {
		if (strcmp(c->names[i], name) == 0)
			return 1;
	}
	return 0;
}

/* Every path a walk reports: how many, how many under a prefix of bad[], and whether want is. */
struct walked {
	size_t n, bad;
	int want_seen;
	const char *const *badp;
	const char *want;
};

static int
walked_cb(void *arg, size_t root, const char *rel, size_t len, int is_dir)
{
	struct walked *w = arg;

	w->n++;
	for (size_t i = 0; w->badp && w->badp[i]; i++)
		w->bad += strncmp(rel, w->badp[i], strlen(w->badp[i])) == 0;
	w->want_seen |= w->want && strcmp(rel, w->want) == 0;
	return 0;
}

/* /proc, /sys and /dev are never walked: through links, as a root, or as folders of /. */
static void
test_walk_skips_pseudo(void **state)
{
	char *d = tu_mkdtemp(), *p;
	const char *bad[] = {"p/", "s/", "d/", "proc/", NULL};
	const char *links[][2] = {
		{"p", "/proc"}, {"s", "/sys"}, {"d", "/dev"}, {"proc", "/proc/1"}};
	struct walked w = {.badp = bad, .want = "sys/inner"};
	struct walk_ops ops = {.fn = walked_cb, .arg = &w};
	struct walk_stats st;

	for (size_t i = 0; i < nitems(links); i++) {
		p = tu_path(d, "%s", links[i][0]);
		assert_int_equal(symlink(links[i][1], p), 0);
		free(p);
	}
	p = tu_path(d, "sys"); /* a plain folder named so is walked */
	tu_mkdirs(p);
	free(p);
	p = tu_path(d, "sys/inner");
	tu_write(p, "");
	free(p);
	const char *roots[] = {d};
	walk_roots(roots, 1, &ops, &st);
	assert_int_equal(w.bad, 0);
	assert_true(w.want_seen);
	assert_int_equal(w.n, 7); /* "", p, s, d, proc, sys, sys/inner */
	/* a root inside them: itself only */
	const char *proc[] = {"/proc/self", "/sys", "/dev"};
	memset(&w, 0, sizeof(w));
	walk_roots(proc, 3, &ops, &st);
	assert_int_equal(w.n, 3);
	/* the folders of / named so (walk_names: no full walk of /) */
	const char *slash[] = {"/"}, *names[] = {"proc", "sys", "dev", "etc"};
	const char *bad2[] = {"proc/", "sys/", "dev/", NULL};
	memset(&w, 0, sizeof(w));
	w.badp = bad2;
	w.want = "etc/passwd";
	assert_int_equal(walk_names(slash, 0, "", names, 4, &ops, &st), 0);
	assert_int_equal(w.bad, 0);
	assert_true(w.want_seen);
	tu_rmtree(d);
	free(d);
}

/* The layout upstream was probed with: its verdicts, file by file. */
/* Whether a folder above path holds .git (then path is inside a git work tree). */
static int
git_above(const char *path)
{
	char *d = xstrdup(path), *slash;
	int found = 0;

	while (!found && (slash = strrchr(d, '/')) != NULL && slash != d) {
		*slash = '\0';
		char *g = xasprintf("%s/.git", d);

		found = access(g, F_OK) == 0;
		free(g);
	}
	found |= access("/.git", F_OK) == 0;
	free(d);
	return found;
}

static void
test_walk_precedence(void **state)
{
	char *d = tu_mkdtemp(), *p;
	const char *files[] = {"repo/ign1", "repo/ignkeep", "repo/a/ign2", "repo/a/b/ign3",
		"repo/exc1", "repo/dot1", "repo/a/dot2", "repo/.git/HEAD", "nogit/foo1",
		"nogit/sub/foo2"};
	p = tu_path(d, "repo/a/b");
	tu_mkdirs(p), free(p);
	p = tu_path(d, "repo/.git/info");
	tu_mkdirs(p), free(p);
	p = tu_path(d, "nogit/sub");
	tu_mkdirs(p), free(p);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		p = tu_path(d, "%s", files[i]);
		tu_write(p, ""), free(p);
	}
	struct {
		const char *f, *t;
	} ign[] = {{"repo/.gitignore", "ign*\n!ignkeep\n"}, {"repo/a/b/.gitignore", "!ign3\n"},
		{"repo/.git/info/exclude", "exc*\n"}, {"repo/a/.ignore", "dot*\n"},
		{"repo/a/.gitignore", "!dot2\n"}, {"nogit/.gitignore", "foo*\n"}};
	for (size_t i = 0; i < sizeof(ign) / sizeof(ign[0]); i++) {
		p = tu_path(d, "%s", ign[i].f);
		tu_write(p, ign[i].t), free(p);
	}
	struct collect c;
	p = tu_path(d, "repo");
	search_sync(p, "1", &c);
	assert_false(has(&c, "ign1"));
	assert_false(has(&c, "exc1")); /* .git/info/exclude */
	assert_true(has(&c, "dot1"));  /* a/.ignore does not reach up */
	search_sync(p, "ign", &c);
	assert_true(has(&c, "ignkeep"));  /* negated */
	assert_false(has(&c, "a/ign2"));  /* parent .gitignore applies below */
	assert_true(has(&c, "a/b/ign3")); /* deeper negation wins */
	search_sync(p, "dot", &c);
	assert_false(has(&c, "a/dot2")); /* .ignore beats .gitignore's negation */
	search_sync(p, "head", &c);
	assert_true(has(&c, ".git/HEAD")); /* dot-folders are walked, .git too */
	free(p);
	p = tu_path(d, "nogit");
	if (git_above(p)) {
		/* e.g. a sandbox's leftover mode-000 placeholder /tmp/.git (docs/sandbox.md) */
		skip_note("test_walk_precedence: .gitignore outside a git work tree", 2,
			"a folder above the test's temporary folder holds .git");
	} else {
		search_sync(p, "foo", &c);
		assert_true(has(&c, "foo1")); /* no git work tree: .gitignore does not count */
		assert_true(has(&c, "sub/foo2"));
	}
	free(p);
	tu_rmtree(d);
	free(d);
}

/* Top results: order by score then path, limit 50, empty query gives nothing. */
static void
test_search_order_limit(void **state)
{
	char *d = tu_mkdtemp(), *p;
	for (int i = 0; i < 80; i++) {
		p = tu_path(d, "file%02d.txt", i);
		tu_write(p, ""), free(p);
	}
	p = tu_path(d, "deep/x");
	tu_mkdirs(p), free(p);
	p = tu_path(d, "deep/x/file");
	tu_write(p, ""), free(p);
	struct collect c;
	search_sync(d, "file", &c);
	assert_int_equal(c.n, SEARCH_LIMIT);
	assert_string_equal(c.names[0], "deep/x/file"); /* exact name */
	assert_string_equal(c.names[1], "file00.txt");
	assert_string_equal(c.names[2], "file01.txt");
	search_sync(d, "", &c);
	assert_int_equal(c.n, 0);
	tu_rmtree(d);
	free(d);
}

struct runner_ctx {
	int done;
	size_t hits;
	int cancelled;
	int ticks;
	double max_gap;
	double last;
	int updates;
	int completed;
	char last_query[64];
};

static void
done_cb(void *arg, const struct search_result *res, const char *const *roots)
{
	struct runner_ctx *c = arg;
	c->done++;
	c->hits = res->n;
	c->cancelled = res->cancelled;
}

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A 1 ms timer: measures how long the loop was away. */
static void
tick_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct runner_ctx *c = t->data;
	double n = now_s();
	if (c->last > 0 && n - c->last > c->max_gap)
		c->max_gap = n - c->last;
	c->last = n;
	c->ticks++;
}

static char *big_tree;

/* 100,000 files in 100 folders. */
static int
make_big_tree(void **state)
{
	big_tree = tu_mkdtemp();
	for (int dd = 0; dd < 100; dd++) {
		char *p = tu_path(big_tree, "d%03d", dd);
		tu_mkdirs(p);
		for (int f = 0; f < 1000; f++) {
			char *q = xasprintf("%s/f%04d.c", p, f);
			int fd = open(q, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			close(fd);
			free(q);
		}
		free(p);
	}
	return 0;
}

static int
drop_big_tree(void **state)
{
	tu_rmtree(big_tree);
	free(big_tree);
	return 0;
}

/* A search over 100,000 files runs off the loop: a 1 ms timer keeps firing promptly. */
static void
test_search_loop_responsive(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct search_runner *r = search_runner_new(loop);
	struct runner_ctx c = {0};
	ev_timer t;
	ev_timer_init(&t, tick_cb, 0.001, 0.001);
	t.data = &c;
	ev_timer_start(loop, &t);
	const char *roots[] = {big_tree};
	ev_tstamp t0 = ev_time(), total;

	assert_int_equal(search_run(r, "f0999", roots, 1, NULL, done_cb, &c), 0);
	while (!c.done)
		ev_run(loop, EVRUN_ONCE);
	total = ev_time() - t0;
	ev_timer_stop(loop, &t);
	assert_int_equal(c.hits, SEARCH_LIMIT);
	assert_false(c.cancelled);
	assert_true(c.ticks > 5);
	print_message("loop max gap during search: %.2f ms over %d ticks, search %.0f ms\n",
		c.max_gap * 1e3, c.ticks, total * 1e3);
	/*
	 * A search on the loop would show as one gap as long as the search; beside the loop the
	 * timer keeps firing, with gaps of the machine's scheduling only (50 ms seen on a loaded
	 * 2-core machine, so no fixed bound).
	 */
	assert_true(c.max_gap < total / 3);
	search_runner_free(r);
	ev_loop_destroy(loop);
}

/* A second search with the same token cancels the first mid-walk; both are answered. */
static void
test_search_cancel_token(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct search_runner *r = search_runner_new(loop);
	struct runner_ctx a = {0}, b = {0};
	const char *roots[] = {big_tree};
	assert_int_equal(search_run(r, "f0", roots, 1, "tok", done_cb, &a), 0);
	/* let the first one start walking */
	struct timespec ts = {0, 2000000};
	nanosleep(&ts, NULL);
	assert_int_equal(search_run(r, "f1", roots, 1, "tok", done_cb, &b), 0);
	while (!a.done || !b.done)
		ev_run(loop, EVRUN_ONCE);
	assert_true(a.cancelled);
	assert_false(b.cancelled);
	assert_int_equal(b.hits, SEARCH_LIMIT);
	search_runner_free(r);
	ev_loop_destroy(loop);
}

static void
sess_updated_cb(void *arg, const char *id, const char *query, const struct search_result *res,
	const char *const *roots)
{
	struct runner_ctx *c = arg;
	c->updates++;
	c->hits = res->n;
	snprintf(c->last_query, sizeof(c->last_query), "%s", query);
}

static void
sess_completed_cb(void *arg, const char *id)
{
	struct runner_ctx *c = arg;
	c->completed++;
}

/* Sessions: the latest query wins; a change on disk is seen by the next query. */
static void
test_session(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct search_runner *r = search_runner_new(loop);
	struct runner_ctx c = {0};
	struct search_session_cbs cbs = {sess_updated_cb, sess_completed_cb, &c};
	char *d = tu_mkdtemp(), *cause = NULL;
	const char *roots[] = {d};
	char *p = tu_path(d, "alpha.txt");
	tu_write(p, ""), free(p);
	assert_int_equal(search_session_update(r, "nope", "x", &cause), -ENOENT);
	assert_string_equal(cause, "fuzzy file search session not found: nope");
	free(cause);
	assert_int_equal(search_session_start(r, "s", roots, 1, &cbs, &cause), 0);
	assert_int_equal(search_session_update(r, "s", "alp", &cause), 0);
	assert_int_equal(search_session_update(r, "s", "alph", &cause), 0);
	while (c.completed < 1)
		ev_run(loop, EVRUN_ONCE);
	assert_string_equal(c.last_query, "alph");
	assert_int_equal(c.hits, 1);
	p = tu_path(d, "alphabet.md");
	tu_write(p, ""), free(p);
	/* let inotify's event reach the loop */
	for (int i = 0; i < 20; i++) {
		ev_run(loop, EVRUN_NOWAIT);
		usleep(1000);
	}
	assert_int_equal(search_session_update(r, "s", "alph", &cause), 0);
	while (c.completed < 2)
		ev_run(loop, EVRUN_ONCE);
	assert_int_equal(c.hits, 2);
	search_session_stop(r, "s");
	search_session_stop(r, "s");
	search_runner_free(r);
	ev_loop_destroy(loop);
	tu_rmtree(d);
	free(d);
}

/* A pseudo-random number (xorshift), so a failure can be replayed. */
static uint32_t
rnd(uint32_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 17;
	*st ^= *st << 5;
	return *st;
}

/* One random path of words from a small vocabulary (so queries hit), some non-ASCII. */
static void
random_path(uint32_t *st, char *out, size_t cap)
{
	static const char *const words[] = {"src", "lib", "main", "Main", "test", "util", "rs",
		"stdio", "x86_64", "gcc", "include", "README", "a", "b_c", "foo-bar", "café", "Ünï",
		".git", "HEAD", "mod", "io", "zz"};
	static const char *const exts[] = {"", ".c", ".h", ".rs", ".md", ".txt", ".o"};
	size_t len = 0, depth = 1 + rnd(st) % 5;

	out[0] = '\0';
	for (size_t d = 0; d < depth; d++) {
		const char *w = words[rnd(st) % nitems(words)];
		const char *x = d + 1 == depth ? exts[rnd(st) % nitems(exts)] : "";
		int n = snprintf(out + len, cap - len, "%s%s%s", d ? "/" : "", w, x);
		if (n < 0 || (size_t)n >= cap - len)
			break;
		len += (size_t)n;
	}
}

/* Slashes in a path. */
static size_t
depth(const char *p)
{
	size_t n = 0;

	for (; *p; p++)
		n += *p == '/';
	return n;
}

/* Is the path's last component the query, case included? */
static int
same_case(const char *path, const char *query)
{
	const char *slash = strrchr(path, '/');

	return strcmp(slash ? slash + 1 : path, query) == 0;
}

/* The plain way: score every entry, sort all, keep 50. */
static size_t
naive_query(char (*paths)[128], const int *dirs, size_t n, const char *query, char (*out)[128],
	uint32_t *scores)
{
	struct fuzzy_pattern p;
	struct fuzzy_matcher *m = fuzzy_matcher_new();
	struct {
		long s;
		size_t i;
	} *all = xcalloc(n + 1, sizeof(*all));
	size_t k = 0;

	long named = -1;

	if (fuzzy_pattern_parse(&p, query) == 0) {
		for (size_t i = 0; i < n; i++) {
			long s = fuzzy_score_path(
				m, &p, paths[i], strlen(paths[i]), dirs[i], NULL, NULL);
			if (s < 0)
				continue;
			/* one folder only keeps the exact-name tier: the shallowest, then smallest
			 */
			if (dirs[i] && s >= FUZZY_TIER_EXACT) {
				s -= FUZZY_TIER_EXACT;
				const char *o = named >= 0 ? paths[all[named].i] : NULL;
				if (o == NULL ||
					(same_case(paths[i], query) != same_case(o, query)
							? same_case(paths[i], query)
							: depth(paths[i]) != depth(o)
							? depth(paths[i]) < depth(o)
							: strcmp(paths[i], o) < 0))
					named = (long)k;
			}
			all[k].s = s;
			all[k++].i = i;
		}
		if (named >= 0)
			all[named].s += FUZZY_TIER_EXACT;
	}
	/* selection of the best 50 by (score desc, path asc) */
	size_t kept = 0;
	for (; kept < SEARCH_LIMIT && kept < k; kept++) {
		size_t b = kept;
		for (size_t j = kept + 1; j < k; j++) {
			if (all[j].s > all[b].s ||
				(all[j].s == all[b].s &&
					strcmp(paths[all[j].i], paths[all[b].i]) < 0))
				b = j;
		}
		typeof(all[0]) t = all[kept];
		all[kept] = all[b];
		all[b] = t;
		snprintf(out[kept], 128, "%s", paths[all[kept].i]);
		scores[kept] = (uint32_t)all[kept].s;
	}
	free(all);
	fuzzy_pattern_free(&p);
	fuzzy_matcher_free(m);
	return kept;
}

/*
 * The index's query (prefilters, name pass, bounds, two threads, dead entries) answers
 * exactly what scoring every entry answers.
 */
static void
test_query_matches_naive(void **state)
{
	static const char *const queries[] = {"main", "rs", "stdio", "s", "Main.c", "mainc",
		"src main", "^src", "rs$", "'lib", "!test", "x86", "cafe", "ünï", "a/b", "zz",
		"HEAD", "io.h", "foo-bar", ".git", "gcc x86 io", "^lib rs$", "readme", "mod/io"};
	enum { N = 40000 };
	char(*paths)[128] = xcalloc(N, 128);
	int *dirs = xcalloc(N, sizeof(int));
	char(*want)[128] = xcalloc(SEARCH_LIMIT, 128);
	uint32_t scores[SEARCH_LIMIT], st = 12345;
	struct search_index *ix = search_index_new();
	size_t n = 0;

	for (size_t i = 0; i < N; i++) {
		random_path(&st, paths[n], 128);
		dirs[n] = rnd(&st) % 5 == 0;
		if (search_index_lookup(ix, 0, paths[n], strlen(paths[n])) < 0 &&
			search_index_add(ix, 0, paths[n], strlen(paths[n]), dirs[n]) == 0)
			n++;
	}
	/* remove a tenth of the files: dead entries must not show */
	for (size_t i = 0; i < n; i += 10) {
		if (dirs[i])
			continue;
		search_index_remove(ix, 0, paths[i], strlen(paths[i]));
		paths[i][0] = '\0';
		dirs[i] = -1;
	}
	size_t live = 0;
	for (size_t i = 0; i < n; i++) {
		if (dirs[i] >= 0) {
			memmove(paths[live], paths[i], 128);
			dirs[live++] = dirs[i];
		}
	}
	assert_int_equal(search_index_count(ix), live);
	for (size_t q = 0; q < nitems(queries); q++) {
		struct search_result res;
		size_t k = naive_query(paths, dirs, live, queries[q], want, scores);
		search_index_query(ix, queries[q], NULL, &res);
		if (res.n != k)
			fail_msg("%s: %zu hits, naive %zu", queries[q], res.n, k);
		for (size_t i = 0; i < k; i++) {
			if (strcmp(res.hits[i].path, want[i]) != 0 ||
				res.hits[i].score != scores[i])
				fail_msg("%s #%zu: %s (%u), naive %s (%u)", queries[q], i,
					res.hits[i].path, res.hits[i].score, want[i], scores[i]);
		}
		search_result_free(&res);
	}
	search_index_free(ix);
	free(paths);
	free(dirs);
	free(want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gitignore_table),
		cmocka_unit_test(test_gitignore_negation),
		cmocka_unit_test(test_walk_precedence),
		cmocka_unit_test(test_walk_skips_pseudo),
		cmocka_unit_test(test_search_order_limit),
		cmocka_unit_test(test_query_matches_naive),
		cmocka_unit_test(test_session),
	};
	const struct CMUnitTest big[] = {
		cmocka_unit_test(test_search_loop_responsive),
		cmocka_unit_test(test_search_cancel_token),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	return r | cmocka_run_group_tests(big, make_big_tree, drop_big_tree);
}
