/*
 * Permission profiles and collaboration modes on the wire (profiles.c): permissionProfile/list,
 * collaborationMode/list, the page arithmetic model/list shares, and what thread and turn
 * answers say about the profile in effect.
 */
#ifndef API_PROFILES_H
#define API_PROFILES_H

#include <jansson.h>

#include "rpc/rpc.h"

struct config;

extern const struct rpc_method api_profiles_methods[];

/*
 * One page of all (borrowed) as upstream pages its lists: `cursor` is the decimal offset of
 * the first item, `limit` at least 1 (default: everything), `what` names the list in the
 * error of a cursor past the end. Answers the request itself: the page {data, nextCursor}
 * or upstream's error.
 */
void profiles_reply_page(struct rpc_req *req, json_t *params, json_t *all, const char *what);

/*
 * activePermissionProfile for a thread/start, resume or fork answer (new reference): params
 * are the request's (`permissions`, `sandbox`), with the configuration in effect.
 */
json_t *profiles_active_permission_profile(const struct config *c, const json_t *params);

/* What turn/start's `permissions` and `collaborationMode` change for the thread. */
struct profiles_turn {
	json_t *sandbox_policy; /* the profile's wire policy (new reference), or NULL */
	const char *model;	/* the mode's model (borrowed from the params), or NULL */
	const char *effort;	/* the mode's reasoning effort, when effort_set (NULL: none) */
	int effort_set;
	char *collab_message; /* the mode's developer message (heap), or NULL */
	const char
		*collab_mode; /* the mode ("plan", "default"; borrowed from the params), or NULL */
	/* the mode as upstream's rollout records it, its instructions resolved (new ref), or NULL
	 */
	json_t *collab_record;
};

/*
 * Check and read turn/start's `permissions` and `collaborationMode` (experimental fields,
 * refused without experimentalApi, in upstream's words). 0, or -1 with *cause; t is filled
 * on success and released with profiles_turn_clear.
 */
int profiles_turn_params(struct session *s, json_t *params, struct profiles_turn *t, char **cause);
void profiles_turn_clear(struct profiles_turn *t);

#endif
