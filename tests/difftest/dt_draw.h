/* Random valid specs for the differential tester, drawn as JSON over every
 * field of docs/spec.md and read back through qg_spec_load_string (so that
 * the parser and the validator see them as a user's file), and the tally
 * of which values of each field were covered. */
#ifndef QGEN_DT_DRAW_H
#define QGEN_DT_DRAW_H

#include <stddef.h>
#include <stdint.h>

#include "qgen/spec.h"

enum { DT_MAX_FIELDS = 24, DT_JSON_MAX = 2048 };

/* A drawn spec: its top-level fields as "key": value text, in order. A
 * field may be dropped (the shrinker does) and the JSON made again. */
typedef struct dt_fields {
    size_t n;
    char key[DT_MAX_FIELDS][24];
    char value[DT_MAX_FIELDS][512];
} dt_fields;

/* Draws fields from seed until they load; `rejected` counts the draws the
 * validator refused on the way. Returns false when none loaded. */
bool dt_draw_spec(uint64_t seed, const char *name, dt_fields *f, qg_spec *out, unsigned *rejected);

/* {"key": value, ...} of the fields. */
void dt_fields_json(const dt_fields *f, char *out, size_t cap);

/* The fields without field i. */
void dt_fields_drop(dt_fields *f, size_t i);

/* Coverage: the values each field took over the specs tallied. */
void dt_cover_spec(const qg_spec *sp);
void dt_cover_note(const char *field, const char *value);
void dt_cover_print(void);

#endif
