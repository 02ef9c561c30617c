/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loading scheduler modules: good ones register, bad ones are refused
 * with the right errno and leave nothing behind, and a scheduler whose
 * init fails cannot be switched to (the old one stays in charge).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static char test_dir[PATH_MAX];

static const char *dir_of(const char *env, const char *subdir)
{
	static char buf[PATH_MAX];
	const char *dir = getenv(env), *top = getenv("top_builddir");

	if (dir != NULL && *dir != '\0')
		return dir;
	snprintf(buf, sizeof buf, "%s/%s", top != NULL ? top : ".", subdir);
	return buf;
}

/* Copy src to dst (a module under another file name). */
static int copy_file(const char *src, const char *dst)
{
	char buf[65536];
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	size_t n;
	int ok = in != NULL && out != NULL;

	while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	if (in != NULL)
		fclose(in);
	if (out != NULL && fclose(out) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

/* A tunable read or write under the queue lock. */
struct knobs_op {
	const char *name;
	int64_t *value;
};

static int knobs_get(struct elevator_queue *eq, void *arg)
{
	struct knobs_op *op = arg;

	return elv_tunable_get(eq, op->name, op->value);
}

static int knobs_set(struct elevator_queue *eq, void *arg)
{
	struct knobs_op *op = arg;

	return elv_tunable_set(eq, op->name, *op->value);
}

static void test_refusals(void)
{
	module_set_dir(test_dir);
	CHECK_EQ(module_load("badabi"), -ENOEXEC);
	CHECK(elv_find("badabi") == NULL);
	/* ABI 2 nested its hooks: refused, not read as ABI 3. */
	CHECK_EQ(module_load("abi2"), -ENOEXEC);
	CHECK(elv_find("abi2") == NULL);
	CHECK_EQ(module_load("nosym"), -ENOEXEC);
	CHECK(elv_find("nosym") == NULL);
	CHECK_EQ(module_load("missing"), -ENOENT);
	CHECK(elv_find("missing") == NULL);
}

/*
 * One defect each (tests/modules/badtype.c): a struct elevator_type
 * shorter than ours, a required method missing, a tunable whose default
 * is out of its range or that lies outside the scheduler's data, a counter
 * with a bad name or outside the data.  The same source without a defect
 * loads, and so does the larger structure of a later 3.x header, with
 * hooks this host does not know.
 */
static void test_type_checks(void)
{
	static const struct {
		const char *name;
		int err;
	} bad[] = {
		{ "badsize", -ENOEXEC }, { "nodispatch", -EINVAL },
		{ "nohaswork", -EINVAL }, { "tundefault", -EINVAL },
		{ "tunoffset", -EINVAL }, { "tunstraddle", -EINVAL },
		{ "cntname", -EINVAL }, { "cntoffset", -EINVAL },
	};
	const struct elevator_type *next;

	module_set_dir(test_dir);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK_EQ(module_load(bad[i].name), bad[i].err);
		CHECK(elv_find(bad[i].name) == NULL);
	}
	CHECK_EQ(module_load("goodtype"), 0);
	CHECK(elv_find("goodtype") != NULL);
	CHECK(elv_find("goodtype")->counters != NULL);
	CHECK_EQ(module_load("v3next"), 0);
	next = elv_find("v3next");
	CHECK(next != NULL && next->counters != NULL);
	CHECK(next != NULL && next->struct_size == sizeof *next);
}

/* Names reach a path: nothing but [a-z0-9_-]{1,31} is accepted. */
static void test_bad_names(void)
{
	module_set_dir(test_dir);
	CHECK_EQ(module_load(""), -EINVAL);
	CHECK_EQ(module_load("../modules/.libs/failinit"), -EINVAL);
	CHECK_EQ(module_load(".."), -EINVAL);
	CHECK_EQ(module_load("a/b"), -EINVAL);
	CHECK_EQ(module_load("Deadline"), -EINVAL);
	CHECK_EQ(module_load("failinit.so"), -EINVAL);
	CHECK_EQ(module_load("abcdefghijklmnopqrstuvwxyz012345"), -EINVAL);
	/* 31 characters is fine as a name (the file does not exist). */
	CHECK_EQ(module_load("abcdefghijklmnopqrstuvwxyz01234"), -ENOENT);
}

#define TEMP_DIR "/tmp/fuse-iosched-test_module.XXXXXX"

/*
 * Make dir (from TEMP_DIR) the module directory, holding failinit.so as
 * dst, name.so there, copied or a symbolic link; false if it cannot.
 */
static bool temp_module_dir(char *dir, const char *name, bool link,
			    char *dst, size_t size)
{
	char src[PATH_MAX + 32];

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		h_failures++;
		return false;
	}
	snprintf(src, sizeof src, "%s/failinit.so", test_dir);
	snprintf(dst, size, "%s/%s.so", dir, name);
	CHECK_EQ(link ? symlink(src, dst) : copy_file(src, dst), 0);
	module_set_dir(dir);
	return true;
}

/* The scheduler's name must be the file's. */
static void test_name_mismatch(void)
{
	char dir[] = TEMP_DIR, dst[sizeof dir + 32];

	if (!temp_module_dir(dir, "other", false, dst, sizeof dst))
		return;
	CHECK_EQ(module_load("other"), -EINVAL);
	CHECK(elv_find("other") == NULL);
	CHECK(elv_find("failinit") == NULL);
	unlink(dst);
	rmdir(dir);
}

/* A module that is a symbolic link is refused, whatever it points to. */
static void test_symlink(void)
{
	char dir[] = TEMP_DIR, dst[sizeof dir + 32];

	if (!temp_module_dir(dir, "failinit", true, dst, sizeof dst))
		return;
	CHECK_EQ(module_load("failinit"), -EPERM);
	CHECK(elv_find("failinit") == NULL);
	unlink(dst);
	rmdir(dir);
}

/* failinit loads; switching to it fails and noop stays active. */
static void test_failinit(void)
{
	struct queue *q = h_queue(elv_noop(), 64);
	const struct elevator_type *failinit;
	char why[128];

	module_set_dir(test_dir);
	CHECK_EQ(module_load("failinit"), 0);
	failinit = elv_find("failinit");
	CHECK(failinit != NULL);
	CHECK_EQ(module_load("failinit"), -EEXIST);
	if (failinit == NULL) {
		queue_free(q);
		return;
	}

	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	CHECK_STR(h_order(q, 0), "1");
	CHECK_EQ(elv_switch(q, failinit), -ENOMEM);
	CHECK(queue_elevator_type(q) == elv_noop());
	/* Through the control-file path too: an error, nothing changes. */
	CHECK_EQ(elv_store(q, "failinit", 8, why, sizeof why), -ENOMEM);
	CHECK(queue_elevator_type(q) == elv_noop());
	/* The queue still works, in FIFO order. */
	queue_submit(q, h_io(2, ELV_READ, 2, 0, 4096, 300));
	queue_submit(q, h_io(3, ELV_READ, 3, 0, 4096, 100));
	CHECK_STR(h_order(q, 0), "2 3");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * The code of a loaded scheduler is the file that was checked: the loader
 * opened it without following links and loaded it through that
 * descriptor, so the object's name is /proc/self/fd/N, and N, still open,
 * is the module file's inode.  (Loaded by its path, the file could have
 * been swapped after the check.)
 */
static void check_loaded_from_fd(const struct elevator_type *type,
				 const char *file)
{
	struct stat want, got;
	Dl_info info;
	void *code;

	memcpy(&code, &type->dispatch, sizeof code);
	CHECK(dladdr(code, &info) != 0);
	CHECK(strncmp(info.dli_fname, "/proc/self/fd/", 14) == 0);
	CHECK_EQ(stat(file, &want), 0);
	CHECK_EQ(stat(info.dli_fname, &got), 0);
	CHECK(want.st_dev == got.st_dev && want.st_ino == got.st_ino);
}

/* deadline loads from the scheduler directory, once. */
static void test_deadline(void)
{
	const struct elevator_type *dl;
	char file[PATH_MAX];

	module_set_dir(dir_of("MODULE_DIR", "schedulers/.libs"));
	CHECK_EQ(module_load("deadline"), 0);
	dl = elv_find("deadline");
	CHECK(dl != NULL);
	if (dl != NULL) {
		CHECK_EQ(dl->abi_version, IOSCHED_ABI_VERSION);
		CHECK(dl->tunables != NULL);
		snprintf(file, sizeof file, "%s/deadline.so",
			 dir_of("MODULE_DIR", "schedulers/.libs"));
		check_loaded_from_fd(dl, file);
	}
	CHECK_EQ(module_load("deadline"), -EEXIST);
	CHECK(elv_find("deadline") == dl);
}

/* Loading a directory registers the good modules only, in name order. */
static void test_load_all(void)
{
	char buf[256];
	struct queue *q;
	int n;

	module_unload_all();
	CHECK(elv_find("deadline") == NULL);
	CHECK(elv_find("failinit") == NULL);
	CHECK_EQ(elv_register(elv_noop(), "built-in"), 0);
	module_set_dir(test_dir);
	module_load_all();
	CHECK(elv_find("failinit") != NULL);
	CHECK(elv_find("badabi") == NULL);
	CHECK(elv_find("nosym") == NULL);
	CHECK(elv_find("goodtype") != NULL);
	CHECK(elv_find("badsize") == NULL);
	CHECK(elv_find("tundefault") == NULL);
	module_set_dir(dir_of("MODULE_DIR", "schedulers/.libs"));
	module_load_all();
	CHECK(elv_find("deadline") != NULL);

	q = h_queue(elv_noop(), 64);
	n = elv_show(q, buf, sizeof buf);
	CHECK(n > 0);
	/* The build's directory holds every scheduler module, in name order. */
	CHECK_STR(buf, "[noop] cgweight failinit goodtype knobs v3next "
		  "anticipatory bfq cfq deadline kyber\n");
	queue_free(q);
	module_unload_all();
	CHECK(elv_find("noop") == NULL);
}

/*
 * Tunables beyond the plain integer: a store callback with a side effect,
 * called only for values in range; a computed read-only value, refused
 * with EACCES for a write and for the configuration file; a table longer
 * than IOSCHED_TUNABLES_MAX refused at load.
 */
static void test_tunable_callbacks(void)
{
	const struct elevator_type *type;
	struct queue *q;
	int64_t v;

	module_set_dir(test_dir);
	CHECK_EQ(module_load("toomany"), -EINVAL);
	CHECK(elv_find("toomany") == NULL);
	CHECK_EQ(module_load("knobs"), 0);
	type = elv_find("knobs");
	CHECK(type != NULL);
	if (type == NULL)
		return;
	q = h_queue(type, 16);
	CHECK_EQ(queue_with_elevator(q, knobs_get, &(struct knobs_op){
		"half", &v }), 0);
	CHECK_EQ(v, 50);
	CHECK_EQ(queue_with_elevator(q, knobs_set, &(struct knobs_op){
		"budget", &(int64_t){ 300 } }), 0);
	CHECK_EQ(queue_with_elevator(q, knobs_get, &(struct knobs_op){
		"half", &v }), 0);
	CHECK_EQ(v, 150);
	/* Out of range: EINVAL, and store is not even asked. */
	CHECK_EQ(queue_with_elevator(q, knobs_set, &(struct knobs_op){
		"budget", &(int64_t){ 1001 } }), -EINVAL);
	/* In range but refused by store: its errno. */
	CHECK_EQ(queue_with_elevator(q, knobs_set, &(struct knobs_op){
		"budget", &(int64_t){ 13 } }), -EBUSY);
	CHECK_EQ(queue_with_elevator(q, knobs_get, &(struct knobs_op){
		"stores", &v }), 0);
	CHECK_EQ(v, 2);	/* 300 and 13 */
	CHECK_EQ(queue_with_elevator(q, knobs_get, &(struct knobs_op){
		"budget", &v }), 0);
	CHECK_EQ(v, 300);
	/* Read-only: no write, no configured default. */
	CHECK_EQ(queue_with_elevator(q, knobs_set, &(struct knobs_op){
		"half", &(int64_t){ 1 } }), -EACCES);
	CHECK_EQ(elv_tunable_default_set(type, "half", 1), -EACCES);
	CHECK_EQ(elv_tunable_default_set(type, "budget", 1001), -ERANGE);
	queue_free(q);
}

/*
 * A scheduler's counters reach .control/stats: read under the queue lock
 * from the instance's data, named as its table says, zero again in a new
 * instance after a switch.
 */
static void test_counters(void)
{
	const struct elevator_type *type = elv_find("knobs");
	struct stats st;
	char buf[16384];
	struct queue *q;

	CHECK(type != NULL);
	if (type == NULL)
		return;
	q = h_queue(type, 16);
	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	queue_submit(q, h_io(2, ELV_READ, 2, 0, 4096, 300));
	queue_submit(q, h_io(3, ELV_READ, 3, 0, 4096, 200));
	CHECK_STR(h_order(q, 1), "1");
	queue_get_stats(q, &st);
	CHECK_STR(st.sched.scheduler, "knobs");
	CHECK_EQ(st.sched.n, 2);
	CHECK_STR(st.sched.name[0], "added");
	CHECK_EQ(st.sched.value[0], 3);
	CHECK_STR(st.sched.name[1], "dispatched");
	CHECK_EQ(st.sched.value[1], 1);
	CHECK(stats_format(&st, buf, sizeof buf) > 0);
	CHECK(strstr(buf, "\nscheduler knobs added 3\n"
			 "scheduler knobs dispatched 1\n") != NULL);
	CHECK_STR(h_order(q, 0), "2 3");
	CHECK_DONE(3);
	/* A new instance starts from zero; noop has no counters at all. */
	CHECK_EQ(elv_switch(q, elv_noop()), 0);
	queue_get_stats(q, &st);
	CHECK_EQ(st.sched.n, 0);
	CHECK_EQ(elv_switch(q, type), 0);
	queue_get_stats(q, &st);
	CHECK_EQ(st.sched.n, 2);
	CHECK_EQ(st.sched.value[0], 0);
	queue_free(q);
}

/*
 * The host's services as a module sees them: cgroup_path names the root
 * group only, cgroup_weight passes on the queue's hook (clamped to the
 * kernel's range) and a host whose table ends before a service (an older
 * host) has it absent, so elv_cgroup_path answers -ENOSYS and
 * elv_cgroup_weight the default.
 */
static int host_services(struct elevator_queue *eq, void *arg)
{
	struct elevator_host older = *eq->host;
	const struct elevator_host *host = eq->host;
	char buf[8];

	CHECK(elv_host_has(eq, wakeup_at) && elv_host_has(eq, cgroup_path));
	CHECK_EQ(elv_cgroup_path(eq, 0, buf, sizeof buf), 1);
	CHECK_STR(buf, "/");
	CHECK_EQ(elv_cgroup_path(eq, 5, buf, sizeof buf), -ENOENT);
	CHECK_EQ(elv_cgroup_path(eq, 0, buf, 1), -ERANGE);
	older.struct_size = offsetof(struct elevator_host, cgroup_path);
	eq->host = &older;
	CHECK(elv_host_has(eq, log) && !elv_host_has(eq, cgroup_path));
	CHECK_EQ(elv_cgroup_path(eq, 0, buf, sizeof buf), -ENOSYS);
	older.struct_size = offsetof(struct elevator_host, cgroup_weight);
	CHECK(elv_host_has(eq, cgroup_path) &&
	      !elv_host_has(eq, cgroup_weight));
	CHECK_EQ(elv_cgroup_weight(eq, 3), 100);
	eq->host = host;
	if (arg != NULL) {
		CHECK_EQ(elv_cgroup_weight(eq, 3), 300);
		CHECK_EQ(elv_cgroup_weight(eq, 0), 1);
		CHECK_EQ(elv_cgroup_weight(eq, 2000), 1000);
	} else {
		CHECK_EQ(elv_cgroup_weight(eq, 3), 100);
	}
	return 0;
}

/* 3 weighs 300; 0 and 2000 ask for weights out of range. */
static uint32_t test_weight(uint64_t cgroup)
{
	return cgroup == 3 ? 300 : (uint32_t)cgroup;
}

static void test_host_services(void)
{
	struct queue *q = h_queue(elv_noop(), 64);

	CHECK_EQ(queue_with_elevator(q, host_services, NULL), 0);
	queue_free(q);
	h_weight = test_weight;
	q = h_queue(elv_noop(), 64);
	CHECK_EQ(queue_with_elevator(q, host_services, q), 0);
	queue_free(q);
	h_weight = NULL;
}

int main(void)
{
	snprintf(test_dir, sizeof test_dir, "%s",
		 dir_of("TEST_MODULE_DIR", "tests/modules/.libs"));
	CHECK_EQ(elv_register(elv_noop(), "built-in"), 0);
	test_refusals();
	test_type_checks();
	test_bad_names();
	test_name_mismatch();
	test_symlink();
	test_failinit();
	test_deadline();
	test_tunable_callbacks();
	test_counters();
	test_host_services();
	test_load_all();
	return h_exit("test_module");
}
