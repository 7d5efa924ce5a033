#!/usr/bin/python3
"""Writes mpi_f08.f90, the `mpi_f08` module (MPI-3.1 17.2.5 with gfortran), at build time.

Each routine of ROUTINES becomes a module procedure with mpi_f08's argument types (TYPE(MPI_Comm)
and the other handle types, TYPE(MPI_Status), LOGICAL, CHARACTER(LEN=*), INTEGER(KIND=
MPI_ADDRESS_KIND), TYPE(C_PTR)) and an OPTIONAL IERROR, calling the Fortran entry point the
library already has for mpif.h and `use mpi` (mpi_send_ ..., runtime/mpi/fortran/*.cpp) through a
BIND(C) interface: the handle types are BIND(C) types of one INTEGER, MPI_VAL, so they pass as
the INTEGER the entry point reads. LOGICAL goes in and out as INTEGER 1/0 (the entry points'
convention), a CHARACTER as an array of C_CHAR with its length appended as a C_SIZE_T (gfortran's
hidden length). Choice buffers are TYPE(*), DIMENSION(*) with NO_ARG_CHECK, as in `use mpi`
(MPI_SUBARRAYS_SUPPORTED is .FALSE.).

Usage: gen_mpi_f08.py OUT.f90
"""
import sys

HANDLES = ["MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Info", "MPI_Op", "MPI_Errhandler", "MPI_Request",
           "MPI_Win", "MPI_File", "MPI_Message"]

# Argument kinds: b choice buffer; i / io INTEGER in / out; iv / ivo / iv_inout INTEGER array in /
# out / inout; iio INTEGER inout; a / ao INTEGER(MPI_ADDRESS_KIND) in / out; av / avo their
# arrays in / out; co INTEGER(MPI_COUNT_KIND) out; off / offo INTEGER(MPI_OFFSET_KIND) in / out;
# l / lo LOGICAL in / out; lv@N / lvo@N LOGICAL array in / out of N elements (N an argument, or
# "cartdim": the communicator's Cartesian dimensions); h:T / ho:T / hio:T handle in / out /
# inout; hv:T / hvo:T / hvio:T handle array in / out / inout; st / sti status out / in; stv
# statuses out; si / so CHARACTER in / out; cpo TYPE(C_PTR) out; proc:I a procedure of abstract
# interface I (fn: MPI_User_function), passed as its address like any Fortran procedure.
ROUTINES = [
    # environment
    ("MPI_Init", []),
    ("MPI_Init_thread", [("required", "i"), ("provided", "io")]),
    ("MPI_Finalize", []),
    ("MPI_Initialized", [("flag", "lo")]),
    ("MPI_Finalized", [("flag", "lo")]),
    ("MPI_Query_thread", [("provided", "io")]),
    ("MPI_Abort", [("comm", "h:MPI_Comm"), ("errorcode", "i")]),
    ("MPI_Get_version", [("version", "io"), ("subversion", "io")]),
    ("MPI_Get_processor_name", [("name", "so"), ("resultlen", "io")]),
    ("MPI_Get_library_version", [("version", "so"), ("resultlen", "io")]),
    ("MPI_Error_string", [("errorcode", "i"), ("string", "so"), ("resultlen", "io")]),
    ("MPI_Error_class", [("errorcode", "i"), ("errorclass", "io")]),
    ("MPI_Comm_set_errhandler", [("comm", "h:MPI_Comm"), ("errhandler", "h:MPI_Errhandler")]),
    ("MPI_Comm_get_errhandler", [("comm", "h:MPI_Comm"), ("errhandler", "ho:MPI_Errhandler")]),
    # communicators and groups
    ("MPI_Comm_rank", [("comm", "h:MPI_Comm"), ("rank", "io")]),
    ("MPI_Comm_size", [("comm", "h:MPI_Comm"), ("size", "io")]),
    ("MPI_Comm_dup", [("comm", "h:MPI_Comm"), ("newcomm", "ho:MPI_Comm")]),
    ("MPI_Comm_split", [("comm", "h:MPI_Comm"), ("color", "i"), ("key", "i"), ("newcomm", "ho:MPI_Comm")]),
    ("MPI_Comm_split_type", [("comm", "h:MPI_Comm"), ("split_type", "i"), ("key", "i"), ("info", "h:MPI_Info"),
                             ("newcomm", "ho:MPI_Comm")]),
    ("MPI_Comm_create", [("comm", "h:MPI_Comm"), ("group", "h:MPI_Group"), ("newcomm", "ho:MPI_Comm")]),
    ("MPI_Comm_free", [("comm", "hio:MPI_Comm")]),
    ("MPI_Comm_compare", [("comm1", "h:MPI_Comm"), ("comm2", "h:MPI_Comm"), ("result", "io")]),
    ("MPI_Comm_group", [("comm", "h:MPI_Comm"), ("group", "ho:MPI_Group")]),
    ("MPI_Comm_set_name", [("comm", "h:MPI_Comm"), ("comm_name", "si")]),
    ("MPI_Comm_get_name", [("comm", "h:MPI_Comm"), ("comm_name", "so"), ("resultlen", "io")]),
    ("MPI_Comm_get_attr", [("comm", "h:MPI_Comm"), ("comm_keyval", "i"), ("attribute_val", "ao"),
                           ("flag", "lo")]),
    ("MPI_Group_size", [("group", "h:MPI_Group"), ("size", "io")]),
    ("MPI_Group_rank", [("group", "h:MPI_Group"), ("rank", "io")]),
    ("MPI_Group_incl", [("group", "h:MPI_Group"), ("n", "i"), ("ranks", "iv"), ("newgroup", "ho:MPI_Group")]),
    ("MPI_Group_translate_ranks", [("group1", "h:MPI_Group"), ("n", "i"), ("ranks1", "iv"),
                                   ("group2", "h:MPI_Group"), ("ranks2", "ivo")]),
    ("MPI_Group_free", [("group", "hio:MPI_Group")]),
    ("MPI_Group_excl", [("group", "h:MPI_Group"), ("n", "i"), ("ranks", "iv"), ("newgroup", "ho:MPI_Group")]),
    ("MPI_Group_union", [("group1", "h:MPI_Group"), ("group2", "h:MPI_Group"), ("newgroup", "ho:MPI_Group")]),
    ("MPI_Group_intersection", [("group1", "h:MPI_Group"), ("group2", "h:MPI_Group"), ("newgroup", "ho:MPI_Group")]),
    ("MPI_Group_difference", [("group1", "h:MPI_Group"), ("group2", "h:MPI_Group"), ("newgroup", "ho:MPI_Group")]),
    ("MPI_Group_compare", [("group1", "h:MPI_Group"), ("group2", "h:MPI_Group"), ("result", "io")]),
    ("MPI_Comm_idup", [("comm", "h:MPI_Comm"), ("newcomm", "ho:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Comm_test_inter", [("comm", "h:MPI_Comm"), ("flag", "lo")]),
    ("MPI_Comm_remote_size", [("comm", "h:MPI_Comm"), ("size", "io")]),
    ("MPI_Comm_set_attr", [("comm", "h:MPI_Comm"), ("comm_keyval", "i"), ("attribute_val", "a")]),
    ("MPI_Comm_delete_attr", [("comm", "h:MPI_Comm"), ("comm_keyval", "i")]),
    ("MPI_Cart_rank", [("comm", "h:MPI_Comm"), ("coords", "iv"), ("rank", "io")]),
    ("MPI_Cartdim_get", [("comm", "h:MPI_Comm"), ("ndims", "io")]),
    ("MPI_Info_create", [("info", "ho:MPI_Info")]),
    ("MPI_Info_free", [("info", "hio:MPI_Info")]),
    ("MPI_Info_set", [("info", "h:MPI_Info"), ("key", "si"), ("value", "si")]),
    ("MPI_Info_get", [("info", "h:MPI_Info"), ("key", "si"), ("valuelen", "i"), ("value", "so"), ("flag", "lo")]),
    ("MPI_Info_delete", [("info", "h:MPI_Info"), ("key", "si")]),
    ("MPI_Info_get_nkeys", [("info", "h:MPI_Info"), ("nkeys", "io")]),
    ("MPI_Errhandler_free", [("errhandler", "hio:MPI_Errhandler")]),
    ("MPI_Cart_create", [("comm_old", "h:MPI_Comm"), ("ndims", "i"), ("dims", "iv"), ("periods", "lv@ndims"),
                         ("reorder", "l"), ("comm_cart", "ho:MPI_Comm")]),
    ("MPI_Cart_coords", [("comm", "h:MPI_Comm"), ("rank", "i"), ("maxdims", "i"), ("coords", "ivo")]),
    ("MPI_Cart_shift", [("comm", "h:MPI_Comm"), ("direction", "i"), ("disp", "i"), ("rank_source", "io"),
                        ("rank_dest", "io")]),
    ("MPI_Dims_create", [("nnodes", "i"), ("ndims", "i"), ("dims", "iv_inout")]),
    # point-to-point
    ("MPI_Send", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"), ("tag", "i"),
                  ("comm", "h:MPI_Comm")]),
    ("MPI_Ssend", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"), ("tag", "i"),
                   ("comm", "h:MPI_Comm")]),
    ("MPI_Bsend", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"), ("tag", "i"), ("comm", "h:MPI_Comm")]),
    ("MPI_Rsend", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"), ("tag", "i"), ("comm", "h:MPI_Comm")]),
    ("MPI_Send_init", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"), ("tag", "i"), ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Ssend_init", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"), ("tag", "i"), ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Recv_init", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("source", "i"), ("tag", "i"), ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Start", [("request", "hio:MPI_Request")]),
    ("MPI_Startall", [("count", "i"), ("array_of_requests", "hvio:MPI_Request")]),
    ("MPI_Recv", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("source", "i"), ("tag", "i"),
                  ("comm", "h:MPI_Comm"), ("status", "st")]),
    ("MPI_Isend", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"), ("tag", "i"),
                   ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Issend", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"), ("tag", "i"),
                    ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Ibsend", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"), ("tag", "i"), ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Irsend", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"), ("tag", "i"), ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Irecv", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("source", "i"), ("tag", "i"),
                   ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Sendrecv", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("dest", "i"),
                      ("sendtag", "i"), ("recvbuf", "b"), ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"),
                      ("source", "i"), ("recvtag", "i"), ("comm", "h:MPI_Comm"), ("status", "st")]),
    ("MPI_Sendrecv_replace", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("dest", "i"),
                              ("sendtag", "i"), ("source", "i"), ("recvtag", "i"), ("comm", "h:MPI_Comm"),
                              ("status", "st")]),
    ("MPI_Probe", [("source", "i"), ("tag", "i"), ("comm", "h:MPI_Comm"), ("status", "st")]),
    ("MPI_Iprobe", [("source", "i"), ("tag", "i"), ("comm", "h:MPI_Comm"), ("flag", "lo"), ("status", "st")]),
    ("MPI_Mprobe", [("source", "i"), ("tag", "i"), ("comm", "h:MPI_Comm"), ("message", "ho:MPI_Message"),
                    ("status", "st")]),
    ("MPI_Improbe", [("source", "i"), ("tag", "i"), ("comm", "h:MPI_Comm"), ("flag", "lo"),
                     ("message", "ho:MPI_Message"), ("status", "st")]),
    ("MPI_Mrecv", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("message", "hio:MPI_Message"), ("status", "st")]),
    ("MPI_Imrecv", [("buf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("message", "hio:MPI_Message"), ("request", "ho:MPI_Request")]),
    ("MPI_Get_count", [("status", "sti"), ("datatype", "h:MPI_Datatype"), ("count", "io")]),
    ("MPI_Get_elements", [("status", "sti"), ("datatype", "h:MPI_Datatype"), ("count", "io")]),
    ("MPI_Wait", [("request", "hio:MPI_Request"), ("status", "st")]),
    ("MPI_Test", [("request", "hio:MPI_Request"), ("flag", "lo"), ("status", "st")]),
    ("MPI_Waitall", [("count", "i"), ("array_of_requests", "hvio:MPI_Request"), ("array_of_statuses", "stv")]),
    ("MPI_Waitany", [("count", "i"), ("array_of_requests", "hvio:MPI_Request"), ("index", "io"),
                     ("status", "st")]),
    ("MPI_Testall", [("count", "i"), ("array_of_requests", "hvio:MPI_Request"), ("flag", "lo"),
                     ("array_of_statuses", "stv")]),
    ("MPI_Testany", [("count", "i"), ("array_of_requests", "hvio:MPI_Request"), ("index", "io"), ("flag", "lo"),
                     ("status", "st")]),
    ("MPI_Waitsome", [("incount", "i"), ("array_of_requests", "hvio:MPI_Request"), ("outcount", "io"),
                      ("array_of_indices", "ivo"), ("array_of_statuses", "stv")]),
    ("MPI_Testsome", [("incount", "i"), ("array_of_requests", "hvio:MPI_Request"), ("outcount", "io"),
                      ("array_of_indices", "ivo"), ("array_of_statuses", "stv")]),
    ("MPI_Request_get_status", [("request", "h:MPI_Request"), ("flag", "lo"), ("status", "st")]),
    ("MPI_Request_free", [("request", "hio:MPI_Request")]),
    ("MPI_Cancel", [("request", "h:MPI_Request")]),
    # collectives
    ("MPI_Barrier", [("comm", "h:MPI_Comm")]),
    ("MPI_Ibarrier", [("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Bcast", [("buffer", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("root", "i"),
                   ("comm", "h:MPI_Comm")]),
    ("MPI_Ibcast", [("buffer", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"), ("root", "i"),
                    ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Reduce", [("sendbuf", "b"), ("recvbuf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"),
                    ("op", "h:MPI_Op"), ("root", "i"), ("comm", "h:MPI_Comm")]),
    ("MPI_Ireduce", [("sendbuf", "b"), ("recvbuf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"),
                     ("op", "h:MPI_Op"), ("root", "i"), ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Allreduce", [("sendbuf", "b"), ("recvbuf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"),
                       ("op", "h:MPI_Op"), ("comm", "h:MPI_Comm")]),
    ("MPI_Iallreduce", [("sendbuf", "b"), ("recvbuf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"),
                        ("op", "h:MPI_Op"), ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Gather", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                    ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"), ("root", "i"), ("comm", "h:MPI_Comm")]),
    ("MPI_Gatherv", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                     ("recvcounts", "iv"), ("displs", "iv"), ("recvtype", "h:MPI_Datatype"), ("root", "i"),
                     ("comm", "h:MPI_Comm")]),
    ("MPI_Scatter", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                     ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"), ("root", "i"), ("comm", "h:MPI_Comm")]),
    ("MPI_Scatterv", [("sendbuf", "b"), ("sendcounts", "iv"), ("displs", "iv"), ("sendtype", "h:MPI_Datatype"),
                      ("recvbuf", "b"), ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"), ("root", "i"),
                      ("comm", "h:MPI_Comm")]),
    ("MPI_Igather", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                     ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"), ("root", "i"), ("comm", "h:MPI_Comm"),
                     ("request", "ho:MPI_Request")]),
    ("MPI_Igatherv", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                      ("recvcounts", "iv"), ("displs", "iv"), ("recvtype", "h:MPI_Datatype"), ("root", "i"),
                      ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Iscatter", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                      ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"), ("root", "i"), ("comm", "h:MPI_Comm"),
                      ("request", "ho:MPI_Request")]),
    ("MPI_Iscatterv", [("sendbuf", "b"), ("sendcounts", "iv"), ("displs", "iv"), ("sendtype", "h:MPI_Datatype"),
                       ("recvbuf", "b"), ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"), ("root", "i"),
                       ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Allgather", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                       ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"), ("comm", "h:MPI_Comm")]),
    ("MPI_Iallgather", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                        ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"), ("comm", "h:MPI_Comm"),
                        ("request", "ho:MPI_Request")]),
    ("MPI_Allgatherv", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                        ("recvcounts", "iv"), ("displs", "iv"), ("recvtype", "h:MPI_Datatype"),
                        ("comm", "h:MPI_Comm")]),
    ("MPI_Iallgatherv", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                         ("recvcounts", "iv"), ("displs", "iv"), ("recvtype", "h:MPI_Datatype"),
                         ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Alltoall", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                      ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"), ("comm", "h:MPI_Comm")]),
    ("MPI_Ialltoall", [("sendbuf", "b"), ("sendcount", "i"), ("sendtype", "h:MPI_Datatype"), ("recvbuf", "b"),
                       ("recvcount", "i"), ("recvtype", "h:MPI_Datatype"), ("comm", "h:MPI_Comm"),
                       ("request", "ho:MPI_Request")]),
    ("MPI_Alltoallv", [("sendbuf", "b"), ("sendcounts", "iv"), ("sdispls", "iv"), ("sendtype", "h:MPI_Datatype"),
                       ("recvbuf", "b"), ("recvcounts", "iv"), ("rdispls", "iv"), ("recvtype", "h:MPI_Datatype"),
                       ("comm", "h:MPI_Comm")]),
    ("MPI_Ialltoallv", [("sendbuf", "b"), ("sendcounts", "iv"), ("sdispls", "iv"), ("sendtype", "h:MPI_Datatype"),
                        ("recvbuf", "b"), ("recvcounts", "iv"), ("rdispls", "iv"), ("recvtype", "h:MPI_Datatype"),
                        ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Reduce_scatter", [("sendbuf", "b"), ("recvbuf", "b"), ("recvcounts", "iv"), ("datatype", "h:MPI_Datatype"),
                            ("op", "h:MPI_Op"), ("comm", "h:MPI_Comm")]),
    ("MPI_Ireduce_scatter_block", [("sendbuf", "b"), ("recvbuf", "b"), ("recvcount", "i"),
                                   ("datatype", "h:MPI_Datatype"), ("op", "h:MPI_Op"), ("comm", "h:MPI_Comm"),
                                   ("request", "ho:MPI_Request")]),
    ("MPI_Reduce_local", [("inbuf", "b"), ("inoutbuf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"),
                          ("op", "h:MPI_Op")]),
    ("MPI_Reduce_scatter_block", [("sendbuf", "b"), ("recvbuf", "b"), ("recvcount", "i"),
                                  ("datatype", "h:MPI_Datatype"), ("op", "h:MPI_Op"), ("comm", "h:MPI_Comm")]),
    ("MPI_Scan", [("sendbuf", "b"), ("recvbuf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"),
                  ("op", "h:MPI_Op"), ("comm", "h:MPI_Comm")]),
    ("MPI_Exscan", [("sendbuf", "b"), ("recvbuf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"),
                    ("op", "h:MPI_Op"), ("comm", "h:MPI_Comm")]),
    ("MPI_Iscan", [("sendbuf", "b"), ("recvbuf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"),
                   ("op", "h:MPI_Op"), ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Iexscan", [("sendbuf", "b"), ("recvbuf", "b"), ("count", "i"), ("datatype", "h:MPI_Datatype"),
                     ("op", "h:MPI_Op"), ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Op_create", [("user_fn", "proc:MPI_User_function"), ("commute", "l"), ("op", "ho:MPI_Op")]),
    ("MPI_Op_free", [("op", "hio:MPI_Op")]),
    ("MPI_Op_commutative", [("op", "h:MPI_Op"), ("commute", "lo")]),
    # datatypes
    ("MPI_Type_contiguous", [("count", "i"), ("oldtype", "h:MPI_Datatype"), ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_vector", [("count", "i"), ("blocklength", "i"), ("stride", "i"), ("oldtype", "h:MPI_Datatype"),
                         ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_create_hvector", [("count", "i"), ("blocklength", "i"), ("stride", "a"),
                                 ("oldtype", "h:MPI_Datatype"), ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_indexed", [("count", "i"), ("array_of_blocklengths", "iv"), ("array_of_displacements", "iv"),
                          ("oldtype", "h:MPI_Datatype"), ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_create_indexed_block", [("count", "i"), ("blocklength", "i"), ("array_of_displacements", "iv"),
                                       ("oldtype", "h:MPI_Datatype"), ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_dup", [("oldtype", "h:MPI_Datatype"), ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_create_subarray", [("ndims", "i"), ("array_of_sizes", "iv"), ("array_of_subsizes", "iv"),
                                  ("array_of_starts", "iv"), ("order", "i"), ("oldtype", "h:MPI_Datatype"),
                                  ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_create_resized", [("oldtype", "h:MPI_Datatype"), ("lb", "a"), ("extent", "a"),
                                 ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_commit", [("datatype", "hio:MPI_Datatype")]),
    ("MPI_Type_free", [("datatype", "hio:MPI_Datatype")]),
    ("MPI_Type_size", [("datatype", "h:MPI_Datatype"), ("size", "io")]),
    ("MPI_Type_get_extent", [("datatype", "h:MPI_Datatype"), ("lb", "ao"), ("extent", "ao")]),
    ("MPI_Type_get_true_extent", [("datatype", "h:MPI_Datatype"), ("true_lb", "ao"), ("true_extent", "ao")]),
    ("MPI_Type_set_name", [("datatype", "h:MPI_Datatype"), ("type_name", "si")]),
    ("MPI_Type_get_name", [("datatype", "h:MPI_Datatype"), ("type_name", "so"), ("resultlen", "io")]),
    ("MPI_Pack_size", [("incount", "i"), ("datatype", "h:MPI_Datatype"), ("comm", "h:MPI_Comm"), ("size", "io")]),
    ("MPI_Get_address", [("location", "b"), ("address", "ao")]),
    # one-sided
    ("MPI_Win_create", [("base", "b"), ("size", "a"), ("disp_unit", "i"), ("info", "h:MPI_Info"),
                        ("comm", "h:MPI_Comm"), ("win", "ho:MPI_Win")]),
    ("MPI_Win_allocate", [("size", "a"), ("disp_unit", "i"), ("info", "h:MPI_Info"), ("comm", "h:MPI_Comm"),
                          ("baseptr", "cpo"), ("win", "ho:MPI_Win")]),
    ("MPI_Win_allocate_shared", [("size", "a"), ("disp_unit", "i"), ("info", "h:MPI_Info"),
                                 ("comm", "h:MPI_Comm"), ("baseptr", "cpo"), ("win", "ho:MPI_Win")]),
    ("MPI_Win_shared_query", [("win", "h:MPI_Win"), ("rank", "i"), ("size", "ao"), ("disp_unit", "io"),
                              ("baseptr", "cpo")]),
    ("MPI_Win_free", [("win", "hio:MPI_Win")]),
    ("MPI_Win_create_dynamic", [("info", "h:MPI_Info"), ("comm", "h:MPI_Comm"), ("win", "ho:MPI_Win")]),
    ("MPI_Win_attach", [("win", "h:MPI_Win"), ("base", "b"), ("size", "a")]),
    ("MPI_Win_detach", [("win", "h:MPI_Win"), ("base", "b")]),
    ("MPI_Win_get_group", [("win", "h:MPI_Win"), ("group", "ho:MPI_Group")]),
    ("MPI_Win_set_name", [("win", "h:MPI_Win"), ("win_name", "si")]),
    ("MPI_Win_get_name", [("win", "h:MPI_Win"), ("win_name", "so"), ("resultlen", "io")]),
    ("MPI_Win_set_errhandler", [("win", "h:MPI_Win"), ("errhandler", "h:MPI_Errhandler")]),
    ("MPI_Win_post", [("group", "h:MPI_Group"), ("assert", "i"), ("win", "h:MPI_Win")]),
    ("MPI_Win_start", [("group", "h:MPI_Group"), ("assert", "i"), ("win", "h:MPI_Win")]),
    ("MPI_Win_complete", [("win", "h:MPI_Win")]),
    ("MPI_Win_wait", [("win", "h:MPI_Win")]),
    ("MPI_Win_test", [("win", "h:MPI_Win"), ("flag", "lo")]),
    ("MPI_Win_fence", [("assert", "i"), ("win", "h:MPI_Win")]),
    ("MPI_Win_lock", [("lock_type", "i"), ("rank", "i"), ("assert", "i"), ("win", "h:MPI_Win")]),
    ("MPI_Win_unlock", [("rank", "i"), ("win", "h:MPI_Win")]),
    ("MPI_Win_lock_all", [("assert", "i"), ("win", "h:MPI_Win")]),
    ("MPI_Win_unlock_all", [("win", "h:MPI_Win")]),
    ("MPI_Win_flush", [("rank", "i"), ("win", "h:MPI_Win")]),
    ("MPI_Win_flush_all", [("win", "h:MPI_Win")]),
    ("MPI_Win_flush_local", [("rank", "i"), ("win", "h:MPI_Win")]),
    ("MPI_Win_flush_local_all", [("win", "h:MPI_Win")]),
    ("MPI_Win_sync", [("win", "h:MPI_Win")]),
    ("MPI_Put", [("origin_addr", "b"), ("origin_count", "i"), ("origin_datatype", "h:MPI_Datatype"),
                 ("target_rank", "i"), ("target_disp", "a"), ("target_count", "i"),
                 ("target_datatype", "h:MPI_Datatype"), ("win", "h:MPI_Win")]),
    ("MPI_Get", [("origin_addr", "b"), ("origin_count", "i"), ("origin_datatype", "h:MPI_Datatype"),
                 ("target_rank", "i"), ("target_disp", "a"), ("target_count", "i"),
                 ("target_datatype", "h:MPI_Datatype"), ("win", "h:MPI_Win")]),
    ("MPI_Accumulate", [("origin_addr", "b"), ("origin_count", "i"), ("origin_datatype", "h:MPI_Datatype"),
                        ("target_rank", "i"), ("target_disp", "a"), ("target_count", "i"),
                        ("target_datatype", "h:MPI_Datatype"), ("op", "h:MPI_Op"), ("win", "h:MPI_Win")]),
    ("MPI_Get_accumulate", [("origin_addr", "b"), ("origin_count", "i"), ("origin_datatype", "h:MPI_Datatype"),
                            ("result_addr", "b"), ("result_count", "i"), ("result_datatype", "h:MPI_Datatype"),
                            ("target_rank", "i"), ("target_disp", "a"), ("target_count", "i"), ("target_datatype", "h:MPI_Datatype"), ("op", "h:MPI_Op"), ("win", "h:MPI_Win")]),
    ("MPI_Rput", [("origin_addr", "b"), ("origin_count", "i"), ("origin_datatype", "h:MPI_Datatype"),
                  ("target_rank", "i"), ("target_disp", "a"), ("target_count", "i"), ("target_datatype", "h:MPI_Datatype"), ("win", "h:MPI_Win"), ("request", "ho:MPI_Request")]),
    ("MPI_Rget", [("origin_addr", "b"), ("origin_count", "i"), ("origin_datatype", "h:MPI_Datatype"),
                  ("target_rank", "i"), ("target_disp", "a"), ("target_count", "i"), ("target_datatype", "h:MPI_Datatype"), ("win", "h:MPI_Win"), ("request", "ho:MPI_Request")]),
    ("MPI_Fetch_and_op", [("origin_addr", "b"), ("result_addr", "b"), ("datatype", "h:MPI_Datatype"),
                          ("target_rank", "i"), ("target_disp", "a"), ("op", "h:MPI_Op"), ("win", "h:MPI_Win")]),
    ("MPI_Compare_and_swap", [("origin_addr", "b"), ("compare_addr", "b"), ("result_addr", "b"),
                              ("datatype", "h:MPI_Datatype"), ("target_rank", "i"), ("target_disp", "a"),
                              ("win", "h:MPI_Win")]),
    ("MPI_Raccumulate", [("origin_addr", "b"), ("origin_count", "i"), ("origin_datatype", "h:MPI_Datatype"),
                         ("target_rank", "i"), ("target_disp", "a"), ("target_count", "i"),
                         ("target_datatype", "h:MPI_Datatype"), ("op", "h:MPI_Op"), ("win", "h:MPI_Win"),
                         ("request", "ho:MPI_Request")]),
    ("MPI_Rget_accumulate", [("origin_addr", "b"), ("origin_count", "i"), ("origin_datatype", "h:MPI_Datatype"),
                             ("result_addr", "b"), ("result_count", "i"), ("result_datatype", "h:MPI_Datatype"),
                             ("target_rank", "i"), ("target_disp", "a"), ("target_count", "i"),
                             ("target_datatype", "h:MPI_Datatype"), ("op", "h:MPI_Op"), ("win", "h:MPI_Win"),
                             ("request", "ho:MPI_Request")]),
    ("MPI_Win_get_errhandler", [("win", "h:MPI_Win"), ("errhandler", "ho:MPI_Errhandler")]),
    ("MPI_Win_call_errhandler", [("win", "h:MPI_Win"), ("errorcode", "i")]),
    ("MPI_Win_set_info", [("win", "h:MPI_Win"), ("info", "h:MPI_Info")]),
    ("MPI_Win_get_info", [("win", "h:MPI_Win"), ("info_used", "ho:MPI_Info")]),
    ("MPI_Win_set_attr", [("win", "h:MPI_Win"), ("win_keyval", "i"), ("attribute_val", "a")]),
    ("MPI_Win_get_attr", [("win", "h:MPI_Win"), ("win_keyval", "i"), ("attribute_val", "ao"), ("flag", "lo")]),
    ("MPI_Win_delete_attr", [("win", "h:MPI_Win"), ("win_keyval", "i")]),
    # datatypes: the constructors with address arrays and type arrays, packing, decoding
    ("MPI_Type_create_hindexed", [("count", "i"), ("array_of_blocklengths", "iv"), ("array_of_displacements", "av"),
                                  ("oldtype", "h:MPI_Datatype"), ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_create_hindexed_block", [("count", "i"), ("blocklength", "i"), ("array_of_displacements", "av"),
                                        ("oldtype", "h:MPI_Datatype"), ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_create_struct", [("count", "i"), ("array_of_blocklengths", "iv"), ("array_of_displacements", "av"),
                                ("array_of_types", "hv:MPI_Datatype"), ("newtype", "ho:MPI_Datatype")]),
    ("MPI_Type_get_envelope", [("datatype", "h:MPI_Datatype"), ("num_integers", "io"), ("num_addresses", "io"),
                               ("num_datatypes", "io"), ("combiner", "io")]),
    ("MPI_Type_get_contents", [("datatype", "h:MPI_Datatype"), ("max_integers", "i"), ("max_addresses", "i"),
                               ("max_datatypes", "i"), ("array_of_integers", "ivo"), ("array_of_addresses", "avo"),
                               ("array_of_datatypes", "hvo:MPI_Datatype")]),
    ("MPI_Type_match_size", [("typeclass", "i"), ("size", "i"), ("datatype", "ho:MPI_Datatype")]),
    ("MPI_Type_size_x", [("datatype", "h:MPI_Datatype"), ("size", "co")]),
    ("MPI_Type_set_attr", [("datatype", "h:MPI_Datatype"), ("type_keyval", "i"), ("attribute_val", "a")]),
    ("MPI_Type_get_attr", [("datatype", "h:MPI_Datatype"), ("type_keyval", "i"), ("attribute_val", "ao"),
                           ("flag", "lo")]),
    ("MPI_Type_delete_attr", [("datatype", "h:MPI_Datatype"), ("type_keyval", "i")]),
    ("MPI_Pack", [("inbuf", "b"), ("incount", "i"), ("datatype", "h:MPI_Datatype"), ("outbuf", "b"),
                  ("outsize", "i"), ("position", "iio"), ("comm", "h:MPI_Comm")]),
    ("MPI_Unpack", [("inbuf", "b"), ("insize", "i"), ("position", "iio"), ("outbuf", "b"), ("outcount", "i"),
                    ("datatype", "h:MPI_Datatype"), ("comm", "h:MPI_Comm")]),
    # topologies
    ("MPI_Cart_sub", [("comm", "h:MPI_Comm"), ("remain_dims", "lv@cartdim"), ("newcomm", "ho:MPI_Comm")]),
    ("MPI_Cart_get", [("comm", "h:MPI_Comm"), ("maxdims", "i"), ("dims", "ivo"), ("periods", "lvo@maxdims"),
                      ("coords", "ivo")]),
    # the rest of the reductions and the environment
    ("MPI_Ireduce_scatter", [("sendbuf", "b"), ("recvbuf", "b"), ("recvcounts", "iv"), ("datatype", "h:MPI_Datatype"),
                             ("op", "h:MPI_Op"), ("comm", "h:MPI_Comm"), ("request", "ho:MPI_Request")]),
    ("MPI_Is_thread_main", [("flag", "lo")]),
    ("MPI_Test_cancelled", [("status", "sti"), ("flag", "lo")]),
    # procedures handed to MPI: keyvals and error handlers (callbacks.cpp's trampolines call them;
    # TYPE(MPI_Comm) and the other handles pass as the INTEGER use mpi's callbacks take)
    ("MPI_Comm_create_keyval", [("comm_copy_attr_fn", "proc:MPI_Comm_copy_attr_function"),
                                ("comm_delete_attr_fn", "proc:MPI_Comm_delete_attr_function"),
                                ("comm_keyval", "io"), ("extra_state", "a")]),
    ("MPI_Comm_free_keyval", [("comm_keyval", "iio")]),
    ("MPI_Type_create_keyval", [("type_copy_attr_fn", "proc:MPI_Type_copy_attr_function"),
                                ("type_delete_attr_fn", "proc:MPI_Type_delete_attr_function"),
                                ("type_keyval", "io"), ("extra_state", "a")]),
    ("MPI_Type_free_keyval", [("type_keyval", "iio")]),
    ("MPI_Win_create_keyval", [("win_copy_attr_fn", "proc:MPI_Win_copy_attr_function"),
                               ("win_delete_attr_fn", "proc:MPI_Win_delete_attr_function"),
                               ("win_keyval", "io"), ("extra_state", "a")]),
    ("MPI_Win_free_keyval", [("win_keyval", "iio")]),
    ("MPI_Comm_create_errhandler", [("comm_errhandler_fn", "proc:MPI_Comm_errhandler_function"),
                                    ("errhandler", "ho:MPI_Errhandler")]),
    ("MPI_Win_create_errhandler", [("win_errhandler_fn", "proc:MPI_Win_errhandler_function"),
                                   ("errhandler", "ho:MPI_Errhandler")]),
    ("MPI_Comm_call_errhandler", [("comm", "h:MPI_Comm"), ("errorcode", "i")]),
    ("MPI_Grequest_start", [("query_fn", "proc:MPI_Grequest_query_function"),
                            ("free_fn", "proc:MPI_Grequest_free_function"),
                            ("cancel_fn", "proc:MPI_Grequest_cancel_function"), ("extra_state", "a"),
                            ("request", "ho:MPI_Request")]),
    ("MPI_Grequest_complete", [("request", "h:MPI_Request")]),
    # MPI-IO: the calls exist and refuse (docs/mpi.md), so programs that open no file build
    ("MPI_File_open", [("comm", "h:MPI_Comm"), ("filename", "si"), ("amode", "i"), ("info", "h:MPI_Info"),
                       ("fh", "ho:MPI_File")]),
    ("MPI_File_close", [("fh", "hio:MPI_File")]),
    ("MPI_File_delete", [("filename", "si"), ("info", "h:MPI_Info")]),
    ("MPI_File_sync", [("fh", "h:MPI_File")]),
    ("MPI_File_get_size", [("fh", "h:MPI_File"), ("size", "offo")]),
    ("MPI_File_set_size", [("fh", "h:MPI_File"), ("size", "off")]),
]

# The predefined attribute callbacks (callbacks.cpp defines them for mpif.h): external procedures
# of the matching interface.
PREDEFINED_PROCEDURES = [(f"MPI_{k.upper()}_{fn}", f"MPI_{k}_{iface}") for k in ("Comm", "Type", "Win")
                         for fn, iface in (("NULL_COPY_FN", "copy_attr_function"), ("DUP_FN", "copy_attr_function"),
                                           ("NULL_DELETE_FN", "delete_attr_function"))]

# Functions (no IERROR): name, Fortran result type, entry point.
FUNCTIONS = [("MPI_Wtime", "double precision", "mpi_wtime_"), ("MPI_Wtick", "double precision", "mpi_wtick_")]


def dummy_decl(name, kind, bind, asynchronous=False):
    """Declarations of one dummy argument: in the BIND(C) interface (bind) or the wrapper.
    asynchronous: a buffer MPI uses after the call returns (MPI-3.1 17.1.2)."""
    base, _, htype = kind.partition(":")
    if base == "b":
        attr = ", asynchronous" if asynchronous else ""
        return [f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {name}", f"type(*), dimension(*){attr} :: {name}"]
    base = base.partition("@")[0]
    intent = {"i": "in", "io": "out", "iio": "inout", "iv": "in", "ivo": "out", "iv_inout": "inout", "a": "in",
              "ao": "out", "av": "in", "avo": "out", "co": "out", "off": "in", "offo": "out", "l": "in", "lo": "out",
              "lv": "in", "lvo": "out", "h": "in", "ho": "out", "hio": "inout", "hv": "in", "hvo": "out",
              "hvio": "inout", "st": "out", "sti": "in", "stv": "out", "si": "in", "so": "out", "cpo": "out"}.get(base)
    it = "" if bind else f", intent({intent})"
    integer = "integer(c_int)" if bind else "integer"
    if base in ("i", "io", "iio"):
        return [f"{integer}{it} :: {name}"]
    if base in ("iv", "ivo", "iv_inout"):
        return [f"{integer}{it} :: {name}(*)"]
    wide = {"a": "MPI_ADDRESS_KIND", "ao": "MPI_ADDRESS_KIND", "av": "MPI_ADDRESS_KIND", "avo": "MPI_ADDRESS_KIND",
            "co": "MPI_COUNT_KIND", "off": "MPI_OFFSET_KIND", "offo": "MPI_OFFSET_KIND"}.get(base)
    if wide:
        shape = "(*)" if base in ("av", "avo") else ""
        return [f"integer(c_int64_t) :: {name}{shape}"] if bind else [f"integer(kind={wide}){it} :: {name}{shape}"]
    if base in ("l", "lo"):
        return [f"integer(c_int) :: {name}"] if bind else [f"logical{it} :: {name}"]
    if base in ("lv", "lvo"):
        return [f"integer(c_int) :: {name}(*)"] if bind else [f"logical{it} :: {name}(*)"]
    if base in ("h", "ho", "hio"):
        return [f"type({htype}){it} :: {name}"]
    if base in ("hv", "hvo", "hvio"):
        return [f"type({htype}){it} :: {name}(*)"]
    if base in ("st", "sti"):
        return [f"type(MPI_Status){it} :: {name}"]
    if base == "stv":
        return [f"type(MPI_Status){it} :: {name}(*)"]
    if base in ("si", "so"):
        return [f"character(kind=c_char) :: {name}(*)"] if bind else [f"character(len=*){it} :: {name}"]
    if base == "cpo":
        return [f"type(c_ptr){it} :: {name}"]
    if base == "proc":
        return [f"type(c_funptr), value :: {name}"] if bind else [f"procedure({htype}) :: {name}"]
    raise ValueError(kind)


def wrap(line, indent):
    """Splits an argument list line at 100 columns with continuation lines."""
    out, cur = [], " " * indent
    for piece in line.split(" "):
        if len(cur) + len(piece) + 1 > 100:
            out.append(cur.rstrip() + " &")
            cur = " " * (indent + 4)
        cur += piece + " "
    out.append(cur.rstrip())
    return out


def routine(name, args):
    entry = name.lower() + "_"
    local = "xmsg_" + name[4:].lower()
    strings = [a for a, k in args if k in ("si", "so")]
    names = [a for a, _ in args]
    # Routines that hand back a request (non-blocking, persistent, request-based RMA) use their
    # buffers after returning: ASYNCHRONOUS, as the standard's mpi_f08 declares them.
    asynchronous = ("request", "ho:MPI_Request") in args
    lines = ["  interface", *wrap(f"subroutine {local}({', '.join(names + ['ierror'] + [s + '_len' for s in strings])}) "
                                   f"bind(C, name=\"{entry}\")", 4),
             "      import", "      implicit none"]
    for a, k in args:
        lines += ["      " + d for d in dummy_decl(a, k, True, asynchronous)]
    lines.append("      integer(c_int) :: ierror")
    for s in strings:
        lines.append(f"      integer(c_size_t), value :: {s}_len")
    lines += [f"    end subroutine {local}", "  end interface"]
    interface = lines
    body = [*wrap(f"subroutine {name}({', '.join(names + ['ierror'])})", 2), "    implicit none"]
    for a, k in args:
        body += ["    " + d for d in dummy_decl(a, k, False, asynchronous)]
    body.append("    integer, optional, intent(out) :: ierror")
    body.append("    integer :: e")
    call = []
    pre, post = [], []
    for a, k in args:
        base = k.partition(":")[0]
        if base == "l":
            call.append(f"merge(1, 0, {a})")
        elif base == "lo":
            body.append(f"    integer :: {a}_c")
            call.append(f"{a}_c")
            post.append(f"    {a} = {a}_c /= 0")
        elif base.startswith("lv@") and base.endswith("@cartdim"):  # MPI_Cart_sub's remain_dims
            # As many as the communicator has dimensions; a communicator without them gets a
            # one-element copy, and the library's error. An automatic array in a BLOCK: the
            # library does not link libgfortran, which ALLOCATE's error path needs.
            body.append(f"    integer :: {a}_n")
            pre += [f"    call xmsg_cartdim_get(comm, {a}_n, e)", f"    if (e /= 0) {a}_n = 0", "    block",
                    f"    integer :: {a}_c(max({a}_n, 1))", f"    {a}_c = 0",
                    f"    if ({a}_n > 0) {a}_c(1:{a}_n) = merge(1, 0, {a}(1:{a}_n))"]
            post.insert(0, "    end block")
            call.append(f"{a}_c")
        elif base.startswith("lv@"):  # an INTEGER copy as long as the size argument says
            n = base[3:]
            body.append(f"    integer :: {a}_c(max({n}, 1))")
            pre.append(f"    if ({n} > 0) {a}_c(1:{n}) = merge(1, 0, {a}(1:{n}))")
            call.append(f"{a}_c")
        elif base.startswith("lvo@"):
            n = base[4:]
            body.append(f"    integer :: {a}_c(max({n}, 1))")
            pre.append(f"    {a}_c = 0")
            call.append(f"{a}_c")
            post.append(f"    if ({n} > 0) {a}(1:{n}) = {a}_c(1:{n}) /= 0")
        elif base == "proc":
            call.append(f"c_funloc({a})")
        else:
            call.append(a)
    call += ["e"] + [f"int(len({s}), c_size_t)" for s in strings]
    body += pre
    body += wrap(f"call {local}({', '.join(call)})", 4)
    body += post
    body += ["    if (present(ierror)) ierror = e", f"  end subroutine {name}"]
    return interface, body


def function(name, rtype, entry):
    local = "xmsg_" + name[4:].lower()
    interface = ["  interface", f"    function {local}() bind(C, name=\"{entry}\") result(t)", "      import",
                 "      implicit none", "      real(c_double) :: t", f"    end function {local}", "  end interface"]
    body = [f"  function {name}() result(t)", "    implicit none", f"    {rtype} :: t", f"    t = {local}()",
            f"  end function {name}"]
    return interface, body


def callback_interfaces():
    """The abstract interfaces of the procedures MPI takes (MPI-3.1 17.2.5's mpi_f08 forms)."""
    o = []
    for kind, handle in (("Comm", "MPI_Comm"), ("Type", "MPI_Datatype"), ("Win", "MPI_Win")):
        old = {"Comm": "oldcomm", "Type": "oldtype", "Win": "oldwin"}[kind]
        obj = {"Comm": "comm", "Type": "datatype", "Win": "win"}[kind]
        key = f"{kind.lower()}_keyval"
        o += [f"    subroutine MPI_{kind}_copy_attr_function({old}, {key}, extra_state, attribute_val_in, &",
              "        attribute_val_out, flag, ierror)",
              f"      import :: {handle}, MPI_ADDRESS_KIND",
              "      implicit none",
              f"      type({handle}) :: {old}",
              f"      integer :: {key}, ierror",
              "      integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out",
              "      logical :: flag",
              f"    end subroutine MPI_{kind}_copy_attr_function",
              f"    subroutine MPI_{kind}_delete_attr_function({obj}, {key}, attribute_val, extra_state, ierror)",
              f"      import :: {handle}, MPI_ADDRESS_KIND",
              "      implicit none",
              f"      type({handle}) :: {obj}",
              f"      integer :: {key}, ierror",
              "      integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state",
              f"    end subroutine MPI_{kind}_delete_attr_function"]
    o += ["    subroutine MPI_Grequest_query_function(extra_state, status, ierror)",
          "      import :: MPI_Status, MPI_ADDRESS_KIND",
          "      implicit none",
          "      integer(kind=MPI_ADDRESS_KIND) :: extra_state",
          "      type(MPI_Status) :: status",
          "      integer :: ierror",
          "    end subroutine MPI_Grequest_query_function",
          "    subroutine MPI_Grequest_free_function(extra_state, ierror)",
          "      import :: MPI_ADDRESS_KIND",
          "      implicit none",
          "      integer(kind=MPI_ADDRESS_KIND) :: extra_state",
          "      integer :: ierror",
          "    end subroutine MPI_Grequest_free_function",
          "    subroutine MPI_Grequest_cancel_function(extra_state, complete, ierror)",
          "      import :: MPI_ADDRESS_KIND",
          "      implicit none",
          "      integer(kind=MPI_ADDRESS_KIND) :: extra_state",
          "      logical :: complete",
          "      integer :: ierror",
          "    end subroutine MPI_Grequest_cancel_function"]
    for kind, handle, obj in (("Comm", "MPI_Comm", "comm"), ("Win", "MPI_Win", "win")):
        o += [f"    subroutine MPI_{kind}_errhandler_function({obj}, error_code)",
              f"      import :: {handle}",
              "      implicit none",
              f"      type({handle}) :: {obj}",
              "      integer :: error_code",
              f"    end subroutine MPI_{kind}_errhandler_function"]
    return o


def main(out_path):
    """Three modules in one file: mpi_f08_types (handle types, MPI_Status, constants, sentinels,
    == and /=), xmsg_mpi_f08_entries (the BIND(C) interfaces of the entry points: a module of
    their own because gfortran will not make a procedure with a binding label PRIVATE) and
    mpi_f08 (the routines; it re-exports mpi_f08_types)."""
    o = ["! The mpi_f08 module: generated by runtime/mpi/fortran/gen_mpi_f08.py; do not edit.",
         "! The routines it has and what it leaves out: docs/fortran.md.",
         "module mpi_f08_types",
         "  use, intrinsic :: iso_c_binding, only: c_ptr, c_int, c_int64_t",
         "  implicit none",
         "  private :: c_int, c_int64_t",
         ""]
    for h in HANDLES:
        o += [f"  type, bind(C) :: {h}", "    integer(c_int) :: MPI_VAL", f"  end type {h}"]
    o += ["  ! The C MPI_Status as it is (6 INTEGERs, MPI_STATUS_SIZE).",
          "  type, bind(C) :: MPI_Status",
          "    integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
          "    integer(c_int) :: xmsg_cancelled",
          "    integer(c_int64_t) :: xmsg_bytes",
          "  end type MPI_Status",
          "",
          "  include 'xmsg_mpi_f08_constants.h'",
          "",
          "  ! The sentinels are the C globals mpif.h's common blocks name (fortran.hpp).",
          "  integer(c_int), bind(C, name=\"xmsg_mpif_bottom_\") :: MPI_BOTTOM",
          "  integer(c_int), bind(C, name=\"xmsg_mpif_in_place_\") :: MPI_IN_PLACE",
          "  type(MPI_Status), bind(C, name=\"xmsg_mpif_status_ignore_\") :: MPI_STATUS_IGNORE",
          "  type(MPI_Status), bind(C, name=\"xmsg_mpif_statuses_ignore_\") :: MPI_STATUSES_IGNORE(1)",
          "  integer(c_int), bind(C, name=\"xmsg_mpif_errcodes_ignore_\") :: MPI_ERRCODES_IGNORE(1)",
          "  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false.",
          "  logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .false.",
          "",
          "  abstract interface",
          "    subroutine MPI_User_function(invec, inoutvec, len, datatype)",
          "      import :: c_ptr, MPI_Datatype",
          "      implicit none",
          "      type(c_ptr), value :: invec, inoutvec",
          "      integer :: len",
          "      type(MPI_Datatype) :: datatype",
          "    end subroutine MPI_User_function",
          *callback_interfaces(),
          "  end interface",
          ""]
    for fn, iface in PREDEFINED_PROCEDURES:
        o.append(f"  procedure({iface}) :: {fn}")
    o.append("")
    for op, fn in (("==", "eq"), ("/=", "ne")):
        o += [f"  interface operator({op})"]
        o += [f"    module procedure xmsg_{fn}_{h[4:].lower()}" for h in HANDLES]
        o += ["  end interface"]
    helpers = [f"xmsg_{fn}_{h[4:].lower()}" for h in HANDLES for fn in ("eq", "ne")]
    for i in range(0, len(helpers), 4):
        o.append("  private :: " + ", ".join(helpers[i:i + 4]))
    o += ["", "contains", ""]
    for h in HANDLES:
        s = h[4:].lower()
        for fn, op in (("eq", "=="), ("ne", "/=")):
            o += [f"  elemental logical function xmsg_{fn}_{s}(x, y)", f"    type({h}), intent(in) :: x, y",
                  f"    xmsg_{fn}_{s} = x%MPI_VAL {op} y%MPI_VAL", f"  end function xmsg_{fn}_{s}"]
    o += ["end module mpi_f08_types", "",
          "module xmsg_mpi_f08_entries",
          "  use, intrinsic :: iso_c_binding, only: c_funptr, c_char, c_size_t, c_double, c_int, c_int64_t, c_ptr",
          "  use mpi_f08_types",
          "  implicit none", ""]
    bodies, locals_ = [], []
    for name, args in ROUTINES:
        interface, body = routine(name, args)
        o += interface
        bodies += body
        locals_.append("xmsg_" + name[4:].lower())
    for name, rtype, entry in FUNCTIONS:
        interface, body = function(name, rtype, entry)
        o += interface
        bodies += body
        locals_.append("xmsg_" + name[4:].lower())
    o += ["end module xmsg_mpi_f08_entries", "",
          "module mpi_f08",
          "  use, intrinsic :: iso_c_binding, only: c_ptr, c_size_t, c_funloc",
          "  use mpi_f08_types",
          "  use xmsg_mpi_f08_entries",
          "  implicit none",
          "  private :: c_size_t, c_funloc"]
    for i in range(0, len(locals_), 4):
        o.append("  private :: " + ", ".join(locals_[i:i + 4]))
    o += ["", "contains", ""]
    o += bodies
    o += ["end module mpi_f08", ""]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(o))


if __name__ == "__main__":
    main(sys.argv[1])
