/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scheduler modules: NAME.so files in the module directory, each exporting
 * one function, IOSCHED_ELEVATOR_SYMBOL, that returns its struct
 * elevator_type.  A module is checked before it is registered: the ABI
 * version must be ours (a module of ABI 2, whose structure nested its
 * hooks, is refused with both versions named), the structure at least as
 * large as ABI 3.0's, the required hooks present, the name well formed and
 * equal to the file's, and the tunable table consistent.  Before that, the
 * file, its directory and every directory above it must be safe to run
 * code from (module_trusted), checked through the very descriptors the
 * module is then loaded from (module_dir_open, module_do_load).  A refused
 * module is closed again and leaves one log line naming the file and the
 * reason.
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
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse-iosched.h"

/* The size of struct elevator_type in ABI 3.0: up to exit_process. */
#define MODULE_TYPE_MIN_SIZE \
	(offsetof(struct elevator_type, exit_process) + \
	 sizeof(((struct elevator_type *)0)->exit_process))

struct module {
	LIST_ENTRY(module) link;	/* module_list */
	void *handle;
	int fd;			/* the file, open while loaded: module_close */
	char *path;		/* also the registry's origin string */
	struct elevator_type type;	/* what is registered: see above */
};

/* Serializes loading; protects module_dir and module_list. */
static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Files the loader refused for what they hold (not a module, another ABI,
 * a bad table): the scheduler list leaves them out, as a switch to one
 * would fail, until the file changes.  The newest few; module_lock.
 */
#define MODULE_REFUSED_MAX 16
static struct module_refused {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
} module_refused[MODULE_REFUSED_MAX];
static unsigned module_nr_refused;

static bool module_refused_is(const struct module_refused *r,
			      const struct stat *st)
{
	return r->dev == st->st_dev && r->ino == st->st_ino &&
	       r->mtime.tv_sec == st->st_mtim.tv_sec &&
	       r->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* fd's file was refused.  Caller holds module_lock. */
static void do_module_refuse(int fd)
{
	struct module_refused *r;
	struct stat st;

	if (fstat(fd, &st) != 0)
		return;
	r = &module_refused[module_nr_refused++ % MODULE_REFUSED_MAX];
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->mtime = st.st_mtim;
}

/* Was fd's file, as it is now, refused?  Caller holds module_lock. */
static bool do_module_refused(int fd)
{
	struct stat st;
	unsigned i;

	if (fstat(fd, &st) != 0)
		return false;
	for (i = 0; i < module_nr_refused && i < MODULE_REFUSED_MAX; i++)
		if (module_refused_is(&module_refused[i], &st))
			return true;
	return false;
}
static char *module_dir;		/* NULL: MODULE_DIR */
static LIST_HEAD(, module) module_list = LIST_HEAD_INITIALIZER(module_list);

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
 * writable by its group or by others.  A sticky directory above the module
 * directory (/tmp) may be writable by others (sticky_ok): there only an
 * entry's owner can rename or remove it, and the entry below is checked in
 * turn to be root's or ours.  why is completed by the caller ("X is ...").
 */
static bool module_trusted(const struct stat *st, bool sticky_ok, char *why,
			   size_t size)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(why, size, "owned by uid %u, neither root nor the "
			 "daemon's user", (unsigned)st->st_uid);
		return false;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(sticky_ok && (st->st_mode & S_ISVTX))) {
		snprintf(why, size, "writable by %s (mode %03o)",
			 st->st_mode & S_IWOTH ? "others" : "its group",
			 (unsigned)(st->st_mode & 07777));
		return false;
	}
	return true;
}

/*
 * Open the module directory to load from, or refuse it (logged unless
 * quiet, but for a missing one); returns a descriptor (O_RDONLY, for
 * scandirat) or -errno.  Checking names and
 * then loading names let a user who owned a directory above module_dir
 * swap it in between; so, as ssh checks the directories above a user's
 * keys, every directory from / down is checked, and through the
 * descriptor that is used: each is opened relative to the one above with
 * O_NOFOLLOW and fstat'ed, and the modules are opened relative to the
 * last.  The path is made canonical first, so that a module_dir reached
 * through a symbolic link is checked where it lies; a link that appears
 * after that fails the walk.
 */
static int module_dir_open(bool quiet)
{
	const char *dir = module_get_dir();
	char *real, *p, *slash, why[128];
	size_t shown = 1;	/* the part of real checked so far */
	struct stat st;
	int fd, next, error = 0;
	bool last;

	real = realpath(dir, NULL);
	if (real == NULL) {
		error = errno;
		/* A missing one: the caller says what that means, once. */
		log_msg(error != ENOENT && !quiet ? LOG_WARNING : LOG_DEBUG,
			"module directory %s: %s", dir, strerror(error));
		return -error;
	}
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		error = errno;
	for (p = real + 1;; p = slash != NULL ? slash + 1 : p + strlen(p)) {
		if (error == 0 && fstat(fd, &st) == -1)
			error = errno;
		if (error != 0) {
			if (!quiet)
				log_err("module directory %s: %.*s: %s", dir,
					(int)shown, real, strerror(error));
			break;
		}
		last = *p == '\0';
		if (!module_trusted(&st, !last, why, sizeof why)) {
			if (!quiet)
				log_err("module directory %s: refused: %.*s "
					"is %s", dir, (int)shown, real, why);
			error = EPERM;
			break;
		}
		if (last)
			break;
		slash = strchr(p, '/');
		if (slash != NULL)
			*slash = '\0';
		next = openat(fd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW |
			      O_CLOEXEC);
		error = next == -1 ? errno : 0;
		shown = (size_t)(p - real) + strlen(p);
		if (slash != NULL)
			*slash = '/';
		close(fd);
		fd = next;
	}
	if (error == 0) {
		next = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (next == -1) {
			error = errno;
			if (!quiet)
				log_err("module directory %s: %s", dir,
					strerror(error));
		}
	}
	if (fd != -1)
		close(fd);
	free(real);
	return error != 0 ? -error : next;
}

/*
 * dlclose a module and close its descriptor.  The dynamic loader knows an
 * object by the name it was opened by, /proc/self/fd/N, and hands it back
 * to any later dlopen of that name: while the object stays loaded (dlclose
 * keeps an object with unique symbols, C++'s, for good), N stays open, so
 * that it names no other module.
 */
static void module_close(void *handle, int fd)
{
	char proc[32];

	dlclose(handle);
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	handle = dlopen(proc, RTLD_LAZY | RTLD_NOLOAD);
	if (handle != NULL) {
		dlclose(handle);
		return;
	}
	close(fd);
}

/*
 * Open file, a module in the directory dirfd (from module_dir_open),
 * without following a link, and check it through the descriptor; the
 * descriptor, or -errno, and why filled when it is refused (-EPERM).
 */
static int module_file_open(int dirfd, const char *file, char *why,
			    size_t size)
{
	struct stat st;
	int fd, error;

	why[0] = '\0';
	fd = openat(dirfd, file, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1) {
		error = errno;
		if (fd != -1)
			close(fd);
		return -error;
	}
	if (!S_ISREG(st.st_mode))
		snprintf(why, size, "%s", S_ISLNK(st.st_mode) ?
			 "a symbolic link" : "not a regular file");
	if (!S_ISREG(st.st_mode) || !module_trusted(&st, false, why, size)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/*
 * Load and register name.so from the module directory dirfd (from
 * module_dir_open); the caller holds module_lock.  The file is opened
 * without following a link, checked through its descriptor and loaded
 * through that descriptor: what runs is what was checked.
 */
static int module_do_load(int dirfd, const char *name)
{
	char path[PATH_MAX], file[NAME_MAX + 1], proc[32], why[256];
	struct module *m;
	module_entry_fn entry;
	const struct elevator_type *type;
	void *handle;
	int fd, error;

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
	snprintf(file, sizeof file, "%s.so", name);
	fd = module_file_open(dirfd, file, why, sizeof why);
	if (fd < 0 && why[0] != '\0') {
		log_err("module %s: refused: %s", path, why);
		return fd;
	}
	if (fd < 0) {
		error = -fd;
		/* A missing one: the caller says what that means, once. */
		log_msg(error == ENOENT ? LOG_DEBUG : LOG_WARNING,
			"module %s: %s", path, strerror(error));
		return -error;
	}

	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	/* Resolve everything now: a missing symbol must fail here. */
	handle = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL) {
		log_err("module %s: cannot load: %s", path, dlerror());
		do_module_refuse(fd);
		close(fd);
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
	m->fd = fd;
	LIST_INSERT_HEAD(&module_list, m, link);
	log_debug("module %s: scheduler %s loaded", path, name);
	return 0;

fail:
	do_module_refuse(fd);
	module_close(handle, fd);
	return error;
}

int module_load(const char *name)
{
	int dirfd, error;

	pthread_mutex_lock(&module_lock);
	dirfd = module_dir_open(false);
	error = dirfd < 0 ? dirfd : module_do_load(dirfd, name);
	if (dirfd >= 0)
		close(dirfd);
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
 * may load (a valid name, the directory and the file trusted), in name
 * order, as module_load_all reads them.  Quiet: any reader of
 * .control/scheduler comes here, and a refused directory or module is
 * logged where it is loaded from.
 */
void module_foreach_file(void (*fn)(const char *name, void *arg), void *arg)
{
	struct dirent **names;
	char name[NAME_MAX + 1], why[128];
	int dirfd, fd, i, n = -1;

	pthread_mutex_lock(&module_lock);
	dirfd = module_dir_open(true);
	if (dirfd >= 0)
		n = scandirat(dirfd, ".", &names, module_filter, alphasort);
	for (i = 0; i < n; i++) {
		fd = module_file_open(dirfd, names[i]->d_name, why, sizeof why);
		if (fd >= 0 && !do_module_refused(fd)) {
			close(fd);
			continue;
		}
		if (fd >= 0)
			close(fd);
		free(names[i]);
		names[i] = NULL;
	}
	if (dirfd >= 0)
		close(dirfd);
	pthread_mutex_unlock(&module_lock);
	for (i = 0; i < n; i++) {
		size_t len;

		if (names[i] == NULL)
			continue;
		len = strlen(names[i]->d_name) - 3;
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
	int dirfd, i, n;

	pthread_mutex_lock(&module_lock);
	dirfd = module_dir_open(false);
	if (dirfd < 0) {
		if (dirfd == -ENOENT)
			log_warn("module directory %s: %s", module_get_dir(),
				 strerror(ENOENT));
		pthread_mutex_unlock(&module_lock);
		return;
	}
	n = scandirat(dirfd, ".", &names, module_filter, alphasort);
	if (n < 0) {
		log_warn("module directory %s: %s", module_get_dir(),
			 strerror(errno));
		close(dirfd);
		pthread_mutex_unlock(&module_lock);
		return;
	}
	for (i = 0; i < n; i++) {
		len = strlen(names[i]->d_name) - 3;
		memcpy(name, names[i]->d_name, len);
		name[len] = '\0';
		module_do_load(dirfd, name);
		free(names[i]);
	}
	free(names);
	close(dirfd);
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
	while ((m = LIST_FIRST(&module_list)) != NULL) {
		LIST_REMOVE(m, link);
		module_close(m->handle, m->fd);
		free(m->path);
		free(m);
	}
	pthread_mutex_unlock(&module_lock);
}
