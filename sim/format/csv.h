/* csv.h: splitting CSV records for the importers (Orion profiles, Nsight Compute exports), and
 * writing fields. */
#ifndef COLO_CSV_H
#define COLO_CSV_H

#include <stdio.h>

/* Splits one CSV record in place (RFC 4180 quoting, no embedded newlines). Returns the number
 * of fields, max + 1 when there are more than max, or -1 for an unterminated quote. */
int colo_csv_split(char *line, char **fields, int max);

/* Removes a trailing newline and carriage return. */
void colo_csv_chomp(char *s);

/* Writes one field, quoted when it holds a comma, quote or line break (RFC 4180). */
void colo_csv_write_field(FILE *f, const char *s);

#endif
