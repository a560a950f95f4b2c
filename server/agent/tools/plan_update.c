/*
 * update_plan arguments (plan_update.h). The errors read like upstream's serde messages
 * ("missing field `plan`", "unknown variant `x`, expected one of ...") without the line and
 * column serde appends.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan_update.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define PU_PREFIX "failed to parse function arguments: "

static int pu_fail(char **cause, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The model-facing error: the prefix upstream puts before the parser's message. */
static int
pu_fail(char **cause, const char *fmt, ...)
{
	struct buf b;
	va_list ap;

	if (cause != NULL) {
		buf_init(&b, PLAN_UPDATE_TEXT_MAX + 4096);
		buf_adds(&b, PU_PREFIX);
		va_start(ap, fmt);
		buf_vprintf(&b, fmt, ap);
		va_end(ap);
		*cause = buf_steal(&b, NULL);
	}
	return -EINVAL;
}

/* The status of one step. */
static int
pu_status(json_t *v, enum plan_status *out, char **cause)
{
	const char *s = json_string_value(v);

	if (v == NULL)
		return pu_fail(cause, "missing field `%s`", "status");
	if (s == NULL)
		return pu_fail(cause, "invalid type for `%s`, expected a string", "status");
	if (strcmp(s, "pending") == 0)
		*out = PLAN_PENDING;
	else if (strcmp(s, "in_progress") == 0)
		*out = PLAN_IN_PROGRESS;
	else if (strcmp(s, "completed") == 0)
		*out = PLAN_COMPLETED;
	else
		return pu_fail(cause,
			"unknown variant `%s`, expected one of `pending`, `in_progress`, `completed`",
			s);
	return 0;
}

/* One {step, status} object. */
static int
pu_step(json_t *item, struct plan_step *out, char **cause)
{
	json_t *step = json_object_get(item, "step");

	if (!json_is_object(item))
		return pu_fail(cause, "invalid type for a %s, expected an object", "plan item");
	if (step == NULL)
		return pu_fail(cause, "missing field `%s`", "step");
	if (!json_is_string(step))
		return pu_fail(cause, "invalid type for `%s`, expected a string", "step");
	if (json_string_length(step) > PLAN_UPDATE_TEXT_MAX)
		return pu_fail(cause, "%s is too long", "a plan step");
	if (pu_status(json_object_get(item, "status"), &out->status, cause) != 0)
		return -EINVAL;
	out->step = xstrdup(json_string_value(step));
	return 0;
}

/* Parse {explanation?, plan}. */
int
plan_update_parse(const char *arguments, struct plan_update *out, char **cause)
{
	json_error_t err;
	json_t *root = json_loads(arguments, JSON_REJECT_DUPLICATES, &err), *plan, *expl, *item;
	size_t i;
	int r = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (root == NULL) {
		pu_fail(cause, "%s", err.text);
		goto out;
	}
	if (!json_is_object(root)) {
		pu_fail(cause, "invalid type: %s, expected struct UpdatePlanArgs", "not an object");
		goto out;
	}
	expl = json_object_get(root, "explanation");
	plan = json_object_get(root, "plan");
	if (expl != NULL && !json_is_null(expl) && !json_is_string(expl)) {
		pu_fail(cause, "invalid type for `%s`, expected a string", "explanation");
		goto out;
	}
	if (plan == NULL) {
		pu_fail(cause, "missing field `%s`", "plan");
		goto out;
	}
	if (!json_is_array(plan)) {
		pu_fail(cause, "invalid type for `%s`, expected a sequence", "plan");
		goto out;
	}
	if (json_array_size(plan) > PLAN_UPDATE_STEPS_MAX ||
		(json_is_string(expl) && json_string_length(expl) > PLAN_UPDATE_TEXT_MAX)) {
		pu_fail(cause, "%s is too long", "the plan");
		goto out;
	}
	out->steps = xcalloc(json_array_size(plan) + 1, sizeof(*out->steps));
	json_array_foreach(plan, i, item)
	{
		if (pu_step(item, &out->steps[out->n], cause) != 0)
			goto out;
		out->n++;
	}
	out->explanation = json_is_string(expl) ? xstrdup(json_string_value(expl)) : NULL;
	r = 0;
out:
	json_decref(root);
	if (r != 0)
		plan_update_free(out);
	return r;
}

/* Free the plan. */
void
plan_update_free(struct plan_update *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->steps[i].step);
	free(p->steps);
	free(p->explanation);
	memset(p, 0, sizeof(*p));
}

/* The wire names of the statuses. */
const char *
plan_update_status_name(enum plan_status s)
{
	return s == PLAN_IN_PROGRESS ? "inProgress" : s == PLAN_COMPLETED ? "completed" : "pending";
}

/* turn/plan/updated params. */
json_t *
plan_update_params(const struct plan_update *p, const char *thread_id, const char *turn_id)
{
	json_t *o = json_object(), *plan = json_array();

	for (size_t i = 0; i < p->n; i++) {
		json_t *s = json_object();

		json_object_set_new(s, "step", json_string(p->steps[i].step));
		json_object_set_new(
			s, "status", json_string(plan_update_status_name(p->steps[i].status)));
		json_array_append_new(plan, s);
	}
	json_object_set_new(o, "threadId", json_string(thread_id));
	json_object_set_new(o, "turnId", json_string(turn_id));
	json_object_set_new(
		o, "explanation", p->explanation ? json_string(p->explanation) : json_null());
	json_object_set_new(o, "plan", plan);
	return o;
}

/* The plan item text: explanation, blank line, checklist. */
char *
plan_update_text(const struct plan_update *p)
{
	static const char *const boxes[] = {"- [ ] ", "- [~] ", "- [x] "};
	struct buf b;

	buf_init(&b, (size_t)(PLAN_UPDATE_STEPS_MAX + 1) * (PLAN_UPDATE_TEXT_MAX + 8));
	if (p->explanation != NULL && p->explanation[0] != '\0') {
		buf_adds(&b, p->explanation);
		if (p->n > 0)
			buf_adds(&b, "\n\n");
	}
	for (size_t i = 0; i < p->n; i++) {
		if (i > 0)
			buf_addc(&b, '\n');
		buf_adds(&b, boxes[p->steps[i].status]);
		buf_adds(&b, p->steps[i].step);
	}
	return buf_steal(&b, NULL);
}
