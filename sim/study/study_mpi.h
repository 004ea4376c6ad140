/* study_mpi.h: a study's points spread over MPI ranks (mpirun -np N colosim sweep STUDY).
 * Built into the colosim command only, when CMake finds MPI (COLOSIM_MPI=AUTO|ON|OFF); the
 * core library never needs MPI. */
#ifndef COLO_STUDY_MPI_H
#define COLO_STUDY_MPI_H

#include "study.h"

/* Whether this process was started by an MPI launcher for more than one rank (the launcher's
 * environment: OpenMPI, PMIx or PMI). Works in builds without MPI, so that colosim can say it
 * cannot take part instead of running the whole study once per rank. */
bool colo_mpi_launched(void);

#ifdef COLOSIM_HAVE_MPI
/* MPI_Init; *rank and *size of MPI_COMM_WORLD. 0 or a negative code with err set. */
int colo_mpi_begin(int *argc, char ***argv, int *rank, int *size, colo_error_t *err);
void colo_mpi_end(void);
/* Whether ok is true on every rank (a collective: every rank must call it). */
bool colo_mpi_all(bool ok);

/* A points runner (colo_points_runner_fn): rank 0 hands out point numbers one at a time to
 * whichever rank asks (dynamic load balancing), runs points in its own pool as well, and
 * writes every point's file; the other ranks send theirs to it. Each rank runs o->jobs points
 * at a time (at least 1). Returns 0 on rank 0 once every point is done, 1 on the others. */
int colo_mpi_run_points(const colo_study_t *s, const colo_sweep_opts_t *o, const char *dir,
                        colo_point_fn fn, colo_error_t *err);
#endif

#endif
