/* Internal pieces of spec handling shared by the parser and the printer. */
#ifndef QGEN_SPEC_INTERNAL_H
#define QGEN_SPEC_INTERNAL_H

#include <stddef.h>

#include "qgen/spec.h"

/* observer.histc_range's spelling of qg_observer_spec.histc_int. */
static inline const char *qg_histc_range_name(int histc_int) { return histc_int ? "int" : "exact"; }

/* A preset's JSON text, or NULL when no preset has that name. */
const char *qg_preset_json(const char *name);

/* The candidate closest to `word` by edit distance, or NULL when none is
 * close enough to be a plausible typo. */
const char *qg_closest_name(const char *word, const char *const *candidates, size_t count);

#endif
