/* Logit filters and scores, in the reference's order and with its edge cases. */
#include "decode/rules.h"
#include "base/util.h"
#include "base/cpu.h"
#include "model/vocab.h"
#include "kernels/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

double wkv__logprob(const float *logits, int n, int token)
{
    return (double)logits[token] - wkv__log_sum_exp(logits, n);
}

double wkv__prob(const float *logits, int n, int token)
{
    return exp(wkv__logprob(logits, n, token));
}

/* The most likely token (the first of equal maxima, as a scan with > finds it; NaN
 * skipped) and its margin over the largest of the other logits.  By blocks: every
 * block's maximum in one vectorized pass, then only the winning block scanned (the
 * branchy scan of 51865 logits took 28 us a step, on one thread while the others
 * wait). */
WKV_CLONES
static int argmax2_clones(const float *x, int n, float *margin)
{
    enum { NB = 64 };
    const int bs = ((n + NB - 1) / NB + 15) & ~15;
    float bm[NB], b1 = -INFINITY, b2 = -INFINITY;
    int nb = 0, kb = 0;
    for (int i = 0; i < n; i += bs, nb++)
        bm[nb] = wkv__max_lanes(x + i, n - i < bs ? n - i : bs);
    for (int k = 0; k < nb; k++)
        if (bm[k] > b1) {
            b1 = bm[k];
            kb = k;
        }
    if (b1 == -INFINITY) { /* all -inf or NaN: token 0, as the scan */
        *margin = b1 - b2;
        return 0;
    }
    const int k0 = kb * bs, k1 = n - k0 < bs ? n : k0 + bs;
    int best = k0;
    while (!(x[best] == b1))
        best++;
    b1 = x[best];
    for (int k = 0; k < nb; k++)
        if (k != kb && bm[k] > b2)
            b2 = bm[k];
    const float lo = wkv__max_lanes(x + k0, best - k0), hi = wkv__max_lanes(x + best + 1, k1 - best - 1);
    b2 = lo > b2 ? lo : b2;
    b2 = hi > b2 ? hi : b2;
    *margin = b1 - b2;
    return best;
}

int wkv__argmax2(const float *x, int n, float *margin)
{
    return argmax2_clones(x, n, margin);
}

/* The largest text logit, NaN skipped (vectorized, as the argmax above). */
WKV_CLONES
static float max_clones(const float *x, int n)
{
    return wkv__max_lanes(x, n);
}

void wkv__rules_init(wkv__rules *r, const wkv_options *o, int sample_begin)
{
    r->sample_begin = sample_begin;
    r->timestamps = o->timestamps;
    r->max_initial_ts_index = (int)lround(o->max_initial_timestamp / 0.02);
    r->suppress_blank = 1;
    r->max_ts_index = -1;
}

static void forbid(float *logits, int from, int to)
{
    for (int i = from; i < to; i++)
        logits[i] = -INFINITY;
}

void wkv__rules_apply(const wkv_model *m, const wkv__rules *r, const int *sampled,
                     int n_sampled, float *logits)
{
    const wkv_specials *sp = &m->sp;
    const int n_vocab = m->hp.n_vocab, tb = sp->timestamp_begin;

    /* SuppressBlank: no leading " " or eot */
    if (r->suppress_blank && n_sampled == 0) {
        int space = wkv__vocab_find(m, " ", 1);
        if (space >= 0)
            logits[space] = -INFINITY;
        logits[sp->eot] = -INFINITY;
    }
    /* SuppressTokens: non-speech symbols and the task/control tokens */
    for (int i = 0; i < m->n_suppress; i++)
        logits[m->suppress[i]] = -INFINITY;

    if (!r->timestamps)
        return;

    /* ApplyTimestampRules */
    logits[sp->notimestamps] = -INFINITY;
    int last_ts = n_sampled >= 1 && sampled[n_sampled - 1] >= tb;
    int penult_ts = n_sampled < 2 || sampled[n_sampled - 2] >= tb;
    if (last_ts) {
        if (penult_ts)
            forbid(logits, tb, n_vocab); /* a pair closed: text must follow */
        else
            forbid(logits, 0, sp->eot); /* a segment is open: timestamp or eot */
    }
    int last_timestamp = -1;
    for (int i = n_sampled - 1; i >= 0; i--)
        if (sampled[i] >= tb) {
            last_timestamp = sampled[i];
            break;
        }
    if (last_timestamp >= 0) {
        /* never decrease; only right after a single closing timestamp may the next equal it */
        int limit = (last_ts && !penult_ts) ? last_timestamp : last_timestamp + 1;
        forbid(logits, tb, limit < n_vocab ? limit : n_vocab);
    }
    if (n_sampled == 0) {
        forbid(logits, 0, tb);
        if (r->max_initial_ts_index >= 0 && tb + r->max_initial_ts_index + 1 < n_vocab)
            forbid(logits, tb + r->max_initial_ts_index + 1, n_vocab);
    }
    /* a shortened window (audio_ctx): no time past the frames the encoder saw */
    if (r->max_ts_index >= 0 && tb + r->max_ts_index + 1 < n_vocab)
        forbid(logits, tb + r->max_ts_index + 1, n_vocab);
    /* if the timestamps together are more probable than any text token, sample one.
     * The reference compares log-probabilities, each the logit less the same
     * log-sum-exp over the vocabulary, so the logits compare as they are: one pass of
     * e^x over the vocabulary less a step (59 us of 51865 tokens, on one thread while
     * the others wait).  The two differ only where the sides are within a double's
     * rounding, or where a text logit is NaN (the reference's sum is then NaN and it
     * never samples a timestamp; here NaN text logits are skipped as by the max). */
    if (wkv__log_sum_exp(logits + tb, n_vocab - tb) > (double)max_clones(logits, tb))
        forbid(logits, 0, tb);
}

double wkv__compression_ratio(const char *text)
{
    size_t n = strlen(text);
    if (n == 0)
        return 0.0;
    uLongf out_len = compressBound((uLong)n);
    Bytef *out = wkv__malloc(out_len);
    if (!out)
        return 0.0;
    double ratio = 0.0;
    if (compress(out, &out_len, (const Bytef *)text, (uLong)n) == Z_OK && out_len > 0)
        ratio = (double)n / (double)out_len;
    wkv__free(out);
    return ratio;
}
