/* capture_records.h: CUPTI activity records -> colosim-capture record lines (docs/capture.md).
 * Kept apart from the injection library so that tests can feed it records built by hand. */
#ifndef COLO_CAPTURE_RECORDS_H
#define COLO_CAPTURE_RECORDS_H

#include <cupti_activity.h>
#include <stdio.h>

/* NVTX ranges arrive as a start marker and an end marker with the same id. */
#define COLO_CAPTURE_MAX_OPEN 256
typedef struct colo_capture_open {
    uint32_t id;
    uint64_t start;
    char name[200];
} colo_capture_open_t;

typedef struct colo_capture_writer {
    FILE *f;
    colo_capture_open_t open[COLO_CAPTURE_MAX_OPEN];
    int n_open;
    unsigned long long records, dropped_markers;
} colo_capture_writer_t;

/* Writes the header line. */
void colo_capture_begin(colo_capture_writer_t *w, FILE *f);

/* Writes one record (kernel, memcpy, runtime/driver API call, device, marker); others are
 * ignored. Returns 1 when a line was written. */
int colo_capture_record(colo_capture_writer_t *w, const CUpti_Activity *rec);

#endif
