/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scheduler registry, instances, and online switching.
 *
 * Types register once (the built-in noop at start, modules as they load)
 * and stay registered until exit, so a type pointer held by a queue never
 * dangles.  A switch follows the 2004 recipe, with the order the block
 * layer later settled on: build and initialise the new instance first (a
 * failure leaves the old one running), then freeze and drain the queue,
 * swap, thaw, and only then tear down the old instance.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse-iosched.h"

#define ELV_MAX_TYPES 64

/* The registry, in registration order; protected by elv_lock. */
static pthread_mutex_t elv_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct elevator_type *elv_types[ELV_MAX_TYPES];
static unsigned elv_nr_types;

/* Serializes switches: one drain at a time. */
static pthread_mutex_t elv_switch_lock = PTHREAD_MUTEX_INITIALIZER;

bool elv_name_valid(const char *name, size_t len)
{
	if (len == 0 || len > ELV_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

int elv_register(const struct elevator_type *type, const char *origin)
{
	int ret = 0;

	pthread_mutex_lock(&elv_lock);
	for (unsigned i = 0; i < elv_nr_types; i++) {
		if (strcmp(elv_types[i]->name, type->name) == 0) {
			log_warn("%s: scheduler '%s' is already registered",
				 origin, type->name);
			ret = -EEXIST;
			goto out;
		}
	}
	if (elv_nr_types == ELV_MAX_TYPES) {
		log_warn("%s: too many schedulers (at most %d)", origin,
			 ELV_MAX_TYPES);
		ret = -ENOSPC;
		goto out;
	}
	elv_types[elv_nr_types++] = type;
	log_debug("registered scheduler %s from %s", type->name, origin);
out:
	pthread_mutex_unlock(&elv_lock);
	return ret;
}

void elv_unregister_all(void)
{
	pthread_mutex_lock(&elv_lock);
	elv_nr_types = 0;
	pthread_mutex_unlock(&elv_lock);
}

const struct elevator_type *elv_find(const char *name)
{
	const struct elevator_type *type = NULL;

	pthread_mutex_lock(&elv_lock);
	for (unsigned i = 0; i < elv_nr_types && type == NULL; i++)
		if (strcmp(elv_types[i]->name, name) == 0)
			type = elv_types[i];
	pthread_mutex_unlock(&elv_lock);
	return type;
}

const struct elevator_type *elv_nth(unsigned i)
{
	const struct elevator_type *type = NULL;

	pthread_mutex_lock(&elv_lock);
	if (i < elv_nr_types)
		type = elv_types[i];
	pthread_mutex_unlock(&elv_lock);
	return type;
}

const struct elevator_type *elv_get(const char *name)
{
	const struct elevator_type *type = elv_find(name);

	if (type == NULL && module_load(name) == 0)
		type = elv_find(name);
	return type;
}

int elv_list_names(char *buf, size_t size, const char *active)
{
	size_t len = 0;
	int n;

	pthread_mutex_lock(&elv_lock);
	for (unsigned i = 0; i < elv_nr_types; i++) {
		const char *name = elv_types[i]->name;
		bool on = active != NULL && strcmp(name, active) == 0;

		n = snprintf(buf + len, size - len, on ? "%s[%s]" : "%s%s",
			     i > 0 ? " " : "", name);
		if (n < 0 || (size_t)n >= size - len) {
			pthread_mutex_unlock(&elv_lock);
			return -ENOSPC;
		}
		len += (size_t)n;
	}
	pthread_mutex_unlock(&elv_lock);
	if (len + 2 > size)
		return -ENOSPC;
	buf[len++] = '\n';
	buf[len] = '\0';
	return (int)len;
}

void elv_available(char *buf, size_t size)
{
	if (elv_list_names(buf, size, NULL) < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The listing of elv_show, as the module directory's names come. */
struct elv_show_list {
	char *buf;
	size_t size, len;
	unsigned nr;		/* names listed */
	int err;
};

static void elv_show_file(const char *name, void *arg)
{
	struct elv_show_list *l = arg;
	int n;

	/* Listed already; or more than the registry could ever load. */
	if (l->err != 0 || elv_find(name) != NULL || l->nr >= ELV_MAX_TYPES)
		return;
	n = snprintf(l->buf + l->len, l->size - l->len, " %s", name);
	if (n < 0 || (size_t)n >= l->size - l->len) {
		l->err = -ENOSPC;
		return;
	}
	l->len += (size_t)n;
	l->nr++;
}

/*
 * As the kernel lists its registered elevators, and what a switch would
 * find now: a module installed since is listed (a write of its name loads
 * it); a module once loaded stays, even if its file is removed, because
 * it stays loaded and a switch to it still works.
 */
int elv_show(struct queue *q, char *buf, size_t size)
{
	struct elv_show_list l = { .buf = buf, .size = size };
	int n = elv_list_names(buf, size, queue_elevator_type(q)->name);

	if (n < 0)
		return n;
	l.len = (size_t)n - 1;	/* before its newline */
	pthread_mutex_lock(&elv_lock);
	l.nr = elv_nr_types;
	pthread_mutex_unlock(&elv_lock);
	module_foreach_file(elv_show_file, &l);
	if (l.err != 0 || l.len + 2 > size)
		return -ENOSPC;
	buf[l.len++] = '\n';
	buf[l.len] = '\0';
	return (int)l.len;
}

int elv_store(struct queue *q, const char *buf, size_t len, char *why,
	      size_t size)
{
	const struct elevator_type *type;
	char name[ELV_NAME_MAX + 1];

	if (!elv_name_valid(buf, len)) {
		snprintf(why, size, "not a scheduler name ([a-z0-9_-], at most "
			 "%d)", ELV_NAME_MAX);
		return -EINVAL;
	}
	memcpy(name, buf, len);
	name[len] = '\0';
	type = elv_get(name);
	if (type == NULL) {
		snprintf(why, size, "no such scheduler");
		return -EINVAL;
	}
	/* It logs why a switch failed. */
	return elv_switch(q, type);
}

int elv_switch(struct queue *q, const struct elevator_type *type)
{
	struct elevator_queue *new, *old;
	uint64_t drain_ns;
	int err = 0;

	pthread_mutex_lock(&elv_switch_lock);
	old = NULL;
	if (queue_elevator_type(q) == type)
		goto out;	/* the active one: nothing to do */
	new = queue_alloc_elevator(q, type, &err);
	if (new == NULL) {
		log_err("cannot switch to %s: %s; keeping %s", type->name,
			strerror(-err), queue_elevator_type(q)->name);
		goto out;
	}
	drain_ns = queue_freeze(q);
	old = queue_swap_elevator(q, new);
	queue_unfreeze(q);
	log_info("scheduler switched from %s to %s (drained in %.3f ms)",
		 old->type->name, type->name, (double)drain_ns / 1e6);
	elv_release(old);
out:
	pthread_mutex_unlock(&elv_switch_lock);
	return err;
}

/* ------------------------------------------------------------------ */
/* Tunables: one table per type, values per instance.                  */

/*
 * Values that replace a type's built-in defaults when an instance is
 * made (from the configuration file); protected by elv_lock.
 */
static struct elv_tunable_value *elv_overrides;

const struct elv_tunable *elv_tunable_find(const struct elevator_type *type,
					   const char *name)
{
	const struct elv_tunable *t;

	for (t = type->tunables; t != NULL && t->name != NULL; t++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

static int64_t *elv_tunable_slot(struct elevator_queue *eq,
				 const struct elv_tunable *t)
{
	return (int64_t *)(void *)((char *)eq->elevator_data + t->offset);
}

int elv_tunable_get(struct elevator_queue *eq, const char *name,
		    int64_t *value)
{
	const struct elv_tunable *t = elv_tunable_find(eq->type, name);

	if (t == NULL)
		return -ENOENT;
	*value = t->show != NULL ? t->show(eq) : *elv_tunable_slot(eq, t);
	return 0;
}

/* Whether value may be set in t: 0, -ENOENT, -EACCES or -ERANGE. */
static int elv_tunable_settable(const struct elv_tunable *t, int64_t value)
{
	if (t == NULL)
		return -ENOENT;
	if (t->flags & ELV_TUNABLE_READONLY)
		return -EACCES;
	if (value < t->min || value > t->max)
		return -ERANGE;
	return 0;
}

int elv_tunable_set(struct elevator_queue *eq, const char *name,
		    int64_t value)
{
	const struct elv_tunable *t = elv_tunable_find(eq->type, name);
	int ret = elv_tunable_settable(t, value);

	if (ret != 0)
		return ret == -ERANGE ? -EINVAL : ret;
	if (t->store == NULL) {
		*elv_tunable_slot(eq, t) = value;
		return 0;
	}
	ret = t->store(eq, value);
	return ret > 0 ? -EINVAL : ret;
}

int elv_tunable_value_put(struct elv_tunable_value **list,
			  const struct elevator_type *type,
			  const struct elv_tunable *t, int64_t value)
{
	struct elv_tunable_value *v;

	for (v = *list; v != NULL; v = v->next)
		if (v->t == t)
			break;
	if (v == NULL) {
		v = calloc(1, sizeof *v);
		if (v == NULL)
			return -ENOMEM;
		v->type = type;
		v->t = t;
		v->next = *list;
		*list = v;
	}
	v->value = value;
	return 0;
}

void elv_tunable_values_free(struct elv_tunable_value *list)
{
	struct elv_tunable_value *next;

	for (; list != NULL; list = next) {
		next = list->next;
		free(list);
	}
}

int elv_tunable_default_set(const struct elevator_type *type,
			    const char *name, int64_t value)
{
	const struct elv_tunable *t = elv_tunable_find(type, name);
	int ret = elv_tunable_settable(t, value);

	if (ret != 0)
		return ret;
	pthread_mutex_lock(&elv_lock);
	ret = elv_tunable_value_put(&elv_overrides, type, t, value);
	pthread_mutex_unlock(&elv_lock);
	return ret;
}

void elv_tunable_defaults_clear(void)
{
	pthread_mutex_lock(&elv_lock);
	elv_tunable_values_free(elv_overrides);
	elv_overrides = NULL;
	pthread_mutex_unlock(&elv_lock);
}

/* Built-in defaults, then the configuration's. */
static void elv_tunables_init(struct elevator_queue *eq)
{
	const struct elv_tunable *t;
	const struct elv_tunable_value *o;

	for (t = eq->type->tunables; t != NULL && t->name != NULL; t++)
		if (elv_tunable_has_field(t))
			*elv_tunable_slot(eq, t) = t->def;
	pthread_mutex_lock(&elv_lock);
	for (o = elv_overrides; o != NULL; o = o->next)
		if (o->type == eq->type)
			*elv_tunable_slot(eq, o->t) = o->value;
	pthread_mutex_unlock(&elv_lock);
}

struct elevator_queue *elv_alloc(const struct elevator_type *type,
				 const struct elevator_host *host,
				 void *host_data, int *err)
{
	struct elevator_queue *eq;
	int ret;

	eq = calloc(1, sizeof *eq);
	if (eq == NULL)
		goto nomem;
	/* At least one byte, so that elevator_data is never NULL. */
	eq->elevator_data = calloc(1, type->data_size ? type->data_size : 1);
	if (eq->elevator_data == NULL)
		goto nomem_eq;
	eq->type = type;
	eq->host = host;
	eq->host_data = host_data;
	elv_tunables_init(eq);
	if (type->init_queue != NULL) {
		ret = type->init_queue(eq);
		if (ret != 0) {
			*err = ret < 0 ? ret : -EINVAL;
			log_err("scheduler %s failed to initialise: %s",
				type->name, strerror(-*err));
			free(eq->elevator_data);
			free(eq);
			return NULL;
		}
	}
	*err = 0;
	return eq;

nomem_eq:
	free(eq);
nomem:
	*err = -ENOMEM;
	return NULL;
}

void elv_release(struct elevator_queue *eq)
{
	if (eq->type->exit_queue != NULL)
		eq->type->exit_queue(eq);
	free(eq->elevator_data);
	free(eq);
}
