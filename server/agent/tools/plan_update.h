/*
 * update_plan: the model's plan, read from the tool call's arguments (upstream's UpdatePlanArgs:
 * {explanation?: string|null, plan: [{step, status: pending|in_progress|completed}]}), turned
 * into the turn/plan/updated params (status camelCase: in_progress becomes inProgress, notes §8)
 * and into the text of the plan item the turn loop records. The model is answered
 * PLAN_UPDATE_OUTPUT, or with the parse error.
 *
 * The plan item text is ours (upstream 0.169 emits no item for update_plan, only the
 * notification): the explanation, a blank line, then one markdown checklist line per step,
 * "- [x] " completed, "- [~] " in progress, "- [ ] " pending.
 */
#ifndef PLAN_UPDATE_H
#define PLAN_UPDATE_H

#include <stddef.h>

#include <jansson.h>

#define PLAN_UPDATE_OUTPUT    "Plan updated"
#define PLAN_UPDATE_STEPS_MAX 1000	  /* steps in one plan */
#define PLAN_UPDATE_TEXT_MAX  (64u << 10) /* bytes of one step or the explanation */

enum plan_status { PLAN_PENDING, PLAN_IN_PROGRESS, PLAN_COMPLETED };

struct plan_step {
	char *step; /* owned */
	enum plan_status status;
};

struct plan_update {
	char *explanation; /* owned, NULL when absent or null */
	struct plan_step *steps;
	size_t n;
};

/*
 * Parse the call's arguments (a JSON text). 0, or -EINVAL with *cause set to the whole text for
 * the model ("failed to parse function arguments: missing field `plan`", ...).
 */
int plan_update_parse(const char *arguments, struct plan_update *out, char **cause);
/* Free the plan. Accepts NULL. */
void plan_update_free(struct plan_update *p);
/* turn/plan/updated params: {threadId, turnId, explanation, plan:[{step, status}]}. */
json_t *plan_update_params(const struct plan_update *p, const char *thread_id, const char *turn_id);
/* The plan item text (see above). Heap string. */
char *plan_update_text(const struct plan_update *p);
/* The wire name of a status: "pending", "inProgress", "completed". */
const char *plan_update_status_name(enum plan_status s);

#endif
