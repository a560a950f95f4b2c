/*
 * The texts of a review, as upstream 0.169 writes them (recorded against the mock model): the
 * reviewer's prompt and the user's hint for each target, and what the reviewer's answer
 * becomes. Upstream reads the answer with serde: every field of the output and of each
 * finding is required (priority too, null is refused), unknown fields are ignored, and a
 * message that does not read so counts as plain text, its explanation.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "review.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define REVIEW_UNCOMMITTED                                                                         \
	"Review the current code changes (staged, unstaged, and untracked files) and provide "     \
	"prioritized findings."
#define REVIEW_ACTION_HEAD                                                                         \
	"<user_action>\n  <context>User initiated a review task. Here's the full review output "   \
	"from reviewer model. User may select one or more comments to resolve.</context>\n  "      \
	"<action>review</action>\n  <results>\n  "
#define REVIEW_ACTION_TAIL "\n  </results>\n  </user_action>\n"
#define REVIEW_ACTION_INTERRUPTED                                                                  \
	"<user_action>\n  <context>User initiated a review task, but was interrupted. If user "    \
	"asks about this, tell them to re-initiate a review with `/review` and wait for it to "    \
	"complete.</context>\n  <action>review</action>\n  <results>\n  None.\n  </results>\n"     \
	"</user_action>\n\n"

/* Whether s is missing or white space only. */
static int
review_blank(const char *s)
{
	if (s == NULL)
		return 1;
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

/* The first n characters (UTF-8) of s, as upstream's short sha. */
static char *
review_chars(const char *s, size_t n)
{
	size_t i = 0;

	while (s[i] != '\0' && n > 0) {
		i++;
		while (((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		n--;
	}
	return xstrndup(s, i);
}

int
review_target_text(
	const json_t *target, const char *merge_base, char **prompt, char **hint, char **cause)
{
	const char *type = json_string_value(json_object_get(target, "type"));
	const char *branch = json_string_value(json_object_get(target, "branch"));
	const char *sha = json_string_value(json_object_get(target, "sha"));
	const char *title = json_string_value(json_object_get(target, "title"));
	const char *instr = json_string_value(json_object_get(target, "instructions"));
	char *s;

	*prompt = *hint = NULL;
	if (type == NULL) {
		*cause = xstrdup("review target needs a type");
		return -1;
	}
	if (strcmp(type, "uncommittedChanges") == 0) {
		*prompt = xstrdup(REVIEW_UNCOMMITTED);
		*hint = xstrdup("current changes");
	} else if (strcmp(type, "baseBranch") == 0) {
		if (review_blank(branch)) {
			*cause = xstrdup("branch must not be empty");
			return -1;
		}
		if (merge_base != NULL)
			*prompt = xasprintf("Review the code changes against the base branch '%s'. "
					    "The merge base commit for this comparison is %s. Run "
					    "`git diff %s` to inspect the changes relative to %s. "
					    "Provide prioritized, actionable findings.",
				branch, merge_base, merge_base, branch);
		else
			*prompt = xasprintf(
				"Review the code changes against the base branch '%s'. Start by "
				"finding the merge diff between the current branch and %s's "
				"upstream e.g. (`git merge-base HEAD \"$(git rev-parse "
				"--abbrev-ref \"%s@{upstream}\")\"`), then run `git diff` against "
				"that SHA to see what changes we would merge into the %s branch. "
				"Provide prioritized, actionable findings.",
				branch, branch, branch, branch);
		*hint = xasprintf("changes against '%s'", branch);
	} else if (strcmp(type, "commit") == 0) {
		if (review_blank(sha)) {
			*cause = xstrdup("sha must not be empty");
			return -1;
		}
		s = review_chars(sha, 7);
		if (title != NULL) {
			*prompt = xasprintf(
				"Review the code changes introduced by commit %s (\"%s\"). "
				"Provide prioritized, actionable findings.",
				sha, title);
			*hint = xasprintf("commit %s: %s", s, title);
		} else {
			*prompt = xasprintf("Review the code changes introduced by commit %s. "
					    "Provide prioritized, actionable findings.",
				sha);
			*hint = xasprintf("commit %s", s);
		}
		free(s);
	} else if (strcmp(type, "custom") == 0) {
		s = xstrtrim(instr != NULL ? instr : "");
		if (*s == '\0') {
			free(s);
			*cause = xstrdup("instructions must not be empty");
			return -1;
		}
		*prompt = s;
		*hint = xstrdup(s);
	} else {
		*cause = xasprintf("unknown review target type `%s`", type);
		return -1;
	}
	return 0;
}

/* serde's f32: any JSON number. */
static int
review_number(const json_t *o, const char *key)
{
	return json_is_number(json_object_get(o, key));
}

/* serde's u32. */
static int
review_u32(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 &&
		json_integer_value(v) <= 0xffffffffLL;
}

/* One ReviewFinding, every field present and of its type. */
static int
review_finding_ok(const json_t *f)
{
	const json_t *loc = json_object_get(f, "code_location");
	const json_t *range = json_object_get(loc, "line_range");
	const json_t *pri = json_object_get(f, "priority");

	return json_is_object(f) && json_is_string(json_object_get(f, "title")) &&
		json_is_string(json_object_get(f, "body")) &&
		review_number(f, "confidence_score") && json_is_integer(pri) &&
		json_integer_value(pri) >= -2147483648LL &&
		json_integer_value(pri) <= 2147483647LL && json_is_object(loc) &&
		json_is_string(json_object_get(loc, "absolute_file_path")) &&
		json_is_object(range) && review_u32(range, "start") && review_u32(range, "end");
}

/* The text read as a ReviewOutputEvent (new reference), or NULL. */
static json_t *
review_parse(const char *text, size_t len)
{
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL), *f;
	size_t i;

	if (!json_is_object(o) || !json_is_array(json_object_get(o, "findings")) ||
		!json_is_string(json_object_get(o, "overall_correctness")) ||
		!json_is_string(json_object_get(o, "overall_explanation")) ||
		!review_number(o, "overall_confidence_score"))
		goto bad;
	json_array_foreach(
		json_object_get(o, "findings"), i, f) if (!review_finding_ok(f)) goto bad;
	return o;
bad:
	json_decref(o);
	return NULL;
}

/* Rust's str::lines: split at \n, a \r before it dropped, no last empty line. */
static void
review_body_lines(struct buf *b, const char *body)
{
	const char *p = body, *nl;
	size_t n;

	while (*p != '\0') {
		nl = strchr(p, '\n');
		n = nl != NULL ? (size_t)(nl - p) : strlen(p);
		buf_add(b, "\n  ", 3);
		buf_add(b, p, n > 0 && p[n - 1] == '\r' ? n - 1 : n);
		if (nl == NULL)
			break;
		p = nl + 1;
	}
}

/* Upstream's findings block: a blank line, the header, then each finding, blank-separated. */
static void
review_findings_block(struct buf *b, const json_t *findings)
{
	const json_t *f, *loc, *range;
	char *line;
	size_t i;

	buf_adds(
		b, json_array_size(findings) > 1 ? "\nFull review comments:" : "\nReview comment:");
	json_array_foreach(findings, i, f)
	{
		loc = json_object_get(f, "code_location");
		range = json_object_get(loc, "line_range");
		line = xasprintf("\n\n- %s \xe2\x80\x94 %s:%lld-%lld",
			json_string_value(json_object_get(f, "title")),
			json_string_value(json_object_get(loc, "absolute_file_path")),
			(long long)json_integer_value(json_object_get(range, "start")),
			(long long)json_integer_value(json_object_get(range, "end")));
		buf_adds(b, line);
		free(line);
		review_body_lines(b, json_string_value(json_object_get(f, "body")));
	}
}

void
review_render(const char *message, struct review_result *r)
{
	json_t *out = NULL, *findings;
	const char *open, *close;
	struct buf text, action, block;
	char *expl, *tblock;

	memset(r, 0, sizeof *r);
	if (message == NULL) {
		r->review = xstrdup(REVIEW_FALLBACK);
		r->assistant = xstrdup(REVIEW_INTERRUPTED);
		r->user_action = xstrdup(REVIEW_ACTION_INTERRUPTED);
		return;
	}
	if ((out = review_parse(message, strlen(message))) == NULL &&
		(open = strchr(message, '{')) != NULL && (close = strrchr(message, '}')) != NULL &&
		open < close)
		out = review_parse(open, (size_t)(close - open) + 1);
	expl = xstrtrim(out != NULL ? json_string_value(json_object_get(out, "overall_explanation"))
				    : message);
	findings = out != NULL ? json_object_get(out, "findings") : NULL;
	buf_init(&block, REVIEW_TEXT_MAX);
	if (json_array_size(findings) > 0)
		review_findings_block(&block, findings);
	buf_init(&text, REVIEW_TEXT_MAX);
	buf_adds(&text, expl);
	tblock = xstrtrim(block.ptr != NULL ? block.ptr : "");
	if (*tblock != '\0') {
		if (text.len > 0)
			buf_add(&text, "\n\n", 2);
		buf_adds(&text, tblock);
	}
	if (text.len == 0)
		buf_adds(&text, REVIEW_FALLBACK);
	/* The history's copy: the explanation, then a newline and the block as it is. */
	buf_init(&action, REVIEW_TEXT_MAX + 512);
	buf_adds(&action, REVIEW_ACTION_HEAD);
	buf_adds(&action, expl);
	if (block.len > 0) {
		buf_addc(&action, '\n');
		buf_add(&action, block.ptr, block.len);
	}
	buf_adds(&action, REVIEW_ACTION_TAIL);
	r->review = xstrndup(text.ptr, text.len);
	r->assistant = xstrdup(r->review);
	r->user_action = xstrndup(action.ptr, action.len);
	buf_free(&text);
	buf_free(&action);
	buf_free(&block);
	free(tblock);
	free(expl);
	json_decref(out);
}

void
review_result_clear(struct review_result *r)
{
	free(r->review);
	free(r->assistant);
	free(r->user_action);
	memset(r, 0, sizeof *r);
}
