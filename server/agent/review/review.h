/*
 * Code review (review/start) as upstream 0.169 runs it: what the reviewer is told for each
 * target (uncommittedChanges, baseBranch, commit, custom), the hint the user sees, the git
 * facts gathered first (the repository, a base branch's merge base), the reviewer's
 * structured answer parsed as upstream parses it (and its fallback for a reply that is not
 * that JSON), and the texts rendered from it. Pure text except review_git.c, which runs git as
 * children on the exec engine and reports through a callback.
 */
#ifndef REVIEW_H
#define REVIEW_H

#include <stddef.h>

#include <ev.h>
#include <jansson.h>

#define REVIEW_TEXT_MAX (1u << 20) /* a rendered review, at most (longer is cut) */

/* The reviewer's rubric: the first developer message of a review turn (review_prompt.c). */
extern const char review_instructions[];

/* What exitedReviewMode says when the reviewer gave nothing usable (upstream's text). */
#define REVIEW_FALLBACK "Reviewer failed to output a response."
/* The assistant message a review that ended without an answer leaves in the history. */
#define REVIEW_INTERRUPTED                                                                         \
	"Review was interrupted. Please re-run /review and wait for it to complete."

/*
 * The prompt (the reviewer's user message) and the hint (enteredReviewMode.review, the
 * userMessage of review/start's answer) of a wire ReviewTarget; merge_base is the base
 * branch's merge base with HEAD, or NULL when it could not be found (upstream's older prompt
 * then tells the model how to find it). 0, or -1 with *cause (upstream's words).
 */
int review_target_text(
	const json_t *target, const char *merge_base, char **prompt, char **hint, char **cause);

/* What a review leaves behind, rendered from the reviewer's last message (heap strings). */
struct review_result {
	char *review;	   /* exitedReviewMode.review */
	char *assistant;   /* the assistant message of the history (and its agentMessage item) */
	char *user_action; /* the user message of the history before it */
};

/*
 * Parse the reviewer's last message as upstream does (the whole text as the JSON answer, else
 * the text from its first '{' to its last '}', else the text itself as the explanation) and
 * render it. NULL message (no answer: interrupted, failed): upstream's fallback texts.
 */
void review_render(const char *message, struct review_result *r);
void review_result_clear(struct review_result *r);

/* The git facts a target needs (review_git.c): the repository check, a base's merge base. */
struct review_git;
/* done: error NULL and merge_base (or NULL) on success; error a message otherwise. */
typedef void (*review_git_cb)(void *arg, const char *error, const char *merge_base);
/*
 * Start: the repository check for every target but custom (no process), then a base
 * branch's merge base (git, sandboxed, off the loop). NULL when there is nothing to run
 * (custom, or a repository and no merge base to find): the caller goes on at once. Otherwise
 * the callback runs once from the loop, unless review_git_cancel came first.
 */
struct review_git *review_git_start(
	struct ev_loop *loop, const char *cwd, const json_t *target, review_git_cb cb, void *arg);
/* Kill what runs and forget the callback. */
void review_git_cancel(struct review_git *g);

#endif
