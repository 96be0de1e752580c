# The MPI_* wrappers of wrappers.tsv, as C (see its header): awk -f wrappers.awk wrappers.tsv
BEGIN { FS = "\t" }
/^#/ || NF == 0 { next }
NF != 4 { printf "wrappers.tsv:%d: expected 4 tab-separated columns, found %d\n", NR, NF > "/dev/stderr"; exit 1 }
{
    name = $1; recorder = $2; recorded = $3; params = $4
    n = split(params, p, ",")
    args = ""
    for (i = 1; i <= n; i++) {
        sub(/\[\][ \t]*$/, "", p[i])
        sub(/[ \t]+$/, "", p[i])
        match(p[i], /[A-Za-z_][A-Za-z0-9_]*$/)
        args = args (i > 1 ? ", " : "") substr(p[i], RSTART, RLENGTH)
    }
    printf "int MPI_%s(%s)\n{\n", name, params
    printf "    if (!enter()) return PMPI_%s(%s);\n", name, args
    printf "    uint64_t t0 = now();\n"
    printf "    int rc = PMPI_%s(%s);\n", name, args
    printf "    %s(C_%s, t0, now(), %s);\n", recorder, toupper(name), recorded
    printf "    return leave(rc);\n}\n\n"
}
