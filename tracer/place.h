/* Where a rank runs: its CPU, that CPU's socket and last-level-cache domain (the tracer's `P`
 * chunk, FORMAT.md), and which pairs of a node's ranks to time the cores' round trip between
 * (cores.h): one pair for each class of link the node has, since a message over shared memory
 * costs more between cores that share no cache, and more again across sockets. Only Linux's
 * sysfs is read: no MPI here, so that tests/place.c checks it alone. Needs _GNU_SOURCE
 * (sched_getcpu) defined before the first #include. */
#ifndef LOGGPS_PLACE_H
#define LOGGPS_PLACE_H

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct place { int cpu, socket, llc; }; /* -1: unknown */

enum link_class { LINK_CACHE = 0, LINK_SOCKET = 1, LINK_OTHER = 2, LINK_CLASSES = 3 };

/* The first integer in a file (a sysfs list "0-3,8" gives its lowest CPU, the kernel printing
 * lists in ascending order); -1 if none. */
static int place_read_int(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int v = -1;
    if (fscanf(f, "%d", &v) != 1) v = -1;
    fclose(f);
    return v;
}

/* The cache domain of the largest level, named by its lowest CPU: of the `index*` of `cpu` with
 * the largest `level` the highest-numbered (the unified one where a level also has split
 * instruction and data caches); -1 if sysfs has none. */
static int place_llc(const char *sys, int cpu)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cpu%d/cache", sys, cpu);
    DIR *d = opendir(path);
    if (!d) return -1;
    int best_level = -1, best_index = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        int index;
        char tail;
        if (sscanf(e->d_name, "index%d%c", &index, &tail) != 1) continue;
        snprintf(path, sizeof path, "%s/cpu%d/cache/index%d/level", sys, cpu, index);
        int level = place_read_int(path);
        if (level > best_level || (level == best_level && index > best_index))
            best_level = level, best_index = index;
    }
    closedir(d);
    if (best_level < 0) return -1;
    snprintf(path, sizeof path, "%s/cpu%d/cache/index%d/shared_cpu_list", sys, cpu, best_index);
    return place_read_int(path);
}

/* Where `cpu` lies under `sys` (/sys/devices/system/cpu, or a copy of it in a test). */
static struct place place_of_cpu(const char *sys, int cpu)
{
    struct place p = { -1, -1, -1 };
    if (cpu < 0) return p;
    char path[512];
    p.cpu = cpu;
    snprintf(path, sizeof path, "%s/cpu%d/topology/physical_package_id", sys, cpu);
    p.socket = place_read_int(path);
    p.llc = place_llc(sys, cpu);
    return p;
}

/* Where the calling thread runs now. */
static struct place place_now(void)
{
    return place_of_cpu("/sys/devices/system/cpu", sched_getcpu());
}

/* The class of the link between two places; -1 where a socket or cache domain is unknown. Two
 * ranks on one CPU (oversubscribed) share its cache. */
static int place_link_class(struct place a, struct place b)
{
    if (a.socket < 0 || b.socket < 0 || a.llc < 0 || b.llc < 0) return -1;
    if (a.llc == b.llc) return LINK_CACHE;
    return a.socket == b.socket ? LINK_SOCKET : LINK_OTHER;
}

/* For each class, the lowest pair of `n` places forming it (first by `i`, then by `j`): `pair[c]`
 * is {i, j}, or {-1, -1} where no pair forms class c. */
static void place_pick_pairs(const struct place *at, int n, int pair[LINK_CLASSES][2])
{
    int found = 0;
    for (int c = 0; c < LINK_CLASSES; c++) pair[c][0] = pair[c][1] = -1;
    for (int i = 0; i < n && found < LINK_CLASSES; i++)
        for (int j = i + 1; j < n && found < LINK_CLASSES; j++) {
            int c = place_link_class(at[i], at[j]);
            if (c >= 0 && pair[c][0] < 0) pair[c][0] = i, pair[c][1] = j, found++;
        }
}

#endif
