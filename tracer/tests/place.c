/* place.h alone (no MPI): the classes of links, the pairs picked for them, and the places read
 * from a made-up sysfs tree of two sockets with two L3 domains each. Prints one line a check;
 * exits 1 if any failed. */
#define _GNU_SOURCE /* sched_getcpu */
#include "../place.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    failures += !ok;
}

static void put(const char *root, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f) perror(path), exit(2);
    fputs(text, f);
    fclose(f);
}

/* cpu: socket cpu / 8, L3 domain of 4 CPUs, L1d, L1i (level 1), L2 (level 2) of its own; cache
 * indexes numbered with a gap, the L3 last */
static void fake_cpu(const char *root, int cpu)
{
    char rel[128], text[64];
    snprintf(rel, sizeof rel, "cpu%d/topology/physical_package_id", cpu);
    snprintf(text, sizeof text, "%d\n", cpu / 8);
    put(root, rel, text);
    static const struct { int index, level; } caches[] = { { 0, 1 }, { 1, 1 }, { 2, 2 }, { 5, 3 } };
    for (size_t i = 0; i < sizeof caches / sizeof *caches; i++) {
        snprintf(rel, sizeof rel, "cpu%d/cache/index%d/level", cpu, caches[i].index);
        snprintf(text, sizeof text, "%d\n", caches[i].level);
        put(root, rel, text);
        snprintf(rel, sizeof rel, "cpu%d/cache/index%d/shared_cpu_list", cpu, caches[i].index);
        if (caches[i].level == 3)
            snprintf(text, sizeof text, "%d-%d\n", cpu / 4 * 4, cpu / 4 * 4 + 3);
        else
            snprintf(text, sizeof text, "%d\n", cpu);
        put(root, rel, text);
    }
}

int main(void)
{
    struct place a = { 0, 0, 0 }, same_cpu = { 0, 0, 0 }, cache = { 1, 0, 0 },
                 socket = { 4, 0, 4 }, other = { 8, 1, 8 }, unknown = { 3, 0, -1 };
    check(place_link_class(a, same_cpu) == LINK_CACHE, "one CPU: class cache");
    check(place_link_class(a, cache) == LINK_CACHE, "one L3: class cache");
    check(place_link_class(a, socket) == LINK_SOCKET, "one socket, another L3: class socket");
    check(place_link_class(a, other) == LINK_OTHER, "another socket: class other");
    check(place_link_class(a, unknown) == -1 && place_link_class(unknown, a) == -1,
          "an unknown cache domain: no class");

    /* node ranks: 0 on CPU 8 (socket 1), 1 unknown, 2 on CPU 9, 3 on CPU 0, 4 on CPU 5 */
    struct place node[] = { { 8, 1, 8 }, { -1, -1, -1 }, { 9, 1, 8 }, { 0, 0, 0 }, { 5, 0, 4 } };
    int pair[LINK_CLASSES][2];
    place_pick_pairs(node, 5, pair);
    check(pair[LINK_CACHE][0] == 0 && pair[LINK_CACHE][1] == 2, "cache pair: node ranks 0 2");
    check(pair[LINK_SOCKET][0] == 3 && pair[LINK_SOCKET][1] == 4, "socket pair: node ranks 3 4");
    check(pair[LINK_OTHER][0] == 0 && pair[LINK_OTHER][1] == 3, "other pair: node ranks 0 3");
    place_pick_pairs(node, 1, pair);
    check(pair[0][0] < 0 && pair[1][0] < 0 && pair[2][0] < 0, "one rank: no pair");
    struct place two[] = { { 0, 0, 0 }, { 1, 0, 0 } };
    place_pick_pairs(two, 2, pair);
    check(pair[LINK_CACHE][0] == 0 && pair[LINK_CACHE][1] == 1 && pair[LINK_SOCKET][0] < 0 &&
              pair[LINK_OTHER][0] < 0,
          "two ranks sharing an L3: the cache pair only");

    char root[] = "/tmp/loggps-place-XXXXXX";
    if (!mkdtemp(root)) perror("mkdtemp"), exit(2);
    for (int cpu = 0; cpu < 16; cpu++) fake_cpu(root, cpu);
    put(root, "cpu16/topology/physical_package_id", "0\n"); /* no cache directory */
    struct place p6 = place_of_cpu(root, 6), p13 = place_of_cpu(root, 13);
    struct place p16 = place_of_cpu(root, 16), p99 = place_of_cpu(root, 99);
    check(p6.cpu == 6 && p6.socket == 0 && p6.llc == 4, "sysfs: CPU 6 socket 0 llc 4");
    check(p13.cpu == 13 && p13.socket == 1 && p13.llc == 12, "sysfs: CPU 13 socket 1 llc 12");
    check(p16.socket == 0 && p16.llc == -1, "sysfs: no cache directory, llc -1");
    check(p99.socket == -1 && p99.llc == -1, "sysfs: no such CPU, socket and llc -1");
    check(place_of_cpu(root, -1).cpu == -1, "unknown CPU: all -1");
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", root);
    if (system(rm) != 0) fprintf(stderr, "cannot remove %s\n", root);

    struct place here = place_now();
    printf("this machine: cpu %d socket %d llc %d\n", here.cpu, here.socket, here.llc);
    check(here.cpu >= 0, "sched_getcpu works here");
    return failures != 0;
}
