//! [`Exchange`] over MPI (the `mpi` feature): the processes of `mpirun -np K loggps-predict`,
//! on the system's MPI library through rsmpi.

use super::split::Exchange;
use crate::error::Error;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::{Count, Threading};

/// This process's place in its MPI job.
pub struct Mpi {
    world: SimpleCommunicator,
    /// Finalizes MPI when dropped (after the world).
    _universe: Universe,
}

// The replay calls MPI from one thread at a time (the one that runs the replay, between the
// parallel parts of its rounds), which MPI_THREAD_SERIALIZED allows: `init` asks for it.
unsafe impl Sync for Mpi {}
unsafe impl Send for Mpi {}

/// Variables an MPI launcher sets in the processes it starts (Open MPI, MPICH's Hydra, PMIx,
/// Slurm's PMI).
const LAUNCHED: [&str; 5] = [
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "PMIX_RANK",
    "PMI_RANK",
    "MPI_LOCALNRANKS",
];

impl Mpi {
    /// MPI, where an MPI launcher started this process (else None: a plain run needs no MPI).
    pub fn init() -> Result<Option<Mpi>, Error> {
        if !LAUNCHED.iter().any(|v| std::env::var_os(v).is_some()) {
            return Ok(None);
        }
        let (universe, threading) = mpi::initialize_with_threading(Threading::Serialized)
            .ok_or_else(|| Error::Usage("MPI is initialized already".into()))?;
        if !matches!(threading, Threading::Serialized | Threading::Multiple) {
            return Err(Error::Usage(format!(
                "the MPI library gives {threading:?} threads, the replay needs MPI_THREAD_SERIALIZED"
            )));
        }
        let world = universe.world();
        let launched = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
            .iter()
            .find_map(|v| std::env::var(v).ok()?.parse::<i32>().ok());
        if let Some(n) = launched.filter(|&n| n != world.size()) {
            return Err(Error::Usage(format!(
                "started as one of {n} processes, MPI sees {}: loggps-predict was built against another MPI library than the launcher's (build it with MPICC set to that library's mpicc)",
                world.size()
            )));
        }
        Ok(Some(Mpi {
            world,
            _universe: universe,
        }))
    }
}

impl Exchange for Mpi {
    fn process(&self) -> usize {
        self.world.rank() as usize
    }

    fn processes(&self) -> usize {
        self.world.size() as usize
    }

    fn all_to_all(&self, out: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, Error> {
        let n = self.processes();
        let big = || Error::Usage("a split replay's round exchanges more than 2^31 words".into());
        let sizes: Vec<u64> = out.iter().map(|v| v.len() as u64).collect();
        let mut incoming = vec![0u64; n];
        self.world.all_to_all_into(&sizes[..], &mut incoming[..]);
        let counts = |s: &[u64]| -> Result<(Vec<Count>, Vec<Count>), Error> {
            let counts: Vec<Count> = (s.iter().map(|&c| Count::try_from(c)))
                .collect::<Result<_, _>>()
                .map_err(|_| big())?;
            let mut displs = Vec::with_capacity(n);
            let mut at: Count = 0;
            for &c in &counts {
                displs.push(at);
                at = at.checked_add(c).ok_or_else(big)?;
            }
            Ok((counts, displs))
        };
        let (sc, sd) = counts(&sizes)?;
        let (rc, rd) = counts(&incoming)?;
        let flat = out.concat();
        let mut buf = vec![0u64; incoming.iter().sum::<u64>() as usize];
        {
            let send = Partition::new(&flat[..], &sc[..], &sd[..]);
            let mut recv = PartitionMut::new(&mut buf[..], &rc[..], &rd[..]);
            self.world.all_to_all_varcount_into(&send, &mut recv);
        }
        let mut got = Vec::with_capacity(n);
        let mut rest = &buf[..];
        for &c in &incoming {
            let (v, after) = rest.split_at(c as usize);
            got.push(v.to_vec());
            rest = after;
        }
        Ok(got)
    }
}
