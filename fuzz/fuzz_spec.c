/* Spec JSON with --set layers: the text up to the first NUL is the spec,
 * each line after it one --set argument. A spec that loads must print as
 * canonical JSON that loads back to the same spec and the same text. */
#include <stdint.h>

#include "fuzz_util.h"
#include "qgen/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    const char *sets[8];
    size_t nsets = 0;
    char *rest = memchr(text, 0, size) ? text + strlen(text) + 1 : NULL;
    while (rest && rest < text + size && nsets < 8) {
        sets[nsets++] = rest;
        char *nl = strchr(rest, '\n');
        if (!nl)
            break;
        *nl = 0;
        rest = nl + 1;
    }
    qg_spec sp, again;
    qg_error err;
    if (qg_spec_load_string(text, "fuzz.json", sets, nsets, &sp, &err) == QG_OK) {
        char *json = qg_spec_to_json(&sp);
        FUZZ_ASSERT(json);
        FUZZ_ASSERT(qg_spec_load_string(json, "canonical", NULL, 0, &again, &err) == QG_OK);
        char *json2 = qg_spec_to_json(&again);
        FUZZ_ASSERT(json2 && strcmp(json, json2) == 0);
        free(json);
        free(json2);
    } else {
        FUZZ_ASSERT(err.message[0] && !strchr(err.message, '\n'));
    }
    free(text);
    return 0;
}
