/* ttl_cache.c - see ttl_cache.h. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/ttl_cache.h"

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void *ttl_cache_get(struct ttl_cache *c, const char *key, size_t *len)
{
	long long now = mono_ms();
	void *copy = NULL;

	pthread_mutex_lock(&c->mu);
	for (int i = 0; i < c->n; i++) {
		struct ttl_slot *s = &c->slots[i];
		if (s->data && s->expires_ms > now && !strcmp(s->key, key)) {
			copy = malloc(s->len);
			if (copy) {
				memcpy(copy, s->data, s->len);
				*len = s->len;
			}
			break;
		}
	}
	pthread_mutex_unlock(&c->mu);
	return copy;
}

unsigned long ttl_cache_generation(struct ttl_cache *c)
{
	unsigned long g;

	pthread_mutex_lock(&c->mu);
	g = c->generation;
	pthread_mutex_unlock(&c->mu);
	return g;
}

void ttl_cache_put(struct ttl_cache *c, unsigned long generation,
		   const char *key, const void *data, size_t len)
{
	long long now = mono_ms();
	void *copy;
	int victim = 0;

	if (strlen(key) >= TTL_KEY_MAX || !(copy = malloc(len ? len : 1)))
		return;
	memcpy(copy, data, len);
	pthread_mutex_lock(&c->mu);
	if (c->generation != generation) {
		pthread_mutex_unlock(&c->mu);
		free(copy);
		return;
	}
	/* The same key, else an empty or expired slot, else the oldest. */
	for (int i = 0; i < c->n; i++) {
		struct ttl_slot *s = &c->slots[i];
		if (s->data && !strcmp(s->key, key)) {
			victim = i;
			break;
		}
		if (!s->data || s->expires_ms <= now ||
		    s->expires_ms < c->slots[victim].expires_ms)
			victim = i;
	}
	free(c->slots[victim].data);
	c->slots[victim].data = copy;
	c->slots[victim].len = len;
	memcpy(c->slots[victim].key, key, strlen(key) + 1);
	c->slots[victim].expires_ms = now + c->ttl_ms;
	pthread_mutex_unlock(&c->mu);
}

void ttl_cache_clear(struct ttl_cache *c)
{
	pthread_mutex_lock(&c->mu);
	c->generation++;
	for (int i = 0; i < c->n; i++) {
		free(c->slots[i].data);
		c->slots[i].data = NULL;
	}
	pthread_mutex_unlock(&c->mu);
}
