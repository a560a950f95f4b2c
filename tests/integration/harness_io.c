/*
 * The integration harness's message stream (harness.h, harness_int.h). Checking rule: a line is
 * checked the moment it is read, in the order the daemon wrote it, whether or not a test ever asks
 * for it; a test can only be handed messages that passed. Requests this side sent are remembered
 * (id -> method) until their answer arrives, so each result is checked against its own method's
 * result type.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness_int.h"
#include "protocol/xmalloc.h"

#define ASC_READ_CHUNK	(256 * 1024)
#define ASC_READ_BUDGET (4 * 1024 * 1024) /* bytes read per pump before writing again */
#define ASC_WRITE_STALL 30000		  /* ms a write may wait for the daemon to read */

/* Parse, check and queue one line. */
static void
asc_line(struct asc *c, const char *line, size_t len)
{
	struct asc_msg *m;
	json_error_t je;
	json_t *msg;
	char *raw = xstrndup(line, len);

	if (len != strlen(raw))
		fail_msg("daemon output holds a NUL byte: %s", asc_show(raw));
	/* Output may carry NUL characters, escaped (a command printed them). */
	msg = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (msg == NULL)
		fail_msg("daemon output is not a JSON object (%s): %s", je.text, asc_show(raw));
	asc_check_message(c->sent, msg, raw);
	m = xcalloc(1, sizeof *m);
	m->json = msg;
	m->raw = raw;
	if (c->tail != NULL)
		c->tail->next = m;
	else
		c->head = m;
	c->tail = m;
	c->queued++;
}

/* Read what is available (up to a budget), queueing every complete line. */
static void
asc_read(struct asc *c)
{
	size_t budget = ASC_READ_BUDGET, start, i;
	ssize_t n;

	while (c->out_fd >= 0 && !c->out_eof && budget > 0) {
		if (c->rcap - c->rlen < ASC_READ_CHUNK) {
			c->rcap = c->rlen + 2 * ASC_READ_CHUNK;
			c->rbuf = xrealloc(c->rbuf, c->rcap);
		}
		n = read(c->out_fd, c->rbuf + c->rlen, ASC_READ_CHUNK);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			fail_msg("reading the daemon's stdout: %s", strerror(errno));
		}
		if (n == 0) {
			c->out_eof = 1;
			if (c->rlen > 0) {
				c->rbuf[c->rlen < c->rcap ? c->rlen : c->rcap - 1] = '\0';
				fail_msg(
					"daemon stdout ended inside a line: %s", asc_show(c->rbuf));
			}
			return;
		}
		budget -= (size_t)n < budget ? (size_t)n : budget;
		start = 0;
		for (i = c->rlen; i < c->rlen + (size_t)n; i++) {
			if (c->rbuf[i] != '\n')
				continue;
			asc_line(c, c->rbuf + start, i - start);
			start = i + 1;
		}
		c->rlen += (size_t)n;
		memmove(c->rbuf, c->rbuf + start, c->rlen - start);
		c->rlen -= start;
	}
}

/* Wait up to timeout_ms for output (and optionally for room on stdin); read what came. */
int
asc_pump(struct asc *c, int timeout_ms, int want_write)
{
	struct pollfd p[2];
	int n = 0, r;

	if (c->out_fd >= 0 && !c->out_eof) {
		p[n].fd = c->out_fd;
		p[n].events = POLLIN;
		n++;
	}
	if (want_write && c->in_fd >= 0) {
		p[n].fd = c->in_fd;
		p[n].events = POLLOUT;
		n++;
	}
	if (n == 0) {
		if (timeout_ms > 0)
			usleep((useconds_t)(timeout_ms < 10 ? timeout_ms : 10) * 1000);
		return 0;
	}
	r = poll(p, (nfds_t)n, timeout_ms);
	if (r < 0 && errno != EINTR)
		fail_msg("poll: %s", strerror(errno));
	if (r > 0 && p[0].fd == c->out_fd && p[0].revents != 0)
		asc_read(c);
	return r;
}

/* Write bytes as they are, reading the daemon's output while its stdin is full. */
int
asc_send_raw(struct asc *c, const void *buf, size_t len)
{
	const char *p = buf;
	long long stall = asc_now_ms();
	ssize_t n;

	if (c->in_fd < 0)
		return -EBADF;
	while (len > 0) {
		n = write(c->in_fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			stall = asc_now_ms();
			asc_read(c);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		if (asc_now_ms() - stall > asc_timeout(ASC_WRITE_STALL))
			fail_msg("the daemon stopped reading its stdin (%zu bytes unwritten)", len);
		asc_pump(c, 100, 1);
	}
	return 0;
}

/* Remember a request sent in raw text, so its answer is checked against its method. */
static void
asc_remember(struct asc *c, const char *raw)
{
	json_t *msg = json_loads(raw, 0, NULL), *id, *method;
	char *key;

	if (msg == NULL)
		return;
	id = json_object_get(msg, "id");
	method = json_object_get(msg, "method");
	if (json_is_string(method) && (json_is_string(id) || json_is_integer(id))) {
		key = asc_id_key(id);
		json_object_set(c->sent, key, method);
		free(key);
	}
	json_decref(msg);
}

/* Write one line; a request in it is remembered. */
int
asc_send_line(struct asc *c, const char *raw)
{
	size_t n = strlen(raw);
	char *line = xmalloc(n + 1);
	int r;

	memcpy(line, raw, n);
	line[n] = '\n';
	asc_remember(c, raw);
	r = asc_send_raw(c, line, n + 1);
	free(line);
	return r;
}

/* Send a request with the given id. */
void
asc_request_id(struct asc *c, const json_t *id, const char *method, json_t *params)
{
	json_t *msg = json_pack("{s:O, s:s}", "id", id, "method", method);
	char *text, *key, *line;
	int r;

	if (params != NULL)
		json_object_set_new(msg, "params", params);
	text = json_dumps(msg, JSON_COMPACT);
	line = xasprintf("%s\n", text);
	key = asc_id_key(id);
	json_object_set_new(c->sent, key, json_string(method));
	r = asc_send_raw(c, line, strlen(line));
	free(key);
	free(line);
	free(text);
	json_decref(msg);
	if (r != 0)
		fail_msg("sending %s: %s", method, strerror(-r));
}

/* Send a request with the next integer id. */
long long
asc_request(struct asc *c, const char *method, json_t *params)
{
	long long id = c->next_id++;
	json_t *j = json_integer(id);

	asc_request_id(c, j, method, params);
	json_decref(j);
	return id;
}

/* Take message m (after prev) out of the queue and hand it to the test. */
static json_t *
asc_take(struct asc *c, struct asc_msg *prev, struct asc_msg *m)
{
	json_t *j = m->json;

	if (prev != NULL)
		prev->next = m->next;
	else
		c->head = m->next;
	if (c->tail == m)
		c->tail = prev;
	c->queued--;
	free(c->last_raw);
	c->last_raw = m->raw;
	free(m);
	return j;
}

/* The first queued message that matches, taken out of the queue; NULL if none. */
static json_t *
asc_find(struct asc *c, const json_t *id, const char *method)
{
	struct asc_msg *m, *prev = NULL;
	json_t *mid, *mm;

	for (m = c->head; m != NULL; prev = m, m = m->next) {
		mid = json_object_get(m->json, "id");
		mm = json_object_get(m->json, "method");
		if (id != NULL && mm == NULL && mid != NULL && json_equal(mid, (json_t *)id))
			return asc_take(c, prev, m);
		if (method != NULL && mid == NULL && json_is_string(mm) &&
			strcmp(json_string_value(mm), method) == 0)
			return asc_take(c, prev, m);
	}
	return NULL;
}

/* Wait for a matching message; fail the test at the deadline or when output ends. */
static json_t *
asc_wait_for(struct asc *c, const json_t *id, const char *method, int timeout_ms)
{
	long long end = asc_now_ms() + timeout_ms, left;
	json_t *j;
	char *what;

	for (;;) {
		if ((j = asc_find(c, id, method)) != NULL)
			return j;
		left = end - asc_now_ms();
		if (left <= 0 || c->out_fd < 0 || c->out_eof)
			break;
		asc_pump(c, (int)left, 0);
	}
	what = id != NULL ? asc_id_key(id) : xstrdup(method);
	fail_msg("no %s %s within %d ms (%s; %zu other messages queued)",
		id != NULL ? "answer to id" : "notification", what, timeout_ms,
		c->out_eof ? "daemon stdout closed" : "timed out", c->queued);
	free(what);
	return NULL;
}

/* The answer to an integer id. */
json_t *
asc_wait_response(struct asc *c, long long id, int timeout_ms)
{
	json_t *j = json_integer(id), *r;

	r = asc_wait_for(c, j, NULL, timeout_ms);
	json_decref(j);
	return r;
}

/* The answer to any id. */
json_t *
asc_wait_response_id(struct asc *c, const json_t *id, int timeout_ms)
{
	return asc_wait_for(c, id, NULL, timeout_ms);
}

/* The next notification of a method. */
json_t *
asc_wait_notification(struct asc *c, const char *method, int timeout_ms)
{
	return asc_wait_for(c, NULL, method, timeout_ms);
}

/* The next message in arrival order, or NULL after timeout_ms. */
json_t *
asc_next(struct asc *c, int timeout_ms)
{
	long long end = asc_now_ms() + timeout_ms, left;

	for (;;) {
		if (c->head != NULL)
			return asc_take(c, NULL, c->head);
		left = end - asc_now_ms();
		if (c->out_fd < 0 || c->out_eof)
			return NULL;
		asc_pump(c, left > 0 ? (int)left : 0, 0);
		if (c->head == NULL && left <= 0)
			return NULL;
	}
}

/* The raw line of the message last handed out. */
const char *
asc_raw(const struct asc *c)
{
	return c->last_raw != NULL ? c->last_raw : "";
}

/* Messages received and not yet taken. */
size_t
asc_queued(const struct asc *c)
{
	return c->queued;
}

/* A round trip through an unknown method; returns the messages that arrived meanwhile. */
int
asc_sync(struct asc *c, int timeout_ms)
{
	size_t before = c->queued;
	char *ids = xasprintf("asc-sync-%lld", ++c->sync_id);
	json_t *id = json_string(ids), *r;

	asc_request_id(c, id, "asc/sync", NULL);
	r = asc_wait_response_id(c, id, timeout_ms);
	asc_assert_error(r, -32601, "asc/sync");
	json_decref(r);
	json_decref(id);
	free(ids);
	return (int)(c->queued - before);
}

struct asc *
asc_spawn_config(const char *toml, int experimental)
{
	struct asc *c = asc_spawn(NULL);
	char *path;
	FILE *f;
	json_t *r;

	mkdir(asc_codex_home(c), 0700);
	path = xasprintf("%s/config.toml", asc_codex_home(c));
	assert_non_null(f = fopen(path, "w"));
	fputs(toml, f);
	fclose(f);
	free(path);
	r = asc_wait_response(c,
		asc_request(c, "initialize",
			json_pack("{s:{s:s, s:s}, s:{s:b}}", "clientInfo", "name", "t", "version",
				"1", "capabilities", "experimentalApi", experimental)),
		asc_timeout(5000));
	asc_assert_result(r);
	json_decref(r);
	return c;
}

/* The handshake with a default clientInfo; asserts a well-formed success. */
void
asc_initialize(struct asc *c)
{
	long long id = asc_request(c, "initialize",
		json_pack("{s:{s:s, s:n, s:s}}", "clientInfo", "name", "asc-test", "title",
			"version", "0.1"));
	json_t *r = asc_wait_response(c, id, asc_timeout(5000));

	asc_assert_result(r);
	json_decref(r);
}
