/*
 * The words of the model's input that are ours, not the user's: our base instructions (the
 * first developer message), the compaction prompt, a text message of a role, and the
 * <environment_context> message as upstream 0.169 writes it. Pure; agent_prompt.c puts them
 * into the input.
 */
#include <stdlib.h>
#include <string.h>

#include "prompt_docs.h"
#include "prompt_texts.h"
#include "protocol/xmalloc.h"
#include "skills/skills.h"

const char prompt_base_instructions[] =
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

const char prompt_compact_prompt[] =
	"You have been working on the task above and the conversation is about to outgrow the "
	"model's context. Write a summary for yourself to continue from: the user's goal and "
	"constraints, what has been done (files changed, commands run and their results), what "
	"is left, and anything you would need to remember. Be complete but concise.";

json_t *
prompt_text_message(const char *role, const char *text)
{
	return json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "type", "message", "role", role, "content",
		"type", "input_text", "text", text);
}

json_t *
prompt_environment(const char *cwd, const json_t *approval_policy, const json_t *sandbox_policy)
{
	const char *ap = json_string_value(approval_policy);
	int net = json_is_true(json_object_get(sandbox_policy, "networkAccess"));
	const char *mode = prompt_sandbox_word(sandbox_policy);
	char *text;
	json_t *m;

	if (strcmp(mode, "danger-full-access") == 0)
		net = 1;
	text = xasprintf("<environment_context>\n  <cwd>%s</cwd>\n  <approval_policy>%s"
			 "</approval_policy>\n  <sandbox_mode>%s</sandbox_mode>\n  "
			 "<network_access>%s</network_access>\n  <shell>bash</shell>\n"
			 "</environment_context>",
		cwd, ap != NULL ? ap : "granular", mode, net ? "enabled" : "restricted");
	m = prompt_text_message("user", text);
	free(text);
	return m;
}

void
prompt_skill_messages(const char *cwd, const json_t *input, json_t *out)
{
	json_t *texts = skills_inject(skills_get(skills_default(), cwd), input), *v;
	size_t i;

	json_array_foreach(texts, i, v)
		json_array_append_new(out, prompt_text_message("user", json_string_value(v)));
	json_decref(texts);
}
