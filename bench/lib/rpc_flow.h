/*
 * rpc_flow: bench_rpc's client (bench/bench_rpc.c holds the parts and main). The daemon's
 * output is split into lines and read without a JSON parser (the top-level "id", "method" and
 * "error"."code" are scanned for); a bench_flow pipelines N requests of one kind through it and
 * checks that every id 1..N is answered exactly once.
 */
#ifndef RPC_FLOW_H
#define RPC_FLOW_H

#include "benchlib.h"

/* What to run and against which binary. */
struct bench_rpc_opts {
	struct bench_target t;
	long runs;
	long requests;
	long slow_requests;
	double slow_pause;
	double timeout;
	unsigned only;
	int fresh_home; /* a new CODEX_HOME for each spawn run */
	int json;
	int lax;
};

/* One request kind for the pipelined runs: the text after the id, and the expected answer. */
struct bench_kind {
	const char *name;
	const char *tail;
	int code;
};

/* The pipelined flow: what was written, what came back. */
struct bench_flow {
	struct bench_daemon *p;
	const struct bench_kind *kind;
	size_t tail_len;
	long n;
	long next;     /* next id to format */
	long answered; /* distinct ids 1..n answered */
	long dups, strays, wrong_code, notes;
	struct {
		long long code; /* 0: a result */
		long n;
	} codes[8]; /* the answers by error code, for the report */
	size_t ncodes;
	double t_last;		/* when the last answer arrived */
	struct bench_peak peak; /* VmRSS/VmHWM over the daemon's tree while running */
	unsigned char *seen;
	char *wbuf;
	size_t wlen, woff;
};

int bench_rpc_spawn(const struct bench_rpc_opts *o, struct bench_daemon *p);
int bench_rpc_handshake(struct bench_daemon *p, double timeout);

int bench_flow_start(const struct bench_rpc_opts *o, struct bench_daemon *p, struct bench_flow *f,
	const struct bench_kind *k, long n);
int bench_flow_run(struct bench_flow *f, double timeout, double deadline, int write_only);
void bench_flow_check(const struct bench_rpc_opts *o, struct bench_report *rep, const char *prefix,
	const struct bench_flow *f, int r);
void bench_flow_free(struct bench_flow *f);

#endif
