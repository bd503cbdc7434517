/* config.h - daemon settings: defaults, then GPUSIZER_* environment
 * variables (DATABASE_URL too), then command-line flags. Every setting is
 * validated at start-up; a bad value stops the daemon with a message.
 */
#ifndef GPUSIZER_SERVER_CONFIG_H
#define GPUSIZER_SERVER_CONFIG_H

#include <stddef.h>

struct config {
	char listen[128];	     /* HOST:PORT */
	char health_listen[128];     /* HOST:PORT of /healthz, /readyz; "" */
	char database_url[1024];     /* libpq conninfo or URI */
	char migrations_dir[1024];   /* NNNN_name.sql files */
	char openapi_file[1024];     /* served at /openapi.yaml */
	char log_level[16];	     /* debug|info|warn|error */
	int max_body_bytes;	     /* request body cap (413 past it) */
	int connection_limit;	     /* concurrent connections */
	int per_ip_connection_limit; /* 0 = none (behind a proxy) */
	int connection_timeout_s;    /* idle connections are closed */
	int db_pool_size;	     /* PostgreSQL connections */
	int db_acquire_timeout_ms;   /* wait for a pooled connection */
	int statement_timeout_ms;    /* server-side statement_timeout */
	int drain_delay_s;	     /* after SIGTERM, before refusing */
	int drain_timeout_s;	     /* wait for in-flight requests */
	int auth_reads;		     /* 1: reads and sizing need a token */
	int engine_max_steps;	     /* work units of one engine search */
	int engine_timeout_ms;	     /* one request's engine wall clock */
	int engine_concurrency;	     /* searches at once; 0 = online CPUs */
	int fleet_synthetic;	     /* synthetic reports in fleet figures */
	int calibration_cache_s;     /* calibration medians kept this long */
	int history_retention_days;  /* probe runs kept; 0 = all */
	int recommendation_retention_days; /* sizing answers kept; 0 = all */
};

/* Fills *c from defaults, the environment, then argv[first..argc).
 * Returns 0, or -1 with a message naming the setting in err.
 */
int config_load(struct config *c, int argc, char **argv, int first, char *err,
		size_t errlen);
/* Writes "--flag VALUE (env NAME, default D): what" lines to out. */
void config_usage(void *file);
/* Logs the effective settings, the database password redacted. */
void config_log(const struct config *c);

#endif
