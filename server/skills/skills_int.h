/*
 * Inside server/skills/: the YAML subset SKILL.md front matter and agents/openai.yaml are
 * written in, and the parsers of those two files.
 */
#ifndef SKILLS_INT_H
#define SKILLS_INT_H

#include <stddef.h>

#include <jansson.h>

#include "skills.h"

enum yaml_type { YAML_NULL, YAML_STR, YAML_MAP, YAML_SEQ };

/* A node of a parsed document; line and column (1-based) are where it starts. */
struct yaml_node {
	enum yaml_type type;
	char *str; /* YAML_STR: the scalar's text (numbers and booleans stay text) */
	unsigned line, col;
	char **keys;		 /* YAML_MAP */
	struct yaml_node **kids; /* YAML_MAP values, YAML_SEQ items */
	size_t n;
};

/*
 * Parse a YAML document of the subset (block mappings and sequences, plain, quoted and block
 * scalars, comments, flow sequences of scalars, anchors of scalars). NULL on a syntax error,
 * with *cause (heap) in libyaml's words where upstream's errors come from there.
 */
struct yaml_node *yaml_parse(const char *text, char **cause);
void yaml_free(struct yaml_node *n);
/* The value of key in a mapping (the first, as written), or NULL. */
const struct yaml_node *yaml_get(const struct yaml_node *map, const char *key);
/* How many times key occurs in a mapping. */
size_t yaml_count(const struct yaml_node *map, const char *key);

/*
 * Parse the text of a SKILL.md found at path (its folder names an unnamed skill) into sk
 * (zeroed by the caller); 0, or -1 with *cause (heap) in upstream's words.
 */
int skill_parse(const char *text, const char *path, struct skill *sk, char **cause);
/* Read the skill's agents/openai.yaml, if any, into sk (interface, dependencies, policy). */
void skill_parse_metadata(struct skill *sk);
/* Whether each skill of o is enabled under the [[skills.config]] rules now (heap, o->n). */
char *skills_enabled_mask(const struct skills_outcome *o);
/* Free an outcome's entry text (skills_entry_text); NULL is fine. */
void skills_entry_text_free(struct skills_entry_text *t);
/* The roots of cwd to watch: every one but the system's, existing or not (heap, *n). */
char **skills_roots(const struct skills_env *env, const char *cwd, size_t *n);
/* Whitespace runs as one space, none at the ends (upstream's sanitize_single_line); heap. */
char *skill_single_line(const char *s);

#endif
