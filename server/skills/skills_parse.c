/*
 * One skill's files, read with upstream 0.169's rules (observed against its binary):
 *   - SKILL.md opens with a line "---" (blanks around it allowed) and its front matter ends
 *     at the next such line; otherwise "missing YAML frontmatter delimited by ---";
 *   - name and description are any scalars (numbers and booleans as their text), made single
 *     line; no name, or an empty one, takes the folder's name; no description is "missing
 *     field `description`"; a name over 64 characters is an error; other keys are ignored;
 *   - agents/openai.yaml beside it adds interface, dependencies and policy, and never makes
 *     the skill fail: a field that is wrong is left out.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "skills_int.h"

#define SKILL_NAME_MAX	    64
#define SKILL_TEXT_MAX	    1024
#define SKILL_META_FILE_MAX (256u << 10)

char *
skill_single_line(const char *s)
{
	struct buf b;
	const char *w;

	buf_init(&b, strlen(s) + 1);
	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0')
			break;
		for (w = s; *s != '\0' && !isspace((unsigned char)*s); s++)
			;
		if (b.len > 0)
			buf_addc(&b, ' ');
		buf_add(&b, w, (size_t)(s - w));
	}
	return buf_steal(&b, NULL);
}

/* Characters (Unicode scalar values) of UTF-8 text. */
static size_t
skill_chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The front matter between the "---" lines, joined with \n; NULL when there is none. */
static char *
skill_front_matter(const char *text)
{
	const char *line = text, *end;
	struct buf b;
	int first = 1, lines = 0;
	size_t len;

	buf_init(&b, strlen(text) + 1);
	for (; *line != '\0'; line = *end == '\n' ? end + 1 : end) {
		const char *h, *t;

		end = strchr(line, '\n');
		if (end == NULL)
			end = line + strlen(line);
		len = (size_t)(end - line);
		if (len > 0 && line[len - 1] == '\r')
			len--;
		for (h = line, t = line + len; h < t && isspace((unsigned char)*h); h++)
			;
		while (t > h && isspace((unsigned char)t[-1]))
			t--;
		if (first) {
			if (t - h != 3 || strncmp(h, "---", 3) != 0)
				break;
			first = 0;
			continue;
		}
		if (t - h == 3 && strncmp(h, "---", 3) == 0) {
			if (lines == 0)
				break;
			return buf_steal(&b, NULL);
		}
		if (lines++ > 0)
			buf_addc(&b, '\n');
		buf_add(&b, line, len);
	}
	buf_free(&b);
	return NULL;
}

static const char *
yaml_kind(const struct yaml_node *n)
{
	return n->type == YAML_SEQ ? "sequence" : "map";
}

/* A string field of the front matter: 0 (value or NULL in *out), or -1 with *cause. */
static int
skill_str_field(const char *key, const struct yaml_node *v, const char **out, char **cause)
{
	*out = NULL;
	if (v->type == YAML_NULL)
		return 0;
	if (v->type == YAML_STR) {
		*out = v->str;
		return 0;
	}
	*cause = xasprintf("invalid YAML: %s: invalid type: %s, expected a string at line %u "
			   "column %u",
		key, yaml_kind(v), v->line, v->col);
	return -1;
}

/* The name of the folder holding path, made single line; "skill" when empty. */
static char *
skill_default_name(const char *path)
{
	const char *slash = strrchr(path, '/'), *start;
	char *dir, *name;

	if (slash == NULL || slash == path)
		return xstrdup("skill");
	for (start = slash; start > path && start[-1] != '/'; start--)
		;
	dir = xstrndup(start, (size_t)(slash - start));
	name = skill_single_line(dir);
	free(dir);
	if (*name == '\0') {
		free(name);
		return xstrdup("skill");
	}
	return name;
}

int
skill_parse(const char *text, const char *path, struct skill *sk, char **cause)
{
	static const char *const known[] = {"name", "description", "metadata"};
	const char *name = NULL, *desc = NULL, *shortd = NULL;
	struct yaml_node *doc = NULL;
	char *fm, *err = NULL;
	int r = -1, seen[3] = {0};

	if ((fm = skill_front_matter(text)) == NULL) {
		*cause = xstrdup("missing YAML frontmatter delimited by ---");
		return -1;
	}
	if ((doc = yaml_parse(fm, &err)) == NULL) {
		*cause = xasprintf("invalid YAML: %s", err);
		goto out;
	}
	if (doc->type == YAML_STR) {
		*cause = xasprintf("invalid YAML: invalid type: string \"%s\", expected struct "
				   "SkillFrontmatter",
			doc->str);
		goto out;
	}
	if (doc->type == YAML_SEQ) {
		*cause = xstrdup("invalid YAML: invalid type: sequence, expected struct "
				 "SkillFrontmatter");
		goto out;
	}
	/* Keys in document order, as serde meets them: duplicates and wrong types. */
	for (size_t i = 0; doc->type == YAML_MAP && i < doc->n; i++) {
		const struct yaml_node *v = doc->kids[i];
		size_t k;

		for (k = 0; k < nitems(known) && strcmp(doc->keys[i], known[k]) != 0; k++)
			;
		if (k == nitems(known))
			continue;
		if (seen[k]++) {
			*cause = xasprintf("invalid YAML: duplicate field `%s`", known[k]);
			goto out;
		}
		if (k == 0 && skill_str_field("name", v, &name, cause) != 0)
			goto out;
		if (k == 1 && skill_str_field("description", v, &desc, cause) != 0)
			goto out;
		if (k == 2 && v->type == YAML_STR) {
			*cause = xasprintf("invalid YAML: metadata: invalid type: string \"%s\", "
					   "expected struct SkillFrontmatterMetadata at line %u "
					   "column %u",
				v->str, v->line, v->col);
			goto out;
		}
		if (k == 2 && v->type == YAML_SEQ) {
			*cause = xasprintf(
				"invalid YAML: metadata: invalid type: sequence, expected "
				"struct SkillFrontmatterMetadata at line %u column %u",
				v->line, v->col);
			goto out;
		}
		if (k == 2 && v->type == YAML_MAP && yaml_get(v, "short-description") != NULL &&
			skill_str_field("metadata.short-description",
				yaml_get(v, "short-description"), &shortd, cause) != 0)
			goto out;
	}
	sk->name = name != NULL ? skill_single_line(name) : NULL;
	if (sk->name == NULL || *sk->name == '\0') {
		free(sk->name);
		sk->name = skill_default_name(path);
	}
	sk->description = skill_single_line(desc != NULL ? desc : "");
	if (shortd != NULL && *(sk->short_description = skill_single_line(shortd)) == '\0') {
		free(sk->short_description);
		sk->short_description = NULL;
	}
	if (skill_chars(sk->name) > SKILL_NAME_MAX) {
		*cause = xasprintf(
			"invalid name: exceeds maximum length of %d characters", SKILL_NAME_MAX);
		goto out;
	}
	if (*sk->description == '\0') {
		*cause = xstrdup("missing field `description`");
		goto out;
	}
	if (sk->short_description != NULL && skill_chars(sk->short_description) > SKILL_TEXT_MAX) {
		*cause = xasprintf("invalid metadata.short-description: exceeds maximum length of "
				   "%d characters",
			SKILL_TEXT_MAX);
		goto out;
	}
	sk->implicit = 1;
	r = 0;
out:
	free(err);
	free(fm);
	yaml_free(doc);
	return r;
}

/* --- agents/openai.yaml ------------------------------------------------------------------- */

/* A string field made single line, within max characters; else NULL (heap). */
static char *
meta_str(const struct yaml_node *map, const char *key, size_t max)
{
	const struct yaml_node *v = yaml_get(map, key);
	char *s;

	if (v == NULL || v->type != YAML_STR)
		return NULL;
	s = skill_single_line(v->str);
	if (*s == '\0' || skill_chars(s) > max) {
		free(s);
		return NULL;
	}
	return s;
}

static void
json_set_str(json_t *o, const char *key, char *s /* stolen */)
{
	json_object_set_new(o, key, s != NULL ? json_string(s) : json_null());
	free(s);
}

/* An icon path: relative, under the skill's assets/; absolute in the answer, or NULL. */
static char *
meta_icon(const struct yaml_node *map, const char *key, const char *dir)
{
	const struct yaml_node *v = yaml_get(map, key);
	const char *s, *e;
	struct buf b;

	if (v == NULL || v->type != YAML_STR || v->str[0] == '\0' || v->str[0] == '/')
		return NULL;
	buf_init(&b, PATH_MAX);
	for (s = v->str; *s != '\0'; s = *e == '/' ? e + 1 : e) {
		e = strchrnul(s, '/');
		if ((e - s == 1 && s[0] == '.') || e == s)
			continue;
		if (e - s == 2 && s[0] == '.' && s[1] == '.') {
			buf_free(&b);
			return NULL; /* '..' is for plugin skills only */
		}
		if (b.len > 0)
			buf_addc(&b, '/');
		buf_add(&b, s, (size_t)(e - s));
	}
	if (strncmp(buf_str(&b), "assets/", 7) != 0 && strcmp(buf_str(&b), "assets") != 0) {
		buf_free(&b);
		return NULL;
	}
	s = xasprintf("%s/%s", dir, buf_str(&b));
	buf_free(&b);
	return (char *)s;
}

/* brand_color: "#RRGGBB" (trimmed), else NULL. */
static char *
meta_color(const struct yaml_node *map)
{
	const struct yaml_node *v = yaml_get(map, "brand_color");
	char *s;

	if (v == NULL || v->type != YAML_STR)
		return NULL;
	s = skill_single_line(v->str);
	if (strlen(s) != 7 || s[0] != '#' || strspn(s + 1, "0123456789abcdefABCDEF") != 6) {
		free(s);
		return NULL;
	}
	return s;
}

static json_t *
meta_interface(const struct yaml_node *m, const char *dir)
{
	json_t *o = json_object();

	json_set_str(o, "displayName", meta_str(m, "display_name", SKILL_NAME_MAX));
	json_set_str(o, "shortDescription", meta_str(m, "short_description", SKILL_TEXT_MAX));
	json_set_str(o, "iconSmall", meta_icon(m, "icon_small", dir));
	json_set_str(o, "iconLarge", meta_icon(m, "icon_large", dir));
	json_object_set_new(o, "iconSmallUrl", json_null());
	json_object_set_new(o, "iconLargeUrl", json_null());
	json_set_str(o, "brandColor", meta_color(m));
	json_set_str(o, "defaultPrompt", meta_str(m, "default_prompt", SKILL_TEXT_MAX));
	if (json_is_null(json_object_get(o, "displayName")) &&
		json_is_null(json_object_get(o, "shortDescription")) &&
		json_is_null(json_object_get(o, "iconSmall")) &&
		json_is_null(json_object_get(o, "iconLarge")) &&
		json_is_null(json_object_get(o, "brandColor")) &&
		json_is_null(json_object_get(o, "defaultPrompt"))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
meta_dependencies(const struct yaml_node *deps)
{
	static const struct {
		const char *key;
		size_t max;
	} opt[] = {{"description", SKILL_TEXT_MAX}, {"transport", SKILL_NAME_MAX},
		{"command", SKILL_TEXT_MAX}, {"url", SKILL_TEXT_MAX}};
	const struct yaml_node *tools = yaml_get(deps, "tools");
	json_t *list = json_array(), *t;
	char *type, *value, *s;

	for (size_t i = 0; tools != NULL && tools->type == YAML_SEQ && i < tools->n; i++) {
		type = meta_str(tools->kids[i], "type", SKILL_NAME_MAX);
		value = meta_str(tools->kids[i], "value", SKILL_TEXT_MAX);
		if (type == NULL || value == NULL) {
			free(type);
			free(value);
			continue;
		}
		t = json_pack("{s:s, s:s}", "type", type, "value", value);
		free(type);
		free(value);
		for (size_t k = 0; k < nitems(opt); k++)
			if ((s = meta_str(tools->kids[i], opt[k].key, opt[k].max)) != NULL) {
				json_object_set_new(t, opt[k].key, json_string(s));
				free(s);
			}
		json_array_append_new(list, t);
	}
	if (json_array_size(list) == 0) {
		json_decref(list);
		return NULL;
	}
	return json_pack("{s:o}", "tools", list);
}

/* Read a small text file whole (heap), or NULL. */
static char *
meta_read(const char *path)
{
	struct stat st;
	char *text;
	ssize_t n;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd == -1)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
		(size_t)st.st_size > SKILL_META_FILE_MAX) {
		close(fd);
		return NULL;
	}
	text = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size && (n = read(fd, text + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	text[got] = '\0';
	return text;
}

void
skill_parse_metadata(struct skill *sk)
{
	const char *slash = strrchr(sk->path, '/');
	char *dir = xstrndup(sk->path, slash != NULL ? (size_t)(slash - sk->path) : 0);
	char *path = xasprintf("%s/agents/openai.yaml", dir), *text, *err = NULL;
	const struct yaml_node *v;
	struct yaml_node *doc = NULL;

	if ((text = meta_read(path)) == NULL || (doc = yaml_parse(text, &err)) == NULL ||
		doc->type != YAML_MAP)
		goto out; /* optional metadata never blocks the skill */
	if ((v = yaml_get(doc, "interface")) != NULL && v->type == YAML_MAP)
		sk->interface = meta_interface(v, dir);
	if ((v = yaml_get(doc, "dependencies")) != NULL && v->type == YAML_MAP)
		sk->dependencies = meta_dependencies(v);
	if ((v = yaml_get(doc, "policy")) != NULL && v->type == YAML_MAP &&
		(v = yaml_get(v, "allow_implicit_invocation")) != NULL && v->type == YAML_STR)
		sk->implicit = strcmp(v->str, "false") != 0;
out:
	free(err);
	yaml_free(doc);
	free(text);
	free(path);
	free(dir);
}
