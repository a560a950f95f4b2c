/*
 * Tests for the rollout file layer: UUIDv7 ids, the writer (one write per record, ordinals,
 * torn-tail repair), the streaming reader (torn, hostile and oversized lines skipped, unknown
 * records kept, older records without ordinals), backwards scans and head/tail summaries.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <time.h>

#include "thread_util.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_lock.h"
#include "thread/rollout/rollout_reader.h"
#include "thread/rollout/rollout_summary.h"
#include "thread/rollout/rollout_writer.h"
#include "thread/uuidv7.h"

/* Ids made in a row sort in order, carry version 7 and the variant bits. */
static void
test_uuid(void **state)
{
	char prev[37] = "", id[37];
	char *cause = NULL;

	for (int i = 0; i < 5000; i++) {
		uuidv7_new_at(id, 1795464935320);
		assert_int_equal(strlen(id), 36);
		assert_int_equal(id[14], '7');
		assert_non_null(strchr("89ab", id[19]));
		assert_true(strcmp(prev, id) < 0);
		memcpy(prev, id, sizeof id);
	}
	assert_true(uuidv7_ms(id) >= 1795464935320);
	assert_int_equal(uuidv7_ms("01a20a0c-b798-75b1-b836-10792fc4c370"), 1795464935320);
	assert_int_equal(uuidv7_check("01a20a0c-b798-75b1-b836-10792fc4c370", NULL), 0);
	assert_int_equal(uuidv7_check("not-a-uuid", &cause), -EINVAL);
	assert_string_equal(cause,
		"invalid character: expected an optional prefix of `urn:uuid:` "
		"followed by [0-9a-fA-F-], found `n` at 1");
	free(cause);
	assert_int_equal(uuidv7_check("01a20a0c", &cause), -EINVAL);
	assert_string_equal(cause, "invalid length: expected length 32 for simple format, found 8");
	free(cause);
	assert_int_equal(uuidv7_check("01a20a0c-b798-75b1-b836", &cause), -EINVAL);
	assert_string_equal(cause, "invalid group count: expected 5, found 4");
	free(cause);
}

/* Timestamps format and parse back, paths follow upstream's layout. */
static void
test_paths(void **state)
{
	char ts[ROLLOUT_TS_LEN + 1], id[37];
	int64_t ms;
	char *p, *a, *u;

	rollout_ts_format(1795464934281, ts);
	assert_string_equal(ts, "2026-11-23T20:15:34.281Z");
	assert_int_equal(rollout_ts_parse(ts, &ms), 0);
	assert_int_equal(ms, 1795464934281);
	assert_int_equal(rollout_ts_parse("2026-11-23T20:15:34Z", &ms), 0);
	assert_int_equal(ms, 1795464934000);
	assert_int_equal(rollout_ts_parse("2026-11-23T21:15:34.5+01:00", &ms), 0);
	assert_int_equal(ms, 1795464934500);
	assert_int_equal(rollout_ts_parse("yesterday", &ms), -EINVAL);
	/* the date arithmetic agrees with timegm, days past a month's end and leap days too */
	for (int y = 0; y <= 9999; y += 37)
		for (int mo = 1; mo <= 12; mo++)
			for (int d = 1; d <= 31; d += 3) {
				struct tm tm = {.tm_year = y - 1900,
					.tm_mon = mo - 1,
					.tm_mday = d,
					.tm_hour = 23,
					.tm_min = 59,
					.tm_sec = 60};
				char s[64];

				snprintf(
					s, sizeof s, "%04d-%02d-%02dT23:59:60.123-02:30", y, mo, d);
				assert_int_equal(rollout_ts_parse(s, &ms), 0);
				assert_int_equal(
					ms, ((int64_t)timegm(&tm) + 150 * 60) * 1000 + 123);
			}
	assert_int_equal(rollout_ts_parse("2024-02-29T00:00:00Z", &ms), 0);
	assert_int_equal(ms, 1709164800000);
	setenv("TZ", "UTC", 1);
	tzset();
	p = rollout_path_new("/h", "01a20a0c-b798-75b1-b836-10792fc4c370", 1795464935320);
	assert_string_equal(p,
		"/h/sessions/2026/11/23/rollout-2026-11-23T20-15-35-"
		"01a20a0c-b798-75b1-b836-10792fc4c370.jsonl");
	assert_int_equal(rollout_name_id(p, id), 0);
	assert_string_equal(id, "01a20a0c-b798-75b1-b836-10792fc4c370");
	a = rollout_path_archived("/h", p);
	assert_string_equal(a,
		"/h/archived_sessions/rollout-2026-11-23T20-15-35-"
		"01a20a0c-b798-75b1-b836-10792fc4c370.jsonl");
	u = rollout_path_unarchived("/h", a);
	assert_string_equal(u, p);
	assert_int_equal(rollout_name_id("/h/sessions/notes.txt", id), -EINVAL);
	free(p);
	free(a);
	free(u);
}

/* Read every record of path into an array of {type, ordinal, payload}. */
static json_t *
read_all(const char *path, size_t *skipped)
{
	struct rollout_reader *r;
	struct rollout_rec rec;
	json_t *out = json_array();

	assert_int_equal(rollout_reader_open(path, 0, -1, &r), 0);
	while (rollout_reader_next(r, &rec) == 1)
		json_array_append_new(out,
			json_pack("{s:s,s:I,s:O}", "type", rec.type, "ordinal",
				(json_int_t)rec.ordinal, "payload",
				rec.payload ? rec.payload : json_null()));
	if (skipped != NULL)
		*skipped = rollout_reader_skipped(r);
	rollout_reader_close(r);
	return out;
}

/* Append raw bytes to a file (a crash's torn write, a foreign line). */
static void
append_bytes(const char *path, const char *s)
{
	FILE *f = fopen(path, "ab");

	assert_non_null(f);
	fwrite(s, 1, strlen(s), f);
	fclose(f);
}

/* What the writer writes, the reader reads, with ordinals counting from 0. */
static void
test_round_trip(void **state)
{
	char *dir = tu_tmpdir("rt"), *path = xasprintf("%s/a/b/rollout.jsonl", dir), *cause = NULL;
	struct rollout_writer *w;
	json_t *got;

	assert_int_equal(rollout_writer_create(path, &w, &cause), 0);
	for (int i = 0; i < 100; i++) {
		json_t *p =
			json_pack("{s:s,s:i,s:s}", "type", i % 2 ? "item_completed" : "token_count",
				"n", i, "text", "line\nwith \"quotes\" and é");

		assert_int_equal(
			rollout_writer_append(w, 0, i % 3 ? "event_msg" : "response_item", p), 0);
		json_decref(p);
	}
	assert_int_equal(rollout_writer_next_ordinal(w), 100);
	rollout_writer_close(w);
	got = read_all(path, NULL);
	assert_int_equal(json_array_size(got), 100);
	for (int i = 0; i < 100; i++) {
		json_t *rec = json_array_get(got, i);

		assert_int_equal(json_integer_value(json_object_get(rec, "ordinal")), i);
		assert_int_equal(
			json_integer_value(json_object_get(json_object_get(rec, "payload"), "n")),
			i);
		assert_string_equal(
			json_string_value(json_object_get(json_object_get(rec, "payload"), "text")),
			"line\nwith \"quotes\" and é");
	}
	/* A second create of the same path refuses (O_EXCL): a rollout is never replaced. */
	assert_int_equal(rollout_writer_create(path, &w, &cause), -EEXIST);
	free(cause);
	json_decref(got);
	tu_rmrf(dir);
	free(dir);
	free(path);
}

/* Entries of a folder other than . and .. (*hidden: how many of them are dot names). */
static int
entries_hidden(const char *dir, int *hidden)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	*hidden = 0;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n++;
		*hidden += e->d_name[0] == '.';
	}
	closedir(d);
	return n;
}

/* Entries a scan sees: not . and .., and no dot name left over. */
static int
entries(const char *dir)
{
	int hidden, n = entries_hidden(dir, &hidden);

	return n - hidden;
}

/*
 * Found by tests/soak/lifecycle_soak.py: a kill during thread/start or fork left an empty or
 * half-copied rollout. A hidden rollout is nowhere until published, whole; one never published
 * leaves nothing; publishing never replaces a file at its path.
 */
static void
hidden_until_published(void)
{
	char *dir = tu_tmpdir("hidden"), *day = xasprintf("%s/sessions/2026/11/26", dir);
	char *path = xasprintf("%s/rollout-a.jsonl", day),
	     *other = xasprintf("%s/rollout-b.jsonl", day);
	char *cause = NULL;
	struct rollout_writer *w, *v;
	json_t *p = json_pack("{s:s}", "type", "x"), *got;
	struct stat st;
	int hidden;

	assert_int_equal(rollout_writer_create_hidden(path, &w, &cause), 0);
	assert_false(rollout_writer_published(w));
	for (int i = 0; i < 3; i++)
		assert_int_equal(rollout_writer_append(w, 0, "event_msg", p), 0);
	rollout_writer_suspend(w); /* refused while hidden: the fd is the file */
	assert_false(rollout_writer_suspended(w));
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(entries(day), 0);
	assert_int_equal(entries_hidden(day, &hidden), rollout_writer_no_tmpfile ? 1 : 0);
	assert_int_equal(rollout_writer_publish(w, &cause), 0);
	assert_true(rollout_writer_published(w));
	assert_int_equal(rollout_writer_publish(w, &cause), 0); /* once is enough */
	assert_int_equal(entries(day), 1);
	got = read_all(path, NULL);
	assert_int_equal(json_array_size(got), 3);
	json_decref(got);
	/* appends after the link land in the same file */
	assert_int_equal(rollout_writer_append(w, 0, "event_msg", p), 0);
	rollout_writer_close(w);
	got = read_all(path, NULL);
	assert_int_equal(json_array_size(got), 4);
	json_decref(got);
	/* never published (a crash, or a failed fork): nothing left */
	assert_int_equal(rollout_writer_create_hidden(other, &v, &cause), 0);
	assert_int_equal(rollout_writer_append(v, 0, "event_msg", p), 0);
	rollout_writer_close(v);
	assert_int_equal(entries_hidden(day, &hidden), 1);
	assert_int_equal(hidden, 0);
	/* the path taken: refused at once, or at the link, and the file there is untouched */
	assert_int_equal(rollout_writer_create_hidden(path, &v, &cause), -EEXIST);
	free(cause);
	assert_int_equal(rollout_writer_create_hidden(other, &v, &cause), 0);
	assert_int_equal(rollout_writer_append(v, 0, "event_msg", p), 0);
	assert_int_equal(rename(path, other), 0);
	cause = NULL;
	assert_int_equal(rollout_writer_publish(v, &cause), -EEXIST);
	assert_non_null(cause);
	free(cause);
	rollout_writer_close(v);
	got = read_all(other, NULL);
	assert_int_equal(json_array_size(got), 4);
	json_decref(got);
	assert_int_equal(entries_hidden(day, &hidden), 1); /* no dot name left behind */
	assert_int_equal(hidden, 0);
	json_decref(p);
	tu_rmrf(dir);
	free(dir);
	free(day);
	free(path);
	free(other);
}

static void
test_hidden_until_published(void **state)
{
	hidden_until_published();
}

/* The same where the filesystem has no O_TMPFILE: a dot name, gone once published or closed. */
static void
test_hidden_without_tmpfile(void **state)
{
	rollout_writer_no_tmpfile = 1;
	hidden_until_published();
	rollout_writer_no_tmpfile = 0;
}

/* Half a line from a crash: ignored on read, cut before the next append, nothing else lost. */
static void
test_torn_tail(void **state)
{
	char *dir = tu_tmpdir("torn"), *path = xasprintf("%s/rollout.jsonl", dir), *cause = NULL;
	struct rollout_writer *w;
	json_t *p = json_pack("{s:s}", "type", "x"), *got;
	size_t len;

	assert_int_equal(rollout_writer_create(path, &w, &cause), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rollout_writer_append(w, 0, "event_msg", p), 0);
	rollout_writer_close(w);
	append_bytes(
		path, "{\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"ordinal\":3,\"type\":\"ev");
	got = read_all(path, NULL);
	assert_int_equal(json_array_size(got), 3);
	json_decref(got);
	assert_int_equal(rollout_writer_open(path, &w, &cause), 0);
	assert_int_equal(rollout_writer_next_ordinal(w), 3);
	assert_int_equal(rollout_writer_append(w, 0, "event_msg", p), 0);
	rollout_writer_close(w);
	got = read_all(path, NULL);
	assert_int_equal(json_array_size(got), 4);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(got, 3), "ordinal")), 3);
	char *text = tu_read(path, &len);
	assert_null(strstr(text, "\"type\":\"ev{")); /* the torn bytes are gone, not glued */
	assert_int_equal(text[len - 1], '\n');
	free(text);
	json_decref(got);
	json_decref(p);
	tu_rmrf(dir);
	free(dir);
	free(path);
}

/* A suspended writer gives its fd back; on waking it continues after records others added. */
static void
test_suspend(void **state)
{
	char *dir = tu_tmpdir("susp"), *path = xasprintf("%s/rollout.jsonl", dir), *cause = NULL;
	struct rollout_writer *a, *b;
	json_t *p = json_object(), *got;

	assert_int_equal(rollout_writer_create(path, &a, &cause), 0);
	assert_int_equal(rollout_writer_append(a, 0, "event_msg", p), 0);
	rollout_writer_suspend(a);
	assert_true(rollout_writer_suspended(a));
	assert_int_equal(rollout_writer_open(path, &b, &cause), 0); /* another process, say */
	assert_int_equal(rollout_writer_append(b, 0, "event_msg", p), 0);
	assert_int_equal(rollout_writer_append(b, 0, "event_msg", p), 0);
	rollout_writer_close(b);
	append_bytes(
		path, "{\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"ordi"); /* and it crashed */
	assert_int_equal(rollout_writer_append(a, 0, "event_msg", p), 0);
	assert_false(rollout_writer_suspended(a));
	rollout_writer_close(a);
	got = read_all(path, NULL);
	assert_int_equal(json_array_size(got), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(
			json_integer_value(json_object_get(json_array_get(got, i), "ordinal")), i);
	json_decref(got);
	json_decref(p);
	tu_rmrf(dir);
	free(dir);
	free(path);
}

/* A child process holding a writer on path until killed; its pid. */
static pid_t
writer_child(const char *path)
{
	int ready[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rollout_writer *w;
		char *cause = NULL;

		close(ready[0]);
		if (rollout_writer_open(path, &w, &cause) != 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

/*
 * One writer per rollout across processes: a second one fails naming the first, a suspended
 * writer cannot wake while another holds it, and a killed holder frees it at once.
 */
static void
test_active_writer(void **state)
{
	char *dir = tu_tmpdir("lock"), *path = xasprintf("%s/rollout.jsonl", dir), *cause = NULL;
	char *want;
	struct rollout_writer *a, *b;
	json_t *p = json_object();
	pid_t child;
	int status;

	(void)state;
	assert_int_equal(rollout_writer_create(path, &a, &cause), 0);
	assert_int_equal(rollout_writer_append(a, 0, "event_msg", p), 0);
	/* In this process too: a second writer of the same file is refused. */
	assert_int_equal(rollout_writer_open(path, &b, &cause), -EBUSY);
	free(cause);
	cause = NULL;
	rollout_writer_suspend(a); /* gives the lock back */
	child = writer_child(path);
	assert_int_equal(rollout_lock_holder(path), child);
	assert_int_equal(rollout_writer_open(path, &b, &cause), -EBUSY);
	want = xasprintf("process %d (", (int)child);
	if (strstr(cause, want) == NULL || strstr(cause, path) == NULL)
		fail_msg("cause \"%s\" does not name %s and the path", cause, want);
	free(cause);
	cause = NULL;
	assert_int_equal(rollout_writer_append(a, 0, "event_msg", p), -EBUSY);
	assert_true(rollout_writer_suspended(a));
	/* A crash of the holder frees the rollout at once. */
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(rollout_lock_holder(path), 0);
	assert_int_equal(rollout_writer_append(a, 0, "event_msg", p), 0);
	assert_int_equal(rollout_lock_holder(path), getpid());
	rollout_writer_close(a);
	assert_int_equal(rollout_writer_open(path, &b, &cause), 0);
	rollout_writer_close(b);
	json_decref(p);
	free(want);
	tu_rmrf(dir);
	free(dir);
	free(path);
}

/* Garbage, non-records and over-long lines are skipped; unknown types and old records kept. */
static void
test_hostile_lines(void **state)
{
	char *dir = tu_tmpdir("hostile"), *path = xasprintf("%s/rollout.jsonl", dir), *cause = NULL;
	struct rollout_writer *w;
	json_t *got;
	size_t skipped;
	char *big = xmalloc(ROLLOUT_LINE_MAX + 2);

	append_bytes(path,
		"{\"timestamp\":\"2025-01-01T00:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n");
	append_bytes(path, "not json at all\n[1,2,3]\n{\"no\":\"type\"}\n\n");
	memset(big, 'a', ROLLOUT_LINE_MAX + 1);
	big[0] = '"';
	big[ROLLOUT_LINE_MAX + 1] = '\0';
	append_bytes(path, big);
	append_bytes(path, "\n");
	append_bytes(path,
		"{\"timestamp\":\"2025-01-01T00:00:01Z\",\"type\":\"a_record_from_the_future\",\"payload\":{\"k\":1}}\n");
	got = read_all(path, &skipped);
	assert_int_equal(json_array_size(got), 2);
	assert_int_equal(skipped, 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(got, 1), "type")),
		"a_record_from_the_future");
	assert_int_equal(
		json_integer_value(json_object_get(json_array_get(got, 0), "ordinal")), -1);
	json_decref(got);
	/* A file without ordinals gets none appended either (upstream's legacy mode). */
	assert_int_equal(rollout_writer_open(path, &w, &cause), 0);
	assert_int_equal(rollout_writer_next_ordinal(w), -1);
	json_t *p = json_object();
	assert_int_equal(rollout_writer_append(w, 0, "event_msg", p), 0);
	json_decref(p);
	rollout_writer_close(w);
	got = read_all(path, NULL);
	assert_int_equal(json_array_size(got), 3);
	assert_int_equal(
		json_integer_value(json_object_get(json_array_get(got, 2), "ordinal")), -1);
	json_decref(got);
	free(big);
	tu_rmrf(dir);
	free(dir);
	free(path);
}

/*
 * Found by tests/fuzz/fuzz_rollout.c: in lean mode a bulky member shorter than "null"
 * ("dynamic_tools":[], "base_instructions":"") was overwritten past the end of the line's copy
 * (a heap overflow) and the session_meta line came out garbled, so it was skipped.
 */
static void
test_lean_short_values(void **state)
{
	char *dir = tu_tmpdir("lean"), *path = xasprintf("%s/rollout.jsonl", dir), *line;
	char pad[3000];
	struct rollout_reader *r;
	struct rollout_rec rec;

	/* Lean mode is for long lines only: pad them past 2 KB. */
	memset(pad, 'p', sizeof pad - 1);
	pad[sizeof pad - 1] = '\0';
	line = xasprintf("{\"timestamp\":\"2025-01-01T00:00:00Z\",\"type\":\"session_meta\","
			 "\"payload\":{\"base_instructions\":\"\",\"id\":\"x\",\"pad\":\"%s\","
			 "\"dynamic_tools\":[]}}\n",
		pad);
	append_bytes(path, line);
	free(line);
	line = xasprintf("{\"timestamp\":\"2025-01-01T00:00:00Z\",\"type\":\"session_meta\","
			 "\"payload\":{\"pad\":\"%s\",\"dynamic_tools\":1}}\n",
		pad);
	append_bytes(path, line);
	free(line);
	assert_int_equal(rollout_reader_open(path, 0, -1, &r), 0);
	rollout_reader_lean(r, 1);
	assert_int_equal(rollout_reader_next(r, &rec), 1);
	assert_string_equal(rec.type, "session_meta");
	assert_string_equal(json_string_value(json_object_get(rec.payload, "id")), "x");
	assert_true(json_is_null(json_object_get(rec.payload, "base_instructions")));
	assert_true(json_is_null(json_object_get(rec.payload, "dynamic_tools")));
	assert_int_equal(rollout_reader_next(r, &rec), 1);
	assert_true(json_is_null(json_object_get(rec.payload, "dynamic_tools")));
	assert_int_equal(rollout_reader_next(r, &rec), 0);
	assert_int_equal(rollout_reader_skipped(r), 0);
	rollout_reader_close(r);
	tu_rmrf(dir);
	free(dir);
	free(path);
}

/* Collect lines of a backwards scan. */
static int
collect_cb(void *arg, const char *line, size_t len, off_t off)
{
	json_array_append_new(arg, json_stringn(line, len));
	return 0;
}

/* Backwards scans see every line, newest first, across chunk boundaries. */
static void
test_scan_back(void **state)
{
	char *dir = tu_tmpdir("back"), *path = xasprintf("%s/f", dir);
	json_t *lines = json_array();
	struct buf b;
	int fd;
	off_t good;

	buf_init(&b, 1u << 24);
	for (int i = 0; i < 3000; i++) {
		buf_printf(&b, "line-%d-", i);
		for (int k = 0; k < i % 97; k++)
			buf_addc(&b, 'x');
		buf_addc(&b, '\n');
	}
	tu_write(path, b.ptr, b.len);
	fd = open(path, O_RDONLY);
	assert_int_equal(rollout_good_end(fd, &good), 0);
	assert_int_equal((size_t)good, b.len);
	assert_int_equal(rollout_scan_back(fd, good, 1u << 24, collect_cb, lines), 0);
	close(fd);
	assert_int_equal(json_array_size(lines), 3000);
	assert_true(strncmp(json_string_value(json_array_get(lines, 0)), "line-2999-", 10) == 0);
	assert_string_equal(json_string_value(json_array_get(lines, 2999)), "line-0-");
	json_decref(lines);
	buf_free(&b);
	tu_rmrf(dir);
	free(dir);
	free(path);
}

/* Head and tail of an upstream rollout give what upstream's thread/list showed. */
static void
test_summary(void **state)
{
	struct tu_home h;
	struct thread_meta m;
	char *path;

	tu_fixture_home(&h);
	path = tu_find_rollout(h.home, "01a20a0c-b468-78b2-bf39-00fe6c3fbe3f");
	assert_int_equal(rollout_summarize(path, &m), 0);
	assert_string_equal(m.id, "01a20a0c-b468-78b2-bf39-00fe6c3fbe3f");
	assert_string_equal(m.preview, "run echo");
	assert_true(m.has_user_message);
	assert_string_equal(m.model, "mock-model");
	assert_string_equal(m.model_provider, "mock_provider");
	assert_string_equal(m.originator, "fixture");
	assert_int_equal(m.created_ms / 1000, 1795464934);
	assert_int_equal(m.updated_ms / 1000, 1795464935);
	assert_int_equal(m.recency_ms / 1000, 1795464934);
	assert_int_equal(m.tokens.total, 30);
	assert_string_equal(m.cwd, h.ws);
	thread_meta_clear(&m);
	free(path);
	tu_home_free(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uuid),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_torn_tail),
		cmocka_unit_test(test_hidden_until_published),
		cmocka_unit_test(test_hidden_without_tmpfile),
		cmocka_unit_test(test_suspend),
		cmocka_unit_test(test_active_writer),
		cmocka_unit_test(test_hostile_lines),
		cmocka_unit_test(test_lean_short_values),
		cmocka_unit_test(test_scan_back),
		cmocka_unit_test(test_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
