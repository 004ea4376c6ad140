/* chrome_trace.h: reads a Chrome Trace Event JSON file (gzipped or not) one event at a time. */
#ifndef COLO_CHROME_TRACE_H
#define COLO_CHROME_TRACE_H

#include "errors.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Called with each member of the top-level object other than "traceEvents" (value borrowed:
 * freed when the call returns; line: where the value starts), and with each element of the
 * "traceEvents" array (index from 0). A nonzero return stops the read and is returned. */
typedef int (*colo_chrome_member_fn)(void *ctx, const char *key, json_t *value, int line);
typedef int (*colo_chrome_event_fn)(void *ctx, json_t *event, size_t index, int line);

/* Reads the JSON document at path, gunzipping it if it is gzip, in chunks of 1 MiB: each
 * element of the top-level "traceEvents" array is parsed by Jansson on its own, handed to
 * on_event and freed, so that what is held is one chunk and one value, never the document
 * (a profile of 141 MB held as Jansson values took 1.3 GB). Every other member is parsed whole
 * and handed to on_member (PyTorch writes small ones: deviceProperties, traceName). *events is
 * set to whether a "traceEvents" array was read; a document that is not an object has none.
 * A value held whole (one event, or another member) is at most 16 MiB: a longer one is refused
 * at the line it starts, before more is read. Errors name path and the line: COLO_EPARSE
 * ("JSON error: ...", a value too long, a NUL byte, "cannot
 * decompress: ..." in zlib's words), COLO_EIO, COLO_EINVAL (a folder), COLO_EINTR (SIGINT or
 * SIGTERM), COLO_ENOMEM, or what a callback returned. O(file size). */
int colo_chrome_read(const char *path, colo_chrome_member_fn on_member,
                     colo_chrome_event_fn on_event, void *ctx, bool *events, colo_error_t *err);

#endif
