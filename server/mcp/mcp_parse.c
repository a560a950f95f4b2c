/*
 * Big messages of a server parsed beside the loop. jansson needs ~0.7 s for a 50 MB line: done
 * on the loop, every other request and server waits that long. A line over MCP_PARSE_BIG goes
 * to a thread of its own (big lines are rare: one thread per line costs nothing beside the
 * parse) while reading that server's stdout is held, so its messages stay in order; the parsed
 * message comes back to the loop through one ev_async. An HTTP server's big body or event
 * (mcp_http.c) goes the same way as a text of its own (mcp_parse_text): the copy is the job's,
 * and its owner keeps the messages after it waiting until it is back.
 *
 * Rules: the line is not copied: it stays in the server's line buffer, which nobody touches
 * until the parse is back (the server's reading is held; bytes already read wait in its
 * `pend`). A server freed meanwhile lets go of the job and hands it the buffer, which the job
 * frees on its return. Only the loop thread touches the ev_async's start and the servers.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "mcp_int.h"
#include "io/linebuf.h"
#include "io/log.h"
#include "protocol/xmalloc.h"

struct mcp_parse {
	struct mcp_parse *next;
	struct mcp_server *sv; /* NULL once the server let go */
	struct linebuf *lb;    /* the buffer the line lives in, once the server let go */
	const char *line;
	size_t len;
	json_t *msg; /* the parse's result, or NULL */
	char *own;   /* a text job's text (mcp_parse_text) */
	int text;    /* a text job: fn hears the result, unless dropped (fn NULL) */
	void (*fn)(void *arg, json_t *msg);
	void *arg;
};

static pthread_mutex_t mcp_parse_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mcp_parse *mcp_parse_done; /* back from their thread, newest first */
static ev_async mcp_parse_async;
static struct ev_loop *mcp_parse_loop;

static void mcp_parse_async_cb(struct ev_loop *loop, ev_async *w, int revents);

/*
 * APP_SERVER_MCP_PARSE_PAUSE_MS: a big message's parse waits this long first (at most 10 s),
 * so a test can show the loop serving during it however loaded the machine is. It only
 * delays the parse, on its own thread.
 */
static void
mcp_parse_pause(void)
{
	const char *v = getenv("APP_SERVER_MCP_PARSE_PAUSE_MS");
	unsigned long ms = v != NULL ? strtoul(v, NULL, 10) : 0;
	struct timespec ts;

	if (ms == 0)
		return;
	ms = ms > 10000 ? 10000 : ms;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void *
mcp_parse_main(void *arg)
{
	struct mcp_parse *j = arg;
	json_error_t e;

	mcp_parse_pause();
	j->msg = json_loadb(j->line, j->len, 0, &e);
	pthread_mutex_lock(&mcp_parse_mu);
	j->next = mcp_parse_done;
	mcp_parse_done = j;
	ev_async_send(mcp_parse_loop, &mcp_parse_async);
	pthread_mutex_unlock(&mcp_parse_mu);
	return NULL;
}

/* Jobs back from their threads: each server gets its message, in its order. */
static void
mcp_parse_async_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	struct mcp_parse *list, *j;

	(void)loop;
	(void)w;
	(void)revents;
	pthread_mutex_lock(&mcp_parse_mu);
	list = mcp_parse_done;
	mcp_parse_done = NULL;
	pthread_mutex_unlock(&mcp_parse_mu);
	while ((j = list) != NULL) {
		list = j->next;
		if (j->text && j->fn != NULL)
			j->fn(j->arg, j->msg);
		else if (!j->text && j->sv != NULL) {
			j->sv->parse = NULL;
			mcp_conn_parsed(j->sv, j->msg, j->len);
		}
		json_decref(j->msg);
		linebuf_free(j->lb);
		free(j->own);
		free(j);
	}
}

/* Run job j on a thread of its own: 0, or -1 (j is the caller's again). */
static int
mcp_parse_run(struct ev_loop *loop, struct mcp_parse *j)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int r;

	if (mcp_parse_loop == NULL) {
		mcp_parse_loop = loop;
		ev_async_init(&mcp_parse_async, mcp_parse_async_cb);
		ev_async_start(mcp_parse_loop, &mcp_parse_async);
		ev_unref(mcp_parse_loop); /* a parse under way keeps its server's stream held */
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* the loop thread gets every signal */
	r = pthread_create(&t, &attr, mcp_parse_main, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return r != 0 ? -1 : 0;
}

int
mcp_parse_start(struct mcp_server *sv, const char *line, size_t len)
{
	struct mcp_parse *j = xcalloc(1, sizeof *j);

	j->sv = sv;
	j->line = line;
	j->len = len;
	if (mcp_parse_run(sv->set->o.loop, j) != 0) {
		free(j);
		return -1; /* the caller parses on the loop */
	}
	sv->parse = j;
	log_info("mcp %s: parsing a %zu-byte message beside the loop", sv->name, len);
	return 0;
}

void
mcp_parse_release(struct mcp_server *sv)
{
	if (sv->parse == NULL)
		return;
	sv->parse->sv = NULL;
	sv->parse->lb = sv->out; /* the line lives there: freed once the parse is back */
	sv->out = NULL;
	sv->parse = NULL;
}

struct mcp_parse *
mcp_parse_text(
	struct mcp_server *sv, char *text, size_t len, void (*fn)(void *, json_t *), void *arg)
{
	struct mcp_parse *j = xcalloc(1, sizeof *j);

	j->own = text;
	j->line = text;
	j->len = len;
	j->text = 1;
	j->fn = fn;
	j->arg = arg;
	if (mcp_parse_run(sv->set->o.loop, j) != 0) {
		free(j); /* the text stays the caller's */
		return NULL;
	}
	log_info("mcp %s: parsing a %zu-byte message beside the loop", sv->name, len);
	return j;
}

void
mcp_parse_drop(struct mcp_parse *j)
{
	j->fn = NULL; /* its thread frees the text with the job, once back */
}
