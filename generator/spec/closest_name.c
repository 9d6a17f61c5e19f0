/* "Did you mean": the nearest valid name to a misspelt one. */
#include <stdlib.h>
#include <string.h>

#include "spec_internal.h"

static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = malloc((lb + 1) * sizeof *row);
    if (!row)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

const char *qg_closest_name(const char *word, const char *const *candidates, size_t count) {
    /* a typo is short; the distance grows with the product of the lengths */
    if (strlen(word) > 64)
        return NULL;
    const char *best = NULL;
    size_t best_d = (size_t)-1, len = strlen(word);
    /* a name cut short ("torch.fbgemm.act") means the shortest name it
     * begins, however many letters are missing */
    for (size_t i = 0; i < count; i++)
        if (len >= 3 && strncmp(candidates[i], word, len) == 0 && candidates[i][len] &&
            (!best || strlen(candidates[i]) < strlen(best)))
            best = candidates[i];
    if (best)
        return best;
    for (size_t i = 0; i < count; i++) {
        size_t d = edit_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    /* More than half the word changed is not a typo; the same word is not one either. */
    return best && best_d > 0 && best_d <= (strlen(word) + 1) / 2 + 1 ? best : NULL;
}
