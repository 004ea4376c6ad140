/* json_lines.h: line numbers of array elements in JSON text, for error messages.
 * Jansson reports where a syntax error is but not where a valid value sits; this small scanner
 * recovers the line of each element of one top-level array so that "ops[12]: ..." can say
 * "trace.json:57: ops[12].duration_ns: ...". */
#ifndef COLO_JSON_LINES_H
#define COLO_JSON_LINES_H

#include "errors.h"

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>

/* Reads the whole text file at path into *buf (colo_free), its length into *len; a pipe or a
 * device is read to its end. Errors: COLO_ENOENT (no such file), COLO_EIO (cannot open or
 * read), COLO_EINVAL (a folder),
 * COLO_EPARSE (a NUL byte, with its line), COLO_EINTR (SIGINT/SIGTERM while reading),
 * COLO_ENOMEM. */
int colo_read_file(const char *path, char **buf, size_t *len, colo_error_t *err);

/* colo_read_file for a file colosim wrote itself (a finished study point): read whole even
 * after a stop request, so that finished work is kept. */
int colo_read_own_file(const char *path, char **buf, size_t *len, colo_error_t *err);

/* 0 when path names something that can be read as a file; else COLO_EIO (it does not exist or
 * cannot be seen) or COLO_EINVAL ("a folder, not a file"), naming path. */
int colo_check_input_file(const char *path, colo_error_t *err);

/* 0 when buf is UTF-8; else COLO_EPARSE at the line and column of the first bad byte. */
int colo_text_utf8_error(const char *path, const char *buf, size_t len, colo_error_t *err);

/* 0 when the path itself is UTF-8 (results name it in JSON); else COLO_EINVAL. */
int colo_path_utf8_error(const char *path, colo_error_t *err);

/* Reads the text file at path whole (colo_read_file, then UTF-8 checked) and opens it as a
 * stream *f over *mem: fclose(*f), then colo_free(*mem). For line readers (getline) that must
 * not meet a NUL byte, an endless file or bytes the results cannot hold. */
int colo_text_open(const char *path, FILE **f, char **mem, colo_error_t *err);

/* 0 when buf holds no NUL byte; else COLO_EPARSE at the line of the first. */
int colo_text_nul_error(const char *path, const char *buf, size_t len, colo_error_t *err);

/* Parses len bytes of JSON text read from path (flags: Jansson's). Tells a failed allocation
 * inside Jansson (which it may report as a syntax error) from a real one. Errors: COLO_EPARSE
 * ("JSON error: ..." with Jansson's line), COLO_ENOMEM. */
int colo_json_parse(const char *buf, size_t len, size_t flags, const char *path, json_t **root,
                    colo_error_t *err);

/* Reads and parses the JSON file at path (duplicate keys refused). On success *root is the
 * document and *text (colo_free) the file's bytes, *len their count, for the line scanners below.
 * Errors: COLO_EIO (cannot open/read), COLO_EPARSE (with Jansson's line), COLO_ENOMEM. */
int colo_json_read_file(const char *path, json_t **root, char **text, size_t *len,
                        colo_error_t *err);

/* For the member key of the top-level object whose value is an array, writes into *lines a new
 * array (colo_free) with the 1-based line where each element starts, and its length into *n.
 * Returns 0, COLO_ENOENT when there is no such array, or COLO_ENOMEM. The text must already be
 * valid JSON (parse it with Jansson first); the scanner does not validate. O(len). */
int colo_json_element_lines(const char *text, size_t len, const char *key, int **lines, size_t *n);

/* Records an error in element i of the array `array` ("ops[12].duration_ns"), at that element's
 * line when lines (from colo_json_element_lines) has it. member may be NULL. Returns code. */
int colo_json_element_verror(colo_error_t *err, int code, const char *path, const char *array,
                             size_t i, const int *lines, size_t n_lines, const char *member,
                             const char *fmt, va_list ap) __attribute__((format(printf, 9, 0)));

/* The first member of obj whose name is not in allowed (NULL-terminated), or NULL. */
const char *colo_json_unknown_key(json_t *obj, const char *const *allowed);

/* Line (1-based) where the top-level member key is written, or 0 when absent. O(len). */
int colo_json_key_line(const char *text, size_t len, const char *key);

/* Writes doc to path atomically (colo_atomic_open: a temporary file renamed over path; "-" is
 * standard output) with Jansson's dump flags and a final newline. 0, or a negative code with
 * err set: an open or rename failure as colo_atomic_open and commit say, a failed write as
 * COLO_EIO "path: message". Nothing is left at path on failure. */
int colo_json_write_file(json_t *doc, size_t flags, const char *path, const char *message,
                         colo_error_t *err);

#endif
