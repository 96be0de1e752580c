/*
 * loggps-trace: a PMPI tracer that writes the loggps binary trace format (see FORMAT.md).
 *
 * How it works, in one paragraph: every wrapper takes the time, calls the PMPI routine, takes
 * the time again and fills a `struct event` that it hands to record(), the one recording path.
 * record() encodes the event (LEB128/zigzag) into this rank's buffer; a full buffer is appended
 * to the trace file as one `E` chunk with a single write() (the file is opened with O_APPEND by
 * every rank, so chunks never interleave on a local filesystem). Rank 0 creates the file and
 * writes the header and the `J` chunk in MPI_Init; each rank writes its `R` and `P` chunks at
 * Init and again at Finalize; the rank 0 of each new communicator writes its `C` chunk; rank 0
 * appends the `X` index and the trailer at Finalize, after everybody flushed. Under
 * MPI_THREAD_MULTIPLE only one thread at a time may be inside a wrapper (enter/leave); a rank
 * whose threads really call MPI at once stops recording.
 *
 * Environment: LOGGPS_TRACE (output path, default ./loggps-trace.bin), LOGGPS_TRACE_BUFFER
 * (event buffer bytes per rank, default 4 MiB, 4 KiB..64 MiB), LOGGPS_TRACE_DISABLE=1,
 * LOGGPS_TRACE_EAGER_CVAR (name of the control variable to report as the eager limit),
 * LOGGPS_TRACE_SITES=0 (no call sites: no `S` and `M` chunks).
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cores.h"
#include "place.h"

/* The tracer in parts by concern, included in this order into one translation unit (its
 * helpers stay static, inlined into the wrappers as before). */
#include "src/encoding.c"
#include "src/clock.c"
#include "src/buffer.c"
#include "src/sites.c"
#include "src/comms.c"
#include "src/record.c"
#include "src/start.c"
#include "src/wrap_p2p.c"
#include "src/wrap_coll.c"
#include "src/wrap_other.c"
/* The wrappers generated from routines.tsv at build time (the Makefile, wrappers.awk). */
#include "wrappers.c"
