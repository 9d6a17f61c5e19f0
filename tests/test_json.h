/* JSON helpers for the suites that read qgen's JSON (reports, targets/). */
#ifndef QGEN_TEST_JSON_H
#define QGEN_TEST_JSON_H

#include <jansson.h>
#include <stdio.h>

/* The document at `path`, or NULL after saying where it failed to parse. */
static inline json_t *qg_test_load_json(const char *path) {
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fprintf(stderr, "\n%s:%d: %s\n", path, e.line, e.text);
    return j;
}

/* A string member, or NULL. */
static inline const char *qg_test_json_str(json_t *o, const char *key) {
    return json_string_value(json_object_get(o, key));
}

#endif
