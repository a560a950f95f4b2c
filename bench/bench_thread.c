/*
 * bench_thread: the thread store measured in-process (no daemon): thread creation (plain,
 * durable, ephemeral), thread/list pages and a full index rebuild with N rollouts on disk, the
 * load of a 5,000-item thread (time and memory), and append throughput with the fsync policy
 * (one fdatasync per turn, on the sync worker). Synthetic rollouts have upstream's shape and
 * size (a 20 KB session_meta, a dozen records per turn).
 *
 *   bench_thread [--rollouts N] [--quick]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/benchlib.h"
#include "lib/rollgen.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/record.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_writer.h"
#include "thread/store/store.h"
#include "thread/uuidv7.h"

/* Current resident memory of this process in KiB. */
static long
bt_rss(void)
{
	long rss = 0, hwm = 0;

	bench_mem(getpid(), &rss, &hwm);
	return rss;
}

/* A store on home without a loop, its start-up scan finished. */
static struct store *
bt_open(const char *home)
{
	struct store_config cfg = {.home = home, .default_provider = "bench"};
	struct store *s;
	char *cause = NULL;

	if (store_open(&cfg, &s, &cause) != 0) {
		fprintf(stderr, "bench_thread: %s\n", cause);
		exit(1);
	}
	store_drain(s);
	return s;
}

/* Captures a list answer. */
struct bt_list {
	json_t *result;
	int r;
};

static void
bt_list_cb(void *arg, int r, json_t *result, const char *cause)
{
	struct bt_list *l = arg;

	l->r = r;
	l->result = result;
}

/* Create: plain (rollout written, sync queued), durable (until fdatasync done), ephemeral. */
static void
bt_create(struct bench_report *rep, const char *home, int n)
{
	struct store *s = bt_open(home);
	double *plain = xcalloc(n, sizeof *plain), *durable = xcalloc(n, sizeof *durable);
	double *eph = xcalloc(n, sizeof *eph);
	struct store_params ep = {.ephemeral = 1};
	char *cause = NULL;

	for (int i = 0; i < n; i++) {
		struct store_thread *t;
		double t0 = bench_now();

		if (store_create(s, NULL, &t, &cause) != 0)
			bench_fail(rep, "create", cause, -1);
		plain[i] = (bench_now() - t0) * 1e3;
		store_drain(s);
		durable[i] = (bench_now() - t0) * 1e3;
		t0 = bench_now();
		if (store_create(s, &ep, &t, &cause) != 0)
			bench_fail(rep, "create", cause, -1);
		eph[i] = (bench_now() - t0) * 1e3;
	}
	bench_fig(rep, "create (answer ready)", bench_median(plain, n), "ms", '<', 1.0, NULL);
	bench_fig(rep, "create + fdatasync done", bench_median(durable, n), "ms", 0, 0,
		"file, day folder and parents synced on the worker");
	bench_fig(rep, "create ephemeral", bench_median(eph, n), "ms", '<', 0.3, NULL);
	store_free(s);
	free(plain);
	free(durable);
	free(eph);
}

/* Memory and fds of 1,000 loaded threads (each created, so each has a rollout). */
static void
bt_loaded(struct bench_report *rep, const char *home)
{
	struct store *s = bt_open(home);
	struct store_thread *t;
	char *cause = NULL, note[96];
	long rss0 = bt_rss(), rss1;

	for (int i = 0; i < 1000; i++)
		if (store_create(s, NULL, &t, &cause) != 0)
			bench_fail(rep, "loaded", cause, -1);
	store_drain(s);
	rss1 = bt_rss();
	snprintf(note, sizeof note, "whole process: %.1f MiB", rss1 / 1024.0);
	bench_fig(rep, "1,000 loaded threads: memory", (rss1 - rss0) / 1024.0, "MiB", 0, 0, note);
	store_free(s);
}

/* N rollouts over 120 days, a full rebuild, then first and later list pages of 50. */
static void
bt_list(struct bench_report *rep, const char *home, int n)
{
	char *filler = xmalloc(20001), id[37], note[96];
	int64_t base = rollout_now_ms() - 120LL * 86400 * 1000;
	double t0, *first, *later;
	struct store *s;
	int pages = 0;

	memset(filler, 'x', 20000);
	for (int i = 0; i < 20000; i += 80)
		filler[i] = '\n';
	filler[20000] = '\0';
	t0 = bench_now();
	for (int i = 0; i < n; i++)
		bench_rollout_write(
			home, base + (int64_t)i * (120LL * 86400 * 1000 / n), filler, 1, 4, id);
	snprintf(note, sizeof note, "%d rollouts written in %.1f s", n, bench_now() - t0);
	free(filler);
	t0 = bench_now();
	s = bt_open(home); /* no index yet: the first scan is a full build */
	bench_fig(rep, "index rebuild", bench_now() - t0, "s", '<', 2.0, note);
	first = xcalloc(21, sizeof *first);
	later = xcalloc(n / 50 + 2, sizeof *later);
	for (int k = 0; k < 21; k++) {
		struct store_list_params p = {.limit = 50};
		struct bt_list l = {0};

		t0 = bench_now();
		store_list(s, &p, bt_list_cb, &l);
		first[k] = (bench_now() - t0) * 1e3;
		if (l.r != 0 || json_array_size(json_object_get(l.result, "data")) != 50)
			bench_fail(rep, "list", "first page is not 50 threads", l.r);
		json_decref(l.result);
	}
	bench_fig(rep, "list first page of 50", bench_median(first, 21), "ms", '<', 5.0, NULL);
	char *cursor = NULL;
	int seen = 0;
	do {
		struct store_list_params p = {.limit = 50, .cursor = cursor};
		struct bt_list l = {0};

		t0 = bench_now();
		store_list(s, &p, bt_list_cb, &l);
		later[pages++] = (bench_now() - t0) * 1e3;
		seen += (int)json_array_size(json_object_get(l.result, "data"));
		free(cursor);
		cursor = json_is_string(json_object_get(l.result, "nextCursor"))
			? xstrdup(json_string_value(json_object_get(l.result, "nextCursor")))
			: NULL;
		json_decref(l.result);
	} while (cursor != NULL);
	if (seen != n)
		bench_fail(rep, "list", "pages did not cover every thread once", -1);
	bench_sort(later, pages);
	bench_fig(rep, "list later page of 50 (median)", bench_median(later, pages), "ms", '<', 5.0,
		NULL);
	bench_fig(rep, "list later page of 50 (worst)", later[pages - 1], "ms", '<', 5.0, NULL);
	store_free(s);
	free(first);
	free(later);
}

/* A 5,000-item thread: resume with all turns, and one turns/list page. */
static void
bt_load(struct bench_report *rep, const char *home)
{
	char *filler = xstrdup("base instructions of a bench thread"), id[37], *cause = NULL;
	char note[96];
	struct store *s;
	struct store_thread *t;
	json_t *turns, *page;
	long rss0, rss1;
	double t0, dt;

	memset(id, 0, sizeof id);
	{
		/* 1,000 turns of 5 items. */
		char *padded = xmalloc(4001);

		memset(padded, 'y', 4000);
		padded[4000] = '\0';
		bench_rollout_write(home, rollout_now_ms(), padded, 1000, 5, id);
		free(padded);
	}
	free(filler);
	s = bt_open(home);
	t0 = bench_now();
	if (store_resume(s, id, NULL, &t, &cause) != 0)
		bench_fail(rep, "load", cause ? cause : "resume failed", -1);
	bench_fig(rep, "resume 5,000-item thread (excludeTurns)", (bench_now() - t0) * 1e3, "ms",
		'<', 50.0, NULL);
	store_unload(t);
	rss0 = bt_rss();
	t0 = bench_now();
	if (store_resume(s, id, NULL, &t, &cause) != 0 ||
		(turns = store_thread_turns(t, &cause)) == NULL)
		bench_fail(rep, "load", cause ? cause : "resume failed", -1);
	dt = bench_now() - t0;
	rss1 = bt_rss();
	size_t items = 0;
	for (size_t i = 0; i < json_array_size(turns); i++)
		items += json_array_size(json_object_get(json_array_get(turns, i), "items"));
	if (items != 5000)
		bench_fail(rep, "load", "the thread did not read back 5,000 items", (int)items);
	bench_fig(
		rep, "resume 5,000-item thread, turns as objects", dt * 1e3, "ms", '<', 50.0, NULL);
	bench_fig(rep, "  memory held by those objects", (rss1 - rss0) / 1024.0, "MiB", 0, 0, NULL);
	json_decref(turns);
	store_unload(t);
	{
		struct buf text;

		buf_init(&text, 256u << 20);
		rss0 = bt_rss();
		t0 = bench_now();
		if (store_resume(s, id, NULL, &t, &cause) != 0 ||
			store_thread_turns_text(t, &text, &cause) != 0)
			bench_fail(rep, "load", cause ? cause : "resume failed", -1);
		dt = bench_now() - t0;
		rss1 = bt_rss();
		bench_fig(rep, "resume 5,000-item thread, turns as text", dt * 1e3, "ms", '<', 50.0,
			NULL);
		snprintf(note, sizeof note, "%.1f MiB of JSON text", text.len / 1048576.0);
		bench_fig(rep, "  memory held by the text", (rss1 - rss0) / 1024.0, "MiB", 0, 0,
			note);
		buf_free(&text);
	}
	struct store_page_params pp = {.limit = 25};
	t0 = bench_now();
	store_turns_list(s, id, &pp, &page, &cause); /* builds the turn index */
	bench_fig(rep, "turns/list first page (index built)", (bench_now() - t0) * 1e3, "ms", 0, 0,
		NULL);
	json_decref(page);
	t0 = bench_now();
	store_turns_list(s, id, &pp, &page, &cause);
	bench_fig(
		rep, "turns/list page (index cached)", (bench_now() - t0) * 1e3, "ms", 0, 0, NULL);
	json_decref(page);
	store_free(s);
}

/* Records per second through the append API, one turn (and fdatasync) per 100 records. */
static void
bt_append(struct bench_report *rep, const char *home, int n)
{
	struct store *s = bt_open(home);
	struct store_thread *t;
	char *cause = NULL, turn[37];
	json_t *item = json_pack("{s:s,s:s,s:s}", "type", "agentMessage", "id", "m", "text",
		"a typical streamed answer of a few dozen words, as the model writes them");
	double t0;
	int written = 0;

	if (store_create(s, NULL, &t, &cause) != 0)
		bench_fail(rep, "append", cause, -1);
	t0 = bench_now();
	while (written < n) {
		store_turn_begin(t, NULL, turn, &cause);
		written += 2;
		for (int i = 0; i < 97 && written < n; i++, written++)
			if (store_append_item(t, item, 0, 0) != 0)
				bench_fail(rep, "append", "append failed", -1);
		store_turn_end(t, STORE_TURN_COMPLETED, NULL, NULL, NULL);
		written++;
		store_poll(s);
	}
	store_drain(s); /* every turn's fdatasync included */
	bench_fig(rep, "append throughput (fdatasync per turn)", written / (bench_now() - t0),
		"records/s", '>', 50000, "97 items per turn");
	json_decref(item);
	store_free(s);
}

int
main(int argc, char **argv)
{
	struct bench_report rep = {0};
	int rollouts = 10000, quick = 0;
	char tmpl[64];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rollouts") == 0 && i + 1 < argc)
			rollouts = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--bin") == 0 && i + 1 < argc)
			i++; /* make bench passes the daemon; this bench runs in-process */
		else {
			fprintf(stderr, "usage: bench_thread [--rollouts N] [--quick]\n");
			return 2;
		}
	}
	if (quick)
		rollouts = 1000;
	if (getenv("BENCH_THREAD_KEEP") != NULL) {
		/* Only write the rollouts into that home (for profiling the scan). */
		char *filler = xmalloc(20001), id[37];

		memset(filler, 'x', 20000);
		filler[20000] = '\0';
		for (int i = 0; i < rollouts; i++)
			bench_rollout_write(getenv("BENCH_THREAD_KEEP"),
				rollout_now_ms() - (int64_t)i * 600000, filler, 1, 4, id);
		free(filler);
		return 0;
	}
	rep.width.name = 40;
	const char *parts[] = {"create", "list", "load", "append"};
	for (size_t k = 0; k < 4; k++) {
		snprintf(tmpl, sizeof tmpl, "/tmp/bench-thread-XXXXXX");
		if (bench_home_make(tmpl) != 0)
			return 2;
		if (k == 0) {
			bt_create(&rep, tmpl, quick ? 50 : 300);
			bt_loaded(&rep, tmpl);
		} else if (k == 1)
			bt_list(&rep, tmpl, rollouts);
		else if (k == 2)
			bt_load(&rep, tmpl);
		else
			bt_append(&rep, tmpl, quick ? 20000 : 200000);
		bench_rmtree(tmpl);
		(void)parts;
	}
	bench_print(&rep);
	int failed = rep.failed;
	bench_report_free(&rep);
	return failed ? 1 : 0;
}
