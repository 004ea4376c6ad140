/* plot_internal.h: what the figures share (plot.c): gnuplot text, headings in words, the
 * series' styles, and drawing a script to SVG and PNG. Not part of the library's API. */
#ifndef COLO_PLOT_INTERNAL_H
#define COLO_PLOT_INTERNAL_H

#include "errors.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* A gnuplot string literal of s: double quotes, its special characters escaped. */
void colo_plot_gp_string(FILE *f, const char *s);

/* Closes the script f (its text in *body, taken over) and draws it at w x h pixels as
 * BASE.svg, then BASE.png, each whole or not at all. 0 or a negative code with err set. */
int colo_plot_render_both(FILE *f, char **body, unsigned w, unsigned h, const char *base,
                          colo_error_t *err);

/* The number at key k of object o (0 when absent). */
double colo_plot_num(json_t *o, const char *k);

/* A study key's value in words into buf (n bytes); an unknown value is itself. */
const char *colo_plot_value_name(const char *key, const char *value, char *buf, size_t n);

/* What the runs were, for a subtitle: the scenario's description into desc, and after lead its
 * GPU in words (unless gpu_axis) and the runs' length into facts (each n bytes). sc: a run's
 * "scenario" object, or NULL to read the scenario file at path with the overrides set. */
void colo_plot_runs_words(json_t *sc, const char *path, json_t *set, json_t *cluster, bool gpu_axis,
                          const char *lead, char *desc, char *facts, size_t n);

/* Height in pixels of a heading over a figure w pixels wide, and the heading itself: the
 * title, and the runs (desc, facts) on one line or two; h is the figure's height. */
unsigned colo_plot_heading_px(const char *desc, const char *facts, unsigned w);
void colo_plot_heading(FILE *f, const char *title, const char *desc, const char *facts, unsigned w,
                       unsigned h);

/* The series' colours (7, Okabe and Ito's), and line styles 1..n with their own dash and point
 * type, widest first; style 90 marks overloaded points, 91 an SLO or goal line. */
extern const char *const colo_plot_colours[];
void colo_plot_styles(FILE *f, size_t n);

#endif
