/*
 * The git facts a review needs before the reviewer starts: whether the thread's cwd is in a
 * repository (we refuse a git target outside one, where upstream lets the reviewer find out),
 * and for a base branch the merge base of HEAD and the branch. The repository check is the
 * one the turn's AGENTS.md lookup makes (the nearest .git above cwd, prompt_docs.h): a few
 * lstat calls, no process, so a review costs what a text turn costs. Only the merge base
 * needs git: one command, as a child on the exec engine under the read-only sandbox (a
 * repository's config can run code: filters, fsmonitor), never on the loop; its output is
 * captured (small) and the callback runs once, from the loop.
 */
#include <stdlib.h>
#include <string.h>

#include "review.h"
#include "agent/prompt/prompt_docs.h"
#include "exec/exec.h"
#include "io/log.h"
#include "protocol/xmalloc.h"
#include "sandbox/sandbox.h"

#define REVIEW_GIT_OUT	   4096 /* bytes of git's output kept: a path or a sha */
#define REVIEW_GIT_TIMEOUT 30.0 /* seconds a git command may take */

extern char **environ;

struct review_git {
	struct ev_loop *loop;
	char *cwd;
	char *error; /* reported from the loop (later): a check or a spawn that failed */
	struct exec_proc *proc;
	size_t budget;
	review_git_cb cb;
	void *arg;
	ev_idle later; /* error (or a spawn failure: no merge base), reported from the loop */
};

static void review_git_done(struct exec_proc *p, void *arg);
static void review_git_later_cb(struct ev_loop *loop, ev_idle *w, int revents);

/* Free what runs and the job (the callback is not run). */
static void
review_git_free(struct review_git *g)
{
	if (g == NULL)
		return;
	ev_idle_stop(g->loop, &g->later);
	exec_free(g->proc); /* a command still running is killed with its process group */
	free(g->cwd);
	free(g->error);
	free(g);
}

void
review_git_cancel(struct review_git *g)
{
	review_git_free(g);
}

/* The end: report once, after the job is gone (the callback may start a turn). */
static void
review_git_end(struct review_git *g, const char *error, const char *merge_base)
{
	review_git_cb cb = g->cb;
	void *arg = g->arg;

	g->proc = NULL; /* freed by the caller, in exec's done */
	review_git_free(g);
	cb(arg, error, merge_base);
}

static void
review_git_later_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct review_git *g = container_of(w, struct review_git, later);
	char *err = g->error;

	(void)loop;
	(void)revents;
	g->error = NULL;
	review_git_end(g, err, NULL);
	free(err);
}

/* Run git with argv in the cwd, read-only; 0, or -1 with *cause. */
static int
review_git_spawn(struct review_git *g, char *const *argv, char **cause)
{
	json_t *ro = json_pack("{s:s}", "type", "readOnly");
	struct spawn_opts so = {0};
	struct spawn_proc sp;
	struct exec_opts eo = {0};
	int r;

	so.argv = argv;
	so.envp = environ;
	so.cwd = g->cwd;
	so.policy_cwd = g->cwd;
	so.flags = SPAWN_CGROUP;
	r = sandbox_spawn_prepare(ro, &so, cause);
	if (r == 0)
		r = spawn_start(&so, &sp, cause);
	sandbox_spawn_done(&so, r == 0 ? &sp : NULL);
	json_decref(ro);
	if (r != 0)
		return -1;
	eo.loop = g->loop;
	eo.cap = REVIEW_GIT_OUT;
	eo.timeout = REVIEW_GIT_TIMEOUT;
	eo.budget = &g->budget;
	eo.done = review_git_done;
	eo.arg = g;
	g->proc = exec_start(&eo, &sp);
	return 0;
}

/* The first line of a capture (heap). */
static char *
review_git_line(const struct buf *b)
{
	const char *p = b->ptr != NULL ? b->ptr : "";
	size_t n = 0;

	while (n < b->len && p[n] != '\n' && p[n] != '\r')
		n++;
	return xstrndup(p, n);
}

static void
review_git_done(struct exec_proc *p, void *arg)
{
	struct review_git *g = arg;
	int code = exec_exit_code(p);
	char *line = review_git_line(exec_output(p, 0));

	exec_free(p);
	g->proc = NULL;
	/* A merge base git could not find: the prompt tells the model how to look for it. */
	review_git_end(g, NULL, code == 0 && line[0] != '\0' ? line : NULL);
	free(line);
}

struct review_git *
review_git_start(
	struct ev_loop *loop, const char *cwd, const json_t *target, review_git_cb cb, void *arg)
{
	const char *type = json_string_value(json_object_get(target, "type"));
	const char *branch = json_string_value(json_object_get(target, "branch"));
	char *root, *cause = NULL;
	struct review_git *g;
	int in_repo;

	if (type == NULL || strcmp(type, "custom") == 0)
		return NULL;
	root = prompt_repo_root(cwd);
	in_repo = root != NULL;
	free(root);
	/* In a repository, with no merge base to find: nothing to run, the caller goes on. */
	if (in_repo && (strcmp(type, "baseBranch") != 0 || branch == NULL || branch[0] == '-'))
		return NULL;
	g = xcalloc(1, sizeof *g);
	g->loop = loop;
	g->cwd = xstrdup(cwd);
	g->cb = cb;
	g->arg = arg;
	ev_idle_init(&g->later, review_git_later_cb);
	if (!in_repo) {
		/* Reported from the loop like any other end: the caller is not re-entered. */
		g->error = xasprintf("not a git repository: %s", cwd);
		ev_idle_start(loop, &g->later);
		return g;
	}
	if (review_git_spawn(g, (char *[]){"git", "merge-base", "HEAD", (char *)branch, NULL},
		    &cause) != 0) {
		log_warn("review: git merge-base: %s", cause != NULL ? cause : "spawn failed");
		free(cause);
		ev_idle_start(loop, &g->later); /* no merge base: the prompt says how to find it */
	}
	return g;
}
