/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fs_inode.c when an inode's sector map cannot be allocated: setting up
 * the root fails with a log line, and a lookup of a new name answers
 * ENOMEM, leaves nothing behind in the inode table, and works once
 * memory is there again.  Without the check the inode would be set up
 * with no map, and the first read or write of it would crash.
 *
 * The failure is injected: the test links with -Wl,--wrap=sectormap_new,
 * so fs_inode.c's calls reach __wrap_sectormap_new below.  A real one
 * (RLIMIT_DATA with the heap used up) cannot choose which allocation fails
 * first, and sanitizers' allocators do not fail that way.  libfuse's
 * fuse_req_userdata is wrapped too, so that a lookup needs no session.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "daemon.h"

static bool fail_next;	/* the next sectormap_new returns NULL */
static struct fs fs;

struct sectormap *__real_sectormap_new(dev_t dev, ino_t ino);
struct sectormap *__wrap_sectormap_new(dev_t dev, ino_t ino);
void *__wrap_fuse_req_userdata(fuse_req_t req);

struct sectormap *__wrap_sectormap_new(dev_t dev, ino_t ino)
{
	if (fail_next) {
		fail_next = false;
		return NULL;
	}
	return __real_sectormap_new(dev, ino);
}

void *__wrap_fuse_req_userdata(fuse_req_t req)
{
	(void)req;
	return &fs;
}

/* fs_inode's; the control directory is not part of this test. */
bool control_is_ino(fuse_ino_t ino)
{
	(void)ino;
	return false;
}

int main(void)
{
	char dir[] = "/tmp/test_fs_inode.XXXXXX", path[PATH_MAX];
	struct config cfg = { 0 };
	struct fuse_entry_param e;
	/* Any non-NULL pointer: the wrapped fuse_req_userdata ignores it. */
	fuse_req_t req = (fuse_req_t)&cfg;
	uint64_t root_refs;
	int fd;

	log_open(false, LOG_INFO);
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 99;
	}
	snprintf(path, sizeof path, "%s/f", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd == -1) {
		perror(path);
		return 99;
	}
	close(fd);
	cfg.backing = dir;
	fs.cfg = &cfg;
	fs.root_fd = -1;

	/* The root's map. */
	fail_next = true;
	CHECK(fs_inode_table_init(&fs) == -1);
	CHECK(fs.root_fd == -1);
	fail_next = false;
	CHECK(fs_inode_table_init(&fs) == 0);
	CHECK(fs.root.smap != NULL);

	/* A new inode's map: ENOMEM, and the name is not remembered. */
	root_refs = fs.root.nlookup;
	fail_next = true;
	CHECK(fs_inode_entry(req, &fs.root, "f", &e) == -ENOMEM);
	CHECK(fs.root.nlookup == root_refs);
	CHECK(fs_inode_entry(req, &fs.root, "f", &e) == 0);
	CHECK(e.ino != 0 && fs_inode(req, e.ino)->smap != NULL);
	CHECK(fs_inode(req, e.ino)->nlookup == 1);
	fs_inode_unref(fs_inode(req, e.ino), 1);

	fs_inode_table_destroy(&fs);
	unlink(path);
	rmdir(dir);
	return h_exit("test_fs_inode");
}
