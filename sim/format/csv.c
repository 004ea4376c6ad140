/* csv.c: splitting CSV records (RFC 4180 quoting) for the importers. */
#include "csv.h"

#include <string.h>

/* Splits one CSV record in place (RFC 4180 quoting, no embedded newlines). Returns the number
 * of fields, at most max, or -1 for an unterminated quote. */
int colo_csv_split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max) return max + 1;
        if (*p == '"') {
            char *w = ++p;
            fields[n++] = w;
            for (;;) {
                if (*p == '\0') return -1;
                if (*p == '"' && p[1] == '"') {
                    *w++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *w++ = *p++;
                }
            }
            *w = '\0';
            while (*p && *p != ',')
                p++; /* tolerate junk after the closing quote */
        } else {
            fields[n++] = p;
            while (*p && *p != ',')
                p++;
        }
        if (*p != ',') break;
        *p++ = '\0';
    }
    return n;
}

void colo_csv_chomp(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

void colo_csv_write_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
