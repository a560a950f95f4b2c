/*
 * exec_bench: bench_exec's client and its streaming parts (bench/bench_exec.c holds the other
 * parts and main).
 *
 *   exec_conn.c    struct bench_conn: the daemon on pipes, its output read in large blocks;
 *                  outputDelta lines are found by a byte scanner and their base64 decoded and
 *                  compared with the expected bytes (struct bench_sink), other lines parsed
 *                  with jansson and recorded by id (struct bench_answer)
 *   exec_stream.c  the pipe, pty and slow parts: a command's output streamed through the
 *                  daemon, and the same bytes read straight from a pipe or a PTY for context
 */
#ifndef EXEC_BENCH_H
#define EXEC_BENCH_H

#include <jansson.h>

#include "benchlib.h"

#define BENCH_PAT_RAND (4 * 1024 * 1024) /* the random pattern file */
#define BENCH_FRAME    (64 * 1024)	 /* base64 frames; raw reads */

/* What to run and against which binary. */
struct bench_exec_opts {
	struct bench_target t;
	long repeat;
	long pty_repeat; /* runs of the pty part */
	long execs;
	long long bytes;
	long long slow_bytes;
	double slow_rate; /* MB/s of the daemon's output */
	long concurrent;
	long many;
	double sleep;
	double timeout;
	unsigned only;
	char *pattern_path;  /* the random pattern */
	unsigned char *rand; /* its content */
	int count_only;	     /* count streamed bytes without decoding them */
	int json;
};

/* The answer to one request id. */
struct bench_answer {
	double t;      /* when it arrived */
	int n;	       /* times answered (must end at 1) */
	int code;      /* 0: a result, else the error code */
	int exit_code; /* result.exitCode, or -1 */
};

/* Streamed output: what arrived, checked against the expected bytes. */
struct bench_sink {
	const unsigned char *pat; /* stdout must be pat repeated */
	size_t patlen;
	unsigned long long pos;	      /* stdout bytes decoded so far */
	unsigned long long err_bytes; /* stderr bytes (none expected) */
	unsigned long long deltas;
	unsigned long long wire; /* bytes of delta lines, newline included */
	unsigned long long caps; /* deltas with capReached true */
	unsigned long long bad;	 /* deltas that did not decode */
	long long mismatch;	 /* first stdout offset that differed, -1: none */
	int count_only;		 /* count from the base64 length; no decode, no compare */
	unsigned char *dec;
	size_t deccap;
};

/* The daemon under test and what came back from it. */
struct bench_conn {
	struct bench_daemon d; /* with its read buffer: d.rbuf[roff..d.rlen) is unread */
	size_t roff;
	size_t scan;		   /* where the search in the line at roff resumes (0: its start) */
	unsigned long long rtotal; /* bytes read */
	struct bench_answer *ans;  /* ids 0..nans-1 */
	long nans;
	long answered; /* distinct ids answered */
	long dups, strays, notes;
	struct bench_sink *sink; /* NULL: deltas are counted, not decoded */
	char *first_error;	 /* the first error answer's code and message, for the report */
	struct bench_peak peak;	 /* the daemon's largest VmRSS or VmHWM sampled */
	int sampling;		 /* the daemon runs (before exec, /proc shows our own fork) */
};

/* exec_conn.c */
int bench_conn_start(const struct bench_exec_opts *o, struct bench_conn *c, long n);
int bench_conn_close(struct bench_conn *c, double timeout);
int bench_conn_send(struct bench_conn *c, const char *buf, size_t len, double timeout);
int bench_conn_wait(struct bench_conn *c, long want, double timeout, double rate);
void bench_conn_sample(struct bench_conn *c, double now, int force);
char *bench_exec_req(long id, json_t *argv, const char *process_id, int tty);

/* exec_stream.c */
void bench_stream_pipe(const struct bench_exec_opts *o, struct bench_report *rep);
void bench_stream_pipe_ceiling(struct bench_report *rep);
void bench_stream_pty(const struct bench_exec_opts *o, struct bench_report *rep);
void bench_stream_pty_ratio(struct bench_report *rep);
void bench_stream_slow(const struct bench_exec_opts *o, struct bench_report *rep);

#endif
