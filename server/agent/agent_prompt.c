/*
 * What the model is sent: upstream 0.169's input order (no top-level instructions): our base
 * instructions as the first developer message, the thread's developer instructions, the
 * AGENTS.md files from the repository's root down to the cwd, the environment context, then
 * the history (the user's messages, the model's items, the tools' outputs). Also the user's
 * input as a Responses message and as the v2 userMessage item.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_int.h"
#include "agent/prompt/prompt_docs.h"
#include "agent/review/review.h"
#include "model/model.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"
#include "skills/skills.h"

#define AGENT_IMAGE_MAX (20u << 20) /* a local image file, at most */

const char agent_base_instructions[] =
	"You are a coding agent running in a terminal-less environment on the user's computer. "
	"You help with software tasks: reading and changing code, running commands, and "
	"explaining what you did.\n\n"
	"Tools:\n"
	"- exec_command runs a shell command (bash -lc) in the workspace and returns its output. "
	"Commands run in a sandbox: writes outside the workspace may be denied, and the network "
	"may be off. If a command needs more, ask for escalated permissions with a short "
	"justification; the user may approve.\n"
	"- write_stdin sends input to a command still running, or polls it for more output.\n"
	"- apply_patch edits files. Use the patch format:\n"
	"*** Begin Patch\n*** Add File: path\n+line\n*** Update File: path\n@@ context\n-old\n+new\n"
	"*** Delete File: path\n*** End Patch\n"
	"Paths are relative to the working directory. Prefer apply_patch to editing files with "
	"shell commands.\n"
	"- update_plan keeps a short plan of the steps of a longer task.\n\n"
	"Work carefully: read before you change, keep changes focused, and run the project's "
	"tests when you can. When you are done, say briefly what you changed and how you checked "
	"it.";

const char agent_compact_prompt[] =
	"You have been working on the task above and the conversation is about to outgrow the "
	"model's context. Write a summary for yourself to continue from: the user's goal and "
	"constraints, what has been done (files changed, commands run and their results), what "
	"is left, and anything you would need to remember. Be complete but concise.";

/* A Responses message of a role with one input_text part (new reference). */
json_t *
agent_text_message(const char *role, const char *text)
{
	return json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "type", "message", "role", role, "content",
		"type", "input_text", "text", text);
}

/* <environment_context> as a user message (new reference). */
static json_t *
agent_environment(const struct agent_turn *t)
{
	const char *ap = json_string_value(t->o.approval_policy);
	int net = json_is_true(json_object_get(t->o.sandbox_policy, "networkAccess"));
	const char *mode = prompt_sandbox_word(t->o.sandbox_policy);
	char *text;
	json_t *m;

	if (strcmp(mode, "danger-full-access") == 0)
		net = 1;
	text = xasprintf("<environment_context>\n  <cwd>%s</cwd>\n  <approval_policy>%s"
			 "</approval_policy>\n  <sandbox_mode>%s</sandbox_mode>\n  "
			 "<network_access>%s</network_access>\n  <shell>bash</shell>\n"
			 "</environment_context>",
		t->o.cwd, ap != NULL ? ap : "granular", mode, net ? "enabled" : "restricted");
	m = agent_text_message("user", text);
	free(text);
	return m;
}

/* The whole input of the next request (new reference). */
json_t *
agent_prompt_input(struct agent_turn *t)
{
	struct agent *a = t->a;
	json_t *in = json_array();
	char *skills, *docs;

	/* A review's reviewer has the review rubric instead (agent_review.c). */
	json_array_append_new(in,
		agent_text_message("developer",
			t->review != NULL			 ? review_instructions
				: a->c.base_instructions != NULL ? a->c.base_instructions
								 : agent_base_instructions));
	if (a->c.developer_instructions != NULL && *a->c.developer_instructions != '\0')
		json_array_append_new(
			in, agent_text_message("developer", a->c.developer_instructions));
	/* The skills section, as upstream's second developer message (skills/skills.h). */
	if ((skills = skills_section(skills_get(skills_default(), t->o.cwd))) != NULL) {
		json_array_append_new(in, agent_text_message("developer", skills));
		free(skills);
	}
	if ((docs = prompt_docs(t->o.cwd)) != NULL) {
		json_array_append_new(in, agent_text_message("user", docs));
		free(docs);
	}
	json_array_append_new(in, agent_environment(t));
	/* The history goes in as the text it is kept as (model_prompt.input_text). */
	json_array_append(in, model_input_marker());
	if (t->compacting)
		json_array_append_new(in, agent_text_message("user", agent_compact_prompt));
	return in;
}

/* A local image as a data URL; NULL with *cause. */
static char *
agent_image_url(const char *path, char **cause)
{
	static const char *const types[][2] = {{".png", "image/png"}, {".jpg", "image/jpeg"},
		{".jpeg", "image/jpeg"}, {".gif", "image/gif"}, {".webp", "image/webp"}};
	const char *mime = "application/octet-stream", *dot = strrchr(path, '.');
	struct stat st;
	char *data, *url = NULL;
	size_t n = 0;
	ssize_t r;
	int fd;

	for (size_t i = 0; dot != NULL && i < sizeof types / sizeof types[0]; i++)
		if (strcasecmp(dot, types[i][0]) == 0)
			mime = types[i][1];
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 || fstat(fd, &st) == -1) {
		*cause = xasprintf("cannot read image %s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > AGENT_IMAGE_MAX) {
		*cause = xasprintf("cannot read image %s: not a file of at most %u bytes", path,
			AGENT_IMAGE_MAX);
		close(fd);
		return NULL;
	}
	data = xmalloc((size_t)st.st_size + 1);
	while (n < (size_t)st.st_size && (r = read(fd, data + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)r;
	close(fd);
	url = xmalloc(strlen(mime) + 14 + base64_encoded_len(n) + 1);
	r = snprintf(url, strlen(mime) + 14, "data:%s;base64,", mime);
	base64_encode(data, n, url + r);
	url[r + (ssize_t)base64_encoded_len(n)] = '\0';
	free(data);
	return url;
}

/* The user's input as a Responses user message (new reference); NULL with *cause. */
json_t *
agent_user_message(const json_t *input, char **cause)
{
	json_t *content = json_array(), *in;
	const char *type, *s;
	char *url, *label;
	size_t i;
	int images = 0;

	json_array_foreach((json_t *)input, i, in)
	{
		type = json_string_value(json_object_get(in, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "text") == 0) {
			s = json_string_value(json_object_get(in, "text"));
			json_array_append_new(content,
				json_pack("{s:s, s:s}", "type", "input_text", "text",
					s != NULL ? s : ""));
		} else if (strcmp(type, "image") == 0) {
			s = json_string_value(json_object_get(in, "url"));
			if (s == NULL || strncmp(s, "data:", 5) != 0) {
				*cause = xstrdup(
					"remote image URLs are not supported; use an inline "
					"data URL instead");
				goto fail;
			}
			json_array_append_new(content,
				json_pack("{s:s, s:s}", "type", "input_image", "image_url", s));
		} else if (strcmp(type, "localImage") == 0) {
			s = json_string_value(json_object_get(in, "path"));
			if (s == NULL || (url = agent_image_url(s, cause)) == NULL) {
				if (s == NULL)
					*cause = xstrdup("localImage needs a path");
				goto fail;
			}
			label = xasprintf("<image name=[Image #%d] path=\"%s\">", ++images, s);
			json_array_append_new(content,
				json_pack("{s:s, s:s}", "type", "input_text", "text", label));
			json_array_append_new(content,
				json_pack("{s:s, s:s}", "type", "input_image", "image_url", url));
			free(label);
			free(url);
		}
	}
	return json_pack("{s:s, s:s, s:o}", "type", "message", "role", "user", "content", content);
fail:
	json_decref(content);
	return NULL;
}

/* The v2 userMessage item of the input (new reference). */
json_t *
agent_user_item(const json_t *input, const char *id)
{
	json_t *content = json_array(), *in, *c;
	size_t i;

	json_array_foreach((json_t *)input, i, in)
	{
		c = json_deep_copy(in);
		if (strcmp(json_string_value(json_object_get(c, "type")) ?: "", "text") == 0 &&
			json_object_get(c, "text_elements") == NULL)
			json_object_set_new(c, "text_elements", json_array());
		json_array_append_new(content, c);
	}
	return json_pack("{s:s, s:s, s:n, s:o}", "type", "userMessage", "id", id, "clientId",
		"content", content);
}
