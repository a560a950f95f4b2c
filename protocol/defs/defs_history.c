/*
 * thread/revert and thread/inject_items (upstream 0.169's shapes, experimental schema): a
 * thread's model-visible history cut before a turn, or extended with raw Responses items.
 */
#include "defs.h"

static const struct pfield thread_revert_params[] = {
	{"beforeTurnId", "string", PF_REQ, NULL,
		"Turn excluded from the replacement history, together with every later turn."},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_revert_response[] = {
	{"itemsBackwardsCursor", "string?", 0, NULL,
		"Opaque cursor for hydrating paginated items backwards.\n\nPass this as `cursor` to "
		"`thread/items/list` with `sortDirection: \"desc\"`. The first page includes the "
		"item identified by the cursor."},
	{"thread", "Thread", PF_REQ, NULL,
		"Updated loaded thread metadata. `turns` is always empty; hydrate retained history "
		"through `thread/turns/list`."},
	{"turnsBackwardsCursor", "string?", 0, NULL,
		"Opaque cursor for hydrating paginated turns backwards.\n\nPass this as `cursor` to "
		"`thread/turns/list` with `sortDirection: \"desc\"`. The first page includes the "
		"turn identified by the cursor."},
	{NULL},
};

static const struct pfield thread_reverted[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_inject_items_params[] = {
	{"items", "any[]", PF_REQ, NULL,
		"Raw Responses API items to append to the thread's model-visible history."},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield empty_response[] = {
	{NULL},
};

const struct pdef pdefs_history[] = {
	{.name = "ThreadRevertParams",
		.kind = PD_STRUCT,
		.fields = thread_revert_params,
		.doc = "Replace a paginated thread's durable history with the prefix before one "
		       "turn.\n\nThis only changes persisted conversation history. It does not "
		       "revert local file changes."},
	{.name = "ThreadRevertResponse", .kind = PD_STRUCT, .fields = thread_revert_response},
	{.name = "ThreadRevertedNotification", .kind = PD_STRUCT, .fields = thread_reverted},
	{.name = "ThreadInjectItemsParams",
		.kind = PD_STRUCT,
		.fields = thread_inject_items_params},
	{.name = "ThreadInjectItemsResponse", .kind = PD_STRUCT, .fields = empty_response},
	{NULL},
};
