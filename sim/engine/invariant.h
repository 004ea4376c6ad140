/* invariant.h: what must hold while simulating, checked (issue 10). A failed check is a bug in
 * colosim, never a fault of the input: it says where and what on stderr and aborts, so that no
 * wrong number is written (results files are written whole or not at all; a sweep records the
 * point as failed).
 *   COLO_CHECK   cheap (O(1) where it stands, or once per run): in every build.
 *   COLO_DCHECK  costly (a walk per event): in builds with COLOSIM_CHECKS, which CMake's Debug
 *                build type (and so the sanitizer build CI runs) defines. */
#ifndef COLO_INVARIANT_H
#define COLO_INVARIANT_H

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
_Noreturn void colo_check_failed(const char *file, int line, const char *cond, const char *fmt,
                                 ...);

#define COLO_CHECK(cond, ...) \
    ((cond) ? (void)0 : colo_check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__))

#ifdef COLOSIM_CHECKS
#define COLO_DCHECK(cond, ...) COLO_CHECK(cond, __VA_ARGS__)
#else
#define COLO_DCHECK(cond, ...) ((void)sizeof(cond)) /* not evaluated */
#endif

#endif
