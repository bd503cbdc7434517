/* main.c - gpusizerd: argv, signals, lifecycle.
 *
 *   gpusizerd [serve] [options]        serve the API (default)
 *   gpusizerd migrate [options]        apply pending migrations and exit
 *   gpusizerd token create --name NAME --scopes probe,admin [options]
 *   gpusizerd token revoke NAME [options]
 *   gpusizerd token list [options]
 *
 * Signals are blocked in every thread and taken synchronously here
 * (sigtimedwait), so shutdown runs in one place: SIGTERM/SIGINT drain
 * in-flight requests and exit 0; a second signal exits at once.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/config.h"
#include "server/http.h"
#include "server/log.h"
#include "storage/bench.h"
#include "storage/maintain.h"
#include "storage/migrate.h"
#include "storage/tokens.h"

#define GPUSIZER_VERSION "0.1.0"

static void usage(FILE *f)
{
	fprintf(f, "usage: gpusizerd [serve] [options]\n"
		   "       gpusizerd migrate [options]\n"
		   "       gpusizerd maintain [options]\n"
		   "       gpusizerd token create --name NAME --scopes "
		   "probe,admin [options]\n"
		   "       gpusizerd token revoke NAME [options]\n"
		   "       gpusizerd token list [options]\n"
		   "       gpusizerd --version\n\n"
		   "options (each also read from its environment variable):\n");
	config_usage(f);
}

/* `gpusizerd token --help` (or after any token verb). */
static void token_usage(FILE *f)
{
	fprintf(f, "usage: gpusizerd token create --name NAME --scopes SCOPES "
		   "[options]\n"
		   "       gpusizerd token revoke NAME [options]\n"
		   "       gpusizerd token list [options]\n\n"
		   "  --name NAME      1 to 64 characters, no control "
		   "characters\n"
		   "  --scopes SCOPES  probe, admin or probe,admin (each "
		   "once)\n\n"
		   "create prints the token once, on stdout. The database is "
		   "--database-url,\n"
		   "DATABASE_URL or the one `make run` left in "
		   "var/database_url.\n\n"
		   "options (each also read from its environment variable):\n");
	config_usage(f);
}

/* "--help" or "-h" among a subcommand's arguments. */
static int wants_help(int argc, char **argv, int first)
{
	for (int i = first; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	return 0;
}

/* systemd Type=notify without libsystemd: one datagram to NOTIFY_SOCKET. */
static void sd_notify_msg(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t len;
	int fd;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace */
	len =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&sa, len) < 0)
		log_event(LOG_WARN, "sd_notify failed", "error",
			  strerror(errno), NULL);
	close(fd);
}

/* The pool's connection errors, with libpq's message (storage/db.h). */
static void log_db_error(const char *what, const char *libpq_message,
			 long long unlogged)
{
	char n[24];

	snprintf(n, sizeof(n), "%lld", unlogged);
	log_event(LOG_ERROR, what, "error", libpq_message, "unlogged_repeats",
		  n, NULL);
}

/* Waits up to ms for SIGINT/SIGTERM; returns the signal or 0. SIGHUP
 * is blocked too and said to be ignored: there is nothing to reload, and
 * its default action would kill the daemon without a drain (a reflexive
 * `kill -HUP` dropped every request in flight). The wait goes on for
 * what is left of ms. */
static int wait_signal(const sigset_t *set, long ms)
{
	struct timespec t0, now;
	int sig;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left;
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = ms - ((now.tv_sec - t0.tv_sec) * 1000L +
			     (now.tv_nsec - t0.tv_nsec) / 1000000L);
		if (left < 0)
			left = 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000L;
		do
			sig = sigtimedwait(set, NULL, &ts);
		while (sig < 0 && errno == EINTR);
		if (sig != SIGHUP)
			return sig < 0 ? 0 : sig;
		log_event(LOG_WARN,
			  "SIGHUP ignored: nothing to reload; a changed "
			  "setting needs a restart (SIGTERM drains)",
			  NULL);
	}
}

/* Applies migrations, retrying while the database is unreachable.
 * Returns 0 when applied, 1 on a fatal error, 2 when a signal came first.
 */
static int migrate_until_done(const struct config *cfg,
			      const struct migration_set *set,
			      const sigset_t *sigs, int retry)
{
	char err[1024];
	int applied, fatal;
	long wait_ms = 250;

	for (;;) {
		if (migrate_apply(cfg->database_url, set, &applied, &fatal, err,
				  sizeof(err)) == 0) {
			char n[16], total[16];
			snprintf(n, sizeof(n), "%d", applied);
			snprintf(total, sizeof(total), "%d", set->n);
			log_event(LOG_INFO, "migrations up to date", "applied",
				  n, "known", total, NULL);
			return 0;
		}
		if (fatal || !retry) {
			log_event(LOG_ERROR, "cannot migrate the database",
				  "error", err, NULL);
			return 1;
		}
		log_event(LOG_WARN, "database not ready; retrying", "error",
			  err, NULL);
		if (wait_signal(sigs, wait_ms))
			return 2;
		if (wait_ms < 5000)
			wait_ms *= 2;
	}
}

/* The time partitions' upkeep (storage/maintain.h): at start, hourly
 * while serving, and by `gpusizerd maintain`. A failure (a lock held past
 * lock_timeout) is logged and tried again next time; months are made
 * MAINTAIN_MONTHS_AHEAD ahead, so a few failed hours lose nothing.
 */
static int run_maintain(struct db_pool *pool, const struct config *cfg,
			int print)
{
	struct maintain_policy p = {cfg->history_retention_days,
				    cfg->recommendation_retention_days};
	struct store_err e;
	char *actions = NULL, n[16];
	int count = 0;

	if (store_maintain(pool, &p, &actions, &count, &e) != STORE_OK) {
		log_event(LOG_WARN, "partition maintenance failed", "error",
			  e.message, NULL);
		return 1;
	}
	snprintf(n, sizeof(n), "%d", count);
	for (char *line = actions, *nl; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		if (print)
			printf("%s\n", line);
		log_event(LOG_INFO, "partition maintenance", "action", line,
			  NULL);
	}
	log_event(LOG_INFO, "partition maintenance done", "actions", n, NULL);
	free(actions);
	return 0;
}

static int cmd_maintain(struct config *cfg)
{
	struct db_pool *pool = NULL;
	char err[1024];
	int rc;
	struct db_config dbc = {cfg->database_url, 1,
				cfg->db_acquire_timeout_ms,
				cfg->statement_timeout_ms, log_db_error};

	if (db_pool_new(&dbc, &pool, err, sizeof(err)) != 0) {
		fprintf(stderr, "gpusizerd: %s\n", err);
		return 1;
	}
	rc = run_maintain(pool, cfg, 1);
	db_pool_free(pool);
	return rc;
}

/* Connections the health listener holds at once: kubelet's probes and a
 * few of an operator's (each a thread; MHD refuses the rest at accept). */
#define HEALTH_CONNECTION_LIMIT 16
/* Descriptors the daemon holds beside its clients: the pool's, the
 * listeners and health slots, libmicrohttpd's and the log's, with room. */
#define FD_RESERVE 64

/* The connection limit the open-file limit allows: the soft limit is
 * raised to the hard one, and a --connection-limit that still does not
 * fit is lowered, with a warning, so that the connection limit refuses
 * clients, not accept() (review s19a F7: at 48 descriptors and 512
 * connections libmicrohttpd spun a core on EMFILE and served nobody). */
static int fit_connection_limit(const struct config *cfg)
{
	struct rlimit rl;
	int want = cfg->connection_limit;
	long reserve =
	    FD_RESERVE + HEALTH_CONNECTION_LIMIT + (long)cfg->db_pool_size;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return want;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t cur = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			rl.rlim_cur = cur;
	}
	if (rl.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)want + (rlim_t)reserve > rl.rlim_cur) {
		long fit = (long)rl.rlim_cur - reserve;
		char have[32], asked[32], now[32];

		if (fit < 1)
			fit = 1;
		snprintf(have, sizeof(have), "%llu",
			 (unsigned long long)rl.rlim_cur);
		snprintf(asked, sizeof(asked), "%d", want);
		snprintf(now, sizeof(now), "%ld", fit);
		log_event(LOG_WARN,
			  "--connection-limit does not fit the open-file limit "
			  "(RLIMIT_NOFILE) beside the database pool: lowered; "
			  "raise the limit (ulimit -n, LimitNOFILE) to keep it",
			  "open_files", have, "connection_limit", asked,
			  "lowered_to", now, NULL);
		want = (int)fit;
	}
	return want;
}

static int cmd_serve(struct config *cfg, int migrate_only)
{
	struct migration_set *set = NULL;
	struct db_pool *pool = NULL;
	struct http_server *http = NULL, *health = NULL;
	struct app app = {0};
	sigset_t sigs;
	char err[1024];
	int rc = 1, sig;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	/* Before any thread exists, so every thread inherits the mask. */
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	json_object_seed(0);
	config_log(cfg);

	if (migration_set_load(cfg->migrations_dir, &set, err, sizeof(err))) {
		log_event(LOG_ERROR, "cannot load migrations", "error", err,
			  NULL);
		goto out;
	}
	if (migrate_only) {
		rc = migrate_until_done(cfg, set, &sigs, 0);
		goto out;
	}
	struct db_config dbc = {
	    .conninfo = cfg->database_url,
	    .size = cfg->db_pool_size,
	    .acquire_timeout_ms = cfg->db_acquire_timeout_ms,
	    .statement_timeout_ms = cfg->statement_timeout_ms,
	    .log_error = log_db_error,
	};
	if (db_pool_new(&dbc, &pool, err, sizeof(err)) != 0) {
		log_event(LOG_ERROR, "cannot create the database pool", "error",
			  err, NULL);
		goto out;
	}
	app.db = pool;
	app.migrations = set;
	app.openapi_file = cfg->openapi_file;
	{
		/* served as is by GET /openapi.yaml; a wrong path (relative
		 * to another directory) is said now, not at the first 404 */
		struct stat st;
		if (stat(cfg->openapi_file, &st) != 0 || !S_ISREG(st.st_mode))
			log_event(LOG_WARN,
				  "openapi file not found or not a file: "
				  "GET /openapi.yaml will answer 404",
				  "openapi_file", cfg->openapi_file, NULL);
	}
	app.auth_reads = cfg->auth_reads;
	app.engine_max_steps = cfg->engine_max_steps;
	app.engine_timeout_ms = cfg->engine_timeout_ms;
	app.engine_concurrency = cfg->engine_concurrency > 0
				     ? cfg->engine_concurrency
				     : (int)(sysconf(_SC_NPROCESSORS_ONLN) > 0
						 ? sysconf(_SC_NPROCESSORS_ONLN)
						 : 1);
	app.fleet_synthetic = cfg->fleet_synthetic;
	store_set_calibration_cache_s(cfg->calibration_cache_s);
	struct http_config hc = {
	    .listen = cfg->listen,
	    .max_body_bytes = cfg->max_body_bytes,
	    .connection_limit = fit_connection_limit(cfg),
	    .per_ip_limit = cfg->per_ip_connection_limit,
	    .connection_timeout_s = cfg->connection_timeout_s,
	};
	if (http_start(&hc, &app, &http, err, sizeof(err)) != 0) {
		log_event(LOG_ERROR, "cannot start HTTP", "error", err, NULL);
		goto out;
	}
	{
		char port[16];
		snprintf(port, sizeof(port), "%d", http_port(http));
		log_event(LOG_INFO, "listening", "listen", cfg->listen, "port",
			  port, "version", GPUSIZER_VERSION, NULL);
	}
	if (cfg->health_listen[0]) {
		/* a few slots of its own: a flood of the API's connections
		 * cannot starve the probes (review s17b F3) */
		struct http_config hh = {
		    .listen = cfg->health_listen,
		    .max_body_bytes = 1024,
		    .connection_limit = HEALTH_CONNECTION_LIMIT,
		    .per_ip_limit = 0,
		    .connection_timeout_s = 5,
		    .health_only = 1,
		};
		char port[16];

		if (http_start(&hh, &app, &health, err, sizeof(err)) != 0) {
			log_event(LOG_ERROR, "cannot start the health listener",
				  "error", err, NULL);
			goto out;
		}
		snprintf(port, sizeof(port), "%d", http_port(health));
		log_event(LOG_INFO, "listening (health: /healthz, /readyz)",
			  "listen", cfg->health_listen, "port", port, NULL);
	}
	/* Serve /healthz at once; /v1 answers 503 until the schema is in. */
	switch (migrate_until_done(cfg, set, &sigs, 1)) {
	case 0:
		break;
	case 2:
		rc = 0;
		goto out;
	default:
		goto out;
	}
	atomic_store(&app.ready, 1);
	sd_notify_msg("READY=1");

	run_maintain(pool, cfg, 0);
	for (int minutes = 1; !(sig = wait_signal(&sigs, 60000)); minutes++)
		if (minutes % 60 == 0)
			run_maintain(pool, cfg, 0);
	log_event(LOG_INFO, "shutting down: draining", "signal",
		  sig == SIGINT ? "SIGINT" : "SIGTERM", NULL);
	sd_notify_msg("STOPPING=1");
	atomic_store(&app.draining, 1);
	if (cfg->drain_delay_s > 0 &&
	    wait_signal(&sigs, cfg->drain_delay_s * 1000L)) {
		log_event(LOG_WARN, "second signal: exiting now", NULL);
		rc = 0;
		goto out;
	}
	http_quiesce(http);
	{
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (http_connections(http) > 0) {
			if (wait_signal(&sigs, 20)) {
				log_event(LOG_WARN,
					  "second signal: exiting now", NULL);
				break;
			}
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000L +
				(t.tv_nsec - t0.tv_nsec) / 1000000L >=
			    cfg->drain_timeout_s * 1000L) {
				log_event(LOG_WARN,
					  "drain timeout: closing open "
					  "connections",
					  NULL);
				break;
			}
		}
	}
	rc = 0;
out:
	/* Engine work still running stops within a poll (milliseconds), so
	 * http_stop's join of the connection threads does not wait for it.
	 */
	atomic_store(&app.cancel_work, 1);
	http_stop(http);
	if (health)
		http_stop(health);
	db_pool_free(pool);
	migration_set_free(set);
	if (rc == 0)
		log_event(LOG_INFO, "stopped", NULL);
	return rc;
}

/* Removes "--key value" / "--key=value" from argv, returning the value:
 * NULL when the key is absent, "" when it has no value (last word, or the
 * next word is another option: "--name --scopes probe" named no token). */
static const char *take_opt(int *argc, char **argv, int first, const char *key)
{
	size_t n = strlen(key);

	for (int i = first; i < *argc; i++) {
		const char *v = NULL;
		int used = 0;
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=') {
			v = argv[i] + n + 1;
			used = 1;
		} else if (!strcmp(argv[i], key) &&
			   (i + 1 == *argc || !strncmp(argv[i + 1], "--", 2))) {
			v = "";
			used = 1;
		} else if (!strcmp(argv[i], key)) {
			v = argv[i + 1];
			used = 2;
		}
		if (used) {
			memmove(&argv[i], &argv[i + used],
				(size_t)(*argc - i - used) * sizeof(char *));
			*argc -= used;
			return v;
		}
	}
	return NULL;
}

/* --scopes: probe and/or admin, comma-separated, each once ("probe,probe"
 * would be stored as given). On a bad value, why goes to err. */
static int valid_scopes(const char *s, char *err, size_t errlen)
{
	char buf[128], *save = NULL;
	int seen_probe = 0, seen_admin = 0;

	if (!s || !*s) {
		snprintf(err, errlen, "--scopes needs a value");
		return 0;
	}
	if (strlen(s) >= sizeof(buf) || s[0] == ',' ||
	    s[strlen(s) - 1] == ',' || strstr(s, ",,")) {
		snprintf(err, errlen, "--scopes \"%.60s\" is not a list", s);
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int *seen = !strcmp(t, "probe")	  ? &seen_probe
			    : !strcmp(t, "admin") ? &seen_admin
						  : NULL;
		if (!seen) {
			snprintf(err, errlen,
				 "--scopes: unknown scope "
				 "\"%.60s\"",
				 t);
			return 0;
		}
		if ((*seen)++) {
			snprintf(err, errlen,
				 "--scopes: scope \"%s\" given twice", t);
			return 0;
		}
	}
	return 1;
}

/* A token name as `token list` prints it in a column: 1-64 bytes, no
 * control characters (a newline forged a row, an ESC reached the
 * terminal), not starting with '-' (`token revoke NAME` takes that for
 * an option: such a token could not be revoked, review s16c F8). */
static int valid_token_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 64 || s[0] == '-')
		return 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

static int cmd_token(int argc, char **argv)
{
	struct config cfg;
	struct db_pool *pool = NULL;
	struct store_err e;
	char err[1024];
	int rc = 1;
	const char *verb = argc > 2 ? argv[2] : "";
	const char *name = NULL, *scopes = NULL;

	if (wants_help(argc, argv, 2)) {
		token_usage(stdout);
		return 0;
	}
	if (!strcmp(verb, "create")) {
		name = take_opt(&argc, argv, 3, "--name");
		scopes = take_opt(&argc, argv, 3, "--scopes");
		if (!valid_token_name(name)) {
			fprintf(stderr,
				"gpusizerd: token create needs --name NAME (1 "
				"to 64 characters, no control characters, not "
				"starting with -)\n");
			return 2;
		}
		if (!valid_scopes(scopes, err, sizeof(err))) {
			fprintf(stderr,
				"gpusizerd: token create: %s; the scopes are "
				"probe, admin or probe,admin (each once)\n",
				err);
			return 2;
		}
	} else if (!strcmp(verb, "revoke")) {
		if (argc < 4 || argv[3][0] == '-') {
			fprintf(stderr, "gpusizerd: token revoke NAME\n");
			return 2;
		}
		name = argv[3];
		memmove(&argv[3], &argv[4],
			(size_t)(argc - 4) * sizeof(char *));
		argc--;
	} else if (strcmp(verb, "list") != 0) {
		fprintf(stderr, "gpusizerd: token create|revoke|list (see "
				"token --help)\n");
		return 2;
	}
	if (config_load(&cfg, argc, argv, 3, err, sizeof(err)) != 0) {
		fprintf(stderr, "gpusizerd: %s\n", err);
		return 2;
	}
	struct db_config dbc = {cfg.database_url, 1, cfg.db_acquire_timeout_ms,
				cfg.statement_timeout_ms, log_db_error};
	if (db_pool_new(&dbc, &pool, err, sizeof(err)) != 0) {
		fprintf(stderr, "gpusizerd: %s\n", err);
		return 1;
	}
	if (!strcmp(verb, "list")) {
		struct token_info *t = NULL;
		size_t n = 0;
		if (store_token_list(pool, &t, &n, &e) == STORE_OK) {
			/* NAME as wide as the longest (at most 64 bytes) */
			int w = 24;
			for (size_t i = 0; i < n; i++)
				if ((int)strlen(t[i].name) > w)
					w = (int)strlen(t[i].name);
			printf("%-*s %-12s %-21s %s\n", w, "NAME", "SCOPES",
			       "CREATED", "STATUS");
			for (size_t i = 0; i < n; i++)
				printf("%-*s %-12s %-21s %s%s\n", w, t[i].name,
				       t[i].scopes, t[i].created_at,
				       t[i].revoked_at[0] ? "revoked "
							  : "active",
				       t[i].revoked_at);
			rc = 0;
		}
		free(t);
		name = "";
	} else if (!strcmp(verb, "create")) {
		char token[TOKEN_TEXT_MAX];
		if (store_token_create(pool, name, scopes, token, &e) ==
		    STORE_OK) {
			/* The only time the token is ever shown. */
			printf("%s\n", token);
			fprintf(stderr,
				"gpusizerd: token \"%s\" created with scopes "
				"%s; store it now, it cannot be shown again\n",
				name, scopes);
			rc = 0;
		}
	} else if (store_token_revoke(pool, name, &e) == STORE_OK) {
		fprintf(stderr, "gpusizerd: token \"%s\" revoked\n", name);
		rc = 0;
	}
	if (rc != 0)
		fprintf(stderr, "gpusizerd: token %s%s%s%s: %s\n", verb,
			*name ? " \"" : "", name, *name ? "\"" : "",
			e.message[0] ? e.message : store_status_name(e.status));
	db_pool_free(pool);
	return rc;
}

int main(int argc, char **argv)
{
	struct config cfg;
	char err[1024];
	const char *cmd = argc > 1 ? argv[1] : "serve";
	int first = 2;

	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") ||
	    !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("gpusizerd %s\n", GPUSIZER_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "token"))
		return cmd_token(argc, argv);
	if (cmd[0] == '-') {
		cmd = "serve";
		first = 1;
	}
	if (strcmp(cmd, "serve") != 0 && strcmp(cmd, "migrate") != 0 &&
	    strcmp(cmd, "maintain") != 0) {
		fprintf(stderr, "gpusizerd: unknown command \"%s\"\n\n", cmd);
		usage(stderr);
		return 2;
	}
	if (wants_help(argc, argv, first)) {
		usage(stdout);
		return 0;
	}
	if (config_load(&cfg, argc, argv, first, err, sizeof(err)) != 0) {
		fprintf(stderr, "gpusizerd: %s\n", err);
		return 2;
	}
	log_set_level((enum log_level)log_level_parse(cfg.log_level));
	if (!strcmp(cmd, "maintain"))
		return cmd_maintain(&cfg);
	return cmd_serve(&cfg, !strcmp(cmd, "migrate"));
}
