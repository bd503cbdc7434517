/* db.c - connection pool with reconnect (see db.h). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/sbuf.h"
#include "storage/pgconn.h"

/* After a failed reconnect, callers fail fast for this long instead of each
 * waiting on connect_timeout while the database is down.
 */
#define RECONNECT_BACKOFF_MS 500

/* Prepared statements a connection can hold (db_exec_stmt): one bit each
 * in slot.prepared.
 */
#define DB_STMT_MAX 64

/* The same libpq message is logged at most this often (while the database
 * is down every request tries to connect: up to two attempts a second per
 * pooled connection, RECONNECT_BACKOFF_MS).
 */
#define ERROR_LOG_INTERVAL_MS 10000

/* How much longer than statement_timeout a statement may go without an
 * answer before the pool gives up on its connection. The server cancels a
 * slow statement itself; this bounds the wait when it cannot answer at
 * all (a stopped server, a network path that drops packets): without it
 * the request would wait as long as the server stays silent.
 */
#define ANSWER_MARGIN_MS 5000

/* The settings every statement runs under, set for its transaction only
 * (is_local): a transaction pooler (PgBouncer in pool_mode = transaction)
 * hands each transaction whichever server connection is free, so neither
 * startup options (PgBouncer refuses the startup parameter "options") nor
 * a session-level SET would reach the connection a later statement runs on.
 * Sent in the same pipeline as the statement, before one Sync: one round
 * trip, and one implicit transaction (PostgreSQL docs, 55.2.4 "Pipelining"
 * and 34.5 "Pipeline Mode"). lock_timeout keeps a statement that waits on
 * a row lock from holding a connection for the whole statement_timeout;
 * TimeZone makes timestamps render as UTC whatever the server's default.
 * jit is off: PostgreSQL compiles a plan whose estimated cost passes
 * jit_above_cost (100,000), and the capacity report's statement passes it
 * once 35 days of 16,000 GPUs are kept: compiling took 99 ms of its 228
 * (EXPLAIN ANALYZE, docs/BENCHMARKS.md), for a statement that runs in
 * ~100 ms; no statement here runs long enough to win it back.
 * Prepared like db_exec_stmt's statements (where the pooler keeps them):
 * parsing and planning it each time doubled the cost of a short statement.
 */
static const char settings_sql[] =
    /* clang-format off */
    "SELECT set_config('statement_timeout', $1, true),"
    " set_config('lock_timeout', '2000', true),"
    " set_config('TimeZone', 'UTC', true), set_config('jit', 'off', true)";
/* clang-format on */
static struct db_stmt settings_stmt = {.sql = settings_sql};

struct slot {
	PGconn *conn;
	int busy;
	unsigned long long prepared; /* bit id-1: db_stmt id prepared here */
	long long last_fail_ms; /* monotonic time of the last failed connect */
	int broken; /* a pipeline did not finish: reconnect before reuse */
	long long deadline_ms; /* monotonic: the statement's answer is due */
	int timed_out;	       /* no answer by deadline_ms */
};

struct db_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *conninfo;		    /* with our options appended */
	char statement_timeout[16]; /* ms, the text settings_stmt takes */
	int answer_timeout_ms;	    /* statement_timeout + ANSWER_MARGIN_MS */
	int size;
	int acquire_timeout_ms;
	int waiting;
	long long acquire_timeouts;
	long long reconnects;
	long long connection_errors;
	void (*log_error)(const char *what, const char *libpq_message,
			  long long unlogged);
	char last_logged[256]; /* the error logged last, and when */
	long long last_logged_ms;
	long long unlogged;	   /* errors not logged since (repeats) */
	_Atomic int no_prepare;	   /* set when prepared statements vanish */
	unsigned long long serial; /* db_pool_serial() */
	struct slot *slots;
};

unsigned long long db_pool_serial(const struct db_pool *pool)
{
	return pool->serial;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void store_err_clear(struct store_err *e)
{
	e->status = STORE_OK;
	e->message[0] = '\0';
}

const char *store_status_name(enum store_status s)
{
	static const char *const names[] = {
	    [STORE_OK] = "ok",
	    [STORE_NOT_FOUND] = "not_found",
	    [STORE_CONFLICT] = "conflict",
	    [STORE_INVALID] = "invalid",
	    [STORE_UNAVAILABLE] = "unavailable",
	    [STORE_ERROR] = "error",
	    [STORE_PRECONDITION] = "precondition",
	};
	if ((unsigned)s < sizeof(names) / sizeof(names[0]))
		return names[s];
	return "error";
}

int db_pool_new(const struct db_config *cfg, struct db_pool **out, char *err,
		size_t errlen)
{
	struct db_pool *p = NULL;
	size_t len;

	*out = NULL;
	if (!cfg->conninfo || !*cfg->conninfo || cfg->size < 1) {
		snprintf(err, errlen, "database: no conninfo or pool size < 1");
		return -1;
	}
	if (!db_conninfo_parses(cfg->conninfo)) {
		snprintf(err, errlen, "%s", DB_CONNINFO_UNPARSABLE);
		return -1;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		goto oom;
	{
		static _Atomic unsigned long long pools;
		p->serial = ++pools;
	}
	p->slots = calloc((size_t)cfg->size, sizeof(*p->slots));
	len = strlen(cfg->conninfo) + 256;
	p->conninfo = malloc(len);
	if (!p->slots || !p->conninfo)
		goto oom;
	/* Options in the conninfo survive PQreset (libpq docs, "Database
	 * Connection Control Functions": PQreset reconnects with the same
	 * parameters). A URI
	 * takes them as query parameters, a keyword string as pairs. Only
	 * what poolers accept: server settings go with each statement
	 * (settings_stmt).
	 */
	if (strstr(cfg->conninfo, "://"))
		snprintf(p->conninfo, len,
			 "%s%cconnect_timeout=5&application_name=gpusizerd",
			 cfg->conninfo, strchr(cfg->conninfo, '?') ? '&' : '?');
	else
		snprintf(p->conninfo, len,
			 "%s connect_timeout=5 application_name=gpusizerd",
			 cfg->conninfo);
	snprintf(p->statement_timeout, sizeof(p->statement_timeout), "%d",
		 cfg->statement_timeout_ms);
	p->answer_timeout_ms =
	    cfg->statement_timeout_ms > INT_MAX - ANSWER_MARGIN_MS
		? INT_MAX
		: cfg->statement_timeout_ms + ANSWER_MARGIN_MS;
	p->size = cfg->size;
	p->acquire_timeout_ms = cfg->acquire_timeout_ms;
	p->log_error = cfg->log_error;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	*out = p;
	return 0;
oom:
	if (p) {
		free(p->slots);
		free(p->conninfo);
	}
	free(p);
	snprintf(err, errlen, "database: out of memory");
	return -1;
}

/* Appends s to out[*off..len), truncating; *off stops at len - 1. */
static void put(char *out, size_t len, size_t *off, const char *s)
{
	size_t n = strlen(s);

	if (*off + 1 >= len)
		return;
	if (n > len - 1 - *off)
		n = len - 1 - *off;
	memcpy(out + *off, s, n);
	*off += n;
	out[*off] = '\0';
}

bool db_conninfo_parses(const char *conninfo)
{
	char *errmsg = NULL;
	PQconninfoOption *opts =
	    PQconninfoParse(conninfo ? conninfo : "", &errmsg);

	/* errmsg quotes the conninfo, password included: never shown */
	PQfreemem(errmsg);
	if (!opts)
		return false;
	PQconninfoFree(opts);
	return true;
}

void db_conninfo_redacted(const char *conninfo, char *out, size_t len)
{
	PQconninfoOption *opts;
	char *errmsg = NULL;
	size_t off = 0;

	if (len == 0)
		return;
	out[0] = '\0';
	opts = PQconninfoParse(conninfo ? conninfo : "", &errmsg);
	if (!opts) {
		/* libpq's message may quote a piece of the string. */
		put(out, len, &off, "(not a valid conninfo; not shown)");
		PQfreemem(errmsg);
		return;
	}
	for (PQconninfoOption *o = opts; o->keyword; o++) {
		int secret = (o->dispchar && o->dispchar[0] == '*') ||
			     strstr(o->keyword, "password");
		char c[2] = {0};
		int quote;

		if (!o->val)
			continue;
		put(out, len, &off, off ? " " : "");
		put(out, len, &off, o->keyword);
		if (secret) {
			put(out, len, &off, "=***");
			continue;
		}
		/* Quoted where a keyword/value string needs it (libpq docs,
		 * 34.1.1.1): '...' with \ before ' and \.
		 */
		quote = !*o->val || strpbrk(o->val, " \t\n\r\f\v'\\");
		put(out, len, &off, quote ? "='" : "=");
		for (const char *v = o->val; *v; v++) {
			if (*v == '\'' || *v == '\\')
				put(out, len, &off, "\\");
			c[0] = *v;
			put(out, len, &off, c);
		}
		put(out, len, &off, quote ? "'" : "");
	}
	PQconninfoFree(opts);
}

void db_pool_free(struct db_pool *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->size; i++)
		if (p->slots[i].conn)
			PQfinish(p->slots[i].conn);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->slots);
	free(p->conninfo);
	free(p);
}

void db_pool_stats(struct db_pool *p, struct db_stats *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&p->mu);
	out->size = p->size;
	out->waiting = p->waiting;
	for (int i = 0; i < p->size; i++) {
		out->in_use += p->slots[i].busy;
		if (p->slots[i].conn &&
		    PQstatus(p->slots[i].conn) == CONNECTION_OK)
			out->connected++;
	}
	out->acquire_timeouts = p->acquire_timeouts;
	out->reconnects = p->reconnects;
	out->connection_errors = p->connection_errors;
	pthread_mutex_unlock(&p->mu);
}

/* The calling thread's request (db_request_begin): whether one is open,
 * and the unavailability its statements already met. */
static _Thread_local bool req_open, req_down;
static _Thread_local char
    req_down_msg[sizeof(((struct store_err *)0)->message)];

void db_request_begin(void)
{
	req_open = true;
	req_down = false;
}

void db_request_end(void)
{
	req_open = false;
	req_down = false;
}

static struct slot *acquire(struct db_pool *p, struct store_err *e)
{
	struct timespec deadline;
	struct slot *s = NULL;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += p->acquire_timeout_ms / 1000;
	deadline.tv_nsec += (long)(p->acquire_timeout_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->mu);
	for (;;) {
		/* Prefer a live connection, then any free slot. */
		for (int i = 0; i < p->size && !s; i++)
			if (!p->slots[i].busy && p->slots[i].conn &&
			    PQstatus(p->slots[i].conn) == CONNECTION_OK)
				s = &p->slots[i];
		for (int i = 0; i < p->size && !s; i++)
			if (!p->slots[i].busy)
				s = &p->slots[i];
		if (s)
			break;
		p->waiting++;
		int rc = pthread_cond_timedwait(&p->cv, &p->mu, &deadline);
		p->waiting--;
		if (rc == ETIMEDOUT) {
			p->acquire_timeouts++;
			pthread_mutex_unlock(&p->mu);
			e->status = STORE_UNAVAILABLE;
			snprintf(e->message, sizeof(e->message),
				 "database busy: no connection free within "
				 "%d ms",
				 p->acquire_timeout_ms);
			return NULL;
		}
	}
	s->busy = 1;
	pthread_mutex_unlock(&p->mu);
	return s;
}

static void release(struct db_pool *p, struct slot *s)
{
	pthread_mutex_lock(&p->mu);
	s->busy = 0;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* Counts a connection error and logs libpq's message for it (what: what
 * failed). A message the same as the last one logged is logged again only
 * after ERROR_LOG_INTERVAL_MS, with the number of errors not logged since.
 */
static void conn_error(struct db_pool *p, const PGconn *conn, const char *what)
{
	const char *m = conn ? PQerrorMessage(conn) : NULL;
	char msg[sizeof(p->last_logged)] = "";
	long long t = now_ms(), unlogged = 0;
	size_t n = 0;
	int log = 0;

	/* libpq's messages end in a newline and may span lines ("...failed:
	 * Connection refused\n\tIs the server running..."): one line here.
	 */
	if (!m || !*m)
		m = conn ? "no message from libpq" : "out of memory";
	for (; *m && n < sizeof(msg) - 1; m++) {
		int space = *m == '\n' || *m == '\r' || *m == '\t' || *m == ' ';

		if (!space)
			msg[n++] = *m;
		else if (n && msg[n - 1] != ' ')
			msg[n++] = ' ';
	}
	while (n && msg[n - 1] == ' ')
		n--;
	msg[n] = '\0';
	pthread_mutex_lock(&p->mu);
	p->connection_errors++;
	if (strcmp(msg, p->last_logged) != 0 ||
	    t - p->last_logged_ms >= ERROR_LOG_INTERVAL_MS) {
		log = 1;
		unlogged = p->unlogged;
		p->unlogged = 0;
		memcpy(p->last_logged, msg, n + 1);
		p->last_logged_ms = t;
	} else {
		p->unlogged++;
	}
	pthread_mutex_unlock(&p->mu);
	if (log && p->log_error)
		p->log_error(what, msg, unlogged);
}

/* Makes s->conn usable: connects or resets as needed. Called with the slot
 * held (not the pool mutex). Returns 0 when the connection is OK.
 */
static int ensure_connected(struct db_pool *p, struct slot *s,
			    struct store_err *e)
{
	long long t = now_ms();

	if (s->conn && PQstatus(s->conn) == CONNECTION_OK && !s->broken)
		return 0;
	if (s->last_fail_ms && t - s->last_fail_ms < RECONNECT_BACKOFF_MS)
		goto fail;
	/* A new session has no prepared statements. */
	s->prepared = 0;
	s->broken = 0;
	if (!s->conn)
		s->conn = PQconnectdb(p->conninfo);
	else
		PQreset(s->conn);
	if (s->conn && PQstatus(s->conn) == CONNECTION_OK) {
		s->last_fail_ms = 0;
		pthread_mutex_lock(&p->mu);
		p->reconnects++;
		pthread_mutex_unlock(&p->mu);
		return 0;
	}
	s->last_fail_ms = t ? t : 1;
	conn_error(p, s->conn, "cannot connect to the database");
fail:
	e->status = STORE_UNAVAILABLE;
	snprintf(e->message, sizeof(e->message),
		 "database unavailable: cannot connect");
	return -1;
}

/* Maps a failed result (or NULL) on conn to a status and message. */
static enum store_status db_classify(PGconn *conn, const PGresult *res,
				     struct store_err *e)
{
	const char *state =
	    res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *detail =
	    res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	/* A lost connection yields a result without SQLSTATE (measured). */
	if (!state || (conn && PQstatus(conn) != CONNECTION_OK)) {
		e->status = STORE_UNAVAILABLE;
		snprintf(e->message, sizeof(e->message),
			 "database unavailable: connection lost");
	} else if (!strcmp(state, "23505")) {
		e->status = STORE_CONFLICT;
	} else if (!strncmp(state, "23", 2) || !strncmp(state, "22", 2)) {
		e->status = STORE_INVALID;
	} else if (!strncmp(state, "08", 2) || !strncmp(state, "53", 2) ||
		   !strncmp(state, "57", 2) || !strcmp(state, "40001") ||
		   !strcmp(state, "40P01") || !strcmp(state, "55P03") ||
		   !strcmp(state, "25006")) {
		/* connection exceptions, resources, operator intervention
		 * (statement_timeout 57014, shutdown 57P01), serialization,
		 * deadlock, lock_timeout, and a write on a read-only database
		 * (25006: a hot standby, a demoted primary after a failover,
		 * default_transaction_read_only for maintenance; review s19a
		 * F1: it was a 500): transient, retry later.
		 */
		e->status = STORE_UNAVAILABLE;
		snprintf(e->message, sizeof(e->message),
			 "database unavailable: %s (SQLSTATE %s)",
			 detail ? detail : "transient error", state);
	} else {
		e->status = STORE_ERROR;
	}
	if (e->status != STORE_UNAVAILABLE)
		snprintf(e->message, sizeof(e->message), "%s (SQLSTATE %s)",
			 detail ? detail : "database error", state);
	return e->status;
}

/* The bit of stmt in a slot's prepared set; gives stmt an id and its
 * name on first use. 0 when the set is full (the statement then runs
 * unprepared).
 */
static unsigned long long stmt_bit(struct db_stmt *stmt)
{
	/* Ids are per statement, so they are handed out process-wide. */
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static int stmts;
	int id = stmt->id;

	if (id == 0) {
		pthread_mutex_lock(&mu);
		id = stmt->id;
		if (id == 0 && stmts < DB_STMT_MAX) {
			/* Named after the SQL (64-bit FNV-1a), not the id: a
			 * statement found under this name on a server
			 * connection is this statement.
			 */
			unsigned long long h = 14695981039346656037ULL;

			for (const char *c = stmt->sql; *c; c++)
				h = (h ^ (unsigned char)*c) * 1099511628211ULL;
			snprintf(stmt->name, sizeof(stmt->name), "gsz_%016llx",
				 h);
			stmt->id = id = ++stmts;
		}
		pthread_mutex_unlock(&mu);
	}
	return id ? 1ULL << (id - 1) : 0;
}

static int has_state(const PGresult *r, const char *state)
{
	const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

	return st && !strcmp(st, state);
}

/* Waits until PQgetResult on s can return without blocking on the
 * socket, or until s->deadline_ms: 0 then, -1 (s->timed_out set) when the
 * server sent nothing in time. A connection failure returns 0: the
 * PQgetResult that follows reports it. Input is consumed at least every
 * WAIT_SLICE_MS even when poll() saw nothing: over TLS, bytes libpq has
 * read but not yet decrypted do not make the socket readable (libpq's own
 * wait checks for them; poll() cannot).
 */
#define WAIT_SLICE_MS 100
static int wait_answer(struct slot *s)
{
	PGconn *c = s->conn;

	while (PQisBusy(c)) {
		struct pollfd pfd = {.fd = PQsocket(c), .events = POLLIN};
		long long left = s->deadline_ms - now_ms();
		int rc;

		if (pfd.fd < 0)
			return 0;
		if (left <= 0) {
			s->timed_out = 1;
			return -1;
		}
		rc = poll(&pfd, 1,
			  left > WAIT_SLICE_MS ? WAIT_SLICE_MS : (int)left);
		if (rc < 0 && errno != EINTR)
			return 0;
		if (!PQconsumeInput(c))
			return 0;
	}
	return 0;
}

static int failed(const PGresult *r)
{
	ExecStatusType st = PQresultStatus(r);

	return st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK;
}

/* Runs settings_stmt, then the statement, as one pipeline ended by one
 * Sync; each is the prepared statement of that name when a name is given,
 * else sent with its SQL. Returns the statement's result, or the first
 * error (the settings', the statement's or the commit's), or NULL when the
 * pipeline did not finish: the connection is then marked broken, and
 * nothing is known to be committed (the implicit transaction commits at
 * the Sync). Blocking mode is safe here: what the server sends before it
 * has read the whole pipeline is the settings' one short row.
 */
static PGresult *exec_pipeline(struct db_pool *p, struct slot *s,
			       const char *settings_name, const char *name,
			       const char *sql, int n,
			       const char *const *params, const int *lengths,
			       const int *formats)
{
	const char *set[1] = {p->statement_timeout};
	PGconn *c = s->conn;
	PGresult *out = NULL;
	int nth = 0, nulls = 0, synced = 0;
	int sent =
	    PQenterPipelineMode(c) &&
	    (settings_name
		 ? PQsendQueryPrepared(c, settings_name, 1, set, NULL, NULL, 0)
		 : PQsendQueryParams(c, settings_sql, 1, NULL, set, NULL, NULL,
				     0)) &&
	    (name ? PQsendQueryPrepared(c, name, n, params, lengths, formats, 0)
		  : PQsendQueryParams(c, sql, n, NULL, params, lengths, formats,
				      0)) &&
	    PQpipelineSync(c);

	/* Each query's results end with a NULL; the Sync's result is last.
	 * Two NULLs in a row, or a dead connection, end it early.
	 */
	while (sent && wait_answer(s) == 0) {
		PGresult *r = PQgetResult(c);

		if (!r) {
			if (++nulls > 1 || PQstatus(c) != CONNECTION_OK)
				break;
			nth++;
			continue;
		}
		nulls = 0;
		if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
			PQclear(r);
			synced = 1;
			break;
		}
		if (failed(r) && PQresultStatus(r) != PGRES_PIPELINE_ABORTED &&
		    !(out && failed(out))) {
			PQclear(out);
			out = r;
		} else if (nth == 1 && !out) {
			out = r;
		} else {
			PQclear(r);
		}
	}
	if (!synced || !PQexitPipelineMode(c)) {
		s->broken = 1;
		if (out && !failed(out)) {
			PQclear(out);
			out = NULL;
		}
	}
	return out;
}

/* Prepares stmt (its sql, n parameters) on s unless its bit says it is;
 * NULL when it is prepared now, else the failed result.
 */
static PGresult *prepare(struct slot *s, struct db_stmt *stmt, const char *sql,
			 int n, unsigned long long bit)
{
	PGresult *r = NULL, *x;

	if (!bit || (s->prepared & bit))
		return NULL;
	/* PQprepare, with the wait for its answer bounded (wait_answer) */
	if (PQsendPrepare(s->conn, stmt->name, sql, n, NULL)) {
		while (wait_answer(s) == 0 && (x = PQgetResult(s->conn))) {
			PQclear(r);
			r = x;
		}
	}
	if (!r || s->timed_out) {
		/* no answer: the connection is in an unknown state */
		s->broken = 1;
		PQclear(r);
		return PQmakeEmptyPGresult(s->conn, PGRES_FATAL_ERROR);
	}
	/* 42P05: already prepared here under its name. */
	if (PQresultStatus(r) != PGRES_COMMAND_OK && !has_state(r, "42P05"))
		return r;
	PQclear(r);
	s->prepared |= bit;
	return NULL;
}

/* One execution of sql on s, after the settings; both prepared (the
 * statement only when stmt is given). A prepared statement can vanish
 * under a live connection (DISCARD ALL, DEALLOCATE: what a pooler such as
 * PgBouncer runs between clients): both are prepared again and the
 * execution, which did not happen, is retried once. Where one vanishes
 * again at once (a transaction pooler that sends the prepare and the
 * execution to different server connections) the pool stops preparing
 * and sends the SQL each time, without failing a request.
 */
static PGresult *exec_on(struct db_pool *p, struct slot *s,
			 struct db_stmt *stmt, const char *sql, int n,
			 const char *const *params, const int *lengths,
			 const int *formats)
{
	unsigned long long sbit = p->no_prepare ? 0 : stmt_bit(&settings_stmt);
	unsigned long long bit = stmt && !p->no_prepare ? stmt_bit(stmt) : 0;
	PGresult *r;

	for (int try = 0; (sbit | bit) && try < 2; try++) {
		if ((r = prepare(s, &settings_stmt, settings_sql, 1, sbit)) ||
		    (r = prepare(s, stmt, sql, n, bit)))
			return r;
		r = exec_pipeline(p, s, sbit ? settings_stmt.name : NULL,
				  bit ? stmt->name : NULL, sql, n, params,
				  lengths, formats);
		if (!has_state(r, "26000")) /* invalid statement name */
			return r;
		PQclear(r);
		s->prepared &= ~(sbit | bit);
	}
	if (sbit | bit)
		p->no_prepare = 1;
	return exec_pipeline(p, s, NULL, NULL, sql, n, params, lengths,
			     formats);
}

static enum store_status run(struct db_pool *p, struct db_stmt *stmt,
			     const char *sql, int n, const char *const *params,
			     const int *lengths, const int *formats,
			     int idempotent, PGresult **out,
			     struct store_err *e)
{
	struct slot *s;
	PGresult *res = NULL;
	int attempts = idempotent ? 2 : 1;

	*out = NULL;
	store_err_clear(e);
	if (req_open && req_down) {
		e->status = STORE_UNAVAILABLE;
		snprintf(e->message, sizeof(e->message), "%s", req_down_msg);
		return e->status;
	}
	s = acquire(p, e);
	if (!s)
		goto out;
	for (int a = 0; a < attempts; a++) {
		if (ensure_connected(p, s, e) != 0)
			break;
		s->deadline_ms = now_ms() + p->answer_timeout_ms;
		s->timed_out = 0;
		res = exec_on(p, s, stmt, sql, n, params, lengths, formats);
		if (s->timed_out) {
			/* Not retried: a server that cannot answer would
			 * make the request wait twice as long.
			 */
			PQclear(res);
			res = NULL;
			s->broken = 1;
			s->last_fail_ms = 0;
			conn_error(p, s->conn,
				   "database did not answer in time");
			e->status = STORE_UNAVAILABLE;
			snprintf(e->message, sizeof(e->message),
				 "database unavailable: no answer within %d ms",
				 p->answer_timeout_ms);
			break;
		}
		ExecStatusType st =
		    res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
		if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
			store_err_clear(e);
			*out = res;
			break;
		}
		db_classify(s->conn, res, e);
		PQclear(res);
		res = NULL;
		if (e->status != STORE_UNAVAILABLE ||
		    (PQstatus(s->conn) == CONNECTION_OK && !s->broken))
			break;
		/* The connection died under us: count and log it, let the
		 * next attempt (or the next request) reconnect.
		 */
		conn_error(p, s->conn, "database connection lost");
		s->broken = 1;
		s->last_fail_ms = 0;
	}
	release(p, s);
out:
	if (req_open && e->status == STORE_UNAVAILABLE) {
		req_down = true;
		snprintf(req_down_msg, sizeof(req_down_msg), "%s", e->message);
	}
	return e->status;
}

enum store_status db_exec(struct db_pool *p, const char *sql, int n,
			  const char *const *params, int idempotent,
			  PGresult **out, struct store_err *e)
{
	return run(p, NULL, sql, n, params, NULL, NULL, idempotent, out, e);
}

enum store_status db_exec_stmt(struct db_pool *p, struct db_stmt *stmt, int n,
			       const char *const *params, const int *lengths,
			       const int *formats, int idempotent,
			       PGresult **out, struct store_err *e)
{
	return run(p, stmt, stmt->sql, n, params, lengths, formats, idempotent,
		   out, e);
}

/* Appends one element of a PostgreSQL array literal: NULL, or the value
 * double-quoted with '"' and '\' escaped (array input syntax).
 */
void db_array_elem(struct sbuf *b, const char *v)
{
	const char *s = v;

	sbuf_putn(b, b->len > 1 ? "," : "", b->len > 1);
	if (!v) {
		sbuf_putn(b, "NULL", 4);
		return;
	}
	sbuf_putn(b, "\"", 1);
	while (*s) {
		size_t run = strcspn(s, "\"\\");
		sbuf_putn(b, s, run);
		s += run;
		if (*s) {
			sbuf_putn(b, "\\", 1);
			sbuf_putn(b, s++, 1);
		}
	}
	sbuf_putn(b, "\"", 1);
}

enum store_status db_one_json(PGresult *r, json_t **out, struct store_err *e)
{
	json_error_t jerr;

	*out = NULL;
	if (PQntuples(r) == 0 || PQgetisnull(r, 0, 0)) {
		e->status = STORE_NOT_FOUND;
		snprintf(e->message, sizeof(e->message), "not found");
	} else if (!(*out = json_loads(PQgetvalue(r, 0, 0), 0, &jerr))) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message), "invalid JSON: %s",
			 jerr.text);
	}
	PQclear(r);
	return e->status;
}
