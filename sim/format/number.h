/* number.h: a number in a table's column: fixed decimals while they fit, else as few
 * significant digits in exponent form as show it (a hand-edited 1e300 prints as 1e+300, not as
 * 301 digits that push the table apart). */
#ifndef COLO_NUMBER_H
#define COLO_NUMBER_H

#include <stdbool.h>
#include <stddef.h>

/* v as "%*.*f" (width, decimals) when that takes at most width characters, else in "%g" form
 * within width (at least 4 significant digits where width allows). Returns buf. */
const char *colo_number_cell(char *buf, size_t n, int width, int decimals, double v);

/* v as "%.*f" (decimals) from 10^-decimals / 2 to below 10^7, else "%.*e" (0 as 0): for a
 * figure in a sentence. sign: a '+' before positive values. Returns buf. */
const char *colo_number_text(char *buf, size_t n, int decimals, bool sign, double v);

#endif
