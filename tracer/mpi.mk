# Which MPI to build with, shared by tracer/Makefile and tracer/gauss/Makefile:
#   MPI=openmpi -> mpicc.openmpi into build-openmpi/;  MPI=mpich -> mpicc.mpich into build-mpich/;
#   otherwise `mpicc` into the current folder; MPICC=... BUILD=dir for any other MPI.
ifeq ($(MPI),openmpi)
MPICC ?= mpicc.openmpi
BUILD ?= build-openmpi
else ifeq ($(MPI),mpich)
MPICC ?= mpicc.mpich
BUILD ?= build-mpich
endif
MPICC ?= mpicc
BUILD ?= .
