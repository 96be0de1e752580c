/* Part of loggps_trace.c (included there, in order: one translation unit): Call sites. */
/* ------------------------------------------------------------------------------------------ */
/* Call sites                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/*
 * Every record has a site: the return address of the program's MPI call. A rank's distinct
 * addresses make its site table, in order of first use; the `S` chunk written just before
 * each `E` chunk carries the addresses new since the last one and each record's index into
 * the table, plus one. The `M` chunk lists the loaded objects (path, build id, where they lie), so that
 * `loggps-predict callsites` can turn the addresses into function, file and line: they differ
 * from rank to rank, since each process loads its objects at addresses of its own.
 *
 * A call that reached the wrapper through this library (fortran.c's entry points) or through
 * MPI's Fortran bindings (MPICH's libmpifort, Open MPI's mpi_f08 module) was made by the
 * program somewhere further up the stack: program_site finds it.
 */

/* Whether a return address lies in this library or in a binding (see above). */
static inline int indirect(uintptr_t a)
{
    int in = a - T.self_lo < T.self_span;
    for (int i = 0; i < T.nbindings; i++) in |= a - T.bindings[i].lo < T.bindings[i].span;
    return in;
}

/* The first return address on the stack outside this library and the bindings, else
 * `otherwise`. */
static uintptr_t unwound(uintptr_t otherwise)
{
    void *pcs[8];
    int n = backtrace(pcs, 8);
    for (int i = 0; i < n; i++)
        if (!indirect((uintptr_t)pcs[i])) return (uintptr_t)pcs[i];
    return otherwise;
}

/* Unwinding costs a microsecond or more a call; a binding's frame has the same layout at each
 * of its calls, so where its return address lies above the stack pointer at a return address
 * `ra` into it is learned from one unwinding, checked by SITE_CHECKS more, and then read
 * directly (T.binding_calls: slot id = the word offset, kind = checks left; UINT64_MAX: not
 * found, unwind every time). x86-64 only: elsewhere every call through a binding unwinds. */
#define SITE_CHECKS 4
static uintptr_t through_binding(uintptr_t ra, const uintptr_t *sp)
{
#if defined(__x86_64__)
    struct slot *s = table_find(&T.binding_calls, ra);
    if (s && s->kind == 0 && s->id != UINT64_MAX && !indirect(sp[s->id]) && sp[s->id])
        return sp[s->id];
    uintptr_t u = unwound(0);
    if (!u) return ra;
    if (!s) {
        s = table_put(&T.binding_calls, ra);
        s->id = UINT64_MAX;
        for (uint64_t d = 0; d < 256 && s->id == UINT64_MAX; d++)
            if (sp[d] == u) s->id = d;
        s->kind = s->id == UINT64_MAX ? 0 : SITE_CHECKS;
    } else if (s->kind > 0) {
        if (sp[s->id] == u) s->kind--;
        else s->id = UINT64_MAX, s->kind = 0;
    }
    return u;
#else
    (void)sp;
    return unwound(ra);
#endif
}

/* The program's call that led to a wrapper whose return address `ra` is indirect; `frame` is
 * the wrapper's frame (it keeps a frame pointer, see the Makefile: on x86-64 the caller's
 * stack pointer once the wrapper returned is frame + 2 words). */
__attribute__((cold, noinline)) static uintptr_t program_site(uintptr_t ra, const uintptr_t *frame)
{
    if (!frame) return unwound(ra);
    const uintptr_t *sp = frame + 2;
    /* From fortran.c's entry point (which keeps a frame pointer too): its return address is
     * one frame up. */
    if (ra - T.self_lo < T.self_span) {
        const uintptr_t *up = (const uintptr_t *)frame[0];
        if (!(up > frame && (uintptr_t)(up - frame) < (1u << 20))) return unwound(ra);
        ra = up[1];
        sp = up + 2;
        if (!indirect(ra)) return ra;
    }
    return through_binding(ra, sp);
}

/* The site of a call whose wrapper has return address `ra` and frame `frame`. */
HOT uintptr_t site_of(void *ra, void *frame)
{
    uintptr_t a = (uintptr_t)ra;
    return indirect(a) ? program_site(a, frame) : a;
}

/* The index of address a in the site table (added if new). */
HOT uint64_t site_id(uintptr_t a)
{
    if (a == T.last_site && T.naddrs) return T.last_id;
    struct slot *s = table_find(&T.site_ids, a);
    if (!s) {
        if (T.naddrs == T.addrs_cap) {
            T.addrs_cap = T.addrs_cap ? 2 * T.addrs_cap : 256;
            T.addrs = realloc(T.addrs, T.addrs_cap * sizeof *T.addrs);
            if (!T.addrs) abort();
        }
        s = table_put(&T.site_ids, a);
        s->id = T.naddrs;
        T.addrs[T.naddrs++] = a;
    }
    T.last_site = a;
    T.last_id = s->id;
    return s->id;
}

/* Appends the S chunk of the next E chunk's `nrec` records (their indices are in sbuf). */
static void write_sites(uint32_t nrec)
{
    size_t fresh = T.naddrs - T.addrs_written;
    size_t need = CHUNK_HEAD + 8 + 8 * fresh + T.slen;
    if (need > T.sout_cap) {
        free(T.sout);
        T.sout_cap = 2 * need;
        T.sout = malloc(T.sout_cap);
        if (!T.sout) abort();
    }
    uint8_t *p = put_u32(T.sout + CHUNK_HEAD, (uint32_t)fresh);
    for (size_t i = T.addrs_written; i < T.naddrs; i++) p = put_u64(p, T.addrs[i]);
    p = put_u32(p, nrec);
    memcpy(p, T.sbuf, T.slen);
    p += T.slen;
    append_chunk(T.sout, 'S', (uint32_t)T.rank, (size_t)(p - T.sout - CHUNK_HEAD));
    T.addrs_written = T.naddrs;
    T.slen = 0;
}

/* The loaded objects, encoded as the M chunk's payload. */
struct objects { uint8_t *b; size_t len, cap; uint32_t n, seen; };

static const char *const binding_names[] = {
    "libmpifort.", "libmpichfort.", "libmpi_mpifh.", "libmpi_usempif08.",
    "libmpi_usempi_ignore_tkr.", "libmpi_usempi.", "libfmpich."
};

static int one_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct objects *o = data;
    int first = o->seen++ == 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    char id[2 * 64 + 1] = "";
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            if (a < lo) lo = a;
            if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
        } else if (ph->p_type == PT_NOTE && !*id) {
            /* the GNU build id note: namesz, descsz, type 3, "GNU\0", the id */
            const uint8_t *n = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
            const uint8_t *end = n + ph->p_memsz;
            while (n + 12 <= end) {
                uint32_t namesz, descsz, type;
                memcpy(&namesz, n, 4);
                memcpy(&descsz, n + 4, 4);
                memcpy(&type, n + 8, 4);
                const uint8_t *name = n + 12, *desc = name + ((namesz + 3) & ~3u);
                if (desc + descsz > end) break;
                if (type == 3 && namesz == 4 && memcmp(name, "GNU", 4) == 0 && descsz <= 64) {
                    for (uint32_t k = 0; k < descsz; k++) sprintf(id + 2 * k, "%02x", desc[k]);
                    break;
                }
                n = desc + ((descsz + 3) & ~3u);
            }
        }
    }
    if (hi <= lo) return 0;
    char path[4096] = "";
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (!*name && first) { /* the program itself */
        ssize_t k = readlink("/proc/self/exe", path, sizeof path - 1);
        path[k > 0 ? k : 0] = 0;
    } else {
        snprintf(path, sizeof path, "%s", name);
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if ((uintptr_t)&program_site - lo < hi - lo) {
        T.self_lo = lo;
        T.self_span = hi - lo;
    }
    for (size_t i = 0; i < sizeof binding_names / sizeof *binding_names; i++)
        if (strncmp(base, binding_names[i], strlen(binding_names[i])) == 0 && T.nbindings < 4) {
            T.bindings[T.nbindings].lo = lo;
            T.bindings[T.nbindings++].span = hi - lo;
        }
    if (o->len + 3 * 8 + 2 * 10 + sizeof id + strlen(path) > o->cap) {
        o->cap = 2 * o->cap + sizeof path + 256;
        o->b = realloc(o->b, o->cap);
        if (!o->b) abort();
    }
    uint8_t *p = o->b + o->len;
    p = put_u64(p, (uint64_t)info->dlpi_addr);
    p = put_u64(p, (uint64_t)lo);
    p = put_u64(p, (uint64_t)hi);
    p = put_str(p, id);
    p = put_str(p, path);
    o->len = (size_t)(p - o->b);
    o->n++;
    return 0;
}

static int count_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info, (void)size;
    ++*(uint32_t *)data;
    return 0;
}

static uint32_t count_objects(void)
{
    uint32_t n = 0;
    dl_iterate_phdr(count_one, &n);
    return n;
}

/* Appends this rank's M chunk; the number of objects loaded (count_objects). */
static uint32_t write_objects(void)
{
    struct objects o = { malloc(4096), CHUNK_HEAD + 4, 4096, 0, 0 };
    if (!o.b) abort();
    T.nbindings = 0;
    dl_iterate_phdr(one_object, &o);
    put_u32(o.b + CHUNK_HEAD, o.n);
    append_chunk(o.b, 'M', (uint32_t)T.rank, o.len - CHUNK_HEAD);
    free(o.b);
    return o.seen;
}

static void flush_events(void)
{
    if (T.nrec == 0 || T.fd < 0) return;
    if (T.sites) write_sites(T.nrec);
    fill_chunk_head(T.buf, 'E', (uint32_t)T.rank, T.len - CHUNK_HEAD);
    put_u32(T.buf + CHUNK_HEAD, T.nrec);
    write_all_or_stop(T.buf, T.len);
    T.len = E_HEAD;
    T.nrec = 0;
    T.flushes++;
}

/* The sampled own time of each routine that has samples (see own_sample), into at most `room`
 * bytes at `p`: their count (u32), then per routine its code (u8), its samples (u32) and the
 * median of those kept, plus what a gap holds beyond a sample (sample_offset) and what the
 * samples' own clock reads add to a gap on average (f64); nothing where no routine has any. */
static uint8_t *put_own_by(uint8_t *p, size_t room)
{
    uint32_t n = 0;
    for (int c = 0; c < 256; c++) n += T.own_by[c] != NULL;
    if (n == 0 || room < 4 + 13 * (size_t)n) return p;
    p = put_u32(p, n);
    for (int c = 0; c < 256; c++) {
        struct own_kept *k = T.own_by[c];
        if (!k) continue;
        *p++ = (uint8_t)c;
        p = put_u32(p, k->seen);
        p = put_f64(p, kept_median(k) + T.sample_delta + 2 * T.clock_ns / OWN_EVERY);
    }
    return p;
}

static void write_rank_chunk(int64_t off_init, int64_t off_fini, double cores_fini)
{
    uint8_t b[CHUNK_HEAD + 320 + 4 + 13 * 256], *p = b + CHUNK_HEAD;
    p = put_str(p, T.host);
    p = put_u64(p, (uint64_t)off_init);
    p = put_u64(p, (uint64_t)off_fini);
    if (T.cores_init >= 0 && cores_fini >= 0) {
        double both[2] = { T.cores_init, cores_fini };
        p = put_u32(p, (uint32_t)T.cores_partner);
        for (int i = 0; i < 2; i++) p = put_f64(p, both[i]);
    }
    double own[4] = { T.own_ns, T.in_call_ns, T.own_req_ns, T.in_call_req_ns };
    int nown = own[0] < 0 ? 0 : own[1] < 0 ? 1 : own[2] < 0 || own[3] < 0 ? 2 : 4;
    for (int i = 0; i < nown; i++) p = put_f64(p, own[i]);
    if (nown == 4 && T.node_cpus > 0) {
        p = put_u64(p, T.node_cpus);
        p = put_own_by(p, (size_t)(b + sizeof b - p));
    }
    append_chunk(b, 'R', (uint32_t)T.rank, (size_t)(p - b - CHUNK_HEAD));
}

/* This rank's P chunk: its node, where it ran at Init and now, and (on a node's first rank) the
 * node's links timed at Init and now (`fini_ns`, from time_links), then the sizes of the
 * messages timed over each link and each link's message round trips at Init and now
 * (`fini_msg`); on world rank 0 of a job over two nodes or more, the messages' round trips to
 * the second node's first rank at Init and now (`fini_net`, from time_network). */
static void write_place_chunk(struct place fini, const double *fini_ns,
                              const double (*fini_msg)[MSG_SIZES], const double *fini_net)
{
    uint8_t b[CHUNK_HEAD + 4 + 6 * 4 + 1 + LINK_CLASSES * 25 + 1 + MSG_SIZES * 4 +
              LINK_CLASSES * MSG_SIZES * 16 + 4 + 1 + MSG_SIZES * 20],
        *p = b + CHUNK_HEAD;
    int at[6] = { T.place_init.cpu, T.place_init.socket, T.place_init.llc,
                  fini.cpu, fini.socket, fini.llc };
    int written[LINK_CLASSES];
    p = put_u32(p, T.node_first);
    for (int i = 0; i < 6; i++) p = put_u32(p, (uint32_t)at[i]);
    uint8_t *n = p++;
    *n = 0;
    for (int k = 0; k < T.nlinks; k++) {
        const struct link *l = &T.links[k];
        if (!(l->init_ns > 0 && fini_ns[k] > 0)) continue;
        double both[2] = { l->init_ns, fini_ns[k] };
        *p++ = (uint8_t)l->cls;
        p = put_u32(p, l->wa);
        p = put_u32(p, l->wb);
        for (int i = 0; i < 2; i++) p = put_f64(p, both[i]);
        written[(*n)++] = k;
    }
    if (*n > 0) {
        /* the messages' round trips, where every written link has them all; else none */
        int all = 1;
        for (int j = 0; j < *n; j++)
            for (int s = 0; s < MSG_SIZES; s++)
                all &= T.links[written[j]].msg_init[s] > 0 && fini_msg[written[j]][s] > 0;
        *p++ = all ? MSG_SIZES : 0;
        for (int s = 0; all && s < MSG_SIZES; s++) p = put_u32(p, (uint32_t)MSG_BYTES[s]);
        for (int j = 0; all && j < *n; j++)
            for (int s = 0; s < MSG_SIZES; s++) {
                p = put_f64(p, T.links[written[j]].msg_init[s]);
                p = put_f64(p, fini_msg[written[j]][s]);
            }
    }
    int net = T.net_partner >= 0;
    for (int s = 0; s < MSG_SIZES; s++) net &= T.net_init[s] > 0 && fini_net[s] > 0;
    if (net) {
        p = put_u32(p, (uint32_t)T.net_partner);
        *p++ = MSG_SIZES;
        for (int s = 0; s < MSG_SIZES; s++) p = put_u32(p, (uint32_t)MSG_BYTES[s]);
        for (int s = 0; s < MSG_SIZES; s++) {
            p = put_f64(p, T.net_init[s]);
            p = put_f64(p, fini_net[s]);
        }
    }
    append_chunk(b, 'P', (uint32_t)T.rank, (size_t)(p - b - CHUNK_HEAD));
}

static void write_comm_chunk(const struct comm *c)
{
    size_t payload = 8 + 4 * (size_t)c->size;
    uint8_t *b = malloc(CHUNK_HEAD + payload), *p = b + CHUNK_HEAD;
    if (!b) abort();
    p = put_u32(p, c->id);
    p = put_u32(p, (uint32_t)c->size);
    for (int i = 0; i < c->size; i++) p = put_u32(p, (uint32_t)c->members[i]);
    append_chunk(b, 'C', 0xFFFFFFFFu, payload);
    free(b);
}
