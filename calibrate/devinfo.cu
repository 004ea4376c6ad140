/* devinfo.cu: colosim-devinfo prints the properties of the visible GPUs as JSON.
 *
 * It proves the CUDA build path and records, beside every measurement, which device, driver and
 * runtime produced it. Exit status: 0 printed; 77 no usable GPU or driver (the CTest skip code);
 * 1 other CUDA error. */
#include "device_json.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

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
    char kdrv[64];
    kernel_driver_version(kdrv, sizeof kdrv);
    json_object_set_new(root, "kernel_driver", json_string(kdrv));
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
