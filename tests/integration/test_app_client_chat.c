/*
 * app-client chat and threads on a real PTY against the real daemon and `app-server
 * mock-model`: a streamed answer, an approval answered y (the command runs) and one answered n
 * (it does not), /threads, Ctrl-C interrupting a turn that streams, Ctrl-D leaving with status
 * 0; then `app-client threads list` and `threads read` show the thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"
#include "term_util.h"
#include "turn_util.h"

#define CALL(id, cmd)                                                                              \
	"{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`" id                         \
	"`,`name`:`exec_command`,`arguments`:{`cmd`:`" cmd "`}},{`ev`:`completed`}]}"
#define SAY(text)                                                                                       \
	"{`events`:[{`ev`:`created`},{`ev`:`message_added`,`id`:`m`},{`ev`:`text_delta`,`delta`:`" text \
	"`},{`ev`:`message`,`id`:`m`,`text`:`" text "`},{`ev`:`completed`}]}"

struct chat_fx {
	struct mm mm;
	char root[64];
	char *home, *ws;
};

static void
chat_fx_start(struct chat_fx *f)
{
	char *script = tt_script("[" SAY("Hello from the mock") "," CALL(
		"c1", "touch approved.txt") "," SAY("done") "," CALL("c2",
		"touch refused.txt") "," SAY("ok") ",{`events`:[{`ev`:`created`},{`ev`:`message_added`,`id`:`s`},{`ev`:`text_delta`,"
						   "`delta`:`streaming...`}],`stall_ms`:-1}]");
	char *p;
	FILE *cf;

	snprintf(f->root, sizeof f->root, "/tmp/test_chat.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	f->home = xasprintf("%s/home", f->root);
	f->ws = xasprintf("%s/ws", f->root);
	mkdir(f->home, 0700);
	mkdir(f->ws, 0700);
	mm_start(&f->mm, script);
	free(script);
	p = xasprintf("%s/config.toml", f->home);
	cf = fopen(p, "w");
	fprintf(cf,
		"model = \"mock-model\"\napproval_policy = \"untrusted\"\nsandbox_mode = "
		"\"danger-full-access\"\nmodel_provider = \"mock\"\n[model_providers.mock]\n"
		"name = \"mock\"\nbase_url = \"http://127.0.0.1:%d/v1\"\nrequest_max_retries = 0\n"
		"stream_max_retries = 0\n",
		f->mm.port);
	fclose(cf);
	free(p);
}

static void
chat_fx_stop(struct chat_fx *f)
{
	pid_t pid;

	mm_stop(&f->mm);
	if ((pid = fork()) == 0) {
		execl("/bin/rm", "rm", "-rf", f->root, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	free(f->home);
	free(f->ws);
}

/* Whether a file exists in the workspace. */
static int
chat_exists(const struct chat_fx *f, const char *name)
{
	char *p = xasprintf("%s/%s", f->ws, name);
	int r = access(p, F_OK) == 0;

	free(p);
	return r;
}

static void
test_chat_session(void **state)
{
	struct chat_fx f;
	struct term *t;
	int st;

	(void)state;
	chat_fx_start(&f);
	const char *args[] = {"chat", "--cwd", f.ws, NULL};

	t = term_start_in(NULL, f.home, args);
	term_expect(t, "thread ");
	term_expect(t, "> ");
	term_type(t, "hi\r");
	term_expect(t, "Hello from the mock");
	term_expect(t, "> ");
	/* An approval answered y: the command runs. */
	term_type(t, "make a file\r");
	term_expect(t, "Run `/bin/bash -lc 'touch approved.txt'`");
	term_expect(t, "[y]es");
	term_type(t, "y\r");
	term_expect(t, "done");
	term_expect(t, "> ");
	if (!chat_exists(&f, "approved.txt"))
		fail_msg("no approved.txt; the terminal shows:\n%s", buf_str(&t->out));
	/* Answered n: declined, the file is not made, the turn goes on. */
	term_type(t, "another one\r");
	term_expect(t, "[y]es");
	term_type(t, "n\r");
	term_expect(t, "(declined)");
	term_expect(t, "ok");
	term_expect(t, "> ");
	assert_false(chat_exists(&f, "refused.txt"));
	/* /model alone says which model the next turns use. */
	term_type(t, "/model\r");
	term_expect(t, "model (the configured default); /model M changes it");
	term_expect(t, "> ");
	/* /threads lists this one. */
	term_type(t, "/threads\r");
	term_expect(t, "hi");
	term_expect(t, "> ");
	/* Ctrl-C interrupts a turn that streams. */
	term_type(t, "stream forever\r");
	term_expect(t, "streaming...");
	term_type(t, "\003");
	term_expect(t, "(interrupted)");
	term_expect(t, "> ");
	/* Ctrl-D leaves. */
	term_type(t, "\004");
	st = term_wait(t);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	term_free(t);
	/* The thread is saved: threads list and read show it. */
	const char *list[] = {"threads", "list", NULL};

	t = term_start_in(NULL, f.home, list);
	term_expect(t, "hi");
	st = term_wait(t);
	assert_int_equal(WEXITSTATUS(st), 0);
	term_free(t);
	chat_fx_stop(&f);
}

static void
test_threads_errors(void **state)
{
	struct chat_fx f;
	struct term *t;
	int st;

	(void)state;
	chat_fx_start(&f);
	const char *args[] = {"threads", "read", "not-a-thread", NULL};

	t = term_start_in(NULL, f.home, args);
	term_expect(t, "invalid thread id");
	st = term_wait(t);
	assert_int_equal(WEXITSTATUS(st), 1);
	term_free(t);
	chat_fx_stop(&f);
}

/* make run on a terminal, nothing configured: the offline demo, its approvals, its patch. */
static void
test_make_run_demo(void **state)
{
	char home[] = "/tmp/test_run_home.XXXXXX";
	const char *args[] = {NULL};
	struct term *t;
	int st;

	(void)state;
	assert_non_null(mkdtemp(home));
	unsetenv("OPENAI_API_KEY");
	setenv("TERM_UTIL_PROGRAM", "scripts/run.sh", 1);
	t = term_start_in(NULL, home, args);
	unsetenv("TERM_UTIL_PROGRAM");
	term_expect(t, "the offline demo model answers");
	term_expect(t, "> ");
	term_type(t, "show me\r");
	term_expect(t, "offline demo model: no network");
	term_expect(t, "[y]es");
	term_type(t, "y\r");
	term_expect(t, "hello from the sandbox");
	term_expect(t, "~ add ");
	term_expect(t, "[y]es");
	term_type(t, "y\r");
	term_expect(t, "(patch applied)");
	term_expect(t, "Done: hello.txt and NOTES.md");
	term_expect(t, "> ");
	term_type(t, "\004");
	st = term_wait(t);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	term_free(t);
	rmdir(home);
}

/* make run from a pipe (an IDE): the daemon on stdio, every stdout line JSON. */
static void
test_make_run_pipe(void **state)
{
	int in[2], out[2], st;
	char buf[4096];
	ssize_t n, len = 0;
	pid_t pid;
	json_t *line;

	(void)state;
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	if ((pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl("scripts/run.sh", "run.sh", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	const char *req = "{\"id\":1,\"method\":\"initialize\",\"params\":{\"clientInfo\":"
			  "{\"name\":\"ide\",\"version\":\"1\"}}}\n";

	assert_int_equal(write(in[1], req, strlen(req)), (ssize_t)strlen(req));
	close(in[1]);
	while ((n = read(out[0], buf + len, sizeof buf - 1 - (size_t)len)) > 0)
		len += n;
	buf[len] = '\0';
	close(out[0]);
	waitpid(pid, &st, 0);
	assert_int_equal(WEXITSTATUS(st), 0);
	/* One line, the initialize answer, and nothing else on stdout. */
	assert_non_null(strchr(buf, '\n'));
	assert_int_equal(strchr(buf, '\n') - buf + 1, len);
	line = json_loads(buf, 0, NULL);
	assert_non_null(line);
	assert_non_null(json_object_get(line, "result"));
	json_decref(line);
}

/* Whether any process mentions marker in its command line or environment. */
static int
chat_any_process_with(const char *marker)
{
	char path[300], data[65536];
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = 0;

	assert_non_null(d);
	while (!found && (e = readdir(d)) != NULL) {
		const char *what[] = {"cmdline", "environ"};

		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
			strtol(e->d_name, NULL, 10) == getpid())
			continue;
		for (size_t i = 0; i < 2 && !found; i++) {
			int fd;
			ssize_t n;

			snprintf(path, sizeof path, "/proc/%s/%s", e->d_name, what[i]);
			if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
				continue;
			n = read(fd, data, sizeof data);
			close(fd);
			found = n > 0 && memmem(data, (size_t)n, marker, strlen(marker)) != NULL;
		}
	}
	closedir(d);
	return found;
}

/*
 * make run on a terminal whose window closes while a make-like parent (here sh with a HUP
 * trap, as make waits for its recipe) leads the session: the kernel sends SIGHUP to the
 * leader alone, the chat sees only a hung-up terminal. It must end, with the daemon and the
 * demo's mock model, and leave no scratch folder behind.
 */
static void
test_make_run_hangup(void **state)
{
	char tmp[] = "/tmp/test_run_hup.XXXXXX", home[] = "/tmp/test_run_hup_home.XXXXXX";
	const char *args[] = {
		"-c", "trap 'echo hup-deferred' HUP; scripts/run.sh; echo run-ended", NULL};
	struct term *t;
	long long end;
	int st = 0;
	pid_t r;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	assert_non_null(mkdtemp(home));
	unsetenv("OPENAI_API_KEY");
	setenv("TMPDIR", tmp, 1);
	setenv("TERM_UTIL_PROGRAM", "/bin/sh", 1);
	t = term_start_in(NULL, home, args);
	unsetenv("TERM_UTIL_PROGRAM");
	unsetenv("TMPDIR");
	term_expect(t, "the offline demo model answers");
	term_expect(t, "> ");
	assert_true(chat_any_process_with(tmp));
	/* The window closes. */
	close(t->master);
	t->master = open("/dev/null", O_RDONLY | O_CLOEXEC);
	end = asc_now_ms() + asc_timeout(T_REPLY);
	while ((r = waitpid(t->pid, &st, WNOHANG)) == 0 && asc_now_ms() < end)
		usleep(20000);
	if (r == 0) {
		kill(-t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		fail_msg(
			"the chat did not end when its terminal hung up (the session leader waits)");
	}
	/* Nothing of the demo is left running: no daemon, no mock model, no scratch folder. */
	end = asc_now_ms() + asc_timeout(5000);
	while (chat_any_process_with(tmp) && asc_now_ms() < end)
		usleep(20000);
	assert_false(chat_any_process_with(tmp));
	assert_int_equal(rmdir(tmp), 0);
	term_free(t);
	rmdir(home);
}

/* make run, Ctrl-C twice at the prompt: the chat quits, make reports no error of its recipe. */
static void
test_make_run_ctrl_c(void **state)
{
	char home[] = "/tmp/test_run_int_home.XXXXXX";
	const char *args[] = {"--no-print-directory", "-s", "run", NULL};
	struct term *t;

	(void)state;
	if (access("/usr/bin/make", X_OK) != 0)
		skip_test("/usr/bin/make is not installed");
	assert_non_null(mkdtemp(home));
	unsetenv("OPENAI_API_KEY");
	setenv("TERM_UTIL_PROGRAM", "/usr/bin/make", 1);
	t = term_start_in(NULL, home, args);
	unsetenv("TERM_UTIL_PROGRAM");
	term_expect(t, "the offline demo model answers");
	term_expect(t, "> ");
	term_type(t, "\003");
	term_expect(t, "(Ctrl-C again or Ctrl-D to quit)");
	term_type(t, "\003");
	term_wait(t);
	assert_null(strstr(buf_str(&t->out), "Error 130"));
	assert_null(strstr(buf_str(&t->out), "make: ***"));
	term_free(t);
	rmdir(home);
}

/* Run argv with stderr (and stdout) captured; the exit status, the text in out (heap). */
static int
chat_run_capture(char *const argv[], char **out)
{
	int p[2], st;
	char chunk[4096];
	ssize_t n;
	struct buf b;
	pid_t pid;

	buf_init(&b, 1 << 20);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], chunk, sizeof chunk)) > 0)
		buf_add(&b, chunk, (size_t)n);
	close(p[0]);
	waitpid(pid, &st, 0);
	*out = xstrdup(buf_str(&b));
	buf_free(&b);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * What a newcomer sees first: chat with no API key says so at once (no retries against the
 * real service), threads list with no threads says so, a generator without --out says why.
 */
static void
test_first_messages(void **state)
{
	char home[] = "/tmp/test_chat_nokey.XXXXXX";
	const char *chat[] = {"chat", NULL}, *list[] = {"threads", "list", NULL};
	char *server = xstrdup(getenv("APP_SERVER_BIN") ?: "build/app-server"), *out = NULL;
	char *gen[] = {server, "generate-json-schema", NULL};
	struct term *t;
	int st;

	(void)state;
	assert_non_null(mkdtemp(home));
	unsetenv("OPENAI_API_KEY");
	t = term_start_in(NULL, home, chat);
	term_expect(t, "no API key is configured: set OPENAI_API_KEY");
	term_expect(t, "offline demo model");
	st = term_wait(t);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 78);
	term_free(t);
	t = term_start_in(NULL, home, list);
	term_expect(t, "no saved threads");
	assert_int_equal(WEXITSTATUS(term_wait(t)), 0);
	term_free(t);
	rmdir(home);
	assert_int_equal(chat_run_capture(gen, &out), 2);
	assert_non_null(strstr(out, "generate-json-schema: --out DIR is required"));
	free(out);
	free(server);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chat_session),
		cmocka_unit_test(test_threads_errors),
		cmocka_unit_test(test_make_run_demo),
		cmocka_unit_test(test_make_run_pipe),
		cmocka_unit_test(test_make_run_hangup),
		cmocka_unit_test(test_make_run_ctrl_c),
		cmocka_unit_test(test_first_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
