/* Keeps emitted C within a line width: calls break after a comma and
 * continue under their opening parenthesis, comments wrap at spaces,
 * directives continue with a backslash. */
#ifndef QGEN_C_WRAP_H
#define QGEN_C_WRAP_H

#include "../util/text_buf.h"

/* Rewrites `t` so that no line exceeds `width` columns where a break is
 * possible; false when out of memory (t is left as it was). */
bool qg_c_wrap(qg_text *t, int width);

#endif
