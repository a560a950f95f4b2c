/* Our texts of the model's input (prompt_texts.c). */
#ifndef PROMPT_TEXTS_H
#define PROMPT_TEXTS_H

#include <jansson.h>

/* Our base instructions, the first developer message unless config.toml has its own. */
extern const char prompt_base_instructions[];
/* What a compaction asks the model for. */
extern const char prompt_compact_prompt[];

/* A Responses message of a role with one input_text part (new reference). */
json_t *prompt_text_message(const char *role, const char *text);
/* <environment_context> as a user message, as upstream writes it (new reference). */
json_t *prompt_environment(
	const char *cwd, const json_t *approval_policy, const json_t *sandbox_policy);
/*
 * The skills the input invokes ({type:"skill"}, $name) as user messages appended to out, one
 * each, as upstream's (skills/skills.h).
 */
void prompt_skill_messages(const char *cwd, const json_t *input, json_t *out);

#endif
