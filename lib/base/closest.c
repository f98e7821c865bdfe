/*
 * closest.c - "did you mean": the candidate a mistyped word abbreviates, or else the one
 * nearest it by edit distance.
 *
 * Used wherever a name is looked up (manifest keys, ops, commands, checks), so every
 * suggestion follows the same rule.
 */
#include <stdint.h>
#include <string.h>

#include "internal.h"

size_t nopi_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return SIZE_MAX;
    size_t row[65];
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
    return row[lb];
}

/* True when word is an abbreviation of candidate: its letters in order, the first the same
 * ("relu_fwd" of "relu_forward"), and at least half as long. */
static bool abbreviates(const char *word, const char *candidate)
{
    size_t lw = strlen(word), lc = strlen(candidate);
    if (lw < 3 || 2 * lw < lc || lw >= lc || word[0] != candidate[0])
        return false;
    const char *c = candidate;
    for (const char *w = word; *w; w++) {
        c = strchr(c, *w);
        if (!c)
            return false;
        c++;
    }
    return true;
}

const char *nop_closest(const char *word, const char *const *candidates, size_t n)
{
    /* an abbreviation says more than a near spelling: the shortest candidate it abbreviates */
    const char *abbr = NULL;
    for (size_t i = 0; i < n && candidates[i]; i++)
        if (abbreviates(word, candidates[i]) &&
            (!abbr || strlen(candidates[i]) < strlen(abbr)))
            abbr = candidates[i];
    if (abbr)
        return abbr;
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < n && candidates[i]; i++) {
        size_t d = nopi_edit_distance(word, candidates[i]);
        if (d < best_d)
            best_d = d, best = candidates[i];
    }
    /* close enough: at most a third of the word wrong, and never more than 3 edits */
    size_t limit = strlen(word) / 3 + 1;
    return best && best_d <= limit && best_d <= 3 ? best : NULL;
}
