/*
 * Head and tail summaries of rollout files (rollout_summary.h). Both scans skip response items
 * and other bulky records on their raw text (rollout_peek), so summarising a file costs two
 * bounded reads and the parse of a handful of small records.
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
#include "rollout_summary.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "thread/uuidv7.h"

/* Replace a heap string. */
void
thread_meta_set(char **slot, const char *s)
{
	free(*slot);
	*slot = s != NULL ? xstrdup(s) : NULL;
}

/* Free the strings. */
void
thread_meta_clear(struct thread_meta *m)
{
	if (m == NULL)
		return;
	free(m->path);
	free(m->cwd);
	free(m->model_provider);
	free(m->model);
	free(m->effort);
	free(m->originator);
	free(m->cli_version);
	free(m->source);
	free(m->forked_from_id);
	free(m->name);
	free(m->preview);
	free(m->agent_nickname);
	free(m->agent_role);
	free(m->profile);
	free(m->collab);
	memset(m, 0, sizeof *m);
}

/* Copy every field. */
void
thread_meta_copy(struct thread_meta *dst, const struct thread_meta *src)
{
	*dst = *src;
	dst->path = src->path ? xstrdup(src->path) : NULL;
	dst->cwd = src->cwd ? xstrdup(src->cwd) : NULL;
	dst->model_provider = src->model_provider ? xstrdup(src->model_provider) : NULL;
	dst->model = src->model ? xstrdup(src->model) : NULL;
	dst->effort = src->effort ? xstrdup(src->effort) : NULL;
	dst->originator = src->originator ? xstrdup(src->originator) : NULL;
	dst->cli_version = src->cli_version ? xstrdup(src->cli_version) : NULL;
	dst->source = src->source ? xstrdup(src->source) : NULL;
	dst->forked_from_id = src->forked_from_id ? xstrdup(src->forked_from_id) : NULL;
	dst->name = src->name ? xstrdup(src->name) : NULL;
	dst->preview = src->preview ? xstrdup(src->preview) : NULL;
	dst->agent_nickname = src->agent_nickname ? xstrdup(src->agent_nickname) : NULL;
	dst->agent_role = src->agent_role ? xstrdup(src->agent_role) : NULL;
	dst->profile = src->profile ? xstrdup(src->profile) : NULL;
	dst->collab = src->collab ? xstrdup(src->collab) : NULL;
}

/* A string member or NULL. */
static const char *
summary_str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Text parts of a UserInput list, joined; at most max bytes (cut on a UTF-8 boundary). */
char *
summary_user_text(json_t *content, size_t max)
{
	struct buf b;
	size_t i;
	json_t *part;

	buf_init(&b, max);
	json_array_foreach(content, i, part)
	{
		const char *t = summary_str(part, "text");
		const char *type = summary_str(part, "type");

		if (t == NULL || type == NULL || strcmp(type, "text") != 0)
			continue;
		size_t n = strlen(t);
		if (b.len + n > max) {
			n = max - b.len;
			while (n > 0 && ((unsigned char)t[n] & 0xc0) == 0x80)
				n--;
		}
		buf_add(&b, t, n);
	}
	return buf_steal(&b, NULL);
}

/* Upstream's TokenUsage object. */
void
summary_tokens(json_t *usage, struct token_totals *t)
{
	t->input = json_integer_value(json_object_get(usage, "input_tokens"));
	t->cached = json_integer_value(json_object_get(usage, "cached_input_tokens"));
	t->output = json_integer_value(json_object_get(usage, "output_tokens"));
	t->reasoning = json_integer_value(json_object_get(usage, "reasoning_output_tokens"));
	t->total = json_integer_value(json_object_get(usage, "total_tokens"));
}

/* Records the head scan still needs: what is found already is not parsed again. */
static int
summary_head_filter(void *arg, const char *type, const char *ptype)
{
	const struct thread_meta *m = arg;

	if (strcmp(type, "session_meta") == 0)
		return m->id[0] == '\0';
	if (strcmp(type, "turn_context") == 0)
		return m->model == NULL;
	if (strcmp(type, "event_msg") != 0)
		return 0;
	if (strcmp(ptype, "thread_settings_applied") == 0)
		return m->model == NULL;
	return !m->has_user_message &&
		(strcmp(ptype, "item_completed") == 0 || strcmp(ptype, "user_message") == 0);
}

/* Session metadata into m. */
static void
summary_session_meta(json_t *p, struct thread_meta *m)
{
	const char *id = summary_str(p, "id");
	const char *ts = summary_str(p, "timestamp");
	json_t *src = json_object_get(p, "source");
	json_t *fork = json_object_get(p, "forked_from_id");

	if (id != NULL && uuidv7_check(id, NULL) == 0)
		uuidv7_canon(id, m->id);
	if (ts == NULL || rollout_ts_parse(ts, &m->created_ms) != 0)
		m->created_ms = 0;
	thread_meta_set(&m->cwd, summary_str(p, "cwd"));
	thread_meta_set(&m->originator, summary_str(p, "originator"));
	thread_meta_set(&m->cli_version, summary_str(p, "cli_version"));
	thread_meta_set(&m->model_provider, summary_str(p, "model_provider"));
	thread_meta_set(&m->agent_nickname, summary_str(p, "agent_nickname"));
	thread_meta_set(&m->agent_role, summary_str(p, "agent_role"));
	thread_meta_set(&m->forked_from_id, json_is_string(fork) ? json_string_value(fork) : NULL);
	free(m->source);
	m->source = src != NULL ? json_dumps(src, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
}

/* The first user message of a record, if it is one: its text (heap) or NULL. */
static char *
summary_user_message(const struct rollout_rec *rec)
{
	if (strcmp(rec->ptype, "user_message") == 0) {
		const char *msg = summary_str(rec->payload, "message");
		size_t n = msg ? strlen(msg) : 0;

		return xstrndup(msg ? msg : "", n > SUMMARY_PREVIEW_MAX ? SUMMARY_PREVIEW_MAX : n);
	}
	if (strcmp(rec->ptype, "item_completed") == 0) {
		json_t *item = json_object_get(rec->payload, "item");
		const char *t = summary_str(item, "type");

		if (t != NULL && strcmp(t, "UserMessage") == 0)
			return summary_user_text(
				json_object_get(item, "content"), SUMMARY_PREVIEW_MAX);
	}
	return NULL;
}

/* An object member as compact JSON text (heap), or NULL when it is not an object. */
static char *
summary_object_text(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_object(v) ? json_dumps(v, JSON_COMPACT) : NULL;
}

/*
 * The model, effort, permission profile and collaboration mode of a turn_context or
 * thread_settings_applied record: the newest one says what a resumed thread runs with (a
 * record without a profile, a legacy sandbox's, leaves none, as upstream resolves it again).
 */
static void
summary_model(const struct rollout_rec *rec, struct thread_meta *m)
{
	json_t *p = rec->payload;

	if (strcmp(rec->type, "event_msg") == 0)
		p = json_object_get(p, "thread_settings");
	if (summary_str(p, "model") != NULL)
		thread_meta_set(&m->model, summary_str(p, "model"));
	const char *effort = summary_str(p, "effort");
	if (effort == NULL)
		effort = summary_str(p, "reasoning_effort");
	if (effort != NULL)
		thread_meta_set(&m->effort, effort);
	free(m->profile);
	m->profile = summary_object_text(p, "active_permission_profile");
	free(m->collab);
	m->collab = summary_object_text(p, "collaboration_mode");
}

/* The head: session_meta first, then the first user message and the first model. */
static int
summary_head(const char *path, struct thread_meta *m)
{
	struct rollout_reader *r;
	struct rollout_rec rec;
	int n = 0, e, seen_meta = 0;

	if ((e = rollout_reader_open(path, 0, SUMMARY_HEAD_BYTES, &r)) != 0)
		return e;
	rollout_reader_filter_arg(r, summary_head_filter, m);
	rollout_reader_lean(r, 1);
	while (n++ < SUMMARY_HEAD_RECORDS && (e = rollout_reader_next(r, &rec)) == 1) {
		if (strcmp(rec.type, "session_meta") == 0) {
			if (!seen_meta)
				summary_session_meta(rec.payload, m);
			seen_meta = 1;
		} else if (strcmp(rec.type, "turn_context") == 0 ||
			strcmp(rec.ptype, "thread_settings_applied") == 0) {
			if (m->model == NULL)
				summary_model(&rec, m);
		} else if (!m->has_user_message) {
			char *text = summary_user_message(&rec);

			if (text != NULL) {
				m->has_user_message = 1;
				free(m->preview);
				m->preview = text;
			}
		}
		if (seen_meta && m->has_user_message && m->model != NULL)
			break;
	}
	rollout_reader_close(r);
	if (e < 0)
		return e;
	return seen_meta && m->id[0] != '\0' ? 0 : -EINVAL;
}

/* State of the backwards tail scan. */
struct summary_tail {
	struct thread_meta *m;
	int have_time, have_tokens, have_model, have_recency;
	int lines;
};

/* One tail line, newest first. */
static int
summary_tail_cb(void *arg, const char *line, size_t len, off_t off)
{
	struct summary_tail *t = arg;
	char type[ROLLOUT_TYPE_MAX], ptype[ROLLOUT_TYPE_MAX];
	struct rollout_rec rec;
	json_t *root;
	int peeked = rollout_peek(line, len, type, ptype) == 0;

	if (++t->lines > 4096)
		return 1;
	/* Only the newest line's time needs a parse of an arbitrary record; after it, only the
	 * kinds still missing are parsed. */
	if (t->have_time && peeked) {
		int ev = strcmp(type, "event_msg") == 0;
		int model = strcmp(type, "turn_context") == 0 ||
			(ev && strcmp(ptype, "thread_settings_applied") == 0);

		if (!(model && !t->have_model) &&
			!(ev && strcmp(ptype, "token_count") == 0 && !t->have_tokens) &&
			!(ev && strcmp(ptype, "task_started") == 0 && !t->have_recency))
			return 0;
	}
	root = json_loadb(line, len, 0, NULL);
	if (root == NULL || rollout_rec_from(root, &rec) != 0) {
		json_decref(root);
		return 0;
	}
	if (!t->have_time && rec.ms > 0) {
		t->m->updated_ms = rec.ms;
		t->have_time = 1;
	}
	if (!t->have_tokens && strcmp(rec.ptype, "token_count") == 0) {
		json_t *info = json_object_get(rec.payload, "info");
		json_t *total = json_object_get(info, "total_token_usage");

		if (json_is_object(total)) {
			summary_tokens(total, &t->m->tokens);
			t->have_tokens = 1;
		}
	}
	if (!t->have_model &&
		(strcmp(rec.type, "turn_context") == 0 ||
			strcmp(rec.ptype, "thread_settings_applied") == 0)) {
		summary_model(&rec, t->m);
		t->have_model = 1;
	}
	if (!t->have_recency && strcmp(rec.ptype, "task_started") == 0) {
		json_t *at = json_object_get(rec.payload, "started_at");

		t->m->recency_ms = json_is_integer(at) ? json_integer_value(at) * 1000 : rec.ms;
		t->have_recency = 1;
	}
	json_decref(root);
	return t->have_time && t->have_tokens && t->have_model && t->have_recency;
}

/*
 * The tail: newest time, model, tokens, turn start; from the file's end back, then on into its
 * bases' kept bytes when a young segment (a revert's) does not hold them all yet.
 */
static int
summary_tail(const char *path, struct thread_meta *m)
{
	struct summary_tail t = {.m = m};
	struct rollout_chain *c = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	off_t good;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		e = -errno;
		close(fd);
		return e;
	}
	m->file_size = st.st_size;
	m->file_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	e = rollout_good_end(fd, &good);
	if (e == 0)
		e = rollout_scan_back(fd, good, SUMMARY_TAIL_BYTES, summary_tail_cb, &t);
	if (e == 0 && rollout_chain_open(path, fd, &c) == 0) {
		fd = -1; /* the chain's now */
		for (size_t i = c->n - 1; e == 0 && i-- > 0;)
			e = rollout_scan_back(
				c->v[i].fd, c->v[i].len, SUMMARY_TAIL_BYTES, summary_tail_cb, &t);
		rollout_chain_free(c);
	}
	if (fd >= 0)
		close(fd);
	return e < 0 ? e : 0;
}

/*
 * A segment's own session_meta: upstream 0.169 shows a reverted thread with the segment's
 * (createdAt is the revert's time), the preview staying the chain's first user message.
 */
static void
summary_segment_meta(const char *path, struct thread_meta *m)
{
	json_t *root = rollout_chain_head(path);
	struct rollout_rec rec;

	if (root != NULL && rollout_rec_from(root, &rec) == 0 &&
		strcmp(rec.type, "session_meta") == 0 && json_is_object(rec.payload) &&
		json_object_get(rec.payload, "history_base") != NULL)
		summary_session_meta(rec.payload, m);
	json_decref(root);
}

/* Head, then tail; fill the gaps from the file name and the id. */
int
rollout_summarize(const char *path, struct thread_meta *m)
{
	int e;

	memset(m, 0, sizeof *m);
	if ((e = summary_head(path, m)) != 0 || (e = summary_tail(path, m)) != 0) {
		thread_meta_clear(m);
		return e;
	}
	summary_segment_meta(path, m);
	m->path = xstrdup(path);
	if (m->created_ms == 0)
		m->created_ms = uuidv7_ms(m->id) > 0 ? uuidv7_ms(m->id) : m->updated_ms;
	if (m->updated_ms < m->created_ms)
		m->updated_ms = m->created_ms;
	if (m->recency_ms == 0)
		m->recency_ms = m->created_ms;
	if (m->preview == NULL)
		m->preview = xstrdup("");
	return 0;
}
