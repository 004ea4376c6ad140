/* driver_entry.h: driver API functions through the runtime's entry-point query, so that the
 * CUDA tools do not link libcuda and start (and say "no GPU") on machines without a driver.
 * A tool lists the functions it needs in an X-macro and writes
 *     LIST(COLO_DRIVER_DECLARE)
 *     static const char *load_driver(void) { COLO_DRIVER_LOADER(LIST) }
 * load_driver returns NULL, or the name of the first function the driver lacks. */
#ifndef COLO_DRIVER_ENTRY_H
#define COLO_DRIVER_ENTRY_H

#include <cuda.h>
#include <cuda_runtime.h>

#define COLO_DRIVER_DECLARE(fn) static decltype(&fn) p_##fn;
#define COLO_DRIVER_LOAD_ONE(fn)                                                                   \
    if (cudaGetDriverEntryPointByVersion(#fn, (void **)&p_##fn, 12040, cudaEnableDefault, &q) !=   \
            cudaSuccess ||                                                                         \
        q != cudaDriverEntryPointSuccess || !p_##fn)                                               \
        return #fn;
#define COLO_DRIVER_LOADER(LIST)                                                                   \
    cudaDriverEntryPointQueryResult q;                                                             \
    LIST(COLO_DRIVER_LOAD_ONE)                                                                     \
    return NULL;

#endif
