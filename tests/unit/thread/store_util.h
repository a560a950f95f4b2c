/*
 * Store test helpers: opening a store on a home without a loop, synchronous thread/list, and a
 * whole turn written through the append API the agent loop will use.
 */
#ifndef STORE_UTIL_H
#define STORE_UTIL_H

#include "thread_util.h"
#include "thread/store/store.h"

/* A list answer captured by su_list_cb. */
struct su_list {
	int done, r;
	json_t *result;
	char *cause;
};

static inline void
su_list_cb(void *arg, int r, json_t *result, const char *cause)
{
	struct su_list *l = arg;

	l->done = 1;
	l->r = r;
	l->result = result;
	l->cause = cause ? xstrdup(cause) : NULL;
}

/* A store on home for provider, no loop: completions when the test drains. */
static inline struct store *
su_open(const char *home, const char *provider)
{
	struct store_config cfg = {.home = home, .default_provider = provider};
	struct store *s = NULL;
	char *cause = NULL;

	if (store_open(&cfg, &s, &cause) != 0) {
		fprintf(stderr, "store_open: %s\n", cause);
		abort();
	}
	store_drain(s); /* the start-up scan */
	return s;
}

/* thread/list with these params; returns the result (new reference) or NULL with *r set. */
static inline json_t *
su_list(struct store *s, const struct store_list_params *p, int *r)
{
	struct su_list l = {0};

	store_list(s, p, su_list_cb, &l);
	if (!l.done) {
		store_drain(s);
	}
	if (!l.done)
		abort();
	if (r != NULL)
		*r = l.r;
	free(l.cause);
	return l.result;
}

/* The ids of a list page's data. */
static inline json_t *
su_ids(json_t *result)
{
	json_t *ids = json_array(), *t;
	size_t i;

	json_array_foreach(json_object_get(result, "data"), i, t)
		json_array_append(ids, json_object_get(t, "id"));
	return ids;
}

/* One turn: the user's text and the agent's answer, as the agent loop will write them. */
static inline void
su_turn(struct store_thread *t, const char *user, const char *answer)
{
	char turn[37], *cause = NULL;
	json_t *u = json_pack("{s:s,s:s,s:n,s:[{s:s,s:s,s:[]}]}", "type", "userMessage", "id",
		"u-x", "clientId", "content", "type", "text", "text", user, "text_elements");
	json_t *a = json_pack("{s:s,s:s,s:s}", "type", "agentMessage", "id", "m", "text", answer);
	struct token_totals tok = {.input = 10, .output = 5, .total = 15};

	if (store_turn_begin(t, NULL, turn, &cause) != 0)
		abort();
	json_object_set_new(u, "id", json_string(turn)); /* any unique id */
	json_string_set(json_object_get(u, "id"), "u-1");
	store_append_item(t, u, 0, 0);
	store_append_item(t, a, 0, 0);
	store_append_tokens(t, &tok, 1000, "resp-1");
	store_turn_end(t, STORE_TURN_COMPLETED, NULL, NULL, NULL);
	json_decref(u);
	json_decref(a);
}

#endif
