/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metrics setting's address, checked for shape (metrics.c binds it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse-iosched.h"

/*
 * Split "HOST:PORT", "[HOST]:PORT" or ":PORT" (loopback); false if it is
 * not that.  The host is only checked for shape here: getaddrinfo judges
 * it when the socket is bound.
 */
bool metrics_addr_split(const char *addr, char *host, char *port)
{
	const char *colon = strrchr(addr, ':');
	size_t hlen;
	char *end;
	unsigned long n;

	if (colon == NULL || colon[1] == '\0')
		return false;
	errno = 0;
	n = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || errno != 0 ||
	    n < 1 || n > 65535)
		return false;
	snprintf(port, 6, "%lu", n);
	hlen = (size_t)(colon - addr);
	if (hlen >= 2 && addr[0] == '[' && addr[hlen - 1] == ']') {
		addr++;		/* an IPv6 literal in brackets */
		hlen -= 2;
	} else if (memchr(addr, ':', hlen) != NULL) {
		return false;	/* IPv6 needs its brackets */
	}
	if (hlen >= METRICS_ADDR_HOST_MAX || memchr(addr, '[', hlen) != NULL ||
	    memchr(addr, ']', hlen) != NULL)
		return false;
	memcpy(host, addr, hlen);
	host[hlen] = '\0';
	return true;
}

bool metrics_addr_valid(const char *addr)
{
	char host[METRICS_ADDR_HOST_MAX], port[6];

	return strcmp(addr, "off") == 0 || metrics_addr_split(addr, host, port);
}
