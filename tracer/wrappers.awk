# The wrappers of routines.tsv (see its header), as C:
#   awk -v lang=c -f wrappers.awk routines.tsv         the MPI_ wrappers, into loggps_trace.c
#   awk -v lang=fortran -f wrappers.awk routines.tsv   Open MPI's Fortran entry points, fortran.c
BEGIN { FS = "\t"; if (lang != "c" && lang != "fortran") die("lang must be c or fortran") }
/^#/ || NF == 0 { next }
NF != 5 { die("expected 5 tab-separated columns, found " NF) }
{
    name = $1; kind = $2; recorded = $3; params = $4
    np = split(params, p, ",")
    for (i = 1; i <= np; i++) {
        gsub(/^[ \t]+|[ \t]+$/, "", p[i])
        array[i] = sub(/[ \t]*\[\]$/, "", p[i])
        match(p[i], /[A-Za-z_][A-Za-z0-9_]*$/)
        pname[i] = substr(p[i], RSTART, RLENGTH)
        ptype[i] = substr(p[i], 1, RSTART - 1)
        sub(/^const[ \t]+/, "", ptype[i])
        gsub(/[ \t]+/, "", ptype[i])
        if (array[i]) ptype[i] = ptype[i] "[]"
    }
    if (params == "void") np = 0
    if (lang == "c") c_wrapper()
    else if ($5 == "gen") fortran_wrapper()
    else if ($5 != "hand") die("Fortran: expected gen or hand, found " $5)
}

function die(msg) { printf "routines.tsv:%d: %s\n", NR, msg > "/dev/stderr"; exit 1 }

function names(   i, s) { s = ""; for (i = 1; i <= np; i++) s = s (i > 1 ? ", " : "") pname[i]; return s }

function c_wrapper(   call) {
    call = "PMPI_" name "(" names() ")"
    if (kind == "hand") { printf "int MPI_%s(%s); /* src/wrap_*.c */\n\n", name, params; return }
    printf "int MPI_%s(%s)\n{\n", name, params
    if (kind == "created") printf "    if (!T.active) return %s;\n", call
    if (kind == "created" || kind == "registered") printf "    int own = enter();\n"
    else printf "    if (!enter()) return %s;\n", call
    if (kind == "created") printf "    uint64_t t0 = own ? now() : 0;\n"
    else if (kind != "registered" && kind != "persist_new") printf "    uint64_t t0 = now();\n"
    printf "    int rc = %s;\n", call
    if (kind == "times") {
        printf "    struct event e = { .code = C_%s, .t_call = t0, .t_return = now() };\n", toupper(name)
        printf "    record(&e);\n"
    } else if (kind == "persist_new") {
        printf "    if (rc == MPI_SUCCESS) persist_new(%s);\n", recorded
    } else if (kind == "created") {
        printf "    return created(own, C_%s, t0, rc, %s);\n}\n\n", toupper(name), recorded; return
    } else if (kind == "registered") {
        printf "    return registered(own, rc, %s);\n}\n\n", recorded; return
    } else if (kind ~ /_event$/) {
        printf "    %s(C_%s, t0, now(), %s);\n", kind, toupper(name), recorded
    } else die("C: unknown kind " kind)
    printf "    return leave(rc);\n}\n\n"
}

# One Fortran argument: its parameter (fp), the C argument (fa), and for the one output handle
# its C variable (out_decl) and what writes it back (out_made).
function fortran_param(i,   t, n) {
    t = ptype[i]; n = pname[i]
    fp = "MPI_Fint *" n
    if (t == "void*") { fp = "void *" n; fa = "fbuf(" n ")" }
    else if (t == "int") fa = "*" n
    else if (t == "int[]") fa = n
    else if (t == "MPI_Aint") { fp = "MPI_Aint *" n; fa = "*" n }
    else if (t == "MPI_Aint[]") { fp = "MPI_Aint *" n; fa = n }
    else if (t == "MPI_Datatype") fa = "TYPE(" n ")"
    else if (t == "MPI_Comm") fa = "COMM(" n ")"
    else if (t == "MPI_Op") fa = "OP(" n ")"
    else if (t == "MPI_Win") fa = "WIN(" n ")"
    else if (t == "MPI_Info") fa = "MPI_Info_f2c(*" n ")"
    else if (t == "MPI_Group") fa = "MPI_Group_f2c(*" n ")"
    else if (t == "MPI_Status*") fa = "fstatus(" n ")"
    else if (t == "MPI_Request*" || t == "MPI_Comm*" || t == "MPI_Win*") {
        if (out_made != "") die("Fortran gen: a second output handle " n)
        out_decl = substr(t, 1, length(t) - 1) " out"
        out_made = (t == "MPI_Request*" ? "made_request" : t == "MPI_Comm*" ? "made_comm" : "made_win") \
                   "(rc, &out, " n ", ierr)"
        fa = "&out"
    } else die("Fortran gen: no rule for parameter type " t " (" n "): write it by hand")
}

function fortran_wrapper(   i, fps, fas, lo) {
    out_decl = ""; out_made = ""; fps = ""; fas = ""
    for (i = 1; i <= np; i++) {
        fortran_param(i)
        fps = fps fp ", "; fas = fas (i > 1 ? ", " : "") fa
    }
    lo = tolower(name)
    printf "void ompi_%s_f(%sMPI_Fint *ierr)\n{\n", lo, fps
    if (out_decl != "") {
        printf "    %s;\n    int rc = MPI_%s(%s);\n    %s;\n", out_decl, name, fas, out_made
    } else printf "    set(ierr, MPI_%s(%s));\n", name, fas
    printf "}\nNAMES(%s, %s)\n\n", lo, toupper(name)
}
