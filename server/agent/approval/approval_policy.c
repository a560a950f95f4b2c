/*
 * approvalPolicy values (approval_rules.h): the wire forms 0.169 accepts and the Rust Debug
 * spelling upstream puts into the text that refuses an escalation request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "approval_rules.h"
#include "protocol/xmalloc.h"

/* A required or optional boolean field of the granular object. */
static int
ap_flag(json_t *o, const char *name, bool required, bool *out, char **cause)
{
	json_t *v = json_object_get(o, name);

	if (v == NULL && !required) {
		*out = false;
		return 0;
	}
	if (!json_is_boolean(v)) {
		if (cause != NULL)
			*cause = xasprintf(v ? "invalid type for `%s`: expected a boolean"
					     : "missing field `%s`",
				name);
		return -EINVAL;
	}
	*out = json_is_true(v);
	return 0;
}

/* "untrusted" | "on-request" | "never" | {"granular": {...}}. */
int
approval_policy_parse(json_t *v, struct approval_policy *out, char **cause)
{
	const char *s = json_string_value(v);
	json_t *g;

	memset(out, 0, sizeof(*out));
	if (s != NULL) {
		if (strcmp(s, "untrusted") == 0)
			out->kind = APPROVAL_UNTRUSTED;
		else if (strcmp(s, "on-request") == 0)
			out->kind = APPROVAL_ON_REQUEST;
		else if (strcmp(s, "never") == 0)
			out->kind = APPROVAL_NEVER;
		else {
			if (cause != NULL)
				*cause = xasprintf("unknown variant `%s`, expected one of "
						   "`untrusted`, `on-request`, `granular`, `never`",
					s);
			return -EINVAL;
		}
		return 0;
	}
	g = json_object_get(v, "granular");
	if (!json_is_object(g) || json_object_size(v) != 1) {
		if (cause != NULL)
			*cause = xstrdup("expected an approval policy: \"untrusted\", "
					 "\"on-request\", \"never\" or {\"granular\": {...}}");
		return -EINVAL;
	}
	out->kind = APPROVAL_GRANULAR;
	if (ap_flag(g, "sandbox_approval", true, &out->sandbox_approval, cause) != 0 ||
		ap_flag(g, "rules", true, &out->rules, cause) != 0 ||
		ap_flag(g, "mcp_elicitations", true, &out->mcp_elicitations, cause) != 0 ||
		ap_flag(g, "skill_approval", false, &out->skill_approval, cause) != 0 ||
		ap_flag(g, "request_permissions", false, &out->request_permissions, cause) != 0)
		return -EINVAL;
	return 0;
}

/* Rust's {:?} of AskForApproval. */
char *
approval_policy_debug(const struct approval_policy *p)
{
	switch (p->kind) {
	case APPROVAL_UNTRUSTED:
		return xstrdup("UnlessTrusted");
	case APPROVAL_ON_REQUEST:
		return xstrdup("OnRequest");
	case APPROVAL_NEVER:
		return xstrdup("Never");
	case APPROVAL_GRANULAR:
		break;
	}
	return xasprintf("Granular(GranularApprovalConfig { sandbox_approval: %s, rules: %s, "
			 "skill_approval: %s, request_permissions: %s, mcp_elicitations: %s })",
		p->sandbox_approval ? "true" : "false", p->rules ? "true" : "false",
		p->skill_approval ? "true" : "false", p->request_permissions ? "true" : "false",
		p->mcp_elicitations ? "true" : "false");
}
