#!/usr/bin/env bash
# A relocatable Open MPI 4.1 runtime, made from this Debian machine's packages, for a lent
# machine that has no MPI (the split replay's figures at K > 1 on more cores than CI has):
#
#   bash tests/bench/mpi-bundle.sh .mpi      # then carry .mpi (about 25 MiB) and the builds
#   source .mpi/env.sh; mpirun -np 4 --bind-to none target/mpi/release/loggps-predict bench T
#
# The target needs glibc 2.36 or newer (libevent uses arc4random). Put the folder where git
# ignores it (.git/info/exclude).
set -euo pipefail
out=${1:?usage: mpi-bundle.sh DIR}
mkdir -p "$out/debs" "$out/root"
out=$(cd "$out" && pwd)
packages=(openmpi-bin libopenmpi3 openmpi-common libpmix2 libhwloc15 libhwloc-plugins
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 ibverbs-providers
  librdmacm1 libpsm2-2 libpsm-infinipath1 libnuma1 libnl-3-200 libnl-route-3-200 libmunge2
  libpciaccess0 libudev1 libuuid1 libatomic1)
(cd "$out/debs" && apt-get download "${packages[@]}" >/dev/null)
for d in "$out"/debs/*.deb; do dpkg -x "$d" "$out/root"; done
rm -rf "$out/debs" "$out/root/usr/share/doc" "$out/root/usr/share/man" "$out/root/usr/share/lintian"
ml=$out/root/usr/lib/x86_64-linux-gnu
# hwloc's plugins but PCI need X11, OpenCL or libxml2.
find "$ml/hwloc" -name '*.so' ! -name 'hwloc_pci.so' -delete 2>/dev/null || true
# Links Debian's alternatives would make.
ln -sf mpirun.openmpi "$out/root/usr/bin/mpirun"
ln -sf mpiexec.openmpi "$out/root/usr/bin/mpiexec"
for so in "$out"/root/usr/lib/libpsm1/libpsm_infinipath.so.1.*; do
  [ -e "$so" ] && ln -sf "$(basename "$so")" "$out/root/usr/lib/libpsm1/libpsm_infinipath.so.1"
done
cat > "$out/env.sh" <<'ENV'
# Relocatable Open MPI 4.1 runtime (Debian packages, extracted with dpkg -x): source it.
_mpi_bundle_dir="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd -P)"
_mpi_root="$_mpi_bundle_dir/root"
_mpi_multiarch="$_mpi_root/usr/lib/x86_64-linux-gnu"

export MPI_BUNDLE_ROOT="$_mpi_root"

# Executables (mpirun, mpiexec, orterun, orted, ompi_info).
export PATH="$_mpi_root/usr/bin${PATH:+:$PATH}"

# Shared libraries: libmpi/libopen-* + dependencies (pmix, hwloc, libevent,
# fabric, ucx, verbs, rdmacm, psm, psm2, numa, nl, munge, pciaccess, udev, uuid, atomic).
_mpi_ldlp="$_mpi_multiarch:$_mpi_multiarch/openmpi/lib:$_mpi_multiarch/pmix2/lib:$_mpi_root/lib/x86_64-linux-gnu:$_mpi_root/usr/lib/libpsm1"
export LD_LIBRARY_PATH="$_mpi_ldlp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Open MPI install-dir relocation (Debian: --prefix=/usr,
# --libdir=${prefix}/lib/x86_64-linux-gnu/openmpi/lib, --sysconfdir=/etc/openmpi).
# OPAL_PREFIX relocates everything derived from ${prefix}; sysconfdir is absolute
# in Debian's build, so it must be set explicitly.
export OPAL_PREFIX="$_mpi_root/usr"
export OPAL_EXEC_PREFIX="$_mpi_root/usr"
export OPAL_BINDIR="$_mpi_root/usr/bin"
export OPAL_LIBDIR="$_mpi_multiarch/openmpi/lib"
export OPAL_PKGLIBDIR="$_mpi_multiarch/openmpi/lib/openmpi3"
export OPAL_DATAROOTDIR="$_mpi_root/usr/share"
export OPAL_DATADIR="$_mpi_root/usr/share"
export OPAL_PKGDATADIR="$_mpi_root/usr/share/openmpi"
export OPAL_SYSCONFDIR="$_mpi_root/etc/openmpi"

# PMIx 4.2 (external, Debian prefix /usr/lib/x86_64-linux-gnu/pmix2; libdir, datadir
# and sysconfdir are absolute in its build, and Debian's pmix-mca-params.conf hard-codes
# mca_base_component_path, so override all of them).
export PMIX_PREFIX="$_mpi_multiarch/pmix2"
export PMIX_EXEC_PREFIX="$_mpi_multiarch/pmix2"
export PMIX_LIBDIR="$_mpi_multiarch/pmix2/lib"
export PMIX_PKGLIBDIR="$_mpi_multiarch/pmix2/lib/pmix"
export PMIX_DATAROOTDIR="$_mpi_multiarch/pmix2/share"
export PMIX_DATADIR="$_mpi_multiarch/pmix2/share"
export PMIX_PKGDATADIR="$_mpi_multiarch/pmix2/share/pmix"
export PMIX_SYSCONFDIR="$_mpi_multiarch/pmix2/share"
export PMIX_MCA_mca_base_component_path="$_mpi_multiarch/pmix2/lib/pmix"
# hwloc plugins (only hwloc_pci is shipped).
export HWLOC_PLUGINS_PATH="$_mpi_multiarch/hwloc"

# Running as root (containers).
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# Single-node / no special network hardware: shared memory + TCP only.
# (The bundled etc/openmpi/openmpi-mca-params.conf additionally sets
#  mtl=^ofi, btl=^uct,openib,ofi, pml=^ucx, osc=^ucx,pt2pt.)
export OMPI_MCA_pml=ob1
export OMPI_MCA_btl=self,vader,tcp
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_base_warn_component_unused=0
# Launcher: keep the default rsh/ssh launcher (needed only for multi-node runs),
# but Open MPI 4.1 aborts if neither ssh nor rsh is in PATH, even for purely
# local runs. "false" is the last-resort agent: local runs never invoke it; a
# remote launch without ssh fails cleanly instead of hanging.
export OMPI_MCA_plm_rsh_agent="ssh : rsh : false"

unset _mpi_bundle_dir _mpi_root _mpi_multiarch _mpi_ldlp
ENV
echo "bundle in $out ($(du -sh "$out" | cut -f1)): source $out/env.sh"
