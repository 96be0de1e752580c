/* Part of loggps_trace.c (included there, in order: one translation unit): The clock. */
/*
 * The clock. Times are CLOCK_MONOTONIC nanoseconds. Where the kernel itself derives
 * CLOCK_MONOTONIC from the TSC (x86-64, clocksource "tsc"), now() reads the TSC directly,
 * which costs about half of clock_gettime, and converts it with a scale fitted against
 * clock_gettime; it re-anchors to clock_gettime every millisecond, so it stays within a few
 * ns of CLOCK_MONOTONIC, and it never goes backwards. LOGGPS_TRACE_CLOCK=monotonic turns it
 * off (clock_gettime for every time stamp).
 */
static uint64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
#include <x86intrin.h>

static struct {
    int on;
    uint64_t tsc, ns;         /* anchor: a TSC value and the CLOCK_MONOTONIC time it had */
    uint64_t mult;            /* ns per tick, times 2^32 */
    uint64_t period;          /* re-anchor after this many ticks (1 ms) */
    uint64_t tsc0, ns0;       /* first anchor: the scale is fitted from it */
    uint64_t last;            /* last time returned */
} clk;

/* A TSC value and CLOCK_MONOTONIC taken together: the tightest of three tries, or of up to
 * ten while the tightest is wider than 1000 ticks (a preemption between the readings). */
static void tsc_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 10 && (i < 3 || best > 1000); i++) {
        uint64_t a = __rdtsc(), m = mono(), b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = m;
        }
    }
}

static void clock_fit(uint64_t tsc, uint64_t ns)
{
    double ns_per_tick = (double)(ns - clk.ns0) / (double)(tsc - clk.tsc0);
    clk.mult = (uint64_t)(ns_per_tick * 4294967296.0);
    clk.period = (uint64_t)(1e6 / ns_per_tick);
    clk.tsc = tsc;
    clk.ns = ns;
}

static uint64_t clock_reanchor(void)
{
    uint64_t tsc, ns;
    tsc_pair(&tsc, &ns);
    if (tsc > clk.tsc && ns > clk.ns) clock_fit(tsc, ns);
    else clk.tsc = tsc, clk.ns = ns; /* TSC went backwards (unsynchronized cores?) */
    if (ns < clk.last) ns = clk.last;
    return clk.last = ns;
}

static void clock_start(void)
{
    const char *env = getenv("LOGGPS_TRACE_CLOCK");
    if (env && strcmp(env, "monotonic") == 0) return;
    char source[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f) return;
    if (!fgets(source, sizeof source, f)) source[0] = 0;
    fclose(f);
    if (strcmp(source, "tsc\n") != 0) return;
    tsc_pair(&clk.tsc0, &clk.ns0);
    uint64_t tsc, ns;
    do tsc_pair(&tsc, &ns); while (ns - clk.ns0 < 1000000); /* first scale over 1 ms */
    if (tsc <= clk.tsc0) return;
    clock_fit(tsc, ns);
    clk.last = ns;
    clk.on = 1;
}

static inline uint64_t now(void)
{
    if (!clk.on) return mono();
    uint64_t d = __rdtsc() - clk.tsc;
    if (d >= clk.period) return clock_reanchor();
    uint64_t t = clk.ns + ((d * clk.mult) >> 32);
    if (t < clk.last) t = clk.last;
    return clk.last = t;
}
#else
static void clock_start(void) {}
static inline uint64_t now(void) { return mono(); }
#endif
