/* Part of loggps_trace.c (included there, in order: one translation unit): Start and end of tracing. */
/* ------------------------------------------------------------------------------------------ */
/* Start and end of tracing                                                                    */
/* ------------------------------------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

/* Offset to rank 0's clock (rank 0's clock = mine + offset): ping-pong with rank 0 over the
 * private communicator, keep the sample with the smallest round trip. Collective. Ranks that
 * run on rank 0's machine (same kernel boot id) share its CLOCK_MONOTONIC: offset 0 without
 * measuring (set LOGGPS_TRACE_MEASURE_OFFSETS=1 to measure anyway). */
static int64_t measure_offset(void)
{
    enum { ROUNDS = 16, TAG = 7001 };
    int64_t offset = 0;
    uint64_t t;
    if (T.rank == 0) {
        for (int r = 1; r < T.size; r++)
            for (int k = 0; k < ROUNDS && T.measure[r]; k++) {
                PMPI_Recv(&t, 1, MPI_UINT64_T, r, TAG, T.priv, MPI_STATUS_IGNORE);
                t = now();
                PMPI_Send(&t, 1, MPI_UINT64_T, r, TAG, T.priv);
            }
    } else if (T.must_measure) {
        uint64_t best = UINT64_MAX;
        for (int k = 0; k < ROUNDS; k++) {
            uint64_t a = now();
            PMPI_Send(&a, 1, MPI_UINT64_T, 0, TAG, T.priv);
            PMPI_Recv(&t, 1, MPI_UINT64_T, 0, TAG, T.priv, MPI_STATUS_IGNORE);
            uint64_t b = now();
            if (b - a < best) {
                best = b - a;
                offset = (int64_t)t - (int64_t)(a + (b - a) / 2);
            }
        }
    }
    return offset;
}

/* The bytes a send buffer may have moved through the rank's calls since its last send and still
 * be `clean` (see note_sent): LOGGPS_TRACE_CACHE (bytes; 0: any), else this CPU's second-level
 * cache as the kernel lists it (a unified or data cache of level 2), else 1 MiB. Beyond it the
 * buffer has left the core's cache, and its receiver's copy reads it as slowly as lines just
 * written (src/model/MODEL.md §13). */
static uint64_t cache_bytes(void)
{
    const char *env = getenv("LOGGPS_TRACE_CACHE");
    if (env && *env) return strtoull(env, NULL, 0);
    for (int i = 0; i < 8; i++) {
        char path[96], text[32] = "";
        int level = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (fscanf(f, "%d", &level) != 1) level = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if ((f = fopen(path, "r"))) {
            if (!fgets(text, sizeof text, f)) text[0] = 0;
            fclose(f);
        }
        if (level != 2 || strncmp(text, "Instruction", 11) == 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!(f = fopen(path, "r"))) break;
        unsigned long long n = 0;
        char unit = 0;
        int got = fscanf(f, "%llu%c", &n, &unit);
        fclose(f);
        if (got >= 1 && n > 0) return n << (unit == 'K' ? 10 : unit == 'M' ? 20 : 0);
    }
    return 1u << 20;
}

/* Which ranks must measure their clock offset (see measure_offset). Collective. */
static void decide_measurements(void)
{
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f)) boot[0] = 0;
        fclose(f);
    }
    uint64_t mine = hash_str(boot[0] ? boot : T.host), root = mine;
    PMPI_Bcast(&root, 1, MPI_UINT64_T, 0, T.priv);
    const char *force = getenv("LOGGPS_TRACE_MEASURE_OFFSETS");
    T.must_measure = T.rank != 0 && (mine != root || (force && *force && strcmp(force, "0")));
    if (T.rank == 0) {
        T.measure = calloc((size_t)T.size, 1);
        if (!T.measure) abort();
    }
    PMPI_Gather(&T.must_measure, 1, MPI_CHAR, T.measure, 1, MPI_CHAR, 0, T.priv);
}

static int64_t now_signed(void) { return (int64_t)now(); }

/* The cores' round trip of this node's first two ranks (cores.h), ns, at this moment; -1 where
 * this rank is not the node's first, where LOGGPS_TRACE_CORES=0, or where it cannot be timed.
 * Collective over T.node. */
static double time_cores(void)
{
    return T.node == MPI_COMM_NULL ? -1 : cores_round_trip(T.node, 0, 1, 20000, now_signed);
}

/* The round trips of the node's links (pick_links) at this moment into `ns`, and of a message
 * of each of MSG_BYTES between each link's ranks into `msg`, on the node's first rank (-1
 * elsewhere, and where one cannot be timed). The pair of node ranks 0 and 1 is the R chunk's,
 * `cores` (time_cores): its cache line not timed twice, each timing costing up to 2 ms of
 * MPI_Init and MPI_Finalize (a message's up to 1 ms). Collective over T.node. */
static void time_links(double cores, double ns[LINK_CLASSES], double msg[LINK_CLASSES][MSG_SIZES])
{
    enum { N = LINK_CLASSES * (1 + MSG_SIZES) };
    double mine[N], all[N];
    int me = 0;
    if (T.nlinks == 0) return;
    for (int k = 0; k < T.nlinks; k++) {
        const struct link *l = &T.links[k];
        double *at = mine + k * (1 + MSG_SIZES);
        at[0] = l->a == 0 && l->b == 1 ? cores
                                       : cores_round_trip(T.node, l->a, l->b, 20000, now_signed);
        for (int s = 0; s < MSG_SIZES; s++)
            at[1 + s] = message_round_trip(T.node, l->a, l->b, MSG_BYTES[s], 256, now_signed);
    }
    /* the timing rank of a pair is its first, not always the node's first */
    int n = T.nlinks * (1 + MSG_SIZES);
    if (PMPI_Reduce(mine, all, n, MPI_DOUBLE, MPI_MAX, 0, T.node) != MPI_SUCCESS)
        for (int i = 0; i < n; i++) all[i] = -1;
    PMPI_Comm_rank(T.node, &me);
    for (int k = 0; k < T.nlinks; k++) {
        const double *at = all + k * (1 + MSG_SIZES);
        ns[k] = me == 0 ? at[0] : -1;
        for (int s = 0; s < MSG_SIZES; s++) msg[k][s] = me == 0 ? at[1 + s] : -1;
    }
}

/* The node's first rank gathers where its `n` ranks run and picks a pair of them for each class
 * of link present (place.h); every rank of the node learns the pairs, since timing them is
 * collective over the node. */
static void pick_links(int n, int me)
{
    int mine[4] = { T.place_init.cpu, T.place_init.socket, T.place_init.llc, T.rank };
    int plan[1 + 5 * LINK_CLASSES] = { 0 }; /* count, then per link: class, a, b, wa, wb */
    int *all = me == 0 ? malloc(sizeof(int) * 4 * (size_t)n) : NULL;
    struct place *at = me == 0 ? malloc(sizeof *at * (size_t)n) : NULL;
    if (me == 0 && (!all || !at)) abort();
    if (PMPI_Gather(mine, 4, MPI_INT, all, 4, MPI_INT, 0, T.node) == MPI_SUCCESS && me == 0) {
        int pair[LINK_CLASSES][2];
        for (int i = 0; i < n; i++)
            at[i] = (struct place){ all[4 * i], all[4 * i + 1], all[4 * i + 2] };
        place_pick_pairs(at, n, pair);
        for (int c = 0; c < LINK_CLASSES; c++) {
            if (pair[c][0] < 0) continue;
            int *l = plan + 1 + 5 * plan[0]++;
            l[0] = c, l[1] = pair[c][0], l[2] = pair[c][1];
            l[3] = all[4 * pair[c][0] + 3], l[4] = all[4 * pair[c][1] + 3];
        }
    }
    free(all);
    free(at);
    if (PMPI_Bcast(plan, 1 + 5 * LINK_CLASSES, MPI_INT, 0, T.node) != MPI_SUCCESS) plan[0] = 0;
    T.nlinks = plan[0];
    for (int k = 0; k < T.nlinks; k++) {
        const int *l = plan + 1 + 5 * k;
        T.links[k] = (struct link){ .cls = l[0], .a = l[1], .b = l[2], .wa = (uint32_t)l[3],
                                    .wb = (uint32_t)l[4], .init_ns = -1 };
        for (int s = 0; s < MSG_SIZES; s++) T.links[k].msg_init[s] = -1;
    }
}

/* A message's round trip of each of MSG_BYTES between the first two nodes' first ranks into
 * `ns`, on world rank 0 (-1 elsewhere and where one cannot be timed): the network's figure, as
 * time_links times the node's. Collective over T.leaders (the other ranks return at once). */
static void time_network(double ns[MSG_SIZES])
{
    for (int s = 0; s < MSG_SIZES; s++) ns[s] = -1;
    if (T.leaders == MPI_COMM_NULL) return;
    for (int s = 0; s < MSG_SIZES; s++) {
        double t = message_round_trip(T.leaders, 0, 1, MSG_BYTES[s], 256, now_signed);
        if (T.rank == 0) ns[s] = t;
    }
}

/* The communicator of the nodes' first ranks (T.leaders, where there are two nodes or more),
 * and world rank 0's partner in it: the lowest world rank of another node. `first` says whether
 * this rank is its node's first. Collective over T.priv. */
static void find_leaders(int first)
{
    T.leaders = MPI_COMM_NULL;
    T.net_partner = -1;
    MPI_Comm leaders;
    if (PMPI_Comm_split(T.priv, first ? 0 : MPI_UNDEFINED, T.rank, &leaders) != MPI_SUCCESS ||
        leaders == MPI_COMM_NULL)
        return;
    int n = 0;
    PMPI_Comm_size(leaders, &n);
    if (n < 2) {
        PMPI_Comm_free(&leaders);
        return;
    }
    PMPI_Comm_set_errhandler(leaders, MPI_ERRORS_RETURN);
    MPI_Group g;
    int one = 1;
    PMPI_Comm_group(leaders, &g);
    PMPI_Group_translate_ranks(g, 1, &one, T.world_group, &T.net_partner);
    PMPI_Group_free(&g);
    T.leaders = leaders;
}

/* Where this rank runs (the P chunk's node and place at Init) and, unless LOGGPS_TRACE_CORES=0,
 * the node's communicator for time_cores and time_links, this rank's partner there and the
 * node's links, and the nodes' first ranks' communicator for time_network. Collective. */
static void find_node(void)
{
    T.leaders = MPI_COMM_NULL;
    T.node = MPI_COMM_NULL;
    T.node_first = (uint32_t)T.rank;
    T.cores_init = -1;
    T.nlinks = 0;
    T.place_init = place_now();
    MPI_Comm node;
    if (PMPI_Comm_split_type(T.priv, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return;
    PMPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    int n = 0, me = 0, zero = 0, one = 1, first = T.rank;
    PMPI_Comm_size(node, &n);
    PMPI_Comm_rank(node, &me);
    /* The CPUs the node's ranks may run on: their affinity masks together. Fewer than the
     * node's ranks, and they take turns on the cores, which the model does not cost. */
    cpu_set_t mine, all;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine); /* none of its own to add */
    if (PMPI_Allreduce(&mine, &all, (int)sizeof mine, MPI_BYTE, MPI_BOR, node) == MPI_SUCCESS)
        T.node_cpus = (uint32_t)CPU_COUNT(&all);
    /* key 0 keeps T.priv's order, the world's: node rank 0 is the node's lowest world rank. A
     * node of one rank (each rank its own node, as MPICH's -hosts a:1,b:1 has it) has no rank
     * 1 to translate and no pair to time. */
    MPI_Group g;
    PMPI_Comm_group(node, &g);
    PMPI_Group_translate_ranks(g, 1, &zero, T.world_group, &first);
    if (n >= 2) PMPI_Group_translate_ranks(g, 1, &one, T.world_group, &T.cores_partner);
    PMPI_Group_free(&g);
    T.node_first = (uint32_t)first;
    const char *off = getenv("LOGGPS_TRACE_CORES");
    if (off && strcmp(off, "0") == 0) {
        PMPI_Comm_free(&node);
        return;
    }
    find_leaders(me == 0);
    if (n < 2) {
        PMPI_Comm_free(&node);
        return;
    }
    T.node = node;
    pick_links(n, me);
}

/* Read one integer MPI_T control variable by name; 1 if found with a positive value. */
static int read_cvar(const char *name, uint64_t *value)
{
    int index, namelen = 256, desclen = 0, verbosity, bind, scope, count;
    char cname[256];
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle h;
    if (PMPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) return 0;
    if (PMPI_T_cvar_get_info(index, cname, &namelen, &verbosity, &type, &enumtype, NULL,
                             &desclen, &bind, &scope) != MPI_SUCCESS)
        return 0;
    if (bind != MPI_T_BIND_NO_OBJECT) return 0;
    if (PMPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS) return 0;
    union { int i; unsigned u; long l; unsigned long ul; long long ll; unsigned long long ull;
            char pad[64]; } v;
    memset(&v, 0, sizeof v);
    int ok = count == 1 && PMPI_T_cvar_read(h, &v) == MPI_SUCCESS;
    PMPI_T_cvar_handle_free(&h);
    if (!ok) return 0;
    long long x;
    if (type == MPI_INT) x = v.i;
    else if (type == MPI_UNSIGNED) x = v.u;
    else if (type == MPI_LONG) x = v.l;
    else if (type == MPI_UNSIGNED_LONG) x = (long long)v.ul;
    else if (type == MPI_LONG_LONG) x = v.ll;
    else if (type == MPI_UNSIGNED_LONG_LONG || type == MPI_COUNT) x = (long long)v.ull;
    else return 0;
    if (x <= 0) return 0;
    *value = (uint64_t)x;
    return 1;
}

/* Open MPI's MCA variables are the store behind its MPI_T cvars (same names, same values). Its
 * MPI_T_init_thread first registers the variables of every installed component, not only of
 * those MPI_Init opened (Open MPI 4.1: 344 -> 1116 variables, about 214 ms of every rank's
 * MPI_Init), while the variables of the components in use are registered already and cost
 * microseconds to read. The MCA API (libopen-pal) is found at run time, so the tracer neither
 * links against it nor needs it under another library. A variable's parsable dump (the lines
 * of `ompi_info --parsable`: "mca:btl:vader:param:btl_vader_eager_limit:value:4096", "...:type:
 * size_t") gives its type and value without assuming Open MPI's struct layouts; whatever is
 * missing or unexpected reads as not found, and the caller falls back to MPI_T. */
typedef int (*mca_var_find_by_name_fn)(const char *full_name, int *index);
typedef int (*mca_var_dump_fn)(int index, char ***lines, int output_type);
enum { MCA_VAR_DUMP_PARSABLE = 1 };

/* The text after "...:param:NAME:KEY:" in a dump, or NULL. */
static const char *mca_dump_field(char **lines, const char *name, const char *key)
{
    char tail[320];
    snprintf(tail, sizeof tail, ":param:%s:%s:", name, key);
    for (char **l = lines; *l; l++) {
        const char *f = strstr(*l, tail);
        if (f && strncmp(*l, "mca:", 4) == 0) return f + strlen(tail);
    }
    return NULL;
}

/* Read one integer MCA variable of Open MPI by name; 1 if registered with a positive value. */
static int read_mca_var(const char *name, uint64_t *value)
{
    static const char *integer_types[] = { "int", "unsigned_int", "unsigned_long",
                                           "unsigned_long_long", "size_t", "long", "int32_t",
                                           "uint32_t", "int64_t", "uint64_t", NULL };
    mca_var_find_by_name_fn find = (mca_var_find_by_name_fn)dlsym(RTLD_DEFAULT,
                                                                  "mca_base_var_find_by_name");
    mca_var_dump_fn dump = (mca_var_dump_fn)dlsym(RTLD_DEFAULT, "mca_base_var_dump");
    int index = -1;
    char **lines = NULL;
    if (!find || !dump || strlen(name) > 256) return 0;
    if (find(name, &index) != 0 || index < 0) return 0;
    if (dump(index, &lines, MCA_VAR_DUMP_PARSABLE) != 0 || !lines) return 0;
    const char *type = mca_dump_field(lines, name, "type");
    const char *text = mca_dump_field(lines, name, "value");
    int integer = 0;
    for (const char **t = integer_types; type && *t && !integer; t++)
        integer = strcmp(type, *t) == 0;
    int ok = 0;
    if (integer && text && *text >= '0' && *text <= '9') {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(text, &end, 10);
        ok = *end == 0 && errno == 0 && x > 0;
        if (ok) *value = (uint64_t)x;
    }
    for (char **l = lines; *l; l++) free(*l);
    free(lines);
    return ok;
}

/* The first name of the lists (up to 3, NULL-terminated) that `read` finds with a positive
 * value, into name (256 bytes) and value; 0 if none. */
static int read_first(const char **lists[3], int (*read)(const char *, uint64_t *), char *name,
                      uint64_t *value)
{
    for (int l = 0; l < 3 && lists[l]; l++)
        for (const char **n = lists[l]; *n; n++)
            if (read(*n, value)) {
                snprintf(name, 256, "%s", *n);
                return 1;
            }
    return 0;
}

/* The eager limit as the library reports it through its control variables (MPI_T cvars, or
 * Open MPI's MCA variables of the same names): the first of a list chosen by library and
 * placement that exists and has a positive value. */
static int find_eager_limit(const char *libversion, int single_node, char *name, uint64_t *value)
{
    static const char *ompi_shm[] = { "btl_vader_eager_limit", "btl_sm_eager_limit", NULL };
    static const char *ompi_net[] = { "btl_tcp_eager_limit", NULL };
    static const char *ch3[] = { "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", NULL };
    static const char *ch4_ofi[] = { "MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE", NULL };
    static const char *ch4_shm[] = { "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE", NULL };
    const char **lists[3] = { NULL, NULL, NULL };
    const char *forced = getenv("LOGGPS_TRACE_EAGER_CVAR");
    const char *one[2] = { forced, NULL };
    if (forced && *forced) {
        lists[0] = one;
    } else if (strstr(libversion, "Open MPI")) {
        lists[0] = single_node ? ompi_shm : ompi_net;
        lists[1] = single_node ? ompi_net : ompi_shm;
    } else if (strstr(libversion, "MPICH")) {
        /* the device is on the line "MPICH Device:\tch4:ucx" */
        const char *d = strstr(libversion, "Device:");
        d = d ? d + strlen("Device:") + strspn(d + strlen("Device:"), " \t") : "";
        if (strncmp(d, "ch3", 3) == 0) lists[0] = ch3;
        else if (strncmp(d, "ch4:ofi", 7) == 0) {
            lists[0] = single_node ? ch4_shm : ch4_ofi;
            lists[1] = single_node ? ch4_ofi : ch4_shm;
        } else if (strncmp(d, "ch4", 3) == 0 && single_node) lists[0] = ch4_shm;
    }
    /* Open MPI: its MCA variables first (read_mca_var says why), MPI_T where they have none */
    if (strstr(libversion, "Open MPI") && read_first(lists, read_mca_var, name, value)) return 1;
    int provided;
    if (PMPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 0;
    int found = read_first(lists, read_cvar, name, value);
    /* No PMPI_T_finalize: MPICH 4.0 crashes in a later MPI_T_init_thread once the MPI_T
     * reference count has been back to zero (seen with Debian's `mpivars`). Staying
     * initialized is harmless: the program's own init/finalize pairs stay balanced. */
    return found;
}

/* Rank 0: create the file and write the header and the J chunk. 1 on success. */
static int create_trace(int single_node)
{
    T.fd = open(T.path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (T.fd < 0) {
        if (errno == EEXIST)
            warn("%s already exists; not overwriting it. This job runs UNTRACED "
                 "(remove the file or set LOGGPS_TRACE to another path)", T.path);
        else
            warn("cannot create %s (%s); this job runs UNTRACED", T.path, strerror(errno));
        return 0;
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    PMPI_Get_library_version(version, &len);
    char cvar[256] = "";
    uint64_t eager = 0;
    int have_eager = find_eager_limit(version, single_node, cvar, &eager);

    uint8_t *b = malloc(16 + CHUNK_HEAD + sizeof version + 600), *p = b;
    if (!b) abort();
    memcpy(p, "LGPSTRC\x1a", 8);
    p = put_u16(p + 8, 1);
    p = put_u16(p, 0);
    p = put_u32(p, (uint32_t)T.size);
    uint8_t *chunk = p;
    p += CHUNK_HEAD;
    p = put_str(p, version);
    *p++ = (uint8_t)have_eager;
    if (have_eager) {
        p = put_str(p, cvar);
        p = put_u64(p, eager);
    }
    *p++ = 0; /* no LogGPS parameters */
    fill_chunk_head(chunk, 'J', 0xFFFFFFFFu, (size_t)(p - chunk - CHUNK_HEAD));
    write_all_or_stop(b, (size_t)(p - b));
    free(b);
    return !T.write_failed;
}

/* Write what this rank buffered, unless a thread is inside a wrapper (it may be writing
 * there); after the end of tracing there is nothing. */
static void flush_if_idle(void)
{
    if (grab(thread_id())) return;
    flush_events();
    leave(0);
}

static void at_exit_flush(void)
{
    /* the program exited without MPI_Finalize: keep what this rank buffered */
    if (T.active) flush_if_idle();
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The tracer's own time per record, ns, as a trace sees it: the gap between one recorded call's
 * return and the next one's call when nothing runs between the two calls but the tracer (the
 * encoding and release after a call, the wrapper's entry and call site before the next). A
 * replay takes it out of the computation between calls. Timed on this machine at MPI_Init on
 * calls to MPI_PROC_NULL made through the wrappers as a program makes them: the median gap of
 * the calls, read back from each record's encoded gap. Their records are dropped. The same
 * rounds time the calls through PMPI_ (the tracer unseen): the difference a record, less the
 * gap, is the tracer's time inside each recorded call's span (the clock reads' halves, the
 * wrapper's entry and exit). Each loop's fastest round counts: an interruption lengthens one
 * round, never shortens it. Two kinds: `MPI_Send` alone (`own`, `*in_call`), and groups of
 * OWN_GROUP `MPI_Irecv` and their `MPI_Waitall` (`*own_req`, `*in_call_req`: a request's
 * record costs the tracer more, its table entry made and found again). < 0: not timed. */
enum { OWN_CALLS = 100, OWN_ROUNDS = 7, OWN_GROUP = 4, OWN_RECORDS = OWN_CALLS * (OWN_GROUP + 1) };

/* One round of `calls` of a kind (0: MPI_Send, 1: groups of MPI_Irecv and MPI_Waitall),
 * through PMPI_ or, `at` given, through the wrappers, each record's offset in the buffer in
 * `at`; returns how many records. */
static int own_calls(int kind, int calls, size_t *at)
{
    MPI_Request rq[OWN_GROUP];
    MPI_Status st[OWN_GROUP];
    int n = 0;
    for (int i = 0; i < calls; i++) {
        if (kind == 0) {
            if (!at) PMPI_Send(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
            else at[n++] = T.len, MPI_Send(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
            continue;
        }
        for (int k = 0; k < OWN_GROUP; k++) {
            if (!at) PMPI_Irecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[k]);
            else at[n++] = T.len, MPI_Irecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[k]);
        }
        if (!at) PMPI_Waitall(OWN_GROUP, rq, st);
        else at[n++] = T.len, MPI_Waitall(OWN_GROUP, rq, st);
    }
    return n;
}

/* A kind's median gap, and its time inside a call in `*in_call`, as above. */
static double own_loop(int kind, double *in_call)
{
    size_t len = T.len, slen = T.slen;
    uint32_t nrec = T.nrec;
    static double gap[OWN_RECORDS * OWN_ROUNDS];
    static size_t at[OWN_RECORDS];
    double plain = 1e18, traced = 1e18;
    int n = 0, records = 0;
    *in_call = -1;
    /* A round's records stay in the buffer (a flush would write them): as many calls as a
     * quarter of its room holds, by what a few of them take (warming the wrappers). */
    own_calls(kind, 8, at);
    size_t each = (T.len - len) / 8 + 1, each_site = (T.slen - slen) / 8 + 1;
    T.len = len, T.slen = slen, T.nrec = nrec;
    size_t room = (T.cap - len) / 4 / each;
    if (T.sites && (T.scap - slen) / 4 / each_site < room) room = (T.scap - slen) / 4 / each_site;
    int calls = room < OWN_CALLS ? (int)room : OWN_CALLS;
    if (calls < 8) return -1;
    for (int round = 0; round < OWN_ROUNDS; round++) {
        uint64_t t0 = now();
        own_calls(kind, calls, NULL);
        uint64_t t1 = now();
        records = own_calls(kind, calls, at);
        uint64_t t2 = now();
        if ((double)(t1 - t0) < plain) plain = (double)(t1 - t0);
        if ((double)(t2 - t1) < traced) traced = (double)(t2 - t1);
        /* each record: its routine's code, then the gap since the last return (zigzag
         * LEB128); the round's first follows the plain loop, not a record */
        for (int i = 1; i < records; i++) {
            if (T.len <= at[i] + 1) continue;
            uint64_t v = 0;
            const uint8_t *p = T.buf + at[i] + 1;
            for (int shift = 0; shift < 64; shift += 7, p++) {
                v |= (uint64_t)(*p & 0x7f) << shift;
                if (!(*p & 0x80)) break;
            }
            int64_t d = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            if (d >= 0) gap[n++] = (double)d;
        }
        T.len = len, T.slen = slen, T.nrec = nrec;
    }
    if (n == 0 || records == 0) return -1;
    qsort(gap, (size_t)n, sizeof gap[0], cmp_double);
    double own = gap[n / 2];
    double inside = (traced - plain) / records - own;
    *in_call = inside > 0 ? inside : 0;
    return own;
}

/* One clock read, ns: the fastest of 7 rounds of 1,000 (own_sample takes one out of each
 * sample). */
static double clock_cost(void)
{
    uint64_t best = UINT64_MAX, sink = 0;
    for (int round = 0; round < 7; round++) {
        uint64_t t0 = now();
        for (int i = 0; i < 1000; i++) sink += now();
        uint64_t t = now() - t0;
        if (t < best) best = t;
    }
    __asm__ volatile("" : : "r"(sink));
    return (double)best / 1001;
}

/* What a record's gap holds beyond its sample (own_sample): the call into the wrapper and the
 * return from it, outside the sample's clock reads. The gap of a call to MPI_PROC_NULL timed
 * above (own_ns) less the median sample of 100 such calls, each sampled; at least 0. */
static double sample_offset(void)
{
    size_t len = T.len, slen = T.slen;
    uint32_t nrec = T.nrec;
    size_t each = 64, room = (T.cap - len) / 4 / each;
    if (T.sites && (T.scap - slen) / 4 / 10 < room) room = (T.scap - slen) / 4 / 10;
    if (room < 100 || T.own_ns < 0) return 0;
    T.sample_all = 1;
    for (int i = 0; i < 100; i++) MPI_Send(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    T.sample_all = 0;
    T.len = len, T.slen = slen, T.nrec = nrec;
    struct own_kept *k = T.own_by[C_SEND];
    T.own_by[C_SEND] = NULL;
    if (!k || k->seen == 0) return free(k), 0;
    double delta = T.own_ns - kept_median(k);
    free(k);
    return delta > 0 ? delta : 0;
}

static void own_time(void)
{
    uint64_t prev = T.prev_return, events = T.events, req = T.next_req;
    T.own_ns = own_loop(0, &T.in_call_ns);
    T.own_req_ns = own_loop(1, &T.in_call_req_ns);
    T.prev_return = prev, T.events = events, T.next_req = req;
    T.rng = 0x9E3779B97F4A7C15ull * (uint64_t)(T.rank + 1);
    if (T.own_ns >= 0) T.clock_ns = clock_cost();
    uint64_t prev2 = T.prev_return, events2 = T.events;
    T.sample_delta = sample_offset();
    T.prev_return = prev2, T.events = events2;
}

/* `bytes` of memory, every page of it written once: the records' buffers. Left to fault in as
 * records fill them, each 4 KiB page cost its first record 1.5–9 µs (a page fault on a VM),
 * once every 250 records or so, in the gaps between calls, which the tracer's own time (a
 * median) does not hold: a prediction of the untraced run kept them as computation. */
static uint8_t *resident(size_t bytes)
{
    uint8_t *b = malloc(bytes);
    if (!b) abort();
    /* a write through a volatile pointer: a compiler makes malloc and a memset of 0 a calloc,
     * whose fresh pages the kernel maps only when first written */
    for (size_t i = 0; i < bytes; i += 4096) ((volatile uint8_t *)b)[i] = 0;
    return b;
}

static void tracer_start(int code, uint64_t t0, uint64_t t1, void *ra, void *frame)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &T.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &T.size);
    const char *dis = getenv("LOGGPS_TRACE_DISABLE");
    if (dis && *dis && strcmp(dis, "0") != 0) return;
    clock_start();
    PMPI_Comm_dup(MPI_COMM_WORLD, &T.priv);
    PMPI_Comm_group(MPI_COMM_WORLD, &T.world_group);
    T.world = (struct comm){ .id = 0, .size = T.size, .me = T.rank, .members = NULL, .refs = 1 };
    gethostname(T.host, sizeof T.host - 1);
    const char *path = getenv("LOGGPS_TRACE");
    snprintf(T.path, sizeof T.path, "%s", path && *path ? path : "loggps-trace.bin");

    /* agree on: all on one host? (the largest hash and the largest complement meet) */
    uint64_t h = hash_str(T.host);
    uint64_t in[2] = { h, ~h }, out[2];
    PMPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, T.priv);
    int single_node = out[0] == ~out[1];

    /* rank 0 creates the file and tells the others its absolute path and identity (inode and
     * size), so that a rank on another node cannot append to a different file of that name */
    struct { int ok; uint64_t ino, size; char path[sizeof T.path]; } made = { 0, 0, 0, "" };
    if (T.rank == 0 && (made.ok = create_trace(single_node))) {
        struct stat sb;
        fstat(T.fd, &sb);
        made.ino = (uint64_t)sb.st_ino;
        made.size = (uint64_t)sb.st_size;
        if (!realpath(T.path, made.path)) snprintf(made.path, sizeof made.path, "%s", T.path);
        snprintf(T.path, sizeof T.path, "%s", made.path);
    }
    PMPI_Bcast(&made, (int)sizeof made, MPI_BYTE, 0, T.priv);
    int ok = made.ok;
    if (ok && T.rank != 0) {
        snprintf(T.path, sizeof T.path, "%s", made.path);
        T.fd = open(T.path, O_WRONLY | O_APPEND | O_CLOEXEC);
        struct stat sb;
        if (T.fd < 0) {
            warn("cannot open %s (%s)", T.path, strerror(errno));
        } else if (fstat(T.fd, &sb) != 0 || (uint64_t)sb.st_ino != made.ino ||
                   (uint64_t)sb.st_size != made.size) {
            warn("%s is not the file rank 0 created (another node's file?)", T.path);
            close(T.fd);
            T.fd = -1;
        }
    }
    int all = T.fd >= 0, every = 0;
    PMPI_Allreduce(&all, &every, 1, MPI_INT, MPI_MIN, T.priv);
    if (!ok || !every) {
        if (ok && T.rank == 0)
            warn("some rank cannot open %s (not a shared filesystem?); this job runs UNTRACED "
                 "and the file holds no events", T.path);
        if (T.fd >= 0) close(T.fd);
        T.fd = -1;
        PMPI_Comm_free(&T.priv);
        return;
    }

    size_t cap = 4u << 20;
    const char *bs = getenv("LOGGPS_TRACE_BUFFER");
    if (bs && *bs) cap = strtoull(bs, NULL, 0);
    if (cap < 4096) cap = 4096;
    if (cap > (64u << 20)) cap = 64u << 20;
    T.buf = resident(cap);
    T.cap = cap;
    T.len = E_HEAD;
    const char *sites = getenv("LOGGPS_TRACE_SITES");
    T.sites = !(sites && strcmp(sites, "0") == 0);
    const char *clean = getenv("LOGGPS_TRACE_CLEAN");
    T.clean = !(clean && strcmp(clean, "0") == 0);
    T.cache = cache_bytes();

    decide_measurements();
    T.offset_init = measure_offset();
    find_node();
    T.cores_init = time_cores();
    double links_init[LINK_CLASSES], msg_init[LINK_CLASSES][MSG_SIZES];
    time_links(T.cores_init, links_init, msg_init);
    for (int k = 0; k < T.nlinks; k++) {
        T.links[k].init_ns = links_init[k];
        memcpy(T.links[k].msg_init, msg_init[k], sizeof msg_init[k]);
    }
    time_network(T.net_init);
    /* survive a crash; replaced at Finalize */
    write_rank_chunk(T.offset_init, T.offset_init, T.cores_init);
    write_place_chunk(T.place_init, links_init, msg_init, T.net_init);
    if (T.sites) {
        T.scap = cap / 2;
        T.sbuf = resident(T.scap);
        T.nobjects = write_objects();
        void *pc[2];
        if (T.nbindings) backtrace(pc, 2); /* loads the unwinder now, not inside a call */
        T.site = site_of(ra, frame);
    }
    T.active = 1;
    T.recording = !T.write_failed;
    const char *own = getenv("LOGGPS_TRACE_OWN_TIME");
    if (T.recording && !(own && strcmp(own, "0") == 0)) {
        own_time();
        if (T.sites) T.site = site_of(ra, frame); /* the Init's, as above */
    }
    atexit(at_exit_flush);
    /* The tracer's setup is part of what the program sees as MPI_Init, so the event returns
     * now, not when PMPI_Init returned. */
    (void)t1;
    struct event e = { .code = code, .t_call = t0, .t_return = now() };
    record(&e);
}

/* Rank 0, after every rank flushed: append the X index and the trailer. */
static void write_index(void)
{
    struct stat sb;
    if (fstat(T.fd, &sb) != 0) return;
    int rfd = open(T.path, O_RDONLY | O_CLOEXEC);
    if (rfd < 0) return;
    size_t n = 0, cap = 64;
    uint8_t *x = malloc(CHUNK_HEAD + 4 + 12 * cap + 16);
    if (!x) abort();
    uint64_t off = 16, end = (uint64_t)sb.st_size;
    while (off + CHUNK_HEAD <= end) {
        uint8_t h[CHUNK_HEAD];
        if (pread(rfd, h, CHUNK_HEAD, (off_t)off) != CHUNK_HEAD) break;
        uint32_t len = h[5] | (uint32_t)h[6] << 8 | (uint32_t)h[7] << 16 | (uint32_t)h[8] << 24;
        if (h[0] == 'E') {
            if (n == cap) {
                cap *= 2;
                x = realloc(x, CHUNK_HEAD + 4 + 12 * cap + 16);
                if (!x) abort();
            }
            uint8_t *p = x + CHUNK_HEAD + 4 + 12 * n++;
            p = put_u32(p, h[1] | (uint32_t)h[2] << 8 | (uint32_t)h[3] << 16 | (uint32_t)h[4] << 24);
            put_u64(p, off);
        }
        off += CHUNK_HEAD + (uint64_t)len;
    }
    close(rfd);
    if (off != end) {
        warn("%s: chunk scan stopped at %llu of %llu bytes; no index written", T.path,
             (unsigned long long)off, (unsigned long long)end);
        free(x);
        return;
    }
    put_u32(x + CHUNK_HEAD, (uint32_t)n);
    size_t payload = 4 + 12 * n;
    fill_chunk_head(x, 'X', 0xFFFFFFFFu, payload);
    uint8_t *p = put_u64(x + CHUNK_HEAD + payload, end);
    memcpy(p, "LGPSEND\x1a", 8);
    write_all_or_stop(x, CHUNK_HEAD + payload + 16);
    free(x);
}

static void tracer_finish(uint64_t t0, void *ra, void *frame)
{
    PMPI_Barrier(T.priv); /* MPI_Finalize synchronizes; record that part */
    if (T.sites) T.site = site_of(ra, frame);
    struct event e = { .code = C_FINALIZE, .t_call = t0, .t_return = now() };
    record(&e);
    while (T.idups) { /* of idup requests freed or never completed (see idup_start) */
        struct idup *d = T.idups;
        T.idups = d->next;
        PMPI_Wait(&d->bcast, MPI_STATUS_IGNORE);
        free(d);
    }
    int64_t offset_fini = measure_offset();
    struct place place_fini = place_now();
    double cores_fini = time_cores(), links_fini[LINK_CLASSES], msg_fini[LINK_CLASSES][MSG_SIZES];
    time_links(cores_fini, links_fini, msg_fini);
    double net_fini[MSG_SIZES];
    time_network(net_fini);
    if (T.node != MPI_COMM_NULL) PMPI_Comm_free(&T.node);
    if (T.leaders != MPI_COMM_NULL) PMPI_Comm_free(&T.leaders);
    /* also on a rank that stopped recording: its events up to the stop (no-ops once a write
     * failed) */
    write_rank_chunk(T.offset_init, offset_fini, cores_fini);
    write_place_chunk(place_fini, links_fini, msg_fini, net_fini);
    flush_events();
    /* objects loaded since MPI_Init (dlopen) may hold sites: list them all again */
    if (T.sites && !T.write_failed && count_objects() != T.nobjects) write_objects();
    T.recording = 0;
    /* rank 0 has the sums only when every rank has flushed: the barrier before the index */
    uint64_t counts[3] = { T.events, T.untracked, (uint64_t)T.stopped }, sums[3];
    PMPI_Reduce(counts, sums, 3, MPI_UINT64_T, MPI_SUM, 0, T.priv);
    /* a rank that stopped has no MPI_Finalize: without the index the trace is an unfinished
     * one, which a reader loads with a warning */
    if (T.rank == 0 && !T.write_failed && !sums[2]) write_index();
    if (T.rank == 0) {
        fprintf(stderr, "loggps-trace: wrote %s (%llu events from %d ranks)\n", T.path,
                (unsigned long long)sums[0], T.size);
        if (sums[1])
            fprintf(stderr, "loggps-trace: %llu calls on communicators the tracer does not "
                    "know (intercommunicators, spawned worlds, ...) were not recorded\n",
                    (unsigned long long)sums[1]);
        if (sums[2])
            fprintf(stderr, "loggps-trace: %llu ranks stopped recording (two threads called "
                    "MPI at the same time); no index written: the trace is unfinished\n",
                    (unsigned long long)sums[2]);
    }
    close(T.fd);
    T.fd = -1;
    T.active = 0;
    PMPI_Comm_free(&T.priv);
    PMPI_Group_free(&T.world_group);
    free(T.measure);
    T.measure = NULL;
}
