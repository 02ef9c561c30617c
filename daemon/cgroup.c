/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whose group: the control group of each request's caller, its limits
 * for the backing disk and its weight, as the kernel would apply them to
 * the caller's own I/O on that disk.
 *
 * A request's pid gives its group: /proc/PID/cgroup's line of the
 * hierarchy that has the I/O controller, the v1 line naming blkio when
 * the kernel mounts blkio as a v1 hierarchy (the controller is bound to
 * one hierarchy only, and a v1 mount takes it from v2), else the v2 line
 * ("0::/path").  Requests on nobody's behalf (pid 0: writeback under
 * writeback_cache) are the root group's, as the kernel charges writeback
 * to the root without cgroup writeback.
 *
 * Group paths are interned in a table of at most CGROUP_MAX groups, each
 * with an id that the requests carry (struct elv_request's cgroup): the
 * root group is 0, and others are their slot and a generation, so that an
 * id never names another group.  When the table is full the group used
 * least recently is forgotten (its id then names nothing: cgroup_path
 * says -ENOENT) and its requests find it again under a new id.  Each pid's
 * group is cached in CGROUP_PIDS slots (a pid's slot is pid modulo their
 * number) for CGROUP_REREAD_NS from the read of its /proc file, or until
 * cgroup_forget_pid.  Each session thread also keeps its last answer
 * (struct pidmemo: a request from the pid of the one before it takes no
 * lock) for as long as the slot would hold it: until CGROUP_REREAD_NS
 * after that same read, and no longer once any pid is forgotten or any
 * group is forgotten (the generation cgroup_gen).  So a process moved to
 * another group is charged to it from its first request CGROUP_REREAD_NS
 * after its file was last read (the clock is the coarse one: a tick
 * more), and a pid used again after its process exited is read afresh
 * once procwatch.c has told of the exit, within CGROUP_REREAD_NS if it
 * is not watched, as before the memo.  A group's last use, which picks
 * the one forgotten, is then as old as CGROUP_REREAD_NS at most.
 *
 * Limits come from the group's files for the backing disk (its MAJ:MIN;
 * a partition's disk, where the kernel keeps them): io.max on v2,
 * blkio.throttle.{read,write}_{bps,iops}_device on v1, and from the
 * configuration's group sections, for the group and each ancestor: the
 * lowest applies, as a bio passes every ancestor's limits in the kernel.
 * The weight is the group's own io.bfq.weight or io.weight (v2),
 * blkio.bfq.weight or blkio.weight (v1), whichever exists, else its
 * group section's, else 100.  Both are read when the group is first seen
 * and again at its first request CGROUP_REREAD_NS after the last read,
 * and throttle.c asks parked groups again every THROTTLE_REFRESH_NS: a
 * limit changed on a live group applies within their sum, under 1 s.
 *
 * Everything here is protected by cgroup_lock, a leaf: it is taken under
 * the queue lock (the schedulers' cgroup_path and cgroup_weight), never
 * while reading a file; but each thread's memo is its own, and the
 * generation an atomic.  Times here are clock_coarse_ns()'s.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "daemon.h"

#define CGROUP_HASH 2048		/* path hash buckets; a power of two */
#define CGROUP_PIDS 1024		/* pid -> group cache slots */
#define CGROUP_REREAD_NS 500000000ull	/* pid's group, group's files */
#define CGROUP_FILE_MAX 8192		/* what is read of a group's file */
#define CGROUP_ID_SLOT(id) ((unsigned)((id) & 0xffff))

_Static_assert(CGROUP_MAX <= 0x10000, "a slot fits an id's low 16 bits");

enum cgroup_hier {
	CGROUP_V1,		/* the blkio hierarchy */
	CGROUP_V2,		/* the unified hierarchy */
};

struct cgroup_group {
	struct cgroup_group *hash_next;
	char *path;		/* NULL: a free slot */
	enum cgroup_hier hier;
	uint64_t id;		/* slot, and generation above bit 16 */
	struct throttle_limits lim;
	unsigned weight;
	uint64_t read_ns;	/* limits and weight read then; 0: never */
	uint64_t used_ns;	/* its last request, for eviction */
};

struct cgroup_pid {
	pid_t pid;		/* 0: empty */
	uint64_t id;
	uint64_t read_ns;
};

static pthread_mutex_t cgroup_lock = PTHREAD_MUTEX_INITIALIZER; /* leaf */
static struct cgroup_group cgroup_groups[CGROUP_MAX];	/* cgroup_lock */
static struct cgroup_group *cgroup_hash[CGROUP_HASH];	/* cgroup_lock */
static struct cgroup_pid cgroup_pids[CGROUP_PIDS];	/* cgroup_lock */
static unsigned cgroup_nr;				/* cgroup_lock */
static struct config_group *cgroup_conf;		/* cgroup_lock */
/* Bumped when a pid or a group is forgotten: the threads' memos drop. */
static atomic_uint cgroup_gen;
/* This thread's last answer: its pid's group as read at read_ns. */
static __thread struct {
	struct pidmemo memo;
	uint64_t id;
	uint64_t read_ns;
} cgroup_last;
/* Set by cgroup_init, read-only after. */
static bool cgroup_enabled;
static dev_t cgroup_disk;	/* 0: not on a block device */
static char cgroup_mnt[2][PATH_MAX];	/* per hierarchy; "" unknown */

static unsigned cgroup_hash_of(enum cgroup_hier hier, const char *path)
{
	uint64_t h = 1469598103934665603ull ^ hier;

	for (; *path != '\0'; path++)
		h = (h ^ (unsigned char)*path) * 1099511628211ull;
	return (unsigned)(h >> 32) & (CGROUP_HASH - 1);
}

/* The group of id, or NULL; caller holds cgroup_lock. */
static struct cgroup_group *do_cgroup_find_id(uint64_t id)
{
	struct cgroup_group *g = &cgroup_groups[CGROUP_ID_SLOT(id)];

	if (CGROUP_ID_SLOT(id) >= CGROUP_MAX || g->path == NULL ||
	    g->id != id)
		return NULL;
	return g;
}

static void do_cgroup_unhash(struct cgroup_group *g)
{
	struct cgroup_group **pp = &cgroup_hash[cgroup_hash_of(g->hier,
							      g->path)];

	while (*pp != g)
		pp = &(*pp)->hash_next;
	*pp = g->hash_next;
	free(g->path);
	g->path = NULL;
	cgroup_nr--;
	/* Its id names nothing now: no thread may answer it. */
	pidmemo_bump(&cgroup_gen);
}

/*
 * The id of hier's group path, added if new (evicting the least recently
 * used group when the table is full); 0 (the root group) without memory.
 * Caller holds cgroup_lock.
 */
static uint64_t do_cgroup_intern(enum cgroup_hier hier, const char *path,
				 uint64_t now)
{
	unsigned h = cgroup_hash_of(hier, path), slot = 0;
	struct cgroup_group *g;
	char *copy;

	if (strcmp(path, "/") == 0)
		return 0;
	for (g = cgroup_hash[h]; g != NULL; g = g->hash_next)
		if (g->hier == hier && strcmp(g->path, path) == 0) {
			g->used_ns = now;
			return g->id;
		}
	copy = strdup(path);
	if (copy == NULL)
		return 0;
	for (unsigned i = 1; i < CGROUP_MAX; i++) {
		g = &cgroup_groups[i];
		if (g->path == NULL) {
			slot = i;
			break;
		}
		if (slot == 0 || g->used_ns < cgroup_groups[slot].used_ns)
			slot = i;
	}
	g = &cgroup_groups[slot];
	if (g->path != NULL) {
		log_ratelimited(LOG_WARNING, "control groups: more than %d in "
				"use, the least recently used is forgotten",
				CGROUP_MAX - 1);
		do_cgroup_unhash(g);
	}
	g->path = copy;
	g->hier = hier;
	g->id = ((g->id >> 16) + 1) << 16 | slot;
	memset(&g->lim, 0, sizeof g->lim);
	g->weight = ELV_CGROUP_WEIGHT_DEFAULT;
	g->read_ns = 0;
	g->used_ns = now;
	g->hash_next = cgroup_hash[h];
	cgroup_hash[h] = g;
	cgroup_nr++;
	return g->id;
}

/* Read at most size - 1 bytes of file into buf; the length or -1. */
static ssize_t cgroup_read_file(const char *file, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd == -1)
		return -1;
	while ((size_t)len < size - 1 &&
	       (n = read(fd, buf + len, size - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

/*
 * pid's group, from buf (size bytes, the file's copy): its hierarchy and
 * path.  0, or -1 when the process is gone or the line is unusable.
 */
static int cgroup_parse_pid(pid_t pid, char *buf, size_t bufsize,
			    enum cgroup_hier *hier, char *path, size_t size)
{
	char file[40];
	char *line, *save = NULL, *ctl, *p, *v2 = NULL, *v1 = NULL;
	size_t len;

	snprintf(file, sizeof file, "/proc/%d/cgroup", (int)pid);
	if (cgroup_read_file(file, buf, bufsize) <= 0)
		return -1;
	/* "ID:CONTROLLERS:PATH" per hierarchy; v2's has no controllers. */
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		ctl = strchr(line, ':');
		p = ctl != NULL ? strchr(ctl + 1, ':') : NULL;
		if (p == NULL)
			continue;
		*p++ = '\0';
		ctl++;
		if (strcmp(line, "0") == 0 && *ctl == '\0') {
			v2 = p;
			continue;
		}
		for (char *c = ctl, *s2 = NULL, *tok;
		     (tok = strtok_r(c, ",", &s2)) != NULL; c = NULL)
			if (strcmp(tok, "blkio") == 0)
				v1 = p;
	}
	*hier = v1 != NULL ? CGROUP_V1 : CGROUP_V2;
	p = v1 != NULL ? v1 : v2;
	if (p == NULL || p[0] != '/')
		return -1;
	len = strlen(p);
	if (len >= size) {
		log_ratelimited(LOG_WARNING, "control group of pid %d: a path "
				"of %zu bytes, charged to the root group",
				(int)pid, len);
		return -1;
	}
	memcpy(path, p, len + 1);
	return 0;
}

/*
 * The same, with the file's copy on the heap: this runs on a session
 * thread, beneath libfuse's frames, where a small RLIMIT_STACK leaves
 * little room.
 */
static int cgroup_read_pid(pid_t pid, enum cgroup_hier *hier, char *path,
			   size_t size)
{
	char *buf = malloc(2 * CONFIG_GROUP_PATH_MAX);
	int ret = -1;

	if (buf != NULL)
		ret = cgroup_parse_pid(pid, buf, 2 * CONFIG_GROUP_PATH_MAX,
				       hier, path, size);
	free(buf);
	return ret;
}

/* Lower *cur to v, where v is a limit (0: none). */
static void cgroup_lower(uint64_t *cur, uint64_t v)
{
	if (v != 0 && (*cur == 0 || v < *cur))
		*cur = v;
}

/* The line of our disk in a per-device file, after "MAJ:MIN ", or NULL. */
static char *cgroup_disk_line(char *buf)
{
	char key[32], *save = NULL, *line;
	size_t klen;

	klen = (size_t)snprintf(key, sizeof key, "%u:%u ", major(cgroup_disk),
				minor(cgroup_disk));
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, key, klen) == 0)
			return line + klen;
	return NULL;
}

/* "max" is no limit; a number is one. */
static uint64_t cgroup_value(const char *v)
{
	return strncmp(v, "max", 3) == 0 ? 0 : strtoull(v, NULL, 10);
}

/*
 * What reading a group's files takes, on the heap: it is done on a
 * session thread, beneath libfuse's frames, where a small RLIMIT_STACK
 * leaves little room.
 */
struct cgroup_scratch {
	char path[CONFIG_GROUP_PATH_MAX], dir[PATH_MAX];
	char file[PATH_MAX + 64], buf[CGROUP_FILE_MAX], copy[CGROUP_FILE_MAX];
};

/* The kernel's limits of directory sc->dir for the disk, into lim. */
static void cgroup_read_limits(enum cgroup_hier hier,
			       struct cgroup_scratch *sc,
			       struct throttle_limits *lim)
{
	static const char *const v1[] = {
		"blkio.throttle.read_bps_device",
		"blkio.throttle.write_bps_device",
		"blkio.throttle.read_iops_device",
		"blkio.throttle.write_iops_device",
	};
	static const char *const v2[] = { "rbps=", "wbps=", "riops=",
					  "wiops=" };
	uint64_t *field[] = { &lim->bps[ELV_READ], &lim->bps[ELV_WRITE],
			      &lim->iops[ELV_READ], &lim->iops[ELV_WRITE] };
	char *line, *kv;

	if (cgroup_disk == 0)
		return;
	if (hier == CGROUP_V1) {
		for (size_t i = 0; i < ARRAY_SIZE(v1); i++) {
			snprintf(sc->file, sizeof sc->file, "%s/%s", sc->dir,
				 v1[i]);
			if (cgroup_read_file(sc->file, sc->buf,
					     sizeof sc->buf) <= 0 ||
			    (line = cgroup_disk_line(sc->buf)) == NULL)
				continue;
			cgroup_lower(field[i], cgroup_value(line));
		}
		return;
	}
	snprintf(sc->file, sizeof sc->file, "%s/io.max", sc->dir);
	if (cgroup_read_file(sc->file, sc->buf, sizeof sc->buf) <= 0 ||
	    (line = cgroup_disk_line(sc->buf)) == NULL)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(v2); i++) {
		kv = strstr(line, v2[i]);
		if (kv != NULL)
			cgroup_lower(field[i],
				     cgroup_value(kv + strlen(v2[i])));
	}
}

/*
 * The kernel's weight of directory sc->dir: the disk's own line ("MAJ:MIN
 * N"), else the default ("default N" on v2, "N" on v1); 0 if none.
 */
static unsigned cgroup_read_weight(enum cgroup_hier hier,
				   struct cgroup_scratch *sc)
{
	static const char *const files[2][2] = {
		[CGROUP_V1] = { "blkio.bfq.weight", "blkio.weight" },
		[CGROUP_V2] = { "io.bfq.weight", "io.weight" },
	};
	unsigned long w;
	char *v;

	for (size_t i = 0; i < 2; i++) {
		snprintf(sc->file, sizeof sc->file, "%s/%s", sc->dir,
			 files[hier][i]);
		if (cgroup_read_file(sc->file, sc->buf, sizeof sc->buf) <= 0)
			continue;
		memcpy(sc->copy, sc->buf, sizeof sc->copy);
		v = cgroup_disk_line(sc->copy);
		if (v == NULL)
			v = strncmp(sc->buf, "default ", 8) == 0 ?
			    sc->buf + 8 : sc->buf;
		w = strtoul(v, NULL, 10);
		if (w >= ELV_CGROUP_WEIGHT_MIN && w <= ELV_CGROUP_WEIGHT_MAX)
			return (unsigned)w;
	}
	return 0;
}

/* g's limits and weight were read less than CGROUP_REREAD_NS ago. */
static bool do_cgroup_fresh(const struct cgroup_group *g, uint64_t now)
{
	return g->read_ns != 0 && now - g->read_ns < CGROUP_REREAD_NS;
}

/*
 * Read id's limits and weight (from its files and, under cgroup_lock,
 * its sections), unless another thread read them less than
 * CGROUP_REREAD_NS ago.  Called with no lock held.
 */
static void cgroup_refresh(uint64_t id, uint64_t now)
{
	struct cgroup_scratch *sc = NULL;
	struct throttle_limits lim;
	enum cgroup_hier hier;
	struct cgroup_group *g;
	unsigned weight = 0;
	char *path;
	size_t len;

	pthread_mutex_lock(&cgroup_lock);
	g = do_cgroup_find_id(id);
	/* Nothing allocated unless due: the throttle asks at every request. */
	if (g == NULL || do_cgroup_fresh(g, now) ||
	    (sc = malloc(sizeof *sc)) == NULL) {
		/* Without memory the old values stay, tried again later. */
		pthread_mutex_unlock(&cgroup_lock);
		return;
	}
	path = sc->path;
	/* Others keep the values they have while we read. */
	g->read_ns = now;
	hier = g->hier;
	snprintf(path, sizeof sc->path, "%s", g->path);
	pthread_mutex_unlock(&cgroup_lock);

	memset(&lim, 0, sizeof lim);
	/* The group, then each ancestor up to the root. */
	for (len = strlen(path); cgroup_mnt[hier][0] != '\0';) {
		snprintf(sc->dir, sizeof sc->dir, "%s%.*s", cgroup_mnt[hier],
			 (int)len, path);
		cgroup_read_limits(hier, sc, &lim);
		if (len == strlen(path))
			weight = cgroup_read_weight(hier, sc);
		if (len <= 1)
			break;
		/* "/a/b" -> "/a" -> "/" */
		while (len > 1 && path[len - 1] != '/')
			len--;
		if (len > 1)
			len--;
	}

	pthread_mutex_lock(&cgroup_lock);
	for (const struct config_group *c = cgroup_conf; c != NULL;
	     c = c->next) {
		size_t n = strlen(c->path);

		/* The group itself or an ancestor: "/", or a prefix at a /. */
		if (strcmp(c->path, "/") != 0 &&
		    (strncmp(path, c->path, n) != 0 ||
		     (path[n] != '\0' && path[n] != '/')))
			continue;
		for (int d = 0; d < 2; d++) {
			cgroup_lower(&lim.bps[d], c->lim.bps[d]);
			cgroup_lower(&lim.iops[d], c->lim.iops[d]);
		}
		if (weight == 0 && c->weight != 0 && path[n] == '\0')
			weight = c->weight;
	}
	g = do_cgroup_find_id(id);
	if (g != NULL) {
		g->lim = lim;
		g->weight = weight != 0 ? weight : ELV_CGROUP_WEIGHT_DEFAULT;
	}
	pthread_mutex_unlock(&cgroup_lock);
	free(sc);
}

/* Keep id, pid's group as read at read_ns, as this thread's last answer. */
static uint64_t cgroup_answer(pid_t pid, unsigned gen, uint64_t id,
			      uint64_t read_ns)
{
	pidmemo_set(&cgroup_last.memo, pid, gen);
	cgroup_last.id = id;
	cgroup_last.read_ns = read_ns;
	return id;
}

/*
 * cgroup_of_pid past this thread's memo: pid's slot, else its file.  Not
 * inlined, so that the memo's hit does not pay for the path's room on
 * the stack (the stack protector's check of it).
 */
__attribute__((noinline))
static uint64_t cgroup_lookup_pid(pid_t pid, unsigned gen, uint64_t now)
{
	struct cgroup_pid *c = &cgroup_pids[(unsigned)pid % CGROUP_PIDS];
	char path[CONFIG_GROUP_PATH_MAX];
	enum cgroup_hier hier;
	struct cgroup_group *g = NULL;
	uint64_t id, read_ns;

	pthread_mutex_lock(&cgroup_lock);
	if (c->pid == pid && now - c->read_ns < CGROUP_REREAD_NS &&
	    (c->id == 0 || (g = do_cgroup_find_id(c->id)) != NULL)) {
		id = c->id;
		read_ns = c->read_ns;
		if (id != 0)
			g->used_ns = now;
		pthread_mutex_unlock(&cgroup_lock);
		return cgroup_answer(pid, gen, id, read_ns);
	}
	pthread_mutex_unlock(&cgroup_lock);
	if (cgroup_read_pid(pid, &hier, path, sizeof path) != 0)
		return 0;
	pthread_mutex_lock(&cgroup_lock);
	id = do_cgroup_intern(hier, path, now);
	c->pid = pid;
	c->id = id;
	c->read_ns = now;
	pthread_mutex_unlock(&cgroup_lock);
	cgroup_refresh(id, now);
	return cgroup_answer(pid, gen, id, now);
}

uint64_t cgroup_of_pid(pid_t pid)
{
	unsigned gen;
	uint64_t now;

	if (!cgroup_enabled || pid <= 0)
		return 0;
	gen = pidmemo_gen(&cgroup_gen);
	now = clock_coarse_ns();
	if (pidmemo_hit(&cgroup_last.memo, pid, gen) &&
	    now - cgroup_last.read_ns < CGROUP_REREAD_NS)
		return cgroup_last.id;
	return cgroup_lookup_pid(pid, gen, now);
}

void cgroup_forget_pid(pid_t pid)
{
	struct cgroup_pid *c = &cgroup_pids[(unsigned)pid % CGROUP_PIDS];

	pthread_mutex_lock(&cgroup_lock);
	if (c->pid == pid)
		memset(c, 0, sizeof *c);
	/* A thread's memo may hold pid though its slot went to another. */
	pidmemo_bump(&cgroup_gen);
	pthread_mutex_unlock(&cgroup_lock);
}

int cgroup_path(void *arg, uint64_t id, char *buf, size_t len)
{
	const struct cgroup_group *g;
	const char *path = "/";
	size_t n;
	int ret;

	(void)arg;
	pthread_mutex_lock(&cgroup_lock);
	g = do_cgroup_find_id(id);
	if (g == NULL && id != 0) {
		ret = -ENOENT;
		goto out;
	}
	if (g != NULL)
		path = g->path;
	n = strlen(path);
	if (n >= len) {
		ret = -ERANGE;
		goto out;
	}
	memcpy(buf, path, n + 1);
	ret = (int)n;
out:
	pthread_mutex_unlock(&cgroup_lock);
	return ret;
}

uint32_t cgroup_weight(void *arg, uint64_t id)
{
	const struct cgroup_group *g;
	uint32_t w = ELV_CGROUP_WEIGHT_DEFAULT;

	(void)arg;
	pthread_mutex_lock(&cgroup_lock);
	g = do_cgroup_find_id(id);
	if (g != NULL)
		w = g->weight;
	pthread_mutex_unlock(&cgroup_lock);
	return w;
}

int cgroup_limits(void *arg, uint64_t id, struct throttle_limits *lim)
{
	const struct cgroup_group *g;
	uint64_t now = clock_coarse_ns();
	int ret = -ENOENT;

	(void)arg;
	if (!cgroup_enabled)
		return -ENOENT;
	/* Asked at every request: one hold when the values are fresh. */
	pthread_mutex_lock(&cgroup_lock);
	g = do_cgroup_find_id(id);
	if (g == NULL || !do_cgroup_fresh(g, now)) {
		pthread_mutex_unlock(&cgroup_lock);
		cgroup_refresh(id, now);
		pthread_mutex_lock(&cgroup_lock);
		g = do_cgroup_find_id(id);
	}
	if (g != NULL) {
		*lim = g->lim;
		ret = 0;
	}
	pthread_mutex_unlock(&cgroup_lock);
	return ret;
}

/* A copy of cfg's group sections, in place of the ones we have. */
void cgroup_config(const struct config *cfg)
{
	struct config_group *list = NULL, *old, *g;

	for (const struct config_group *c = cfg->groups_conf; c != NULL;
	     c = c->next) {
		g = calloc(1, sizeof *g);
		if (g == NULL || (g->path = strdup(c->path)) == NULL) {
			free(g);
			log_err("control groups: out of memory for the "
				"configuration's group sections");
			break;
		}
		g->lim = c->lim;
		g->weight = c->weight;
		g->next = list;
		list = g;
	}
	pthread_mutex_lock(&cgroup_lock);
	old = cgroup_conf;
	cgroup_conf = list;
	/* Read again at each group's next request. */
	for (unsigned i = 0; i < CGROUP_MAX; i++)
		cgroup_groups[i].read_ns = 0;
	pthread_mutex_unlock(&cgroup_lock);
	while (old != NULL) {
		g = old;
		old = g->next;
		free(g->path);
		free(g);
	}
}

/* Where the blkio (v1) and unified (v2) hierarchies are mounted. */
static void cgroup_find_mounts(void)
{
	char line[2 * PATH_MAX], *f[12], *sep, *save;
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	unsigned n;

	if (fp == NULL)
		return;
	while (fgets(line, sizeof line, fp) != NULL) {
		/* ID PARENT MAJ:MIN ROOT MOUNT OPTS ... - TYPE SRC SUPER */
		sep = strstr(line, " - ");
		if (sep == NULL)
			continue;
		*sep = '\0';
		n = 0;
		for (char *s = line; n < 5 &&
		     (f[n] = strtok_r(s, " ", &save)) != NULL; s = NULL)
			n++;
		if (n < 5 || strcmp(f[3], "/") != 0)
			continue;
		n = 0;
		for (char *s = sep + 3; n < 3 &&
		     (f[5 + n] = strtok_r(s, " \n", &save)) != NULL; s = NULL)
			n++;
		if (n < 3)
			continue;
		if (strcmp(f[5], "cgroup2") == 0 &&
		    cgroup_mnt[CGROUP_V2][0] == '\0')
			snprintf(cgroup_mnt[CGROUP_V2], PATH_MAX, "%s", f[4]);
		if (strcmp(f[5], "cgroup") == 0 &&
		    (strstr(f[7], ",blkio") != NULL ||
		     strncmp(f[7], "blkio", 5) == 0) &&
		    cgroup_mnt[CGROUP_V1][0] == '\0')
			snprintf(cgroup_mnt[CGROUP_V1], PATH_MAX, "%s", f[4]);
	}
	fclose(fp);
}

void cgroup_init(const struct config *cfg, dev_t disk)
{
	cgroup_enabled = cfg->groups;
	cgroup_disk = disk;
	cgroup_config(cfg);
	if (!cgroup_enabled) {
		log_info("control groups: off (groups=off)");
		return;
	}
	cgroup_find_mounts();
	/* The root group: slot 0, id 0, never evicted nor hashed, of the
	 * hierarchy that has the I/O controller. */
	cgroup_groups[0].path = strdup("/");
	cgroup_groups[0].hier = cgroup_mnt[CGROUP_V1][0] != '\0' ?
				CGROUP_V1 : CGROUP_V2;
	cgroup_groups[0].weight = ELV_CGROUP_WEIGHT_DEFAULT;
	log_info("control groups: blkio %s, unified %s, disk %u:%u",
		 cgroup_mnt[CGROUP_V1][0] != '\0' ? cgroup_mnt[CGROUP_V1] :
		 "not mounted",
		 cgroup_mnt[CGROUP_V2][0] != '\0' ? cgroup_mnt[CGROUP_V2] :
		 "not mounted", major(disk), minor(disk));
}

void cgroup_exit(void)
{
	struct config_group *g;

	pthread_mutex_lock(&cgroup_lock);
	for (unsigned i = 1; i < CGROUP_MAX; i++)
		if (cgroup_groups[i].path != NULL)
			do_cgroup_unhash(&cgroup_groups[i]);
	free(cgroup_groups[0].path);
	cgroup_groups[0].path = NULL;
	while (cgroup_conf != NULL) {
		g = cgroup_conf;
		cgroup_conf = g->next;
		free(g->path);
		free(g);
	}
	pthread_mutex_unlock(&cgroup_lock);
}
