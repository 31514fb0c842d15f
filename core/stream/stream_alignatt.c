/* The live stream's AlignAtt stop rule (whisperkv_stream.h commit_policy; after
 * Simul-Whisper, arXiv 2406.10052): where each token of a run's hypothesis looks in
 * the audio, from the same alignment-heads attention the word timestamps use
 * (align.c's matrix: standardized along tokens, median filter 7, heads averaged). */
#include "stream/stream_alignatt.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

#define REWIND_FRAMES 200 /* 4 s: attention jumping back this far is a rewind */

int wkv__alignatt_stop(wkv_context *ctx, const int *pairs, int n_pairs, const int *sot, int n_sot,
                       const int *text, int n_text, int frames, int threshold,
                       wkv__alignatt *out)
{
    const wkv_model *m = ctx->model;
    const int L = n_sot + n_text + 2, N = n_text + 1;
    memset(out, 0, sizeof *out);
    out->stop = n_text;
    out->last_frame = -1;
    /* nothing to look at, or more tokens than one pass holds: nothing stops */
    if (n_text <= 0 || frames <= 0 || L > m->hp.n_text_ctx)
        return 0;
    int *seq = wkv__malloc((size_t)L * sizeof *seq);
    float *a = wkv__malloc((size_t)N * frames * sizeof *a);
    float *probs = wkv__malloc((size_t)n_text * sizeof *probs);
    int rc = -1;
    if (!seq || !a || !probs)
        goto out;
    memcpy(seq, sot, (size_t)n_sot * sizeof *seq);
    seq[n_sot] = m->sp.notimestamps;
    memcpy(seq + n_sot + 1, text, (size_t)n_text * sizeof *seq);
    seq[L - 1] = m->sp.eot;
    if (wkv__align_matrix(ctx, pairs, n_pairs, seq, L, n_sot, frames, a, probs) != 0)
        goto out;
    rc = 0;
    /* row i is the attention of the step that chose text[i] */
    int prev = -1;
    for (int i = 0; i < n_text; i++) {
        const float *row = a + (size_t)i * frames;
        int best = 0;
        for (int f = 1; f < frames; f++)
            if (row[f] > row[best])
                best = f;
        out->last_frame = best;
        if (prev >= 0 && best < prev - REWIND_FRAMES) {
            out->rewind = 1;
            out->stop = 0;
            break;
        }
        if (frames - best <= threshold) {
            out->stop = i;
            break;
        }
        prev = best;
    }
out:
    wkv__free(seq);
    wkv__free(a);
    wkv__free(probs);
    return rc;
}
