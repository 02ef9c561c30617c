/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scheduler modules: NAME.so files in the module directory, each exporting
 * one function, IOSCHED_ELEVATOR_SYMBOL, that returns its struct
 * elevator_type.  A module is checked before it is registered: the ABI
 * version must be ours (a module of ABI 2, whose structure nested its
 * hooks, is refused with both versions named), the structure at least as
 * large as ABI 3.0's, the required hooks present, the name well formed and
 * equal to the file's, and the tunable table consistent.  Before that, the
 * file and its directory must be safe to run code from (module_trusted).
 * A refused module is closed again and leaves one log line naming the file
 * and the reason.
 *
 * The registry holds a copy of the module's structure: the first
 * struct_size bytes we know, the rest zeroed (nbdkit's policy), so that a
 * module built against an older 3.x header, whose structure ends earlier,
 * has the newer optional hooks absent, and one built against a newer
 * header has only the part this daemon understands read.
 *
 * Loaded modules stay open until module_unload_all, since the registry
 * points into them; nothing is unloaded while the daemon runs.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse-iosched.h"

/* The size of struct elevator_type in ABI 3.0: up to exit_process. */
#define MODULE_TYPE_MIN_SIZE \
	(offsetof(struct elevator_type, exit_process) + \
	 sizeof(((struct elevator_type *)0)->exit_process))

struct module {
	struct module *next;
	void *handle;
	char *path;		/* also the registry's origin string */
	struct elevator_type type;	/* what is registered: see above */
};

/* Serializes loading; protects module_dir and module_list. */
static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;
static char *module_dir;		/* NULL: MODULE_DIR */
static struct module *module_list;

typedef const struct elevator_type *(*module_entry_fn)(void);

void module_set_dir(const char *dir)
{
	char *copy = NULL;

	if (dir != NULL && *dir != '\0') {
		copy = strdup(dir);
		if (copy == NULL) {
			log_err("module directory %s: out of memory", dir);
			return;
		}
	}
	pthread_mutex_lock(&module_lock);
	free(module_dir);
	module_dir = copy;
	pthread_mutex_unlock(&module_lock);
}

static const char *module_get_dir(void)
{
	return module_dir != NULL ? module_dir : MODULE_DIR;
}

/* elv_name_valid for a C string. */
static bool module_name_ok(const char *name)
{
	return elv_name_valid(name, strnlen(name, ELV_NAME_MAX + 1));
}

/* Check a tunable table; on failure fill why and return false. */
static bool module_tunables_ok(const struct elevator_type *type, char *why,
			       size_t size)
{
	const struct elv_tunable *t;

	if (type->tunables == NULL)
		return true;
	for (t = type->tunables; t->name != NULL; t++) {
		if (t - type->tunables == IOSCHED_TUNABLES_MAX) {
			snprintf(why, size, "more than %d tunables",
				 IOSCHED_TUNABLES_MAX);
			return false;
		}
		if (t->min > t->max) {
			snprintf(why, size, "tunable %s has min %lld > max %lld",
				 t->name, (long long)t->min, (long long)t->max);
			return false;
		}
		if (t->def < t->min || t->def > t->max) {
			snprintf(why, size,
				 "tunable %s default %lld is outside [%lld, %lld]",
				 t->name, (long long)t->def,
				 (long long)t->min, (long long)t->max);
			return false;
		}
		/* The host writes an int64_t there: it must be in the data. */
		if (elv_tunable_has_field(t) &&
		    (t->offset > type->data_size ||
		     type->data_size - t->offset < sizeof(int64_t))) {
			snprintf(why, size,
				 "tunable %s lies outside the %zu bytes of data",
				 t->name, type->data_size);
			return false;
		}
	}
	return true;
}

/* Check a counter table, as module_tunables_ok does tunables. */
static bool module_counters_ok(const struct elevator_type *type, char *why,
			       size_t size)
{
	const struct elv_counter *c;

	if (type->counters == NULL)
		return true;
	for (c = type->counters; c->name != NULL; c++) {
		if (c - type->counters == IOSCHED_COUNTERS_MAX) {
			snprintf(why, size, "more than %d counters",
				 IOSCHED_COUNTERS_MAX);
			return false;
		}
		/* Counter names become words of .control/stats and label
		 * values of the metrics: no spaces, quotes or newlines. */
		if (!module_name_ok(c->name)) {
			snprintf(why, size, "bad counter name \"%.40s\" "
				 "(want [a-z0-9_-]{1,%d})", c->name,
				 ELV_NAME_MAX);
			return false;
		}
		if (c->offset > type->data_size ||
		    type->data_size - c->offset < sizeof(uint64_t)) {
			snprintf(why, size,
				 "counter %s lies outside the %zu bytes of data",
				 c->name, type->data_size);
			return false;
		}
	}
	return true;
}

/* Everything checked before registering; fills why and returns -errno. */
static int module_check(const struct elevator_type *type, const char *name,
			char *why, size_t size)
{
	if (type == NULL) {
		snprintf(why, size, "%s() returned NULL",
			 IOSCHED_ELEVATOR_SYMBOL);
		return -ENOEXEC;
	}
	if (type->abi_version != IOSCHED_ABI_VERSION) {
		snprintf(why, size, "built for ABI version %u, this daemon "
			 "needs %u: rebuild it against this version's "
			 "<fuse-iosched/elevator.h>",
			 type->abi_version, IOSCHED_ABI_VERSION);
		return -ENOEXEC;
	}
	if (type->struct_size < MODULE_TYPE_MIN_SIZE) {
		snprintf(why, size, "struct elevator_type of %zu bytes, "
			 "expected at least %zu", type->struct_size,
			 (size_t)MODULE_TYPE_MIN_SIZE);
		return -ENOEXEC;
	}
	if (type->add_request == NULL || type->dispatch == NULL ||
	    type->has_work == NULL) {
		snprintf(why, size, "a required hook is missing "
			 "(add_request, dispatch and has_work are required)");
		return -EINVAL;
	}
	if (type->name == NULL || !module_name_ok(type->name)) {
		snprintf(why, size, "bad scheduler name (want [a-z0-9_-]{1,%d})",
			 ELV_NAME_MAX);
		return -EINVAL;
	}
	if (strcmp(type->name, name) != 0) {
		snprintf(why, size, "scheduler is named \"%s\", not \"%s\"",
			 type->name, name);
		return -EINVAL;
	}
	if (!module_tunables_ok(type, why, size) ||
	    !module_counters_ok(type, why, size))
		return -EINVAL;
	return 0;
}

/*
 * A module is code run with the daemon's rights, often root's.  As sudo
 * does for its plugins, refuse a module file or directory that anyone but
 * root or the daemon's user could have changed: owned by another user, or
 * writable by its group or by others.  (A symlink is judged by its
 * target; the link itself can only change with its directory.)
 */
static bool module_trusted(const char *path, char *why, size_t size)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		snprintf(why, size, "%s", strerror(errno));
		return false;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, size, "owned by uid %u, neither root nor the "
			 "daemon's user", (unsigned)st.st_uid);
		return false;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, size, "writable by %s (mode %03o)",
			 st.st_mode & S_IWOTH ? "others" : "its group",
			 (unsigned)(st.st_mode & 07777));
		return false;
	}
	return true;
}

/* Whether modules may be loaded from the module directory (logged). */
static bool module_dir_trusted(void)
{
	char why[128];
	struct stat st;

	/* A missing directory is reported where it is read. */
	if (stat(module_get_dir(), &st) != 0 ||
	    module_trusted(module_get_dir(), why, sizeof why))
		return true;
	log_err("module directory %s: refused: %s", module_get_dir(), why);
	return false;
}

/* Load and register dir/name.so; the caller holds module_lock and has
 * checked the directory. */
static int module_do_load(const char *name)
{
	char path[PATH_MAX], why[256];
	struct module *m;
	struct stat st;
	module_entry_fn entry;
	const struct elevator_type *type;
	void *handle;
	int error;

	if (!module_name_ok(name)) {
		char shown[LOG_VALUE_SIZE];

		log_warn("scheduler name \"%s\" is not valid "
			 "(want [a-z0-9_-]{1,%d})",
			 log_value(shown, sizeof shown, name, strlen(name)),
			 ELV_NAME_MAX);
		return -EINVAL;
	}
	if ((size_t)snprintf(path, sizeof path, "%s/%s.so", module_get_dir(),
			     name) >= sizeof path) {
		log_warn("module %s/%s.so: path too long", module_get_dir(),
			 name);
		return -ENAMETOOLONG;
	}
	if (stat(path, &st) != 0) {
		error = errno;
		/* A missing one: the caller says what that means, once. */
		log_msg(error == ENOENT ? LOG_DEBUG : LOG_WARNING,
			"module %s: %s", path, strerror(error));
		return -error;
	}
	if (!module_trusted(path, why, sizeof why)) {
		log_err("module %s: refused: %s", path, why);
		return -EPERM;
	}

	/* Resolve everything now: a missing symbol must fail here. */
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL) {
		log_err("module %s: cannot load: %s", path, dlerror());
		return -ENOEXEC;
	}
	entry = (module_entry_fn)dlsym(handle, IOSCHED_ELEVATOR_SYMBOL);
	if (entry == NULL) {
		log_err("module %s: no %s symbol: not a scheduler module",
			path, IOSCHED_ELEVATOR_SYMBOL);
		error = -ENOEXEC;
		goto fail;
	}
	m = calloc(1, sizeof *m);
	if (m == NULL || (m->path = strdup(path)) == NULL) {
		free(m);
		log_err("module %s: out of memory", path);
		error = -ENOMEM;
		goto fail;
	}
	type = entry();
	/* Version and size first: they say how much of *type there is. */
	if (type != NULL && type->abi_version == IOSCHED_ABI_VERSION &&
	    type->struct_size >= MODULE_TYPE_MIN_SIZE) {
		memcpy(&m->type, type, type->struct_size < sizeof m->type ?
		       type->struct_size : sizeof m->type);
		/* The copy is of our size: what we do not know is NULL. */
		m->type.struct_size = sizeof m->type;
		type = &m->type;
	}
	error = module_check(type, name, why, sizeof why);
	if (error != 0) {
		log_err("module %s: refused: %s", path, why);
		free(m->path);
		free(m);
		goto fail;
	}
	/* elv_register says why it refuses (a duplicate name, a full table). */
	error = elv_register(type, m->path);
	if (error != 0) {
		free(m->path);
		free(m);
		goto fail;
	}
	m->handle = handle;
	m->next = module_list;
	module_list = m;
	log_debug("module %s: scheduler %s loaded", path, name);
	return 0;

fail:
	dlclose(handle);
	return error;
}

int module_load(const char *name)
{
	int error;

	pthread_mutex_lock(&module_lock);
	error = module_dir_trusted() ? module_do_load(name) : -EPERM;
	pthread_mutex_unlock(&module_lock);
	return error;
}

static int module_filter(const struct dirent *d)
{
	size_t len = strlen(d->d_name);

	return len > 3 && strcmp(d->d_name + len - 3, ".so") == 0;
}

/*
 * Call fn for the name of every NAME.so of the directory that a switch
 * may load (a valid name, the directory trusted), in name order, as
 * module_load_all reads them.  Quiet: any reader of .control/scheduler
 * comes here, and a refused directory is logged where it is loaded from.
 */
void module_foreach_file(void (*fn)(const char *name, void *arg), void *arg)
{
	struct dirent **names;
	char name[NAME_MAX + 1], why[128];
	int i, n = -1;

	pthread_mutex_lock(&module_lock);
	if (module_trusted(module_get_dir(), why, sizeof why))
		n = scandir(module_get_dir(), &names, module_filter, alphasort);
	pthread_mutex_unlock(&module_lock);
	for (i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name) - 3;

		memcpy(name, names[i]->d_name, len);
		name[len] = '\0';
		if (module_name_ok(name))
			fn(name, arg);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

/*
 * Register every NAME.so of the directory, in name order so that the
 * scheduler list reads the same on every start.  A module that fails is
 * logged (by module_do_load) and skipped.
 */
void module_load_all(void)
{
	struct dirent **names;
	char name[NAME_MAX + 1];
	size_t len;
	int i, n;

	pthread_mutex_lock(&module_lock);
	if (!module_dir_trusted()) {
		pthread_mutex_unlock(&module_lock);
		return;
	}
	n = scandir(module_get_dir(), &names, module_filter, alphasort);
	if (n < 0) {
		log_warn("module directory %s: %s", module_get_dir(),
			 strerror(errno));
		pthread_mutex_unlock(&module_lock);
		return;
	}
	for (i = 0; i < n; i++) {
		len = strlen(names[i]->d_name) - 3;
		memcpy(name, names[i]->d_name, len);
		name[len] = '\0';
		module_do_load(name);
		free(names[i]);
	}
	free(names);
	pthread_mutex_unlock(&module_lock);
}

/*
 * Forget every scheduler, then close the modules: the registry must not
 * point into an unmapped module, not even for a moment.
 */
void module_unload_all(void)
{
	struct module *m;

	pthread_mutex_lock(&module_lock);
	elv_unregister_all();
	while ((m = module_list) != NULL) {
		module_list = m->next;
		dlclose(m->handle);
		free(m->path);
		free(m);
	}
	pthread_mutex_unlock(&module_lock);
}
