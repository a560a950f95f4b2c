/*
 * Project layers, as upstream 0.169 finds them for a cwd (recorded with its config/read):
 *
 * - The project root is the nearest folder, from the cwd up, holding a git `.git`: a file
 *   (a worktree's or submodule's "gitdir:" pointer) or a folder with a HEAD in it (an empty
 *   `.git` folder does not count). Without one, the root is the cwd itself.
 * - Every `.codex` folder from the cwd up to the root is a layer, deepest first; one without
 *   a config.toml is an empty layer, still listed. CODEX_HOME itself (~/.codex for a cwd of
 *   ~) is the user layer, never a project one.
 * - A layer applies when its project is trusted: `projects."<folder>".trust_level` for the
 *   folder holding that `.codex`, else the root's entry. Otherwise it is listed with one of
 *   upstream's two disabledReason texts (untrusted, or not listed) and not merged.
 */
#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_int.h"
#include "io/log.h"
#include "protocol/xmalloc.h"

#define PROJECT_MAX_LAYERS 64 /* .codex folders read for one cwd at most */

/* Whether dir holds a git `.git`: a file, or a folder with a HEAD. */
static int
config_project_is_root(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof path, "%s/.git", dir) >= (int)sizeof path || stat(path, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return 1;
	if (snprintf(path, sizeof path, "%s/.git/HEAD", dir) >= (int)sizeof path)
		return 0;
	return access(path, F_OK) == 0;
}

/* Cut dir after its parent's last '/' ("/a/b" -> "/a", "/a" -> "/"); 0 at "/". */
static int
config_project_up(char *dir)
{
	char *slash = strrchr(dir, '/');

	if (slash == NULL || strcmp(dir, "/") == 0)
		return 0;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return 1;
}

/* A project's trust_level in config.toml (the flags' over the user file's), or NULL. */
static const char *
config_project_trust(const struct config *c, const char *folder)
{
	const char *t = json_string_value(json_object_get(
		json_object_get(json_object_get(c->flags, "projects"), folder), "trust_level"));

	if (t == NULL)
		t = json_string_value(json_object_get(
			json_object_get(json_object_get(c->user, "projects"), folder),
			"trust_level"));
	return t;
}

/* Why the layer of folder (under root) is not applied, upstream's words; NULL: applied. */
static char *
config_project_disabled(const struct config *c, const char *folder, const char *root)
{
	const char *key = folder, *trust = config_project_trust(c, folder);

	if (trust == NULL) {
		key = root;
		trust = config_project_trust(c, root);
	}
	if (trust != NULL && strcmp(trust, "trusted") == 0)
		return NULL;
	if (trust != NULL && strcmp(trust, "untrusted") == 0)
		return xasprintf(
			"%s is marked as untrusted in the effective configuration. To load "
			"project-local config, hooks, and exec policies, update its trust "
			"setting. If that setting is managed by your organization, contact "
			"your administrator.",
			key);
	return xasprintf("To load project-local config, hooks, and exec policies, add %s as a "
			 "trusted project in %s.",
		root, c->path);
}

/* Read the layer of folder's `.codex` (a directory) into c->projects. */
static void
config_project_add(struct config *c, const char *folder, const char *root)
{
	struct config_project *p = &c->projects[c->nprojects];
	struct toml_pos pos = {0};
	char *path, *error = NULL;

	p->dir = xasprintf("%s%s.codex", folder, strcmp(folder, "/") == 0 ? "" : "/");
	path = xasprintf("%s/config.toml", p->dir);
	if ((p->config = config_file_read(path, &pos, &error)) == NULL) {
		/* a project file that does not parse is left out, the rest still loads */
		config_warn(c, "Invalid project configuration; it is ignored", error, path, &pos);
		log_warn("config: %s", error);
		p->config = json_object();
	}
	p->disabled = config_project_disabled(c, folder, root);
	c->nprojects++;
	free(error);
	free(path);
}

/* Whether the folder st is CODEX_HOME, the folder of the user's config.toml. */
static int
config_project_is_home(const struct config *c, const struct stat *st)
{
	char *home = xstrdup(c->path), *slash = strrchr(home, '/');
	struct stat hs;
	int r;

	if (slash != NULL)
		*slash = '\0';
	r = stat(home, &hs) == 0 && hs.st_dev == st->st_dev && hs.st_ino == st->st_ino;
	free(home);
	return r;
}

void
config_project_load(struct config *c, const char *cwd)
{
	char root[PATH_MAX], dir[PATH_MAX], dot[PATH_MAX];
	struct stat st;
	size_t n;

	if (cwd == NULL || cwd[0] != '/' || strlen(cwd) >= sizeof root)
		return;
	snprintf(root, sizeof root, "%s", cwd);
	for (n = strlen(root); n > 1 && root[n - 1] == '/'; n--)
		root[n - 1] = '\0';
	snprintf(dir, sizeof dir, "%s", root);
	/* the root: the nearest git folder up from cwd, else cwd */
	do {
		if (config_project_is_root(dir)) {
			snprintf(root, sizeof root, "%s", dir);
			break;
		}
	} while (config_project_up(dir));
	snprintf(dir, sizeof dir, "%s", cwd);
	for (n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	c->projects = xcalloc(PROJECT_MAX_LAYERS, sizeof *c->projects);
	for (;;) {
		if (snprintf(dot, sizeof dot, "%s/.codex", strcmp(dir, "/") == 0 ? "" : dir) <
				(int)sizeof dot &&
			stat(dot, &st) == 0 && S_ISDIR(st.st_mode) &&
			!config_project_is_home(c, &st) && c->nprojects < PROJECT_MAX_LAYERS)
			config_project_add(c, dir, root);
		if (strcmp(dir, root) == 0 || !config_project_up(dir))
			break;
	}
}

void
config_project_free(struct config *c)
{
	for (size_t i = 0; i < c->nprojects; i++) {
		free(c->projects[i].dir);
		json_decref(c->projects[i].config);
		free(c->projects[i].disabled);
	}
	free(c->projects);
	c->projects = NULL;
	c->nprojects = 0;
}
