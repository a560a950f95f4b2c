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
#include "agent/prompt/prompt_texts.h"
#include "agent/review/review.h"
#include "model/model.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"
#include "skills/skills.h"

/* The whole input of the next request (new reference). */
json_t *
agent_prompt_input(struct agent_turn *t)
{
	struct agent *a = t->a;
	json_t *in = json_array();
	char *skills, *docs;

	/* A review's reviewer has the review rubric instead (agent_review.c). */
	json_array_append_new(in,
		prompt_text_message("developer",
			t->review != NULL			 ? review_instructions
				: a->c.base_instructions != NULL ? a->c.base_instructions
								 : prompt_base_instructions));
	if (a->c.developer_instructions != NULL && *a->c.developer_instructions != '\0')
		json_array_append_new(
			in, prompt_text_message("developer", a->c.developer_instructions));
	/* The skills section, as upstream's second developer message (skills/skills.h). */
	if ((skills = skills_section(skills_get(skills_default(), t->o.cwd))) != NULL) {
		json_array_append_new(in, prompt_text_message("developer", skills));
		free(skills);
	}
	if ((docs = prompt_docs(t->o.cwd)) != NULL) {
		json_array_append_new(in, prompt_text_message("user", docs));
		free(docs);
	}
	json_array_append_new(
		in, prompt_environment(t->o.cwd, t->o.approval_policy, t->o.sandbox_policy));
	/* The history goes in as the text it is kept as (model_prompt.input_text). */
	json_array_append(in, model_input_marker());
	if (t->compacting)
		json_array_append_new(in, prompt_text_message("user", prompt_compact_prompt));
	return in;
}
