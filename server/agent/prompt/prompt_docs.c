/*
 * What the model is told about where it works, as upstream 0.169 words it: the AGENTS.md files
 * from the repository's root down to the cwd, and the sandbox mode's word for a policy. Pure
 * work on the file system and on JSON: the agent (agent_prompt.c) puts them into messages.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prompt_docs.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define PROMPT_DOC_MAX (32u << 10) /* AGENTS.md bytes, all files together (upstream's) */

/* Append the file at path to out if it exists (bounded by PROMPT_DOC_MAX in all). */
static void
prompt_doc_read(const char *path, struct buf *out)
{
	char chunk[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd == -1)
		return;
	if (out->len > 0)
		buf_adds(out, "\n\n");
	while ((n = read(fd, chunk, sizeof chunk)) > 0)
		if (buf_add(out, chunk, (size_t)n) != 0)
			break; /* past the ceiling: the rest is left out, as upstream truncates */
	close(fd);
}

char *
prompt_repo_root(const char *cwd)
{
	char *dir = xstrdup(cwd), *git, *slash;
	struct stat st;

	for (;;) {
		git = xasprintf("%s/.git", strcmp(dir, "/") == 0 ? "" : dir);
		if (lstat(git, &st) == 0) {
			free(git);
			return dir;
		}
		free(git);
		if (strcmp(dir, "/") == 0 || (slash = strrchr(dir, '/')) == NULL)
			break;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(dir);
	return NULL;
}

/* Append dir/AGENTS.md to docs when it exists. */
static void
prompt_doc_dir(const char *dir, size_t len, struct buf *docs)
{
	char *path = xasprintf("%.*s/AGENTS.md", len == 1 && dir[0] == '/' ? 0 : (int)len, dir);

	prompt_doc_read(path, docs);
	free(path);
}

char *
prompt_docs(const char *cwd)
{
	char *root = prompt_repo_root(cwd);
	size_t rl, len = strlen(cwd);
	struct buf docs;
	char *text = NULL;

	buf_init(&docs, PROMPT_DOC_MAX);
	rl = root != NULL ? strlen(root) : len;
	/* From the repository's root down to the cwd, each directory's AGENTS.md in turn. */
	prompt_doc_dir(cwd, rl, &docs);
	for (size_t i = rl + 1; i <= len; i++)
		if (cwd[i] == '/' || cwd[i] == '\0')
			prompt_doc_dir(cwd, i, &docs);
	if (docs.len > 0) {
		text = xasprintf("# AGENTS.md instructions for %s\n\n<INSTRUCTIONS>\n%s\n"
				 "</INSTRUCTIONS>",
			cwd, buf_str(&docs));
	}
	buf_free(&docs);
	free(root);
	return text;
}

/* The sandbox mode's word for a managed profile's file system: what it lets commands do. */
static const char *
prompt_managed_word(const json_t *fs)
{
	const char *type = json_string_value(json_object_get(fs, "type"));
	const json_t *e;
	size_t i;

	if (type == NULL || strcmp(type, "unrestricted") == 0)
		return "danger-full-access";
	json_array_foreach(json_object_get(fs, "entries"), i, e)
	{
		if (json_is_string(json_object_get(e, "access")) &&
			strcmp(json_string_value(json_object_get(e, "access")), "write") == 0)
			return "workspace-write";
	}
	return "read-only";
}

const char *
prompt_sandbox_word(const json_t *policy)
{
	const char *type = json_string_value(json_object_get(policy, "type"));

	if (type == NULL || strcmp(type, "readOnly") == 0)
		return "read-only";
	if (strcmp(type, "workspaceWrite") == 0)
		return "workspace-write";
	if (strcmp(type, "managed") == 0) /* a profile: its file system says */
		return prompt_managed_word(json_object_get(policy, "fileSystem"));
	return "danger-full-access";
}
