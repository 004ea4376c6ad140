/* driver_entry.h: driver API functions through the runtime's entry-point query, so that the
 * CUDA tools do not link libcuda and start (and say "no GPU") on machines without a driver.
 * A tool lists the functions it needs in an X-macro, each with the CUDA version its PFN
 * typedef in cudaTypedefs.h names (PFN_cuGreenCtxStreamCreate_v12050: 12050), and writes
 *     LIST(COLO_DRIVER_DECLARE)
 *     static const char *load_driver(void) { COLO_DRIVER_LOADER(LIST) }
 * load_driver returns NULL, or the name of the first function the driver lacks.
 *
 * Each function is asked for at its own version: the driver returns NULL for a version older
 * than the function (issue 23: cuGreenCtxStreamCreate asked for at 12040 never loaded). The
 * version is checked when this compiles: a PFN typedef of that version must exist in the
 * installed headers and have the prototype cuda.h declares for the name; the test
 * cuda.driver_versions checks that it is the newest version the headers know. */
#ifndef COLO_DRIVER_ENTRY_H
#define COLO_DRIVER_ENTRY_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <type_traits>

#define COLO_DRIVER_DECLARE(fn, ver)                                                               \
    static_assert(std::is_same<decltype(&fn), PFN_##fn##_v##ver>::value,                           \
                  #fn " at version " #ver " has not the prototype cuda.h declares");               \
    static PFN_##fn##_v##ver p_##fn;
#define COLO_DRIVER_LOAD_ONE(fn, ver)                                                              \
    if (cudaGetDriverEntryPointByVersion(#fn, (void **)&p_##fn, ver, cudaEnableDefault, &q) !=     \
            cudaSuccess ||                                                                         \
        q != cudaDriverEntryPointSuccess || !p_##fn)                                               \
        return #fn;
#define COLO_DRIVER_LOADER(LIST)                                                                   \
    cudaDriverEntryPointQueryResult q;                                                             \
    LIST(COLO_DRIVER_LOAD_ONE)                                                                     \
    return NULL;

#endif
