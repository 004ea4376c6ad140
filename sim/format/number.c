/* number.c: numbers that keep to a table's column (number.h). */
#include "number.h"

#include <math.h>
#include <stdio.h>

/* Whether "%.*f" shows v: not a nonzero value it would print as 0. */
static bool shows(int decimals, double v)
{
    return v == 0 || fabs(v) >= 0.5 * pow(10, -decimals) || v != v;
}

const char *colo_number_cell(char *buf, size_t n, int width, int decimals, double v)
{
    int w = snprintf(buf, n, "%*.*f", width, decimals, v);
    if (w >= 0 && w <= width && shows(decimals, v)) return buf;
    for (int digits = width > 10 ? width - 6 : 4; digits >= 1; digits--) {
        w = snprintf(buf, n, "%*.*g", width, digits, v);
        if (w >= 0 && w <= width) return buf;
    }
    return buf; /* wider than width even at one digit (a very narrow column): as it is */
}

const char *colo_number_text(char *buf, size_t n, int decimals, bool sign, double v)
{
    if (!(fabs(v) < 1e7) || !shows(decimals, v))
        snprintf(buf, n, sign ? "%+.*e" : "%.*e", decimals, v);
    else
        snprintf(buf, n, sign ? "%+.*f" : "%.*f", decimals, v);
    return buf;
}
