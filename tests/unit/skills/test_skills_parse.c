/*
 * Tests for server/skills/: SKILL.md front matter read with upstream 0.169's rules (each case's
 * name, description or error message is upstream's answer for the same file), and discovery:
 * the roots' order, names starting with '.' skipped, a file reached twice counted once, the
 * sort, errors sorted by path.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/xmalloc.h"
#include "skills/skills.h"

static const struct {
	const char *dir, *text;
	const char *name, *description, *error; /* error NULL: a skill */
} cases[] = {
	{"plain", "---\nname: alpha\ndescription: First skill.\n---\nbody\n", "alpha",
		"First skill.", NULL},
	{"multi", "---\nname:   multi  word\ndescription: |\n  Spans\n  several   lines.\n---\n",
		"multi word", "Spans several lines.", NULL},
	{"noname", "---\ndescription: Name comes from the folder.\n---\n", "noname",
		"Name comes from the folder.", NULL},
	{"number", "---\nname: 123\ndescription: 4.5\n---\n", "123", "4.5", NULL},
	{"folded", "---\nname: folded\ndescription: >\n  folded\n  text\n\n  para\n---\n", "folded",
		"folded text para", NULL},
	{"single", "---\nname: 'single ''q'''\ndescription: 'd'\n---\n", "single 'q'", "d", NULL},
	{"comment", "---\nname: cm # a comment\ndescription: d # c\n---\n", "cm", "d", NULL},
	{"crlf", "---\r\nname: crlf\r\ndescription: d\r\n---\r\n", "crlf", "d", NULL},
	{"plainmulti", "---\nname: pm\ndescription: first\n  continued here\n---\n", "pm",
		"first continued here", NULL},
	{"anchors", "---\nname: &a anc\ndescription: *a\n---\n", "anc", "anc", NULL},
	{"unterminated", "---\nname: [unterminated\ndescription: x\n---\n", "[unterminated", "x",
		NULL},
	{"keyquoted", "---\n\"name\": kq\n\"description\": d\n---\n", "kq", "d", NULL},
	{"nofm", "# no front matter here\n", NULL, NULL,
		"missing YAML frontmatter delimited by ---"},
	{"unclosed", "---\nname: u\ndescription: d\n", NULL, NULL,
		"missing YAML frontmatter delimited by ---"},
	{"emptyfm", "---\n---\n", NULL, NULL, "missing YAML frontmatter delimited by ---"},
	{"nodesc", "---\nname: nodesc\n---\n", NULL, NULL, "missing field `description`"},
	{"nulldesc", "---\nname: true\ndescription: null\n---\n", NULL, NULL,
		"missing field `description`"},
	{"longname",
		"---\nname: nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\n"
		"description: d\n---\n",
		NULL, NULL, "invalid name: exceeds maximum length of 64 characters"},
	{"dupkey", "---\nname: x\nname: y\ndescription: d\n---\n", NULL, NULL,
		"invalid YAML: duplicate field `name`"},
	{"flowseq", "---\nname: [a, b]\ndescription: d\n---\n", NULL, NULL,
		"invalid YAML: name: invalid type: sequence, expected a string at line 1 column 7"},
	{"listdesc", "---\nname: ld2\ndescription:\n  - a\n  - b\n---\n", NULL, NULL,
		"invalid YAML: description: invalid type: sequence, expected a string at line 3 "
		"column 3"},
	{"metastr", "---\nname: ms\ndescription: d\nmetadata: notamap\n---\n", NULL, NULL,
		"invalid YAML: metadata: invalid type: string \"notamap\", expected struct "
		"SkillFrontmatterMetadata at line 3 column 11"},
	{"garbage", "---\nname: g\ngarbage line\ndescription: d\n---\n", NULL, NULL,
		"invalid YAML: could not find expected ':' at line 3 column 1, while scanning a "
		"simple key at line 2 column 1"},
	{"dqunterm", "---\nname: dqu\ndescription: \"unterminated\n---\n", NULL, NULL,
		"invalid YAML: found unexpected end of stream at line 2 column 27, while scanning a "
		"quoted scalar at line 2 column 14"},
	{"nospace", "---\nname:ns\ndescription: d\n---\n", NULL, NULL,
		"invalid YAML: invalid type: string \"name:ns description\", expected struct "
		"SkillFrontmatter"},
};

static char root[64];

static void
put(const char *rel, const char *text)
{
	char *path = xasprintf("%s/%s", root, rel), *p = xstrdup(path);
	FILE *f;

	for (char *s = p + 1; *s != '\0'; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
	free(p);
	free(path);
}

static struct skills_outcome *
scan(const char *cwd)
{
	char *ch = xasprintf("%s/ch", root), *home = xasprintf("%s/home", root);
	struct skills_env env = {.codex_home = ch, .home = home};
	struct skills_outcome *o = skills_scan(&env, cwd);

	free(ch);
	free(home);
	return o;
}

static void
test_front_matter(void **state)
{
	struct skills_outcome *o;
	char *rel, *path;
	int found;

	snprintf(root, sizeof root, "/tmp/test_skills_parse.XXXXXX");
	assert_non_null(mkdtemp(root));
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		rel = xasprintf("ch/skills/%s/SKILL.md", cases[i].dir);
		put(rel, cases[i].text);
		free(rel);
	}
	o = scan("/");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		path = xasprintf("%s/ch/skills/%s/SKILL.md", root, cases[i].dir);
		found = 0;
		for (size_t k = 0; k < o->n; k++)
			if (strcmp(o->v[k].path, path) == 0) {
				assert_null(cases[i].error);
				assert_string_equal(o->v[k].name, cases[i].name);
				assert_string_equal(o->v[k].description, cases[i].description);
				found = 1;
			}
		for (size_t k = 0; k < json_array_size(o->errors); k++) {
			json_t *e = json_array_get(o->errors, k);

			if (strcmp(json_string_value(json_object_get(e, "path")), path) == 0) {
				assert_non_null(cases[i].error);
				assert_string_equal(
					json_string_value(json_object_get(e, "message")),
					cases[i].error);
				found = 1;
			}
		}
		if (!found)
			fail_msg("%s: neither a skill nor an error", cases[i].dir);
		free(path);
	}
	/* Errors sorted by path; skills by scope, then name. */
	for (size_t k = 1; k < json_array_size(o->errors); k++)
		assert_true(strcmp(json_string_value(json_object_get(
					   json_array_get(o->errors, k - 1), "path")),
				    json_string_value(json_object_get(
					    json_array_get(o->errors, k), "path"))) < 0);
	for (size_t k = 1; k < o->n; k++)
		assert_true(strcmp(o->v[k - 1].name, o->v[k].name) <= 0);
	skills_outcome_free(o);
	(void)state;
}

static void
test_discovery(void **state)
{
	struct skills_outcome *o;
	char *cwd = xasprintf("%s/repo/sub", root), *git = xasprintf("%s/repo/.git", root);
	char *link = xasprintf("%s/ch/skills/linked", root),
	     *target = xasprintf("%s/repo/.agents/skills/r1", root);

	put("repo/.agents/skills/r1/SKILL.md", "---\nname: same\ndescription: repo copy\n---\n");
	put("repo/sub/.agents/skills/r2/SKILL.md", "---\nname: r2\ndescription: in sub\n---\n");
	put("repo/sub/.codex/skills/c1/SKILL.md", "---\nname: c1\ndescription: in .codex\n---\n");
	put("repo/.codex/skills/c0/SKILL.md", "---\nname: c0\ndescription: not the cwd's\n---\n");
	put(".agents/skills/above/SKILL.md",
		"---\nname: above\ndescription: above the repo\n---\n");
	put("home/.agents/skills/h1/SKILL.md", "---\nname: h1\ndescription: home\n---\n");
	put("ch/skills/.hidden/SKILL.md", "---\nname: hidden\ndescription: skipped\n---\n");
	assert_int_equal(mkdir(git, 0755), 0);
	/* A link from a user root to a repo skill: the file counts once, for the first root. */
	assert_int_equal(symlink(target, link), 0);
	o = scan(cwd);
	for (size_t k = 0; k < o->n; k++) {
		assert_string_not_equal(o->v[k].name, "hidden");
		assert_string_not_equal(o->v[k].name, "above");
		assert_string_not_equal(o->v[k].name, "c0");
	}
	/* Repo skills first: c1 (the cwd's .codex), r2, same (from .agents, not the user link:
	 * the user root is walked before the repo's, so the linked file is a user skill). */
	assert_string_equal(o->v[0].name, "c1");
	assert_int_equal(o->v[0].scope, SKILL_REPO);
	assert_string_equal(o->v[1].name, "r2");
	for (size_t k = 0, same = 0; k < o->n; k++)
		if (strcmp(o->v[k].name, "same") == 0) {
			assert_int_equal(++same, 1);
			assert_int_equal(o->v[k].scope, SKILL_USER);
		}
	/* Roots: the cwd's .codex/skills, then the user root, HOME's, the repo's top down. */
	assert_true(o->nroots >= 4);
	assert_non_null(strstr(o->roots[0], "/repo/sub/.codex/skills"));
	skills_outcome_free(o);
	free(cwd);
	free(git);
	free(link);
	free(target);
	(void)state;
}

/*
 * skills/list's entry text is kept with the outcome: asked again for the same cwd it is the
 * same text (not built again: a cached skills/list of 1,000 skills took ~3 ms to rebuild), for
 * another cwd, or once a skill's enabled state changed in config.toml, it is made anew; each
 * time it is the entry's JSON, compact.
 */
static void
test_entry_text_kept(void **state)
{
	char *cwd = xasprintf("%s/repo", root), *ch = xasprintf("%s/ch", root), *want;
	struct skills_outcome *o;
	const char *t1, *t2, *t3;
	json_t *entry;
	size_t len;

	(void)state;
	setenv("CODEX_HOME", ch, 1);
	put("ch/config.toml", "");
	put("ch/skills/k1/SKILL.md", "---\nname: k1\ndescription: kept\n---\n");
	o = scan(cwd);
	t1 = skills_entry_text(o, cwd, &len);
	entry = skills_entry_json(o, cwd);
	want = json_dumps(entry, JSON_COMPACT);
	assert_string_equal(t1, want);
	assert_int_equal(len, strlen(want));
	assert_non_null(strstr(t1, "\"name\":\"k1\""));
	free(want);
	json_decref(entry);
	assert_ptr_equal(skills_entry_text(o, cwd, &len), t1);
	t2 = skills_entry_text(o, "repo", &len);
	assert_non_null(strstr(t2, "\"cwd\":\"repo\""));
	/* Disabled in config.toml (a new mtime and size: the config cache sees it). */
	put("ch/config.toml", "[[skills.config]]\nname = \"k1\"\nenabled = false\n");
	t3 = skills_entry_text(o, "repo", &len);
	assert_non_null(strstr(t3, "\"name\":\"k1\""));
	for (const char *k = strstr(t3, "\"name\":\"k1\""); k != NULL; k = NULL)
		assert_non_null(strstr(k, "\"enabled\":false"));
	skills_outcome_free(o);
	unsetenv("CODEX_HOME");
	free(cwd);
	free(ch);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_front_matter),
		cmocka_unit_test(test_discovery),
		cmocka_unit_test(test_entry_text_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
