/*
 * Rate limits of the Responses backend, read as upstream 0.169 reads them: the `x-codex-*`
 * headers of a response (primary and secondary windows, credits, the limit's name) and the
 * `codex.rate_limits` SSE event, each turned into a v2 RateLimitSnapshot
 * ({limitId, limitName, normalModelSlug, primary, secondary, credits, individualLimit,
 * spendControlReached, planType, rateLimitReachedType}, in upstream's member order).
 *
 * A window counts only when its used percent parses and something in it is set (a non-zero
 * percent or window, or a reset time), as upstream keeps it; a response without these headers
 * still gives the `codex` snapshot with every member null, which upstream reports as well.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model.h"
#include "protocol/xmalloc.h"

/* A header's value (names are kept lowercase by the caller), or NULL. */
static const char *
rl_header(const json_t *h, const char *name)
{
	return json_string_value(json_object_get(h, name));
}

/* A finite number, 0 with *v, or -1. */
static int
rl_f64(const char *s, double *v)
{
	char *end;

	if (s == NULL || *s == '\0')
		return -1;
	*v = strtod(s, &end);
	return *end == '\0' && isfinite(*v) ? 0 : -1;
}

/* A whole number, or NULL (json). */
static json_t *
rl_i64(const char *s)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0')
		return json_null();
	v = strtoll(s, &end, 10);
	return *end == '\0' ? json_integer(v) : json_null();
}

/* RateLimitWindow (usedPercent rounded, as the v2 wire's integer), or null. */
static json_t *
rl_window(double used, json_t *mins, json_t *resets)
{
	json_t *w;

	if (used == 0 && (json_is_null(mins) || json_integer_value(mins) == 0) &&
		json_is_null(resets)) {
		json_decref(mins);
		json_decref(resets);
		return json_null();
	}
	w = json_pack("{s:I, s:o, s:o}", "usedPercent", (json_int_t)lround(used),
		"windowDurationMins", mins, "resetsAt", resets);
	return w;
}

/* A window from the x-codex-{primary,secondary}-* headers. */
static json_t *
rl_header_window(const json_t *h, const char *which)
{
	char name[64];
	double used;
	json_t *mins;

	snprintf(name, sizeof name, "x-codex-%s-used-percent", which);
	if (rl_f64(rl_header(h, name), &used) != 0)
		return json_null();
	snprintf(name, sizeof name, "x-codex-%s-window-minutes", which);
	mins = rl_i64(rl_header(h, name));
	snprintf(name, sizeof name, "x-codex-%s-reset-at", which);
	return rl_window(used, mins, rl_i64(rl_header(h, name)));
}

/* "true"/"1", "false"/"0", else -1. */
static int
rl_bool(const char *s)
{
	if (s == NULL)
		return -1;
	if (strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0)
		return 1;
	if (strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0)
		return 0;
	return -1;
}

/* A trimmed copy as json, or null when empty. */
static json_t *
rl_trimmed(const char *s)
{
	size_t n;

	if (s == NULL)
		return json_null();
	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n > 0 ? json_stringn(s, n) : json_null();
}

/* One of RateLimitReachedType's values, or null. */
static json_t *
rl_reached(const char *s)
{
	static const char *const kinds[] = {"rate_limit_reached",
		"workspace_owner_credits_depleted", "workspace_member_credits_depleted",
		"workspace_owner_usage_limit_reached", "workspace_member_usage_limit_reached"};

	for (size_t i = 0; s != NULL && i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(s, kinds[i]) == 0)
			return json_string(s);
	return json_null();
}

static json_t *
rl_snapshot(json_t *id, json_t *name, json_t *primary, json_t *secondary, json_t *credits,
	json_t *plan, json_t *reached)
{
	return json_pack("{s:o, s:o, s:n, s:o, s:o, s:o, s:n, s:n, s:o, s:o}", "limitId", id,
		"limitName", name, "normalModelSlug", "primary", primary, "secondary", secondary,
		"credits", credits, "individualLimit", "spendControlReached", "planType", plan,
		"rateLimitReachedType", reached);
}

json_t *
model_rate_limits_headers(const json_t *h)
{
	json_t *credits = json_null();
	int has = rl_bool(rl_header(h, "x-codex-credits-has-credits")),
	    unl = rl_bool(rl_header(h, "x-codex-credits-unlimited"));

	if (has >= 0 && unl >= 0)
		credits = json_pack("{s:b, s:b, s:o}", "hasCredits", has, "unlimited", unl,
			"balance", rl_trimmed(rl_header(h, "x-codex-credits-balance")));
	return rl_snapshot(json_string("codex"), rl_trimmed(rl_header(h, "x-codex-limit-name")),
		rl_header_window(h, "primary"), rl_header_window(h, "secondary"), credits,
		json_null(), rl_reached(rl_header(h, "x-codex-rate-limit-reached-type")));
}

/* An event window {used_percent, window_minutes?, reset_at?}, or null. */
static json_t *
rl_event_window(const json_t *w)
{
	json_t *used = json_object_get(w, "used_percent"), *m, *r;

	if (!json_is_number(used))
		return json_null();
	m = json_object_get(w, "window_minutes");
	r = json_object_get(w, "reset_at");
	/* upstream keeps an event's window as sent, set or not */
	return json_pack("{s:I, s:o, s:o}", "usedPercent",
		(json_int_t)lround(json_number_value(used)), "windowDurationMins",
		json_is_integer(m) ? json_incref(m) : json_null(), "resetsAt",
		json_is_integer(r) ? json_incref(r) : json_null());
}

json_t *
model_rate_limits_event(const json_t *ev)
{
	const json_t *rl = json_object_get(ev, "rate_limits"), *c = json_object_get(ev, "credits");
	const char *id = json_string_value(json_object_get(ev, "metered_limit_name")),
		   *plan = json_string_value(json_object_get(ev, "plan_type"));
	json_t *credits = json_null(), *lid;
	char *norm;

	if (id == NULL)
		id = json_string_value(json_object_get(ev, "limit_name"));
	if (json_is_boolean(json_object_get(c, "has_credits")) &&
		json_is_boolean(json_object_get(c, "unlimited")))
		credits = json_pack("{s:O, s:O, s:o}", "hasCredits",
			json_object_get(c, "has_credits"), "unlimited",
			json_object_get(c, "unlimited"), "balance",
			json_is_string(json_object_get(c, "balance"))
				? json_incref(json_object_get(c, "balance"))
				: json_null());
	/* the limit id as upstream normalizes it: trimmed, lowercase, '-' as '_' */
	lid = rl_trimmed(id != NULL ? id : "codex");
	if (json_is_null(lid))
		lid = json_string("codex");
	norm = xstrdup(json_string_value(lid));
	for (char *p = norm; *p != '\0'; p++)
		*p = *p == '-' ? '_' : (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	json_decref(lid);
	lid = json_string(norm);
	free(norm);
	return rl_snapshot(lid, json_null(), rl_event_window(json_object_get(rl, "primary")),
		rl_event_window(json_object_get(rl, "secondary")), credits,
		plan != NULL ? json_string(plan) : json_null(), json_null());
}

void
model_rate_limits_merge(json_t *prev, const json_t *next)
{
	/* a rolling update without credits or plan keeps what was known (upstream's merge) */
	json_t *credits = json_object_get(prev, "credits"),
	       *plan = json_object_get(prev, "planType");

	json_incref(credits);
	json_incref(plan);
	json_object_update(prev, (json_t *)next);
	if (json_is_null(json_object_get(next, "credits")) && credits != NULL)
		json_object_set(prev, "credits", credits);
	if (json_is_null(json_object_get(next, "planType")) && plan != NULL)
		json_object_set(prev, "planType", plan);
	json_decref(credits);
	json_decref(plan);
}
