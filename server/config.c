/* config.c - typed settings table (pgbouncer CfKey / redis standardConfig
 * style): one row per setting drives defaults, env, flags and usage.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/budget.h"
#include "server/config.h"
#include "server/log.h"
#include "storage/db.h"

enum kind { K_STR, K_INT, K_BOOL };

struct key {
	const char *flag; /* --flag */
	const char *env;  /* environment variable */
	enum kind kind;
	size_t offset;
	size_t size; /* K_STR buffer size */
	long min, max;
	const char *def;
	const char *help;
};

#define STR(x)	#x
#define XSTR(x) STR(x)
#define S(f)	offsetof(struct config, f), sizeof(((struct config *)0)->f)
#define I(f)	offsetof(struct config, f), sizeof(int)

static const struct key keys[] = {
    {"listen", "GPUSIZER_LISTEN", K_STR, S(listen), 0, 0, "127.0.0.1:8080",
     "address and port to serve HTTP on"},
    {"health-listen", "GPUSIZER_HEALTH_LISTEN", K_STR, S(health_listen), 0, 0,
     "",
     "a second address for /healthz and /readyz only, whose connections "
     "no API client can take (liveness probes); empty: none"},
    {"database-url", "DATABASE_URL", K_STR, S(database_url), 0, 0, "",
     "PostgreSQL conninfo or URI (required)"},
    {"migrations-dir", "GPUSIZER_MIGRATIONS_DIR", K_STR, S(migrations_dir), 0,
     0, "migrations", "directory of NNNN_name.sql"},
    {"openapi-file", "GPUSIZER_OPENAPI_FILE", K_STR, S(openapi_file), 0, 0,
     "openapi.yaml", "the contract served at /openapi.yaml"},
    {"log-level", "GPUSIZER_LOG_LEVEL", K_STR, S(log_level), 0, 0, "info",
     "debug, info, warn or error"},
    {"max-body-bytes", "GPUSIZER_MAX_BODY_BYTES", K_INT, I(max_body_bytes),
     1024, 64L << 20, "1048576", "request body cap; larger gets 413"},
    {"connection-limit", "GPUSIZER_CONNECTION_LIMIT", K_INT,
     I(connection_limit), 4, 60000, "512",
     "concurrent HTTP connections (one thread each)"},
    {"per-ip-connection-limit", "GPUSIZER_PER_IP_CONNECTION_LIMIT", K_INT,
     I(per_ip_connection_limit), 0, 60000, "0",
     "connections per client address; 0 = no limit (use 0 behind a "
     "proxy)"},
    {"connection-timeout", "GPUSIZER_CONNECTION_TIMEOUT", K_INT,
     I(connection_timeout_s), 1, 3600, "15",
     "seconds of client silence before a connection is closed"},
    {"db-pool-size", "GPUSIZER_DB_POOL_SIZE", K_INT, I(db_pool_size), 1, 1000,
     "8", "PostgreSQL connections shared by all requests"},
    {"db-acquire-timeout-ms", "GPUSIZER_DB_ACQUIRE_TIMEOUT_MS", K_INT,
     I(db_acquire_timeout_ms), 1, 600000, "2000",
     "wait for a free database connection, then 503"},
    {"statement-timeout-ms", "GPUSIZER_STATEMENT_TIMEOUT_MS", K_INT,
     I(statement_timeout_ms), 1, 3600000, "5000",
     "PostgreSQL statement_timeout of every query"},
    {"drain-delay", "GPUSIZER_DRAIN_DELAY", K_INT, I(drain_delay_s), 0, 300,
     "0",
     "seconds between SIGTERM (readyz turns 503) and refusing new "
     "connections"},
    {"drain-timeout", "GPUSIZER_DRAIN_TIMEOUT", K_INT, I(drain_timeout_s), 0,
     3600, "20", "seconds to wait for in-flight requests on shutdown"},
    {"auth-reads", "GPUSIZER_AUTH_READS", K_BOOL, I(auth_reads), 0, 1, "0",
     "require a token for reads and sizing too"},
    {"engine-max-steps", "GPUSIZER_ENGINE_MAX_STEPS", K_INT,
     I(engine_max_steps), 10000, 1000000000, XSTR(ENG_BUDGET_DEFAULT_UNITS),
     "steps one training search may take (a layout visited or a memory "
     "evaluation); a larger search gets 422"},
    {"fleet-synthetic", "GPUSIZER_FLEET_SYNTHETIC", K_BOOL, I(fleet_synthetic),
     0, 1, "0",
     "count reports marked synthetic (fixtures, make demo) in fleet "
     "medians, calibration and the capacity report"},
    {"calibration-cache-s", "GPUSIZER_CALIBRATION_CACHE_S", K_INT,
     I(calibration_cache_s), 0, 3600, "30",
     "seconds a GPU type's calibration medians are kept for sizing "
     "requests; 0 reads them fresh for every request"},
    {"history-retention-days", "GPUSIZER_HISTORY_RETENTION_DAYS", K_INT,
     I(history_retention_days), 0, 36500, "0",
     "days of probe runs and results kept: older months of partitions are "
     "dropped hourly and by `gpusizerd maintain`; 0 keeps everything"},
    {"recommendation-retention-days", "GPUSIZER_RECOMMENDATION_RETENTION_DAYS",
     K_INT, I(recommendation_retention_days), 0, 36500, "0",
     "days of sizing answers (recommendations) kept, the same way; 0 keeps "
     "everything"},
    {"engine-timeout-ms", "GPUSIZER_ENGINE_TIMEOUT_MS", K_INT,
     I(engine_timeout_ms), 100, 600000, "10000",
     "wall clock of one request's engine work; past it (a saturated "
     "server) 503 with Retry-After"},
    {"engine-concurrency", "GPUSIZER_ENGINE_CONCURRENCY", K_INT,
     I(engine_concurrency), 0, 1024, "0",
     "training and compare searches run at once; more wait their turn "
     "within --engine-timeout-ms, then 503 (0: the online CPUs)"},
};
#define NKEYS (int)(sizeof(keys) / sizeof(keys[0]))

/* `make run` leaves its private database's conninfo in var/database_url
 * while it runs (deploy/dev/run.sh): commands run from the checkout
 * (build/gpusizerd token ...) use it when neither --database-url nor
 * DATABASE_URL is given, and say so on stderr. */
static void dev_database_url(struct config *c)
{
	static const char path[] = "var/database_url";
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return;
	n = fread(c->database_url, 1, sizeof(c->database_url) - 1, f);
	fclose(f);
	while (n > 0 && (c->database_url[n - 1] == '\n' ||
			 c->database_url[n - 1] == '\r'))
		n--;
	c->database_url[n] = '\0';
	if (n)
		fprintf(stderr,
			"gpusizerd: using the database of `make run` (%s)\n",
			path);
}

static int set(struct config *c, const struct key *k, const char *v,
	       const char *origin, char *err, size_t errlen)
{
	char *p = (char *)c + k->offset;

	switch (k->kind) {
	case K_STR:
		if (strlen(v) >= k->size) {
			snprintf(err, errlen,
				 "%s \"%s\": longer than %zu bytes", origin,
				 k->flag, k->size - 1);
			return -1;
		}
		memcpy(p, v, strlen(v) + 1);
		return 0;
	case K_BOOL:
		/* any case: GPUSIZER_AUTH_READS=FALSE refused to start */
		if (!strcmp(v, "1") || !strcasecmp(v, "true") ||
		    !strcasecmp(v, "yes") || !strcasecmp(v, "on")) {
			*(int *)p = 1;
			return 0;
		}
		if (!strcmp(v, "0") || !strcasecmp(v, "false") ||
		    !strcasecmp(v, "no") || !strcasecmp(v, "off")) {
			*(int *)p = 0;
			return 0;
		}
		snprintf(err, errlen,
			 "%s \"%s\": expected true or false (or 1/0, "
			 "yes/no, on/off; any case), got \"%.40s\"",
			 origin, k->flag, v);
		return -1;
	case K_INT: {
		char *end;
		long x = strtol(v, &end, 10);
		if (*v == '\0' || *end != '\0' || x < k->min || x > k->max) {
			snprintf(err, errlen,
				 "%s \"%s\": expected an integer in [%ld, "
				 "%ld], got \"%.40s\"",
				 origin, k->flag, k->min, k->max, v);
			return -1;
		}
		*(int *)p = (int)x;
		return 0;
	}
	}
	return -1;
}

/* HOST:PORT with a port as the listener takes it: 1 to 5 digits, at most
 * 65535 (checked with the other options, so that a bad one is a usage
 * error before the daemon starts: review s23a F4; http_daemon.c checks it
 * again). */
static bool host_port_ok(const char *hp)
{
	const char *p = strrchr(hp, ':');
	size_t n = p ? strspn(++p, "0123456789") : 0;

	return n > 0 && n <= 5 && p[n] == '\0' && strtol(p, NULL, 10) <= 65535;
}

int config_load(struct config *c, int argc, char **argv, int first, char *err,
		size_t errlen)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < NKEYS; i++)
		if (set(c, &keys[i], keys[i].def, "default", err, errlen))
			return -1;
	for (int i = 0; i < NKEYS; i++) {
		const char *v = getenv(keys[i].env);
		char origin[80];
		snprintf(origin, sizeof(origin), "environment %s", keys[i].env);
		if (v && *v && set(c, &keys[i], v, origin, err, errlen))
			return -1;
	}
	for (int a = first; a < argc; a++) {
		const char *arg = argv[a];
		const struct key *k = NULL;
		const char *val;

		if (strncmp(arg, "--", 2) != 0) {
			snprintf(err, errlen, "unexpected argument \"%.60s\"",
				 arg);
			return -1;
		}
		for (int i = 0; i < NKEYS && !k; i++) {
			size_t n = strlen(keys[i].flag);
			if (!strncmp(arg + 2, keys[i].flag, n) &&
			    (arg[2 + n] == '\0' || arg[2 + n] == '='))
				k = &keys[i];
		}
		if (!k) {
			snprintf(err, errlen,
				 "unknown option \"%.60s\" (see "
				 "--help)",
				 arg);
			return -1;
		}
		val = strchr(arg, '=');
		if (val)
			val++;
		else if (k->kind == K_BOOL)
			val = "1";
		else if (a + 1 < argc && strncmp(argv[a + 1], "--", 2) != 0)
			val = argv[++a]; /* "--listen --log-level x" has none */
		else {
			snprintf(err, errlen, "option \"--%s\" needs a value",
				 k->flag);
			return -1;
		}
		if (set(c, k, val, "option", err, errlen))
			return -1;
	}
	if (!c->database_url[0])
		dev_database_url(c);
	if (!c->database_url[0]) {
		snprintf(err, errlen,
			 "no database: set DATABASE_URL or --database-url "
			 "(\"make run\" starts a private PostgreSQL)");
		return -1;
	}
	if (log_level_parse(c->log_level) < 0) {
		snprintf(err, errlen,
			 "\"log-level\": expected debug, info, "
			 "warn or error");
		return -1;
	}
	{
		const struct {
			const char *key, *v;
		} addrs[] = {{"listen", c->listen},
			     {"health-listen", c->health_listen}};

		for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++)
			if ((i == 0 || addrs[i].v[0]) &&
			    !host_port_ok(addrs[i].v)) {
				snprintf(err, errlen,
					 "\"%s\": expected HOST:PORT with a "
					 "port in [0, 65535], got \"%.60s\"",
					 addrs[i].key, addrs[i].v);
				return -1;
			}
	}
	return 0;
}

void config_usage(void *file)
{
	FILE *f = file;

	for (int i = 0; i < NKEYS; i++)
		fprintf(f, "  --%-26s %s\n  %-28s (env %s, default \"%s\")\n",
			keys[i].flag, keys[i].help, "", keys[i].env,
			keys[i].def);
}

void config_log(const struct config *c)
{
	char url[2048], n[16][16];
	int ints[] = {c->max_body_bytes,
		      c->connection_limit,
		      c->per_ip_connection_limit,
		      c->connection_timeout_s,
		      c->db_pool_size,
		      c->db_acquire_timeout_ms,
		      c->statement_timeout_ms,
		      c->drain_delay_s,
		      c->drain_timeout_s,
		      c->auth_reads,
		      c->engine_max_steps,
		      c->engine_timeout_ms,
		      c->engine_concurrency};

	db_conninfo_redacted(c->database_url, url, sizeof(url));
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		snprintf(n[i], sizeof(n[i]), "%d", ints[i]);
	log_event(LOG_INFO, "configuration", "listen", c->listen,
		  "database_url", url, "migrations_dir", c->migrations_dir,
		  "openapi_file", c->openapi_file, "log_level", c->log_level,
		  "max_body_bytes", n[0], "connection_limit", n[1],
		  "per_ip_connection_limit", n[2], "connection_timeout_s", n[3],
		  "db_pool_size", n[4], "db_acquire_timeout_ms", n[5],
		  "statement_timeout_ms", n[6], "drain_delay_s", n[7],
		  "drain_timeout_s", n[8], "auth_reads", n[9],
		  "engine_max_steps", n[10], "engine_timeout_ms", n[11],
		  "engine_concurrency", n[12], NULL);
}
