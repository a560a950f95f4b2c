/*
 * The sandbox executor's entry points: sandbox_prepare turns an effective policy into a
 * plan (plan.c, protect.c) plus the id maps, the cached seccomp program and the shared
 * empty network namespace; sandbox_spawn_prepare does it for a wire policy and points spawn
 * at the child hook (init.c). The child follows the plan with syscalls only.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/cgroup/cgroup.h"
#include "sandbox.h"
#include "sandbox_int.h"
#include "protocol/xmalloc.h"

/* The fault names of APP_SERVER_SANDBOX_FAULT, by step. */
static const char *const sandbox_fault_names[] = {
	[SBX_STEP_USERNS] = "userns",
	[SBX_STEP_MOUNTS] = "mounts",
	[SBX_STEP_DEV] = "dev",
	[SBX_STEP_PROC] = "proc",
	[SBX_STEP_PROTECT] = "protect",
	[SBX_STEP_CWD] = "cwd",
	[SBX_STEP_INIT] = "init",
	[SBX_STEP_CAPS] = "caps",
	[SBX_STEP_NNP] = "nnp",
	[SBX_STEP_LANDLOCK] = "landlock",
	[SBX_STEP_SECCOMP] = "seccomp",
};

/*
 * One empty network namespace for every sandbox without network, made once (a namespace
 * costs about 0.3 ms to make and more to destroy). It belongs to our user namespace, so a
 * sandbox (in a user namespace of its own) can use it but not configure it; it has only a
 * loopback that is down. Sandboxes cannot reach each other through it: seccomp denies
 * connect and bind, and Landlock scopes abstract unix sockets. -2: not tried; -1: none
 * (not root: each sandbox then gets its own).
 */
static int sandbox_netns = -2;

/* The shared empty network namespace (on the calling thread, made once), or -1. */
static int
sandbox_shared_netns(void)
{
	int home, fd;

	if (sandbox_netns != -2)
		return sandbox_netns;
	sandbox_netns = -1;
	if ((home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (unshare(CLONE_NEWNET) == 0) {
		fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (setns(home, CLONE_NEWNET) == -1)
			abort(); /* this thread must not stay in the empty namespace */
		sandbox_netns = fd;
	}
	close(home);
	return sandbox_netns;
}

/* The step APP_SERVER_SANDBOX_FAULT names, or -1. It can only make a sandbox fail. */
static int
sandbox_fault(void)
{
	const char *f = getenv("APP_SERVER_SANDBOX_FAULT");
	int i;

	for (i = 0; f != NULL && i < SBX_STEP_COUNT; i++)
		if (strcmp(f, sandbox_fault_names[i]) == 0)
			return i;
	return -1;
}

/*
 * APP_SERVER_SANDBOX_PAUSE_MS: the init sleeps this long (at most 10 s) between the mounts
 * and the last look at the protected paths, so the tests can change them during setup. It
 * only delays a sandbox, never weakens one.
 */
static unsigned
sandbox_pause_ms(void)
{
	const char *v = getenv("APP_SERVER_SANDBOX_PAUSE_MS");
	unsigned long ms = v != NULL ? strtoul(v, NULL, 10) : 0;

	return ms > 10000 ? 10000 : (unsigned)ms;
}

/* Prepare a sandbox for p; 0 (with *out NULL when none is needed), or -1 and *cause. */
int
sandbox_prepare(const struct policy *p, const char *cwd, unsigned spawn_flags, struct sandbox **out,
	char **cause)
{
	struct plan_make pl;
	struct sandbox *sb = NULL;
	char here[PATH_MAX], *norm = NULL, *canon = NULL;
	int exists;

	*out = NULL;
	if (p->kind == POLICY_NONE || p->kind == POLICY_EXTERNAL)
		return 0;
	memset(&pl, 0, sizeof pl);
	sb = xcalloc(1, sizeof *sb);
	sb->fault = sandbox_fault();
	sb->pause_ms = sandbox_pause_ms();
	sb->net = p->net;
	sb->ruleset = -1;
	sb->guard = -1;
	sb->errfd = -1;
	sb->netns_fd = -1;
	if (filter_program(p->net, &sb->filter, cause) != 0)
		goto fail;
	if (p->kind == POLICY_NETWORK) {
		sb->mode = SBX_MODE_SECCOMP;
		*out = sb;
		return 0;
	}
	sb->mode = SBX_MODE_NS;
	if ((sb->ll_abi = landlock_abi()) < 1) {
		*cause = xasprintf("sandbox setup failed: landlock: %s", landlock_why());
		goto fail;
	}
	if (cwd == NULL)
		cwd = getcwd(here, sizeof here);
	if (cwd == NULL || (norm = policy_normalize(cwd)) == NULL) {
		*cause =
			xstrdup("sandbox setup failed: cwd: the working directory is not absolute");
		goto fail;
	}
	canon = plan_canon(norm, &exists);
	sb->cwd = exists ? canon : xstrdup(norm);
	if (!exists)
		free(canon);
	free(norm);
	sb->netns_fd = p->net ? -1 : sandbox_shared_netns();
	sb->clone_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
		(p->net || sb->netns_fd >= 0 ? 0 : CLONE_NEWNET);
	sb->cap_last = caps_last();
	snprintf(sb->uid_map, sizeof sb->uid_map, "%u %u 1\n", (unsigned)geteuid(),
		(unsigned)geteuid());
	snprintf(sb->gid_map, sizeof sb->gid_map, "%u %u 1\n", (unsigned)getegid(),
		(unsigned)getegid());
	(void)spawn_flags;
	if (plan_make(sb, &pl, p) != 0) {
		*cause = pl.cause;
		pl.cause = NULL;
		goto fail;
	}
	plan_free(&pl);
	*out = sb;
	return 0;
fail:
	plan_free(&pl);
	sandbox_free(sb);
	return -1;
}

/* Point spawn at the sandbox. */
void
sandbox_spawn_opts(struct sandbox *sb, struct spawn_opts *so)
{
	so->child_hook = init_child_hook;
	so->child_hook_arg = sb;
	so->hook_steps = init_step_names;
	so->hook_cause = init_cause;
	if (sb->mode == SBX_MODE_NS) {
		so->clone_flags = sb->clone_flags;
		so->flags |= SPAWN_SUPERVISED;
	}
	if (sb->netns_fd >= 0) {
		so->flags |= SPAWN_NETNS;
		so->netns_fd = sb->netns_fd;
	}
}

void
sandbox_free(struct sandbox *sb)
{
	size_t i;

	if (sb == NULL)
		return;
	plan_ops_free(sb);
	spawn_close_later(sb->guard);
	for (i = 0; i < sb->nwritable; i++)
		free(sb->writable[i]);
	free(sb->writable);
	free(sb->cwd);
	free(sb);
}

/* Check a wire policy and give the command's extra environment entry. */
int
sandbox_policy_check(const json_t *policy, const char **env_extra, char **cause)
{
	struct policy_ctx ctx = {.cwd = "/", .tmpdir = getenv("TMPDIR")};
	struct policy *p;

	*env_extra = NULL;
	if (policy_parse(policy, &ctx, &p, cause) != 0)
		return -1;
	*env_extra = policy_env(p);
	policy_free(p);
	return 0;
}

/* Resolve the policy for so's command and attach the sandbox to so. */
int
sandbox_spawn_prepare(const json_t *policy, struct spawn_opts *so, char **cause)
{
	struct policy_ctx ctx = {.tmpdir = getenv("TMPDIR")};
	struct sandbox *sb = NULL;
	struct policy *p = NULL;
	char here[PATH_MAX], *cwd = NULL;
	int r = -1;

	if (so->policy_cwd != NULL)
		cwd = policy_normalize(so->policy_cwd);
	else if (so->cwd != NULL)
		cwd = policy_normalize(so->cwd);
	else if (getcwd(here, sizeof here) != NULL)
		cwd = policy_normalize(here);
	if (cwd == NULL) {
		*cause =
			xstrdup("sandbox setup failed: cwd: the working directory is not absolute");
		return -1;
	}
	ctx.cwd = cwd;
	if (policy_parse(policy, &ctx, &p, cause) != 0 ||
		sandbox_prepare(p, so->cwd != NULL ? so->cwd : cwd, so->flags, &sb, cause) != 0)
		goto out;
	/*
	 * The fallback process cap, where no cgroup will hold one (docs/sandbox.md): in the
	 * sandbox's own user namespace the count is the sandbox's alone. Without one (seccomp
	 * only) spawn sizes it from the uid's count instead.
	 */
	if (sb != NULL && sb->mode == SBX_MODE_NS && (so->flags & SPAWN_CGROUP) &&
		cgroup_support()->pids == 0)
		sb->nproc = so->max_pids;
	if (sb != NULL && sb->mode == SBX_MODE_NS && guard_open(sb, cause) != 0) {
		sandbox_free(sb);
		goto out;
	}
	if (sb != NULL)
		sandbox_spawn_opts(sb, so);
	r = 0;
out:
	policy_free(p);
	free(cwd);
	return r;
}

/*
 * Free the sandbox attached to so. A started process (sp, NULL when the start failed) keeps
 * the sandbox's guard fd until it is over (spawn_release).
 */
void
sandbox_spawn_done(struct spawn_opts *so, struct spawn_proc *sp)
{
	struct sandbox *sb = so->child_hook_arg;

	if (so->child_hook != init_child_hook)
		return;
	if (sp != NULL && sp->pid > 0 && sp->linger_fd < 0) {
		sp->linger_fd = sb->guard;
		sb->guard = -1;
	}
	sandbox_free(sb);
	so->child_hook = NULL;
	so->child_hook_arg = NULL;
	so->hook_steps = NULL;
	so->hook_cause = NULL;
	so->clone_flags = 0;
	so->flags &= ~(unsigned)(SPAWN_SUPERVISED | SPAWN_NETNS);
}

/* Whether a wire policy, with roots derived from policy_cwd, lets a command write path. */
int
sandbox_may_write(const json_t *policy, const char *policy_cwd, const char *path)
{
	struct policy_ctx ctx = {.cwd = policy_cwd, .tmpdir = getenv("TMPDIR")};
	struct policy *p = NULL;
	char *cause = NULL;
	int r = 0;

	if (policy_parse(policy, &ctx, &p, &cause) == 0)
		r = plan_writable(p, path);
	free(cause);
	policy_free(p);
	return r;
}

/*
 * The agent's workdir rule (docs/sandbox.md, protected paths, rule 5): a directory the model
 * chose must resolve, through whatever symlinks lie on its way, inside the turn's cwd or one
 * of the policy's writable roots (all resolved too). 0, or -1 with a message for the model.
 */
int
sandbox_check_workdir(
	const json_t *policy, const char *policy_cwd, const char *workdir, char **cause)
{
	struct policy_ctx ctx = {.cwd = policy_cwd, .tmpdir = getenv("TMPDIR")};
	struct policy *p = NULL;
	char *w = NULL, *c = NULL;
	int ok = 0;

	if (policy_parse(policy, &ctx, &p, cause) != 0)
		return -1;
	if (p->kind == POLICY_NONE || p->kind == POLICY_EXTERNAL) {
		policy_free(p);
		return 0;
	}
	w = realpath(workdir, NULL);
	if (w == NULL) {
		*cause = xasprintf("workdir %s does not exist", workdir);
		policy_free(p);
		return -1;
	}
	if ((c = realpath(policy_cwd, NULL)) != NULL && policy_path_within(w, c))
		ok = 1;
	free(c);
	for (size_t i = 0; i < p->nentries && !ok; i++) {
		if (p->entries[i].access != POLICY_WRITE)
			continue;
		if ((c = realpath(p->entries[i].path, NULL)) != NULL && policy_path_within(w, c))
			ok = 1;
		free(c);
	}
	if (!ok)
		*cause = xasprintf("workdir %s resolves to %s, outside the turn's workspace and "
				   "writable roots",
			workdir, w);
	free(w);
	policy_free(p);
	return ok ? 0 : -1;
}

/* CODEX_HOME stays read-only in every sandbox planned from now on (protect.c). */
void
sandbox_set_home(const char *path)
{
	protect_set_home(path);
}
