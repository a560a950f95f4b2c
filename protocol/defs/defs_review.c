/*
 * Protocol tables: review/start, with upstream 0.169's names, shapes and docs. Its answer's
 * Turn and the enteredReviewMode / exitedReviewMode items are defs_item.c's.
 */
#include <stddef.h>

#include "defs.h"

static const struct pfield review_start_params[] = {
	{"delivery", "ReviewDelivery?", 0, "null",
		"Reviews run inline on the supplied thread. Omit this field or pass `inline`. To "
		"review on a separate thread, start a thread first and use its id."},
	{"target", "ReviewTarget", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield review_start_response[] = {
	{"reviewThreadId", "string", PF_REQ, NULL, "The thread id supplied to `review/start`."},
	{"turn", "Turn", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield review_target_base_branch[] = {
	{"branch", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield review_target_commit[] = {
	{"sha", "string", PF_REQ, NULL, NULL},
	{"title", "string?", 0, NULL,
		"Optional human-readable label (e.g., commit subject) for UIs."},
	{NULL},
};

static const struct pfield review_target_custom[] = {
	{"instructions", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pvariant review_target_variants[] = {
	{"uncommittedChanges", NULL,
		"Review the working tree: staged, unstaged, and untracked files."},
	{"baseBranch", review_target_base_branch,
		"Review changes between the current branch and the given base branch."},
	{"commit", review_target_commit, "Review the changes introduced by a specific commit."},
	{"custom", review_target_custom,
		"Arbitrary instructions, equivalent to the old free-form prompt."},
	{NULL},
};

static const struct penum review_delivery[] = {{"inline"}, {NULL}};

const struct pdef pdefs_review[] = {
	{.name = "ReviewStartParams", .kind = PD_STRUCT, .fields = review_start_params},
	{.name = "ReviewStartResponse", .kind = PD_STRUCT, .fields = review_start_response},
	{.name = "ReviewTarget",
		.kind = PD_UNION,
		.tag = "type",
		.variants = review_target_variants},
	{.name = "ReviewDelivery", .kind = PD_ENUM, .values = review_delivery},
	{NULL},
};
