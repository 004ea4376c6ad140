/* devinfo.cu: colosim-devinfo prints the properties of the visible GPUs as JSON.
 *
 * It proves the CUDA build path and records, beside every measurement, which device, driver and
 * runtime produced it. Exit status: 0 printed; 77 no usable GPU or driver (the CTest skip code);
 * 1 other CUDA error. */
#include <cuda_runtime.h>
#include <jansson.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

static int attr(cudaDeviceAttr a, int dev)
{
    int v = -1;
    if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) v = -1;
    return v;
}

static json_t *device_json(int dev)
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

int main(void)
{
    int driver = 0, runtime = 0, count = 0;
    cudaError_t e = cudaDriverGetVersion(&driver);
    if (e == cudaSuccess) e = cudaRuntimeGetVersion(&runtime);
    if (e == cudaSuccess) e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        fprintf(stderr, "colosim-devinfo: no usable GPU: %s\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "no devices");
        bool no_gpu = e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
                      count == 0 || driver == 0;
        return no_gpu ? 77 : 1;
    }
    json_t *root = json_object();
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_object_set_new(root, "tool", json_string("colosim-devinfo"));
    json_object_set_new(root, "date", json_string(date));
    json_object_set_new(root, "driver_version",
                        json_sprintf("%d.%d", driver / 1000, (driver % 1000) / 10));
    json_object_set_new(root, "runtime_version",
                        json_sprintf("%d.%d", runtime / 1000, (runtime % 1000) / 10));
    json_t *devs = json_array();
    for (int i = 0; i < count; i++) {
        json_t *d = device_json(i);
        if (d) json_array_append_new(devs, d);
    }
    json_object_set_new(root, "devices", devs);
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(root);
    return 0;
}
