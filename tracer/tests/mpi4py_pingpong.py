# mpi4py under the tracer (issue 43), 2 ranks, mpi4py's default settings (it initializes with
# MPI_THREAD_MULTIPLE). mpi4py receives Python objects with MPI_Mprobe + MPI_Mrecv: unless those
# are recorded, the trace has sends with no matching receive. A ping-pong of Python objects
# (comm.send/recv, pickled; some larger than the eager limit) and of numpy buffers
# (comm.Send/Recv), 400 messages, then an allreduce of each kind. Prints the number of
# comm.recv calls of the job as one line "RECVS N" (rank 0).
from mpi4py import MPI
import numpy as np

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
assert size == 2, "run on 2 ranks"
peer = 1 - rank
ROUNDS = 100
data = np.arange(1000, dtype="d") + rank
got = np.empty(1000, dtype="d")
recvs = 0
for i in range(ROUNDS):
    n = (i % 10 + 1) * 100  # 800 to 8000 bytes
    if rank == 0:
        comm.send({"round": i, "payload": bytes(i * 100)}, dest=peer, tag=1)
        reply = comm.recv(source=peer, tag=2)
        recvs += 1
        assert reply == ("pong", i), reply
        comm.Send(data[:n], dest=peer, tag=3)
        status = MPI.Status()
        comm.Recv(got, source=peer, tag=4, status=status)
        assert status.Get_count(MPI.DOUBLE) == n and got[0] == 1.0
    else:
        status = MPI.Status()
        msg = comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status)
        recvs += 1
        assert status.Get_source() == 0 and status.Get_tag() == 1 and msg["round"] == i
        comm.send(("pong", i), dest=peer, tag=2)
        comm.Recv(got, source=peer, tag=3)
        comm.Send(data[:n], dest=peer, tag=4)

total = comm.allreduce(rank + 1, op=MPI.SUM)
assert total == 3, total
s = np.array([rank + 1], dtype="i")
comm.Allreduce(MPI.IN_PLACE, s, op=MPI.SUM)
assert s[0] == 3, s
recvs = comm.reduce(recvs, op=MPI.SUM, root=0)
if rank == 0:
    print(f"RECVS {recvs}", flush=True)
