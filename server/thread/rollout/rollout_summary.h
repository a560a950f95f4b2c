/*
 * What the thread index keeps about one rollout, read from the file's head and tail only:
 *   head (at most SUMMARY_HEAD_BYTES / SUMMARY_HEAD_RECORDS): session_meta, the first user
 *        message (preview; its presence decides whether upstream lists the thread), the first
 *        model and reasoning effort;
 *   tail (at most SUMMARY_TAIL_BYTES): the last record's time (updatedAt), the latest model,
 *        token totals and turn start (recencyAt).
 * Also the thread's display name from upstream's session_index.jsonl is NOT read here (names.h).
 */
#ifndef ROLLOUT_SUMMARY_H
#define ROLLOUT_SUMMARY_H

#include <stdint.h>

#include <jansson.h>

#define SUMMARY_HEAD_BYTES   (2u << 20)
#define SUMMARY_HEAD_RECORDS 512
#define SUMMARY_TAIL_BYTES   (1u << 20)
#define SUMMARY_PREVIEW_MAX  4096 /* bytes of the first user message kept as the preview */

struct token_totals {
	int64_t input, cached, output, reasoning, total;
};

/* The metadata of a thread as the index stores it. Strings are heap-owned (may be NULL). */
struct thread_meta {
	char id[37];
	char *path;
	int64_t created_ms, updated_ms, recency_ms;
	char *cwd, *model_provider, *model, *effort, *originator, *cli_version;
	char *source; /* the rollout's session source as JSON text ("vscode", {"subagent":..}) */
	char *forked_from_id, *name, *preview, *agent_nickname, *agent_role;
	/* JSON text of the newest settings record's active_permission_profile and
	 * collaboration_mode, or NULL: what a resume restores */
	char *profile, *collab;
	int archived, ephemeral, has_user_message;
	struct token_totals tokens;
	int64_t file_size, file_mtime_ns; /* what the file looked like when summarised */
};

/* Read path's head and tail into m (zeroed first); 0, or -errno / -EINVAL (no session_meta). */
int rollout_summarize(const char *path, struct thread_meta *m);
/* Free m's strings (m itself is the caller's). Accepts NULL. */
void thread_meta_clear(struct thread_meta *m);
/* Deep copy. */
void thread_meta_copy(struct thread_meta *dst, const struct thread_meta *src);
/* Replace *slot with a copy of s (NULL allowed). */
void thread_meta_set(char **slot, const char *s);
/* The text of a user message's inputs (text parts joined), heap; "" when none. */
char *summary_user_text(json_t *content, size_t max);
/* Token totals from an upstream usage object {input_tokens, ...}. */
void summary_tokens(json_t *usage, struct token_totals *t);

#endif
