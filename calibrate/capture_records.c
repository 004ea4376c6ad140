/* capture_records.c: one line per CUPTI activity record colosim needs. */
#include "capture_records.h"

#include <string.h>

void colo_capture_begin(colo_capture_writer_t *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    fprintf(f, "colosim-capture 1\n");
}

/* Names go last on the line; a newline inside one would break the format. */
static void put_name(FILE *f, const char *name)
{
    if (!name || !*name) name = "?";
    for (const char *p = name; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
    fputc('\n', f);
}

static void marker(colo_capture_writer_t *w, const CUpti_ActivityMarker2 *m)
{
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        if (w->n_open == COLO_CAPTURE_MAX_OPEN) {
            w->dropped_markers++;
            return;
        }
        colo_capture_open_t *o = &w->open[w->n_open++];
        o->id = m->id;
        o->start = m->timestamp;
        snprintf(o->name, sizeof o->name, "%s", m->name ? m->name : "?");
        return;
    }
    if (!(m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)) return; /* instantaneous marks */
    for (int i = w->n_open - 1; i >= 0; i--)
        if (w->open[i].id == m->id) {
            fprintf(w->f, "range %llu %llu ", (unsigned long long)w->open[i].start,
                    (unsigned long long)m->timestamp);
            put_name(w->f, w->open[i].name);
            w->open[i] = w->open[--w->n_open];
            w->records++;
            return;
        }
    w->dropped_markers++;
}

int colo_capture_record(colo_capture_writer_t *w, const CUpti_Activity *rec)
{
    FILE *f = w->f;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        fprintf(f, "kernel %llu %llu %u %u %u %d %d %d %d %d %d %u %d ",
                (unsigned long long)k->start, (unsigned long long)k->end, k->deviceId, k->streamId,
                k->correlationId, k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ,
                (unsigned)k->registersPerThread, k->staticSharedMemory + k->dynamicSharedMemory);
        put_name(f, k->name);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
        fprintf(f, "copy %llu %llu %u %u %u %u %llu\n", (unsigned long long)m->start,
                (unsigned long long)m->end, m->deviceId, m->streamId, m->correlationId,
                (unsigned)m->copyKind, (unsigned long long)m->bytes);
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
        fprintf(f, "api %llu %llu %u %u\n", (unsigned long long)a->start,
                (unsigned long long)a->end, a->correlationId, (unsigned)a->cbid);
        break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
        const CUpti_ActivityDevice5 *d = (const CUpti_ActivityDevice5 *)rec;
        fprintf(f, "device %u %u %llu ", d->id, d->numMultiprocessors,
                (unsigned long long)d->globalMemorySize);
        put_name(f, d->name);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
        marker(w, (const CUpti_ActivityMarker2 *)rec);
        return 0;
    default:
        return 0;
    }
    w->records++;
    return 1;
}
