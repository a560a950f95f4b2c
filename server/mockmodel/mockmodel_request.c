/*
 * One HTTP request to the mock model (mockmodel_int.h): read whole (headers, then a
 * Content-Length or chunked body), recorded as a JSON line, and answered: POST .../responses
 * and .../chat/completions get the next scripted response as frames, GET .../models an empty
 * list, anything else a 404.
 *
 * Scripted responses are handed out in request order across all clients; past the end of the
 * list the last one repeats when "repeat" is set, otherwise the answer is a 404 naming the
 * request, so a test that asks more than it scripted fails loudly.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mockmodel_int.h"
#include "protocol/xmalloc.h"

/* The end of a request (*len bytes of headers+body) or 0 when incomplete; -1 malformed. */
static long
mockmodel_request_end(struct mockmodel_conn *c, size_t *hlen, size_t *blen, int *chunked)
{
	char *in = c->in.ptr, *end = memmem(in, c->in.len, "\r\n\r\n", 4), *p, *cl, *q;
	size_t off, n, inlen = c->in.len;

	if (end == NULL)
		return inlen > MOCKMODEL_MAX_HEAD ? -1 : 0;
	*hlen = (size_t)(end - in) + 4;
	in[*hlen - 2] = '\0'; /* headers end in "\r\n\0" for the searches below */
	*chunked = strcasestr(in, "\ntransfer-encoding: chunked") != NULL;
	if (!*chunked) {
		cl = strcasestr(in, "\ncontent-length:");
		*blen = cl != NULL ? strtoul(cl + 16, NULL, 10) : 0;
		in[*hlen - 2] = '\r';
		if (*blen > MOCKMODEL_MAX_INPUT)
			return -1;
		return inlen >= *hlen + *blen ? (long)(*hlen + *blen) : 0;
	}
	in[*hlen - 2] = '\r';
	/* Chunked: walk the chunk sizes; the body is copied out later. */
	for (off = *hlen, *blen = 0;;) {
		p = memmem(in + off, inlen - off, "\r\n", 2);
		if (p == NULL)
			return 0;
		n = strtoul(in + off, &q, 16);
		if (q == in + off)
			return -1;
		off = (size_t)(p - in) + 2;
		if (n == 0)
			return inlen >= off + 2 ? (long)(off + 2) : 0;
		if (inlen < off + n + 2)
			return 0;
		*blen += n;
		off += n + 2;
	}
}

/* Copy the body of a chunked request into one buffer. */
static char *
mockmodel_request_unchunk(const char *s, size_t blen)
{
	char *body = xmalloc(blen + 1), *q;
	size_t n, len = 0;

	for (;;) {
		n = strtoul(s, &q, 16);
		s = strstr(q, "\r\n") + 2;
		if (n == 0)
			break;
		memcpy(body + len, s, n);
		len += n;
		s += n + 2;
	}
	body[len] = '\0';
	return body;
}

/* Record a request as one JSON line (nothing is parsed when there is no --record). */
static void
mockmodel_request_record(struct mockmodel *m, const char *method, const char *target,
	json_t *headers, const char *body, size_t blen, long response)
{
	json_t *rec, *b;
	char *line;

	if (m->record == NULL)
		return;
	b = json_loadb(body, blen, JSON_DECODE_ANY, NULL);
	if (b == NULL)
		b = json_stringn(body, blen);
	if (b == NULL)
		b = json_null();
	rec = json_pack("{s:I, s:s, s:s, s:O, s:o, s:o}", "seq", (json_int_t)m->seq, "method",
		method, "path", target, "headers", headers, "body", b, "response",
		response >= 0 ? json_integer(response) : json_null());
	line = json_dumps(rec, JSON_COMPACT);
	if (line != NULL) {
		fprintf(m->record, "%s\n", line);
		fflush(m->record);
	}
	free(line);
	json_decref(rec);
}

/* The next scripted response (its index in *idx), or NULL when the script is exhausted. */
static json_t *
mockmodel_request_next(struct mockmodel *m, long *idx)
{
	json_t *list = json_object_get(m->script, "responses");
	size_t n = json_array_size(list);

	if (m->next < n) {
		*idx = (long)m->next;
		return json_array_get(list, m->next++);
	}
	m->next++;
	if (n > 0 && json_is_true(json_object_get(m->script, "repeat"))) {
		*idx = (long)n - 1;
		return json_array_get(list, n - 1);
	}
	*idx = -1;
	return NULL;
}

/* Move what was queued since mark into a raw frame (the head or a whole reply). */
static void
mockmodel_request_frame_from_out(struct mockmodel_conn *c, size_t mark)
{
	json_array_append_new(c->frames,
		json_pack("{s:i, s:s%, s:b}", "delay_ms", 0, "data", buf_str(&c->out) + mark,
			c->out.len - mark, "raw", 1));
	buf_truncate(&c->out, mark);
}

/* The frames of a scripted response: its head, then its events (or its whole body). */
static void
mockmodel_request_play(struct mockmodel_conn *c, const json_t *resp, int chat)
{
	int status = json_is_integer(json_object_get(resp, "status"))
		? (int)json_integer_value(json_object_get(resp, "status"))
		: 200;
	json_t *hdrs = json_object_get(resp, "headers"), *b = json_object_get(resp, "body"), *v;
	json_t *more = NULL;
	const char *k;
	char *btext, *cause = NULL;
	size_t mark = c->out.len;

	c->frames = json_array();
	c->frame = 0;
	c->waited = 0;
	c->stalled = 0;
	c->close_body = 0;
	c->stall_ms = 0;
	c->chunked = 0;
	if (json_integer_value(json_object_get(resp, "delay_ms")) > 0)
		json_array_append_new(c->frames,
			json_pack("{s:O, s:s, s:b}", "delay_ms", json_object_get(resp, "delay_ms"),
				"data", "", "raw", 1));
	if (b == NULL && status == 200 &&
		(more = mockmodel_script_frames(resp, chat, c->m->seq, &cause)) == NULL) {
		/* The events could not be turned into frames: say so as a 500. */
		mockmodel_conn_reply(c, 500, "text/plain", cause, NULL);
		mockmodel_request_frame_from_out(c, mark);
		free(cause);
		return;
	}
	if (more == NULL) {
		/* A whole body, e.g. an error: built with mockmodel_conn_reply, then moved into a
		 * frame. */
		btext = json_is_string(b) ? xstrdup(json_string_value(b))
			: b != NULL	  ? json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY)
					  : xstrdup("");
		mockmodel_conn_reply(c, status,
			json_is_string(b) ? "text/plain" : "application/json",
			btext != NULL ? btext : "", hdrs);
		mockmodel_request_frame_from_out(c, mark);
		free(btext);
		return;
	}
	c->chunked = 1;
	c->close_body = json_is_true(json_object_get(resp, "close"));
	c->stall_ms = (long)json_integer_value(json_object_get(resp, "stall_ms"));
	mockmodel_conn_out(c,
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
		"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n",
		strlen("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
		       "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"));
	json_object_foreach(hdrs, k, v)
	{
		mockmodel_conn_header(c, k, json_string_value(v));
	}
	if (c->close_after)
		mockmodel_conn_out(c, "Connection: close\r\n", 19);
	mockmodel_conn_out(c, "\r\n", 2);
	mockmodel_request_frame_from_out(c, mark);
	json_array_extend(c->frames, more);
	json_decref(more);
}

/* Split the header lines of a request into a {lowercased name: value} object. */
static json_t *
mockmodel_request_headers(char *lines)
{
	json_t *headers = json_object();
	char *hl, *next, *colon;

	for (hl = lines; hl != NULL && *hl != '\0'; hl = next) {
		next = strstr(hl, "\r\n");
		if (next != NULL) {
			*next = '\0';
			next += 2;
		}
		if ((colon = strchr(hl, ':')) == NULL)
			continue;
		*colon = '\0';
		for (char *s = hl; *s != '\0'; s++)
			*s = (char)tolower((unsigned char)*s);
		json_object_set_new(headers, hl, json_string(colon + 1 + strspn(colon + 1, " \t")));
	}
	return headers;
}

/* True when path ends with suffix. */
static int
mockmodel_request_ends(const char *path, const char *suffix)
{
	size_t a = strlen(path), b = strlen(suffix);

	return a >= b && strcmp(path + a - b, suffix) == 0;
}

/* Answer one complete request at the head of the input buffer: 1 done, 0 incomplete, -1 bad. */
int
mockmodel_request_answer(struct mockmodel_conn *c)
{
	size_t hlen = 0, blen = 0;
	int chunked = 0, chat;
	long end = mockmodel_request_end(c, &hlen, &blen, &chunked), idx = -1;
	char *head, *sp1, *sp2, *eol, *body, *text, *path;
	const char *conn;
	json_t *headers, *resp;

	if (end <= 0) {
		if (end < 0) {
			mockmodel_conn_reply(c, 400, "text/plain", "bad request\n", NULL);
			c->closing = 1;
		}
		return (int)end;
	}
	head = xstrndup(c->in.ptr, hlen - 2);
	eol = strstr(head, "\r\n");
	*eol = '\0';
	sp1 = strchr(head, ' ');
	sp2 = sp1 != NULL ? strchr(sp1 + 1, ' ') : NULL;
	if (sp1 == NULL || sp2 == NULL) {
		free(head);
		mockmodel_conn_reply(c, 400, "text/plain", "bad request line\n", NULL);
		c->closing = 1;
		return -1;
	}
	*sp1++ = '\0';
	*sp2 = '\0';
	headers = mockmodel_request_headers(eol + 2);
	conn = json_string_value(json_object_get(headers, "connection"));
	c->close_after = conn != NULL && strcasecmp(conn, "close") == 0;
	body = chunked ? mockmodel_request_unchunk(c->in.ptr + hlen, blen)
		       : xstrndup(c->in.ptr + hlen, blen);
	path = xstrndup(sp1, strcspn(sp1, "?"));
	c->m->seq++;
	chat = mockmodel_request_ends(path, "/chat/completions");
	if (strcmp(head, "POST") == 0 && (chat || mockmodel_request_ends(path, "/responses"))) {
		resp = mockmodel_request_next(c->m, &idx);
		mockmodel_request_record(c->m, head, sp1, headers, body, blen, idx);
		if (resp != NULL) {
			mockmodel_request_play(c, resp, chat);
		} else {
			text = xasprintf(
				"{\"error\":{\"code\":\"mock_script_exhausted\",\"message\":"
				"\"mock-model: no scripted response for request %zu\"}}",
				c->m->seq);
			mockmodel_conn_reply(c, 404, "application/json", text, NULL);
			free(text);
		}
	} else if (strcmp(head, "GET") == 0 && mockmodel_request_ends(path, "/models")) {
		mockmodel_request_record(c->m, head, sp1, headers, body, blen, -1);
		mockmodel_conn_reply(c, 200, "application/json",
			"{\"object\":\"list\",\"data\":[],\"models\":[]}", NULL);
	} else {
		mockmodel_request_record(c->m, head, sp1, headers, body, blen, -1);
		mockmodel_conn_reply(c, 404, "application/json",
			"{\"error\":{\"message\":\"mock-model: unknown endpoint\"}}", NULL);
	}
	if (c->close_after && c->frames == NULL)
		c->closing = 1;
	buf_consume(&c->in, (size_t)end);
	free(path);
	free(body);
	free(head);
	json_decref(headers);
	return 1;
}
