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
#include "agent/prompt/prompt_input.h"
#include "agent/review/review.h"
#include "model/model.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"
#include "skills/skills.h"

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
