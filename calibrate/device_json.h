/* device_json.h: a CUDA device's properties as a JSON object, shared by the CUDA tools so that
 * every measurement records the same facts about the device it was taken on. */
#ifndef COLO_DEVICE_JSON_H
#define COLO_DEVICE_JSON_H

#include <cuda_runtime.h>
#include <jansson.h>

#include <stdio.h>
#include <string.h>

static inline int attr(cudaDeviceAttr a, int dev)
{
    int v = -1;
    if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) v = -1;
    return v;
}

static inline json_t *device_json(int dev)
{
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) return NULL;
    char uuid[64];
    int n = 0;
    for (int i = 0; i < 16; i++) {
        n += snprintf(uuid + n, sizeof uuid - (size_t)n, "%s%02x",
                      (i == 4 || i == 6 || i == 8 || i == 10) ? "-" : "",
                      (unsigned char)p.uuid.bytes[i]);
    }
    size_t free_b = 0, total_b = 0;
    cudaSetDevice(dev);
    cudaMemGetInfo(&free_b, &total_b);
    json_t *d = json_object();
    json_object_set_new(d, "index", json_integer(dev));
    json_object_set_new(d, "name", json_string(p.name));
    json_object_set_new(d, "uuid", json_string(uuid));
    json_object_set_new(d, "pci_bus_id", json_sprintf("%04x:%02x:%02x.0", p.pciDomainID,
                                                      p.pciBusID, p.pciDeviceID));
    json_object_set_new(d, "compute_capability", json_sprintf("%d.%d", p.major, p.minor));
    json_object_set_new(d, "sms", json_integer(p.multiProcessorCount));
    json_object_set_new(d, "max_threads_per_sm", json_integer(p.maxThreadsPerMultiProcessor));
    json_object_set_new(d, "max_blocks_per_sm", json_integer(p.maxBlocksPerMultiProcessor));
    json_object_set_new(d, "registers_per_sm", json_integer(p.regsPerMultiprocessor));
    json_object_set_new(d, "shared_bytes_per_sm", json_integer((json_int_t)p.sharedMemPerMultiprocessor));
    json_object_set_new(d, "shared_bytes_per_block_optin", json_integer((json_int_t)p.sharedMemPerBlockOptin));
    json_object_set_new(d, "reserved_shared_bytes_per_block", json_integer((json_int_t)p.reservedSharedMemPerBlock));
    json_object_set_new(d, "l2_bytes", json_integer(p.l2CacheSize));
    json_object_set_new(d, "persisting_l2_max_bytes", json_integer(p.persistingL2CacheMaxSize));
    json_object_set_new(d, "memory_bytes", json_integer((json_int_t)p.totalGlobalMem));
    json_object_set_new(d, "memory_free_bytes", json_integer((json_int_t)free_b));
    json_object_set_new(d, "memory_bus_bits", json_integer(p.memoryBusWidth));
    json_object_set_new(d, "sm_clock_khz", json_integer(attr(cudaDevAttrClockRate, dev)));
    json_object_set_new(d, "memory_clock_khz", json_integer(attr(cudaDevAttrMemoryClockRate, dev)));
    json_object_set_new(d, "async_engines", json_integer(p.asyncEngineCount));
    json_object_set_new(d, "concurrent_kernels", json_boolean(p.concurrentKernels));
    json_object_set_new(d, "compute_preemption", json_boolean(p.computePreemptionSupported));
    json_object_set_new(d, "integrated", json_boolean(p.integrated));
    json_object_set_new(d, "mps_enabled", json_boolean(p.mpsEnabled));
    json_object_set_new(d, "ecc", json_boolean(p.ECCEnabled));
    json_object_set_new(d, "compute_mode", json_integer(attr(cudaDevAttrComputeMode, dev)));
    return d;
}

/* The kernel driver's version ("580.159.04") from /proc/driver/nvidia/version, or "unknown". */
static inline void kernel_driver_version(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    char line[512];
    if (fgets(line, sizeof line, f)) {
        /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." */
        const char *k = strstr(line, "Kernel Module");
        if (k) {
            k += strlen("Kernel Module");
            while (*k == ' ')
                k++;
            size_t len = strcspn(k, " \n");
            if (len && len < n) snprintf(buf, n, "%.*s", (int)len, k);
        }
    }
    fclose(f);
}

#endif
