/*
 * Skills as upstream 0.169 finds and uses them (docs/skills.md).
 *
 * Discovery: for a cwd, the roots are, in this order, <cwd>/.codex/skills (repo),
 * $CODEX_HOME/skills (user), $HOME/.agents/skills (user), $CODEX_HOME/skills/.system (system),
 * /etc/codex/skills (admin), the extra roots of skills/extraRoots/set (user), then
 * <dir>/.agents/skills (repo) for every dir from the repository root (the nearest ancestor
 * holding .git) down to the cwd. Each root is walked breadth first, 6 levels deep, at most
 * 2,000 folders, names starting with '.' skipped, symbolic links to folders followed (not in
 * the system root); every SKILL.md is parsed, a file that does not parse is an error of its
 * own (not for the system root). A file reached twice (same real path) counts once, for the
 * first root; the skills are sorted by scope (repo, user, system, admin), name, then path.
 *
 * Scanning reads the disk: skills_scan runs on a worker thread (skills/list) or, when the
 * cache is cold at a turn's start, on the loop (a few milliseconds for hundreds of skills).
 */
#ifndef SKILLS_H
#define SKILLS_H

#include <stddef.h>

#include <jansson.h>

enum skill_scope { SKILL_REPO, SKILL_USER, SKILL_SYSTEM, SKILL_ADMIN };

struct skill {
	char *name, *description;
	char *short_description; /* metadata.short-description, or NULL */
	char *path;		 /* the SKILL.md's real path */
	enum skill_scope scope;
	json_t *interface;    /* wire SkillInterface, or NULL */
	json_t *dependencies; /* wire SkillDependencies, or NULL */
	int implicit;	      /* policy.allow_implicit_invocation (default true) */
	size_t root;	      /* its root, an index into the outcome's roots */
};

/* What one scan found. */
struct skills_outcome {
	struct skill *v;
	size_t n;
	json_t *errors; /* SkillErrorInfo[] ({path, message}), sorted by path */
	char **roots;	/* the roots that gave a skill, in root order */
	size_t nroots;
	/* skills/list's last entry for it, as text (skills_entry_text; the loop's alone) */
	struct skills_entry_text *text;
};

/* Where to look (all borrowed). home may be NULL (no $HOME/.agents/skills). */
struct skills_env {
	const char *codex_home;
	const char *home;
	const char *const *extra; /* extra roots (absolute) */
	size_t nextra;
};

/* Scan the roots of cwd (absolute): blocking, thread-safe (no global state). */
struct skills_outcome *skills_scan(const struct skills_env *env, const char *cwd);
void skills_outcome_free(struct skills_outcome *o);

/*
 * The process's skills, on the loop thread: extra roots, and outcomes cached per cwd until
 * forceReload, a change of the extra roots or of the skill files (skills_invalidate).
 */
struct skills;
struct skills *skills_default(void);
/* The environment of a scan now (strings copied into *env's owner, freed by skills_env_free). */
struct skills_env *skills_env_now(struct skills *s);
void skills_env_free(struct skills_env *env);
/* Replace the extra roots (absolute paths); the cache is dropped. */
void skills_set_extra_roots(struct skills *s, const char *const *roots, size_t n);
/* The cached outcome of cwd, or NULL. */
const struct skills_outcome *skills_cached(struct skills *s, const char *cwd);
/* Cache o (stolen) for cwd; returns it. */
const struct skills_outcome *skills_store(
	struct skills *s, const char *cwd, struct skills_outcome *o);
/* The outcome of cwd: cached, else scanned now on this thread. */
const struct skills_outcome *skills_get(struct skills *s, const char *cwd);
/* Forget every cached outcome. */
void skills_invalidate(struct skills *s);
/* Free the process's skills (exit, tests). */
void skills_default_free(void);

/* Whether the skill is enabled under config.toml's [[skills.config]] rules now. */
int skills_enabled(const struct skill *sk);
/* A SkillsListEntry for cwd (as given) from o (new reference). */
json_t *skills_entry_json(const struct skills_outcome *o, const char *cwd);
/*
 * The same entry as compact JSON text (borrowed from o, *len set): kept in o and given again
 * while cwd and every skill's enabled state are the same, so a cached skills/list neither
 * builds nor serialises its skills again (1,000 of them: ~3 ms each time).
 */
const char *skills_entry_text(struct skills_outcome *o, const char *cwd, size_t *len);

/* The developer message text of the skills section, or NULL when no skill is listed (heap). */
char *skills_section(const struct skills_outcome *o);
/*
 * The skills a turn's input invokes (wire UserInput[]): {type:"skill"} items first, then
 * $name mentions in the text, each skill once; as the texts of the user messages upstream
 * injects (a JSON array of strings, new reference; empty when none).
 */
json_t *skills_inject(const struct skills_outcome *o, const json_t *input);

/*
 * skills/config/write: enable or disable a skill by path or name in $CODEX_HOME/config.toml,
 * editing the [[skills.config]] entries only (the file's other bytes are kept), atomically.
 * 0, or -1 with *cause (heap).
 */
int skills_config_write(const char *path, const char *name, int enabled, char **cause);

#endif
