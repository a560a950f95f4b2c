/*
 * The sandbox executor: runs a spawned command under a policy (policy.h) on Linux with
 * namespaces, mounts, capabilities, Landlock and seccomp, in-process, with no helper binary.
 * The parent prepares everything (sandbox_prepare); spawn's child hook only makes syscalls.
 * See docs/sandbox.md for the policy -> mechanism table.
 */
#ifndef SANDBOX_H
#define SANDBOX_H

#include <jansson.h>

#include "policy.h"
#include "sandbox/spawn/spawn.h"

struct sandbox;

/* What this kernel offers, probed once. */
struct sandbox_support {
	int landlock_abi; /* 0: no Landlock */
	int userns;	  /* user + mount + PID namespaces can be created: 0 or -errno */
	int netns;	  /* ... and a network namespace: 0 or -errno */
	int seccomp;	  /* seccomp filters can be installed: 0 or -errno */
};

/*
 * Prepare a sandbox for policy p and a command in cwd (absolute; NULL: ours) spawned with
 * spawn_flags. *out is NULL when the policy needs no sandbox. Returns 0, or -1 with
 * "sandbox setup failed: ..." in *cause (a layer the policy needs is missing, a protected
 * path is a symlink, ...).
 */
int sandbox_prepare(const struct policy *p, const char *cwd, unsigned spawn_flags,
	struct sandbox **out, char **cause);
/* Point spawn at the sandbox: the child hook, its step names, namespaces, supervision. */
void sandbox_spawn_opts(struct sandbox *sb, struct spawn_opts *so);
void sandbox_free(struct sandbox *sb);
/* Keep this path (CODEX_HOME) read-only in every sandbox planned from now on; NULL: none. */
void sandbox_set_home(const char *path);

/*
 * For command/exec. Check a wire policy (a SandboxPolicy or PermissionProfile; NULL means
 * readOnly) and give the environment entry the command needs (static, or NULL); 0, or -1
 * with "invalid sandbox policy: ..." / "invalid permission profile: ..." in *cause.
 */
int sandbox_policy_check(const json_t *policy, const char **env_extra, char **cause);
/* Resolve the policy against so->cwd and attach a sandbox to so (nothing when none). */
int sandbox_spawn_prepare(const json_t *policy, struct spawn_opts *so, char **cause);
/* Whether the policy (roots from policy_cwd) lets a command write path. */
int sandbox_may_write(const json_t *policy, const char *policy_cwd, const char *path);
/* A workdir the model chose must resolve inside policy_cwd or a writable root; 0 or -1. */
int sandbox_check_workdir(
	const json_t *policy, const char *policy_cwd, const char *workdir, char **cause);
/*
 * After spawn_start: free what sandbox_spawn_prepare attached to so; the started process (sp,
 * NULL when spawn_start failed) keeps the guard until spawn_release.
 */
void sandbox_spawn_done(struct spawn_opts *so, struct spawn_proc *sp);

/*
 * Probe the kernel by trying each layer in a short-lived child (for the CLI's --check;
 * it waits for its children itself, so not for the daemon, whose loop reaps every child).
 */
void sandbox_cli_probe(struct sandbox_support *s);
/* `app-server sandbox ...`: run one command under a policy, or --check. */
int sandbox_cli_main(int argc, char **argv);

#endif
