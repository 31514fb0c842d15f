/* Greedy decoding of several windows side by side (offline batching): every step is
 * one decoder pass over the windows still going, so each weight is read once per step
 * for all of them instead of once per window.  Each window keeps its own cross-KV
 * cache and its own self-KV slot, and the rules, sums and stops of greedy() in
 * search.c: its result is the one wkv_decode_window gives that window alone, up to
 * the summation order of the batched products. */
#include "decode/batch.h"
#include "decode/rules.h"
#include "decode/search.h"
#include "base/util.h"
#include "model/vocab.h"

#include <stdlib.h>
#include <string.h>

/* The per-window state of the batch. */
typedef struct {
    int len;      /* tokens sampled (eot excluded) */
    int done;
    int row;      /* its logits row in the last pass */
    double sum;   /* sum of the sampled tokens' logprobs, eot's included */
} lane;

int wkv__decode_windows(wkv_context *ctx, const wkv__cross_kv *const *cross, int n,
                        const wkv_options *o, wkv_window_result *res, char **error)
{
    const wkv_model *m = ctx->model;
    const int V = m->hp.n_vocab, n_ctx = m->hp.n_text_ctx;
    const int L = o->sample_len > 0 ? o->sample_len : n_ctx / 2;
    for (int b = 0; b < n; b++)
        memset(&res[b], 0, sizeof res[b]);
    if (n <= 0 || n > WKV_BATCH_MAX || o->temperature > 0 || o->beam_size > 0) {
        wkv__set_error(error, "batched decoding: greedy at temperature 0, 1..%d windows",
                      WKV_BATCH_MAX);
        return -1;
    }
    int init[8], sot_index;
    int n_init = n_ctx >= 8 ? wkv__initial_tokens(m, NULL, 0, o, init, &sot_index, error) : -1;
    if (n_init < 0)
        return -1;
    float *logits = wkv__malloc((size_t)n * V * sizeof *logits);
    lane *ln = wkv__calloc((size_t)n, sizeof *ln);
    wkv__dec_row *rows = wkv__malloc((size_t)n * sizeof *rows);
    int rc = -1;
    if (!logits || !ln || !rows || wkv__self_kv_reserve(&ctx->self, n) != 0)
        goto oom;
    for (int b = 0; b < n; b++) {
        ctx->self.n[b] = 0;
        if (!(res[b].tokens = wkv__malloc((size_t)(L + 1) * sizeof *res[b].tokens)))
            goto oom;
        res[b].language = wkv_model_is_multilingual(m) ? init[sot_index + 1] : -1;
    }
    wkv__rules rules;
    wkv__rules_init(&rules, o, n_init);

    /* the initial tokens a step at a time: the same for every window, and the logits
     * at sot give no_speech_prob (raw, as wkv_decode_window takes them) */
    for (int j = 0; j < n_init; j++) {
        for (int b = 0; b < n; b++)
            rows[b] = (wkv__dec_row){cross[b], NULL, b, init[j]};
        int want = j == sot_index || j == n_init - 1;
        if (wkv__decoder_rows(ctx, rows, n, want ? logits : NULL) != 0)
            goto fail;
        for (int b = 0; b < n && j == sot_index; b++)
            res[b].no_speech_prob = wkv__prob(logits + (size_t)b * V, V, m->sp.nospeech);
    }
    for (int b = 0; b < n; b++)
        ln[b].row = b;
    for (int step = 0; step < L; step++) {
        int n_live = 0;
        for (int b = 0; b < n; b++) {
            lane *q = &ln[b];
            if (q->done)
                continue;
            float *lg = logits + (size_t)q->row * V;
            /* each window's own frames (audio_ctx) */
            rules.max_ts_index = cross[b]->n_frames < m->hp.n_audio_ctx ? cross[b]->n_frames : -1;
            wkv__rules_apply(m, &rules, res[b].tokens, q->len, lg);
            float margin;
            int tok = wkv__argmax2(lg, V, &margin);
            q->sum += wkv__logprob(lg, V, tok);
            if (tok == m->sp.eot) {
                q->done = 1;
                continue;
            }
            res[b].tokens[q->len++] = tok;
            /* the reference stops once the sequence outgrows the text context */
            if (n_init + q->len > n_ctx || step + 1 == L) {
                q->done = 1;
                continue;
            }
            rows[n_live] = (wkv__dec_row){cross[b], NULL, b, tok};
            q->row = n_live++;
        }
        if (n_live == 0)
            break;
        /* rows are in window order, so a row's logits never overwrite a row still to
         * be read in this loop (row <= b) */
        if (wkv__decoder_rows(ctx, rows, n_live, logits) != 0)
            goto fail;
    }
    for (int b = 0; b < n; b++) {
        wkv_window_result *r = &res[b];
        r->n_tokens = ln[b].len;
        r->sum_logprob = ln[b].sum;
        r->avg_logprob = r->sum_logprob / (r->n_tokens + 1);
        r->temperature = 0;
        if (!(r->text = wkv_tokens_to_text(m, r->tokens, r->n_tokens, 0)))
            goto oom;
        wkv__text_strip(r->text);
        r->compression_ratio = wkv__compression_ratio(r->text);
        ctx->stats.windows++;
    }
    rc = 0;
    goto out;
oom:
    wkv__set_error(error, "batched decoding of %d windows: out of memory", n);
    goto clear;
fail:
    wkv__set_error(error, "batched decoding of %d windows: decoder failed", n);
clear:
    for (int b = 0; b < n; b++)
        wkv_window_result_clear(&res[b]);
out:
    wkv__free(logits);
    wkv__free(ln);
    wkv__free(rows);
    return rc;
}
