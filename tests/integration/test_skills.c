/*
 * Skills on the real daemon: skills/list on a tree of valid, invalid and duplicate SKILL.md
 * files compared with upstream 0.169's recorded answer (tests/fixtures/skills/
 * list_upstream.json, its bundled system skills left out: we ship none), the cache and
 * forceReload, skills/config/write's edit of config.toml byte for byte (upstream's output
 * recorded) and its errors, skills/changed after a change under a thread's roots, and a turn
 * whose request to the mock model carries the skills section and a $mentioned skill.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "turn_util.h"
#include "protocol/xmalloc.h"

#define T_REPLY 10000

/* The fixture tree (path under the root, content; NULL content: a folder). */
static const struct {
	const char *path, *text;
} tree[] = {
	{"home/.agents/skills/homeskill/SKILL.md",
		"---\nname: homeskill\ndescription: From HOME/.agents/skills.\n---\n"},
	{"home/.codex/skills/.hidden/SKILL.md",
		"---\nname: hidden\ndescription: hidden dir\n---\n"},
	{"home/.codex/skills/alpha/SKILL.md",
		"---\nname: alpha\ndescription: First skill.\n---\n\n# Alpha\nDo alpha things.\n"},
	{"home/.codex/skills/anchors/SKILL.md", "---\nname: &a anc\ndescription: *a\n---\n"},
	{"home/.codex/skills/badyaml/SKILL.md", "---\nname: [unterminated\ndescription: x\n---\n"},
	{"home/.codex/skills/blankfm/SKILL.md", "---\n\n---\n"},
	{"home/.codex/skills/bom/SKILL.md", "\\xef\\xbb\\xbf---\nname: bom\ndescription: d\n---\n"},
	{"home/.codex/skills/boolname/SKILL.md", "---\nname: true\ndescription: null\n---\n"},
	{"home/.codex/skills/comment/SKILL.md",
		"---\nname: cm # a comment\ndescription: d # c\n---\n"},
	{"home/.codex/skills/crlf/SKILL.md", "---\r\nname: crlf\r\ndescription: d\r\n---\r\n"},
	{"home/.codex/skills/docend/SKILL.md", "---\nname: de\ndescription: d\n...\n---\n"},
	{"home/.codex/skills/dqunterm/SKILL.md",
		"---\nname: dqu\ndescription: \"unterminated\n---\n"},
	{"home/.codex/skills/dquote/SKILL.md",
		"---\nname: \"dq\"\ndescription: \"esc \\\"q\\\" \\\\n tab\\\\t u\\\\u00e9\"\n---\n"},
	{"home/.codex/skills/dup-user/SKILL.md",
		"---\nname: shared\ndescription: The user copy.\n---\n"},
	{"home/.codex/skills/dupkey/SKILL.md", "---\nname: x\nname: y\ndescription: d\n---\n"},
	{"home/.codex/skills/emptyfm/SKILL.md", "---\n---\n"},
	{"home/.codex/skills/emptyname/SKILL.md",
		"---\nname: \"\"\ndescription: Empty name falls back.\n---\n"},
	{"home/.codex/skills/emptyname2/SKILL.md", "---\nname:\ndescription: d\n---\n"},
	{"home/.codex/skills/flowseq/SKILL.md", "---\nname: [a, b]\ndescription: d\n---\n"},
	{"home/.codex/skills/folded/SKILL.md",
		"---\nname: folded\ndescription: >\n  folded\n  text\n\n  para\n---\n"},
	{"home/.codex/skills/garbage/SKILL.md",
		"---\nname: g\ngarbage line\ndescription: d\n---\n"},
	{"home/.codex/skills/group/nested/deep/SKILL.md",
		"---\nname: deep\ndescription: Nested two levels down.\n---\n"},
	{"home/.codex/skills/indented/SKILL.md", "---\n  name: ind\n  description: d\n---\n"},
	{"home/.codex/skills/keyquoted/SKILL.md", "---\n\"name\": kq\n\"description\": d\n---\n"},
	{"home/.codex/skills/leadingblank/SKILL.md", "\n---\nname: lb\ndescription: d\n---\n"},
	{"home/.codex/skills/listdesc/SKILL.md",
		"---\nname: ld2\ndescription:\n  - a\n  - b\n---\n"},
	{"home/.codex/skills/longdesc/SKILL.md",
		"---\nname: ld\ndescription: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n---\n"},
	{"home/.codex/skills/longname/SKILL.md",
		"---\nname: nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\ndescription: too long a name\n---\n"},
	{"home/.codex/skills/metamap/SKILL.md",
		"---\nname: mm\ndescription: d\nmetadata:\n  other: 1\n  short-description: \"sd\"\n---\n"},
	{"home/.codex/skills/metastr/SKILL.md",
		"---\nname: ms\ndescription: d\nmetadata: notamap\n---\n"},
	{"home/.codex/skills/multi/SKILL.md",
		"---\nname:   multi  word\ndescription: |\n  Spans\n  several   lines.\nmetadata:\n  short-description: Short one\n---\nbody\n"},
	{"home/.codex/skills/namemap/SKILL.md", "---\nname: {a: b}\ndescription: d\n---\n"},
	{"home/.codex/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\n"},
	{"home/.codex/skills/nofm/SKILL.md", "# no front matter here\n"},
	{"home/.codex/skills/noname/SKILL.md",
		"---\ndescription: Name comes from the folder.\n---\n"},
	{"home/.codex/skills/nospace/SKILL.md", "---\nname:ns\ndescription: d\n---\n"},
	{"home/.codex/skills/number/SKILL.md", "---\nname: 123\ndescription: 4.5\n---\n"},
	{"home/.codex/skills/plainmulti/SKILL.md",
		"---\nname: pm\ndescription: first\n  continued here\n---\n"},
	{"home/.codex/skills/quoted/SKILL.md",
		"---\nname: \"quoted\"\ndescription: \"Has: a colon\"\nextra: ignored\n---\n"},
	{"home/.codex/skills/shortempty/SKILL.md",
		"---\nname: se\ndescription: d\nmetadata:\n  short-description: \"\"\n---\n"},
	{"home/.codex/skills/single/SKILL.md",
		"---\nname: 'single ''q'''\ndescription: 'd'\n---\n"},
	{"home/.codex/skills/spaces/SKILL.md", "---   \nname: sp\ndescription: d\n  ---  \n"},
	{"home/.codex/skills/tab/SKILL.md", "---\nname:\tt1\ndescription:\td\n---\n"},
	{"home/.codex/skills/unclosed/SKILL.md",
		"---\nname: unclosed\ndescription: never closed\n"},
	{"home/.codex/skills/unicode/SKILL.md",
		"---\nname: \xc3"
		"\xbc"
		"n\xc3"
		"\xaf"
		"\ndescription: \xe2"
		"\x9c"
		"\x93"
		" ok\n---\n"},
	{"home/.codex/skills/withyaml/SKILL.md",
		"---\nname: withyaml\ndescription: Has openai.yaml.\n---\n"},
	{"home/.codex/skills/withyaml/agents/openai.yaml",
		"interface:\n  display_name: \"With YAML\"\n  short_description: \"Short\"\n  icon_small: \"./assets/s.svg\"\n  brand_color: \"#aabbcc\"\n  default_prompt: \"Use $withyaml\"\ndependencies:\n  tools:\n    - type: env_var\n      value: FOO\n      description: the foo\n    - type: mcp\n      value: srv\n      transport: stdio\n      command: srv-cmd\n"},
	{"outside/.agents/skills/outside/SKILL.md",
		"---\nname: outside\ndescription: Above the repo root.\n---\n"},
	{"outside/repo/.agents/skills/dup-repo/SKILL.md",
		"---\nname: shared\ndescription: The repo copy.\n---\n"},
	{"outside/repo/.agents/skills/repo-top/SKILL.md",
		"---\nname: repo-top\ndescription: At the repository root.\n---\n"},
	{"outside/repo/.codex/skills/codexdir/SKILL.md",
		"---\nname: codexdir\ndescription: In .codex/skills.\n---\n"},
	{"outside/repo/.git", NULL},
	{"outside/repo/sub/.agents/skills/repo-sub/SKILL.md",
		"---\nname: repo-sub\ndescription: In sub.\n---\n"},
	{"outside/repo/sub/dir/.agents/skills/repo-dir/SKILL.md",
		"---\nname: repo-dir\ndescription: In the cwd itself.\n---\n"},
	{"outside/repo/sub/dir/.codex/skills/codexdir2/SKILL.md",
		"---\nname: codexdir2\ndescription: In sub/dir/.codex/skills.\n---\n"},
};

static void
mkdir_p(const char *path)
{
	char *p = xstrdup(path);

	for (char *s = p + 1; *s != '\0'; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
	free(p);
}

static void
write_file(const char *path, const char *text)
{
	char *dir = xstrdup(path);
	FILE *f;

	*strrchr(dir, '/') = '\0';
	mkdir_p(dir);
	free(dir);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static char *
read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = xcalloc(1, 1 << 16);

	assert_non_null(f);
	(void)!fread(text, 1, (1 << 16) - 1, f);
	fclose(f);
	return text;
}

/* A fresh root holding the fixture tree (heap). */
static char *
tree_make(void)
{
	char *root = xstrdup("/tmp/test_skills.XXXXXX"), *p;

	assert_non_null(mkdtemp(root));
	for (size_t i = 0; i < sizeof tree / sizeof tree[0]; i++) {
		p = xasprintf("%s/%s", root, tree[i].path);
		if (tree[i].text == NULL)
			mkdir_p(p);
		else
			write_file(p, tree[i].text);
		free(p);
	}
	return root;
}

static void
tree_remove(const char *root)
{
	char *cmd[] = {"rm", "-rf", (char *)root, NULL};
	pid_t pid = fork();

	if (pid == 0) {
		execvp("rm", cmd);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
}

/* A daemon whose CODEX_HOME and HOME are in the tree. */
static struct asc *
spawn_in(const char *root)
{
	char *ch = xasprintf("CODEX_HOME=%s/home/.codex", root),
	     *home = xasprintf("HOME=%s/home", root);
	const char *env[] = {ch, home, NULL};
	struct asc_opts o = {.env = env, .inherit_codex_home = 1};
	struct asc *c = asc_spawn(&o);

	asc_initialize(c);
	free(ch);
	free(home);
	return c;
}

static json_t *
call(struct asc *c, const char *method, json_t *params)
{
	return asc_wait_response(c, asc_request(c, method, params), T_REPLY);
}

/* Replace every @ROOT@ of text by root (heap). */
static char *
with_root(const char *text, const char *root)
{
	size_t n = 0;
	const char *p;
	char *out, *o;

	for (p = text; (p = strstr(p, "@ROOT@")) != NULL; p += 6)
		n++;
	out = o = xmalloc(strlen(text) + n * strlen(root) + 1);
	for (p = text; *p != '\0';)
		if (strncmp(p, "@ROOT@", 6) == 0) {
			o = stpcpy(o, root);
			p += 6;
		} else
			*o++ = *p++;
	*o = '\0';
	return out;
}

static void
test_list_matches_upstream(void **state)
{
	char *root = tree_make(), *expected_text,
	     *raw = read_file("tests/fixtures/skills/list_upstream.json");
	struct asc *c = spawn_in(root);
	json_t *expected, *res, *r;
	char *repo = xasprintf("%s/outside/repo", root), *dir = xasprintf("%s/sub/dir", repo);
	char *none = xasprintf("%s/nonexist", root), *skill, *dumped;

	expected_text = with_root(raw, root);
	assert_non_null(expected = json_loads(expected_text, 0, NULL));
	r = call(c, "skills/list", json_pack("{s:[s,s,s]}", "cwds", dir, repo, none));
	res = asc_assert_result(r);
	if (!json_equal(res, expected)) {
		dumped = json_dumps(res, JSON_INDENT(1));
		fail_msg("skills/list differs from upstream's answer:\n%s", dumped);
	}
	json_decref(r);
	/* Cached: a new skill is not seen until forceReload. */
	skill = xasprintf("%s/.agents/skills/later/SKILL.md", repo);
	write_file(skill, "---\nname: later\ndescription: Made after the first list.\n---\n");
	r = call(c, "skills/list", json_pack("{s:[s]}", "cwds", repo));
	assert_null(strstr(json_dumps(asc_assert_result(r), 0), "\"later\""));
	json_decref(r);
	r = call(c, "skills/list", json_pack("{s:[s], s:b}", "cwds", repo, "forceReload", 1));
	assert_non_null(strstr(json_dumps(asc_assert_result(r), 0), "\"later\""));
	json_decref(r);
	asc_free(c);
	tree_remove(root);
	json_decref(expected);
	free(expected_text);
	free(raw);
	free(skill);
	free(root);
	free(repo);
	free(dir);
	free(none);
	(void)state;
}

/* config.toml before, after disabling alpha by path, and after disabling deep by name:
 * upstream 0.169's bytes. */
static const char config_before[] = "# my config\nmodel = \"gpt-5\"   # trailing comment\n\n"
				    "[features]\nfoo = true   # keep me\n\n[[skills.config]]\n"
				    "name = \"noname\"   # why\nenabled = false\n\n[tail]\nk = 1\n";
static const char config_after[] =
	"# my config\nmodel = \"gpt-5\"   # trailing comment\n\n"
	"[features]\nfoo = true   # keep me\n\n[[skills.config]]\n"
	"name = \"noname\"   # why\nenabled = false\n\n[[skills.config]]\n"
	"path = \"@ROOT@/home/.codex/skills/alpha/SKILL.md\"\nenabled = "
	"false\n\n[tail]\nk = 1\n";

static void
test_config_write_round_trip(void **state)
{
	char *root = tree_make(), *file = xasprintf("%s/home/.codex/config.toml", root);
	char *alpha = xasprintf("%s/home/.codex/skills/alpha/SKILL.md", root), *text, *want;
	struct asc *c;
	json_t *r, *skills, *s;
	size_t i;
	int seen = 0;

	write_file(file, config_before);
	c = spawn_in(root);
	r = call(c, "skills/config/write", json_pack("{s:s, s:b}", "path", alpha, "enabled", 0));
	assert_true(json_is_false(json_object_get(asc_assert_result(r), "effectiveEnabled")));
	json_decref(r);
	text = read_file(file);
	want = with_root(config_after, root);
	assert_string_equal(text, want);
	free(text);
	r = call(c, "skills/list", json_pack("{s:[s], s:b}", "cwds", root, "forceReload", 1));
	skills = json_object_get(
		json_array_get(json_object_get(asc_assert_result(r), "data"), 0), "skills");
	json_array_foreach(skills, i, s)
	{
		const char *name = json_string_value(json_object_get(s, "name"));

		if (strcmp(name, "alpha") == 0 || strcmp(name, "noname") == 0) {
			assert_true(json_is_false(json_object_get(s, "enabled")));
			seen++;
		} else
			assert_true(json_is_true(json_object_get(s, "enabled")));
	}
	assert_int_equal(seen, 2);
	json_decref(r);
	/* Enabling removes the entry: the file is as it was, byte for byte. */
	r = call(c, "skills/config/write", json_pack("{s:s, s:b}", "path", alpha, "enabled", 1));
	assert_true(json_is_true(json_object_get(asc_assert_result(r), "effectiveEnabled")));
	json_decref(r);
	text = read_file(file);
	assert_string_equal(text, config_before);
	free(text);
	/* Upstream's errors. */
	r = call(c, "skills/config/write", json_pack("{s:b}", "enabled", 1));
	asc_assert_error(r, -32602, "skills/config/write requires exactly one of path or name");
	json_decref(r);
	r = call(c, "skills/config/write",
		json_pack("{s:s, s:s, s:b}", "path", alpha, "name", "x", "enabled", 1));
	asc_assert_error(r, -32602, "skills/config/write requires exactly one of path or name");
	json_decref(r);
	r = call(c, "skills/config/write",
		json_pack("{s:s, s:b}", "path", "rel/SKILL.md", "enabled", 0));
	asc_assert_error(
		r, -32600, "Invalid request: AbsolutePathBuf deserialized without a base path");
	json_decref(r);
	asc_free(c);
	tree_remove(root);
	free(want);
	free(file);
	free(alpha);
	free(root);
	(void)state;
}

static void
test_changed(void **state)
{
	char *root = tree_make(), *sub = xasprintf("%s/outside/repo/sub", root);
	char *user = xasprintf("%s/home/.codex/skills/alpha/SKILL.md", root);
	struct asc *c = spawn_in(root);
	json_t *r, *n;
	int fd;

	r = call(c, "thread/start", json_pack("{s:s, s:b}", "cwd", sub, "ephemeral", 1));
	asc_assert_result(r);
	json_decref(r);
	assert_int_equal(asc_sync(c, T_REPLY), 0);
	assert_true((fd = open(user, O_WRONLY | O_APPEND | O_CLOEXEC)) >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	close(fd);
	n = asc_wait_notification(c, "skills/changed", 3000);
	assert_non_null(n);
	assert_int_equal(json_object_size(json_object_get(n, "params")), 0);
	json_decref(n);
	asc_free(c);
	tree_remove(root);
	free(sub);
	free(user);
	free(root);
	(void)state;
}

static void
test_turn_section_and_injection(void **state)
{
	struct tt f;
	struct tt_opts o = {0};
	json_t *msgs, *recs, *body, *in;
	char *skill, *section, *inject, *root;
	const char *text;
	size_t i;
	int found_section = 0, found_inject = 0;

	tt_start(&f, &o);
	skill = xasprintf("%s/skills/alpha/SKILL.md", f.home);
	write_file(skill,
		"---\nname: alpha\ndescription: First skill.\n---\n\n# Alpha\nDo alpha things.\n");
	root = realpath(f.home, NULL);
	section = xasprintf(
		"<skills_instructions>\n## Skills\nA skill is a set of local instructions "
		"to follow that is stored in a `SKILL.md` file. Below is the list of "
		"skills that can be used. Each entry includes a name, description, and a "
		"short path that can be expanded into an absolute path using the skill "
		"roots table.\n### Skill roots\n- `r0` = `%s/skills`\n### Available "
		"skills\n- alpha: First skill. (file: r0/alpha/SKILL.md)\n"
		"</skills_instructions>",
		root);
	inject = xasprintf("<skill>\n<name>alpha</name>\n<path>%s/skills/alpha/SKILL.md</path>\n"
			   "---\nname: alpha\ndescription: First skill.\n---\n\n# Alpha\nDo alpha "
			   "things.\n\n</skill>",
		root);
	msgs = tt_turn(&f, "use $alpha please", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, 0);
	json_array_foreach(json_object_get(body, "input"), i, in)
	{
		text = json_string_value(
			json_object_get(json_array_get(json_object_get(in, "content"), 0), "text"));
		if (text == NULL)
			continue;
		if (strcmp(text, section) == 0) {
			assert_string_equal(
				json_string_value(json_object_get(in, "role")), "developer");
			found_section = 1;
		}
		if (strcmp(text, inject) == 0) {
			assert_string_equal(json_string_value(json_object_get(in, "role")), "user");
			/* Right after the user's own message. */
			assert_string_equal(
				json_string_value(json_object_get(
					json_array_get(
						json_object_get(json_array_get(json_object_get(body,
										       "input"),
									i - 1),
							"content"),
						0),
					"text")),
				"use $alpha please");
			found_inject = 1;
		}
	}
	assert_true(found_section);
	assert_true(found_inject);
	json_decref(msgs);
	json_decref(recs);
	free(section);
	free(inject);
	free(skill);
	free(root);
	tt_stop(&f);
	(void)state;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_matches_upstream),
		cmocka_unit_test(test_config_write_round_trip),
		cmocka_unit_test(test_changed),
		cmocka_unit_test(test_turn_section_and_injection),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
