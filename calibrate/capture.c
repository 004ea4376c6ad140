/* capture.c: libcolosim-capture.so, a CUDA injection library (CUDA_INJECTION64_PATH) that
 * records the kernels, copies, API calls and NVTX ranges of any CUDA program through CUPTI's
 * activity API and writes them, as they arrive, to a record file (docs/capture.md) that
 * `colosim import capture` turns into traces. colosim-capture (the wrapper script) sets it up.
 *
 * Environment: COLOSIM_CAPTURE_OUT, the record file ("%p" becomes the process id; default
 * colosim-capture.%p.txt in the working folder). */
#include "capture_records.h"

#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_SIZE (8u << 20)
#define ALIGN 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static colo_capture_writer_t writer;
static int started;

static void warn_cupti(const char *what, CUptiResult r)
{
    const char *s = "?";
    cuptiGetResultString(r, &s);
    fprintf(stderr, "colosim-capture: %s: %s\n", what, s);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint8_t *b = NULL;
    if (posix_memalign((void **)&b, ALIGN, BUF_SIZE)) b = NULL;
    *buffer = b;
    *size = b ? BUF_SIZE : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&lock);
    if (!started) { /* after the file was closed (a late buffer): dropped, never written */
        pthread_mutex_unlock(&lock);
        free(buffer);
        return;
    }
    while (valid && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
        colo_capture_record(&writer, rec);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        fprintf(writer.f, "# dropped %zu records (buffers full)\n", dropped);
    fflush(writer.f);
    pthread_mutex_unlock(&lock);
    free(buffer);
}

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MARKER,
};

static void finish(void)
{
    if (!started) return;
    /* no new records after this: disable every kind, then flush what is buffered; a buffer
     * CUPTI still hands over after the close is dropped (buffer_completed) */
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        cuptiActivityDisable(kinds[i]);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&lock);
    if (writer.dropped_markers)
        fprintf(writer.f, "# %llu NVTX markers without a partner\n", writer.dropped_markers);
    fclose(writer.f);
    started = 0;
    pthread_mutex_unlock(&lock);
}

/* Called by the CUDA driver when CUDA_INJECTION64_PATH names this library. */
int InitializeInjection(void);
int InitializeInjection(void)
{
    if (started) return 1;
    const char *pattern = getenv("COLOSIM_CAPTURE_OUT");
    if (!pattern || !*pattern) pattern = "colosim-capture.%p.txt";
    char path[4096];
    size_t n = 0;
    for (const char *p = pattern; *p && n + 24 < sizeof path; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            n += (size_t)snprintf(path + n, sizeof path - n, "%d", (int)getpid());
            p++;
        } else {
            path[n++] = *p;
        }
    }
    path[n] = '\0';
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 0;
    }
    colo_capture_begin(&writer, f);
    CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        warn_cupti("cuptiActivityRegisterCallbacks", r);
        fclose(f);
        return 0;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if ((r = cuptiActivityEnable(kinds[i])) != CUPTI_SUCCESS)
            warn_cupti("cuptiActivityEnable", r); /* MARKER needs NVTX_INJECTION64_PATH */
    started = 1;
    atexit(finish);
    fprintf(stderr, "colosim-capture: recording into %s\n", path);
    return 1;
}
