/*
 * What the model hears of skills, in upstream 0.169's words (observed in its requests):
 *   - the skills section, a developer message listing every enabled skill that allows
 *     implicit invocation (system skills first, then repo, user, admin, each by name), each
 *     with a short path through a table of the roots that hold them;
 *   - for each skill a turn invokes ({type:"skill"} items first, then $name mentions in the
 *     order of the list; a name two skills share invokes neither), one user message after the
 *     user's: <skill>, its name, its path, then the whole SKILL.md.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "skills_int.h"

#define SECTION_MAX (4u << 20)
#define INJECT_MAX  (1u << 20) /* bytes of one SKILL.md injected */

static const char section_head[] =
	"<skills_instructions>\n## Skills\nA skill is a set of local instructions to follow that "
	"is stored in a `SKILL.md` file. Below is the list of skills that can be used. Each entry "
	"includes a name, description, and a short path that can be expanded into an absolute "
	"path using the skill roots table.\n### Skill roots\n";

/* One "- name: description (file: rN/...)" line. */
static void
section_line(struct buf *b, const struct skills_outcome *o, const struct skill *sk)
{
	const char *root = o->roots[sk->root];
	size_t rl = strlen(root);

	if (strncmp(sk->path, root, rl) == 0 && sk->path[rl] == '/')
		buf_printf(b, "- %s: %s (file: r%zu%s)\n", sk->name, sk->description, sk->root,
			sk->path + rl);
	else
		buf_printf(b, "- %s: %s (file: %s)\n", sk->name, sk->description, sk->path);
}

char *
skills_section(const struct skills_outcome *o)
{
	char *on = skills_enabled_mask(o), *used = xcalloc(o->nroots + 1, 1);
	size_t count = 0;
	struct buf b;

	for (size_t i = 0; i < o->n; i++)
		if ((on[i] = (char)(on[i] && o->v[i].implicit)) != 0) {
			used[o->v[i].root] = 1;
			count++;
		}
	if (count == 0) {
		free(on);
		free(used);
		return NULL;
	}
	buf_init(&b, SECTION_MAX);
	buf_adds(&b, section_head);
	for (size_t r = 0; r < o->nroots; r++)
		if (used[r])
			buf_printf(&b, "- `r%zu` = `%s`\n", r, o->roots[r]);
	buf_adds(&b, "### Available skills\n");
	for (size_t i = 0; i < o->n; i++)
		if (on[i] && o->v[i].scope == SKILL_SYSTEM)
			section_line(&b, o, &o->v[i]);
	for (size_t i = 0; i < o->n; i++)
		if (on[i] && o->v[i].scope != SKILL_SYSTEM)
			section_line(&b, o, &o->v[i]);
	buf_adds(&b, "</skills_instructions>");
	free(on);
	free(used);
	return buf_steal(&b, NULL);
}

/* The injected text of one skill, or NULL when its file cannot be read (heap). */
static char *
inject_text(const struct skill *sk)
{
	char *text = xmalloc(INJECT_MAX + 1), *msg;
	size_t got = 0;
	ssize_t n;
	int fd = open(sk->path, O_RDONLY | O_CLOEXEC);

	if (fd == -1) {
		free(text);
		return NULL;
	}
	while (got < INJECT_MAX && (n = read(fd, text + got, INJECT_MAX - got)) > 0)
		got += (size_t)n;
	close(fd);
	text[got] = '\0';
	msg = xasprintf("<skill>\n<name>%s</name>\n<path>%s</path>\n%s\n</skill>", sk->name,
		sk->path, text);
	free(text);
	return msg;
}

/* Characters a $mention's name is made of. */
static int
mention_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == ':' || c == '.';
}

/* The one enabled skill named name (len bytes), or -1 (none, or ambiguous). */
static long
by_name(const struct skills_outcome *o, const char *name, size_t len, const char *on)
{
	long found = -1;

	for (size_t i = 0; i < o->n; i++)
		if (on[i] && strlen(o->v[i].name) == len && strncmp(o->v[i].name, name, len) == 0) {
			if (found != -1)
				return -1;
			found = (long)i;
		}
	return found;
}

json_t *
skills_inject(const struct skills_outcome *o, const json_t *input)
{
	char *on = skills_enabled_mask(o), *pick = xcalloc(o->n + 1, 1), *msg;
	json_t *out = json_array(), *in;
	const char *type, *s, *e;
	long k;
	size_t i;

	/* Skill items first, in input order. */
	json_array_foreach((json_t *)input, i, in)
	{
		type = json_string_value(json_object_get(in, "type"));
		s = json_string_value(json_object_get(in, "path"));
		if (type == NULL || strcmp(type, "skill") != 0 || s == NULL)
			continue;
		char *real = realpath(s, NULL);

		for (size_t j = 0; j < o->n; j++)
			if (on[j] && pick[j] == 0 &&
				(strcmp(o->v[j].path, s) == 0 ||
					(real != NULL && strcmp(o->v[j].path, real) == 0))) {
				pick[j] = 2;
				if ((msg = inject_text(&o->v[j])) != NULL)
					json_array_append_new(out, json_string(msg));
				free(msg);
				break;
			}
		free(real);
	}
	/* Then $name mentions in the texts, in the order of the list. */
	json_array_foreach((json_t *)input, i, in)
	{
		type = json_string_value(json_object_get(in, "type"));
		if (type == NULL || strcmp(type, "text") != 0 ||
			(s = json_string_value(json_object_get(in, "text"))) == NULL)
			continue;
		for (; (s = strchr(s, '$')) != NULL; s = e) {
			for (e = ++s; mention_char(*e); e++)
				;
			while (e > s && (e[-1] == '.' || e[-1] == ':'))
				e--; /* "use $alpha." */
			if (e > s && (k = by_name(o, s, (size_t)(e - s), on)) >= 0 && pick[k] == 0)
				pick[k] = 1;
		}
	}
	for (i = 0; i < o->n; i++)
		if (pick[i] == 1 && (msg = inject_text(&o->v[i])) != NULL) {
			json_array_append_new(out, json_string(msg));
			free(msg);
		}
	free(on);
	free(pick);
	return out;
}
