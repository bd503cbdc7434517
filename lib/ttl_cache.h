/* ttl_cache.h - a small thread-safe cache of byte strings that expire.
 *
 * For read-mostly data every request needs (the catalog, fleet medians):
 * a fixed number of slots, linear lookup under one mutex, copies in and
 * out so no caller ever holds a pointer into the cache. Define one with
 * TTL_CACHE(name, slots, ttl_ms) at file scope.
 */
#ifndef GPUSIZER_LIB_TTL_CACHE_H
#define GPUSIZER_LIB_TTL_CACHE_H

#include <pthread.h>
#include <stddef.h>

#define TTL_KEY_MAX 96

struct ttl_slot {
	char key[TTL_KEY_MAX];
	void *data; /* owned by the cache */
	size_t len;
	long long expires_ms;
};

struct ttl_cache {
	pthread_mutex_t mu;
	struct ttl_slot *slots;
	int n;
	long long ttl_ms;
	unsigned long generation; /* counts ttl_cache_clear calls */
};

#define TTL_CACHE(name, nslots, ttl)                                           \
	static struct ttl_slot name##_slots[nslots];                           \
	static struct ttl_cache name = {PTHREAD_MUTEX_INITIALIZER,             \
					name##_slots, nslots, ttl, 0}

/* A copy of the fresh entry under key (caller frees; *len set), or NULL. */
void *ttl_cache_get(struct ttl_cache *c, const char *key, size_t *len);
/* The cache's generation: read it before reading what will be put, and
 * pass it to ttl_cache_put. */
unsigned long ttl_cache_generation(struct ttl_cache *c);
/* Stores a copy of data[0..len) under key (replacing, else the oldest
 * slot), unless the cache was cleared since generation was read: data
 * read before a write committed would otherwise outlive the clear that
 * write made (review s19a F2: a daemon served its own PUT's old record).
 * Keys of TTL_KEY_MAX bytes or more are not cached.
 */
void ttl_cache_put(struct ttl_cache *c, unsigned long generation,
		   const char *key, const void *data, size_t len);
/* Drops every entry and starts a new generation (data changed here). */
void ttl_cache_clear(struct ttl_cache *c);

#endif
