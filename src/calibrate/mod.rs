//! `loggps-predict calibrate`: measure round-trip times on this machine with an MPI program,
//! fit the LogGPS parameters to them, and write a parameter file the predictor reads.

pub mod fit;
