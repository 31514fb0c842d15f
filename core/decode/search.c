/* Decoding one window: the initial tokens in one batched pass, then the reference's
 * searches through the KV caches: greedy or beam search at temperature 0, best-of
 * sampling above it, with the reference's filters, scores and ranking. */
#include "net/context.h"
#include "model/vocab.h"
#include "base/util.h"
#include "kernels/ops.h"
#include "decode/rules.h"
#include "decode/group.h"
#include "decode/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void wkv_window_result_clear(wkv_window_result *res)
{
    wkv__free(res->tokens);
    wkv__free(res->text);
    memset(res, 0, sizeof *res);
}

int wkv__initial_tokens(const wkv_model *m, const int *prompt, int n_prompt,
                          const wkv_options *o, int *out, int *sot_index, char **error)
{
    const wkv_specials *sp = &m->sp;
    int n = 0;
    if (n_prompt > 0) {
        int keep = m->hp.n_text_ctx / 2 - 1;
        if (n_prompt > keep) {
            prompt += n_prompt - keep;
            n_prompt = keep;
        }
        out[n++] = sp->startofprev;
        for (int i = 0; i < n_prompt; i++) {
            if (prompt[i] < 0 || prompt[i] >= m->hp.n_vocab) {
                wkv__set_error(error, "prompt token %d out of range", prompt[i]);
                return -1;
            }
            out[n++] = prompt[i];
        }
    }
    *sot_index = n;
    out[n++] = sp->sot;
    if (wkv_model_is_multilingual(m)) {
        const char *lang = o->language ? o->language : "en";
        int lt = wkv_lang_token(m, lang);
        if (lt < 0) {
            wkv__set_error(error, "unknown language '%s'%s", lang,
                          strcmp(lang, "auto") == 0
                              ? " (detect it first: wkv_detect_language)"
                              : "");
            return -1;
        }
        out[n++] = lt;
        out[n++] = o->translate ? sp->translate : sp->transcribe;
    }
    if (!o->timestamps)
        out[n++] = sp->notimestamps;
    return n;
}

/* log_softmax of a whole row, in place (double accumulation). */
static void log_softmax(float *x, int n)
{
    float lse = (float)wkv__log_sum_exp(x, n);
    for (int i = 0; i < n; i++)
        x[i] -= lse;
}

/* Everything one window's search needs. */
typedef struct {
    wkv_context *ctx;
    const wkv_model *m;
    const wkv_options *o;
    wkv__rules rules;
    int n_init, sample_len, n_vocab, n_ctx, eot;
} search;

/* The reference's MaximumLikelihoodRanker score. */
static double rank_score(const search *s, double sum_lp, int len)
{
    double penalty = s->o->length_penalty < 0 ? len : pow((5.0 + len) / 6.0, s->o->length_penalty);
    return len > 0 ? sum_lp / penalty : -INFINITY;
}

/* The logits of greedy step j >= 1 while a draft holds (logits at position
 * n_init + j - 1 of the draft's pass), fetched 8 rows at a time into rows. */
static float *draft_logits(search *s, int j, float *rows, int *row0)
{
    const int V = s->n_vocab;
    if (*row0 < 0 || j - 1 < *row0 || j - 1 >= *row0 + 8) {
        *row0 = ((j - 1) / 8) * 8;
        int n = s->ctx->pass_n - *row0 < 8 ? s->ctx->pass_n - *row0 : 8;
        if (wkv__decoder_logits_rows(s->ctx, s->n_init + *row0, n, rows) != 0)
            return NULL;
    }
    return rows + (size_t)(j - 1 - *row0) * V;
}

/* Greedy at temperature 0: the most likely token each step (slot 0).
 *
 * With a draft (a live stream's previous run, which the next run mostly repeats): the
 * draft's tokens go through the decoder in one pass after the initial tokens, every
 * weight and the window's cross K/V read once for all of them; each step then takes
 * its logits from that pass while the chosen tokens equal the draft's.  At the first
 * token that differs the self-KV cache is cut back to the tokens chosen and the steps
 * go on one by one.  The tokens are those of stepping alone, up to the summation
 * order of the pass's products (a near tie may break the other way). */
static int greedy(search *s, float *logits, const int *draft, int n_draft,
                  wkv_window_result *res)
{
    double sum_lp = 0;
    int n = 0, m = 0, row0 = -1;
    float *rows = NULL;
    /* the draft: at most what this window may sample, tokens the vocabulary has */
    for (int i = 0; i < n_draft && i < s->sample_len - 1 && s->n_init + i < s->n_ctx; i++) {
        const int t = draft[i]; /* text or a timestamp, what a step can choose */
        if (t < 0 || t >= s->n_vocab || (t >= s->eot && t < s->m->sp.timestamp_begin))
            break;
        m = i + 1;
    }
    if (m > 0 && (!(rows = wkv__malloc((size_t)8 * s->n_vocab * sizeof *rows)) ||
                  wkv_decode(s->ctx, draft, m, NULL) != 0))
        m = 0; /* no draft then (out of memory): step by step from the start */
    if (m > 0)
        s->ctx->stats.draft_tokens += m;
    int drafting = m > 0;
    float *lg = logits;
    for (int step = 0; step < s->sample_len; step++) {
        wkv__rules_apply(s->m, &s->rules, res->tokens, n, lg);
        float margin;
        int tok = wkv__argmax2(lg, s->n_vocab, &margin);
        s->ctx->step_margins[step] = margin;
        s->ctx->n_steps = step + 1;
        sum_lp += wkv__logprob(lg, s->n_vocab, tok);
        if (tok == s->eot)
            break;
        res->tokens[n++] = tok;
        /* the reference stops once the sequence outgrows the text context */
        if (s->n_init + n > s->n_ctx || step + 1 == s->sample_len)
            break;
        if (drafting && step < m && tok == draft[step]) {
            s->ctx->stats.draft_accepted++;
            if ((lg = draft_logits(s, step + 1, rows, &row0)))
                continue;
            lg = logits; /* cannot happen: the pass covers step + 1 <= m */
        }
        if (drafting) {
            /* past the draft, or it differs: back to the tokens chosen */
            drafting = 0;
            s->ctx->self.n[0] = s->n_init + step;
            lg = logits;
        }
        if (wkv__decoder_step(s->ctx, tok, logits) != 0) {
            wkv__free(rows);
            return -1;
        }
    }
    wkv__free(rows);
    res->n_tokens = n;
    res->sum_logprob = sum_lp;
    return 0;
}

typedef struct {
    int beam;    /* source beam */
    int token;
    double score;
} cand;

/* Beam search (BeamSearchDecoder): every step each live beam proposes its beam+1 best
 * tokens; the best `beam` unfinished sequences go on, the finished ones are kept
 * until `patience` x beam of them exist.  Beams are decoded as one batch, each in
 * its own self-KV slot; a beam that continues in two children has its slot copied
 * past the shared prompt, one that continues in one keeps its slot. */
static int beam_search(search *s, float *first_logits, wkv_window_result *res)
{
    wkv_context *ctx = s->ctx;
    const int N = s->o->beam_size, V = s->n_vocab, L = s->sample_len;
    const int max_cand = (int)lround(N * (s->o->patience > 0 ? s->o->patience : 1.0));
    if (wkv__self_kv_reserve(&ctx->self, 2 * N) != 0)
        return -1;
    float *logits = wkv__malloc((size_t)N * V * sizeof *logits);
    int *seq = wkv__malloc((size_t)N * (L + 1) * sizeof *seq), *nseq = wkv__malloc((size_t)N * (L + 1) * sizeof *nseq);
    double *sum = wkv__calloc((size_t)N, sizeof *sum), *nsum = wkv__calloc((size_t)N, sizeof *nsum);
    int *slot = wkv__malloc((size_t)N * sizeof *slot), *nslot = wkv__malloc((size_t)N * sizeof *nslot);
    int *last = wkv__malloc((size_t)N * sizeof *last), *used = wkv__malloc((size_t)2 * N * sizeof *used);
    cand *cands = wkv__malloc((size_t)N * (N + 1) * sizeof *cands);
    /* finished candidates: tokens (eot excluded) and scores */
    int *fin_tok = wkv__malloc((size_t)(max_cand + N) * (L + 1) * sizeof *fin_tok);
    int *fin_len = wkv__malloc((size_t)(max_cand + N) * sizeof *fin_len);
    double *fin_sum = wkv__malloc((size_t)(max_cand + N) * sizeof *fin_sum);
    int rc = -1;
    if (!logits || !seq || !nseq || !sum || !nsum || !slot || !nslot || !last || !used ||
        !cands || !fin_tok || !fin_len || !fin_sum)
        goto out;
    /* all beams start as the prompt in slot 0; the others copy it once */
    for (int b = 0; b < N; b++) {
        slot[b] = b;
        wkv__self_kv_copy(&ctx->self, b, 0, 0);
        memcpy(logits + (size_t)b * V, first_logits, (size_t)V * sizeof *logits);
    }
    int n_fin = 0, len = 0;
    for (int step = 0; step < L; step++) {
        /* STEP 1: each beam's best beam+1 continuations */
        int n_c = 0;
        for (int b = 0; b < N; b++) {
            float *lg = logits + (size_t)b * V;
            wkv__rules_apply(s->m, &s->rules, seq + (size_t)b * (L + 1), len, lg);
            log_softmax(lg, V);
            /* identical prefixes (all of them at the first step) give identical
             * candidates: the reference's dict keeps one, at its first place */
            int dup = -1;
            for (int p = 0; p < b && dup < 0; p++)
                if (!memcmp(seq + (size_t)p * (L + 1), seq + (size_t)b * (L + 1),
                            (size_t)len * sizeof *seq))
                    dup = p;
            int top[64];
            float topv[64];
            int k = N + 1 < 64 ? N + 1 : 64, got = 0;
            for (int i = 0; i < V; i++) {
                float v = lg[i];
                if (got == k && !(v > topv[k - 1]))
                    continue;
                int j = got < k ? got++ : k - 1;
                while (j > 0 && v > topv[j - 1]) {
                    topv[j] = topv[j - 1];
                    top[j] = top[j - 1];
                    j--;
                }
                topv[j] = v;
                top[j] = i;
            }
            for (int i = 0; i < got; i++) {
                double sc = sum[b] + topv[i];
                if (dup >= 0) { /* overwrite the earlier beam's entry: same score */
                    for (int c = 0; c < n_c; c++)
                        if (cands[c].beam == dup && cands[c].token == top[i]) {
                            cands[c].beam = b;
                            cands[c].score = sc;
                        }
                    continue;
                }
                cands[n_c++] = (cand){b, top[i], sc};
            }
        }
        /* STEP 2: stable sort by score, best first */
        for (int i = 1; i < n_c; i++) {
            cand c = cands[i];
            int j = i;
            while (j > 0 && cands[j - 1].score < c.score) {
                cands[j] = cands[j - 1];
                j--;
            }
            cands[j] = c;
        }
        int saved = 0, new_fin_start = n_fin;
        for (int i = 0; i < n_c && saved < N; i++) {
            const cand *c = &cands[i];
            const int *prefix = seq + (size_t)c->beam * (L + 1);
            if (c->token == s->eot) {
                if (n_fin < max_cand + N) { /* newly finished, in score order */
                    memcpy(fin_tok + (size_t)n_fin * (L + 1), prefix, (size_t)len * sizeof *prefix);
                    fin_len[n_fin] = len;
                    fin_sum[n_fin++] = c->score;
                }
            } else {
                memcpy(nseq + (size_t)saved * (L + 1), prefix, (size_t)len * sizeof *prefix);
                nseq[(size_t)saved * (L + 1) + len] = c->token;
                nsum[saved] = c->score;
                nslot[saved] = c->beam; /* source beam for now */
                saved++;
            }
        }
        /* keep the newly finished only while fewer than max_cand are kept */
        int keep = n_fin;
        if (new_fin_start >= max_cand)
            keep = new_fin_start;
        else if (keep > max_cand)
            keep = max_cand;
        n_fin = keep;
        /* rearrange the caches: the first child of a beam keeps its slot, later ones
         * get a free slot with a copy */
        for (int i = 0; i < 2 * N; i++)
            used[i] = 0;
        int first_child[64];
        for (int b = 0; b < N; b++)
            first_child[b] = -1;
        for (int i = 0; i < saved; i++)
            if (first_child[nslot[i]] < 0) {
                first_child[nslot[i]] = i;
                used[slot[nslot[i]]] = 1;
            }
        for (int i = 0; i < saved; i++) {
            int src = slot[nslot[i]];
            if (first_child[nslot[i]] == i) {
                nslot[i] = src;
                continue;
            }
            int free_slot = 0;
            while (used[free_slot])
                free_slot++;
            used[free_slot] = 1;
            wkv__self_kv_copy(&ctx->self, free_slot, src, s->n_init);
            nslot[i] = free_slot;
        }
        len++;
        memcpy(seq, nseq, (size_t)saved * (L + 1) * sizeof *seq);
        memcpy(sum, nsum, (size_t)saved * sizeof *sum);
        memcpy(slot, nslot, (size_t)saved * sizeof *slot);
        if (saved < N || n_fin >= max_cand || s->n_init + len > s->n_ctx || step + 1 == L)
            break;
        for (int b = 0; b < N; b++)
            last[b] = seq[(size_t)b * (L + 1) + len - 1];
        if (wkv__decoder_batch(ctx, slot, last, N, logits) != 0)
            goto out;
    }
    /* finalize: not enough finished, so the live beams count, best first */
    if (n_fin < N) {
        /* np.argsort(sum)[::-1]: ascending and stable, then reversed */
        int order[64];
        for (int b = 0; b < N; b++)
            order[b] = b;
        for (int i = 1; i < N; i++) {
            int x = order[i], j = i;
            while (j > 0 && sum[order[j - 1]] > sum[x]) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = x;
        }
        for (int i = N - 1; i >= 0 && n_fin < N; i--) {
            int b = order[i];
            memcpy(fin_tok + (size_t)n_fin * (L + 1), seq + (size_t)b * (L + 1),
                   (size_t)len * sizeof *seq);
            fin_len[n_fin] = len;
            fin_sum[n_fin++] = sum[b];
        }
    }
    int best = 0;
    double best_score = -INFINITY;
    for (int i = 0; i < n_fin; i++) {
        double sc = rank_score(s, fin_sum[i], fin_len[i]);
        if (sc > best_score) {
            best_score = sc;
            best = i;
        }
    }
    memcpy(res->tokens, fin_tok + (size_t)best * (L + 1), (size_t)fin_len[best] * sizeof *res->tokens);
    res->n_tokens = fin_len[best];
    res->sum_logprob = fin_sum[best];
    rc = 0;
out:
    wkv__free(logits);
    wkv__free(seq);
    wkv__free(nseq);
    wkv__free(sum);
    wkv__free(nsum);
    wkv__free(slot);
    wkv__free(nslot);
    wkv__free(last);
    wkv__free(used);
    wkv__free(cands);
    wkv__free(fin_tok);
    wkv__free(fin_len);
    wkv__free(fin_sum);
    return rc;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A token drawn from softmax(logits / T). */
static int sample_token(const float *logits, int n, double temperature, uint64_t *rng)
{
    return wkv__sample_softmax(logits, n, temperature,
                              (double)(splitmix64(rng) >> 11) / 9007199254740992.0);
}

/* Sampling at temperature > 0: best_of independent candidates decoded as one batch;
 * the best by the reference's ranking wins. */
static int sampling(search *s, float *first_logits, wkv_window_result *res, double temperature)
{
    wkv_context *ctx = s->ctx;
    const int B = s->o->best_of > 0 ? s->o->best_of : 1, V = s->n_vocab, L = s->sample_len;
    if (wkv__self_kv_reserve(&ctx->self, B) != 0)
        return -1;
    float *logits = wkv__malloc((size_t)B * V * sizeof *logits);
    int *seq = wkv__malloc((size_t)B * (L + 1) * sizeof *seq), *len = wkv__calloc((size_t)B, sizeof *len);
    int *done = wkv__calloc((size_t)B, sizeof *done), *slots = wkv__malloc((size_t)B * sizeof *slots);
    int *toks = wkv__malloc((size_t)B * sizeof *toks);
    double *sum = wkv__calloc((size_t)B, sizeof *sum);
    int rc = -1;
    if (!logits || !seq || !len || !done || !slots || !toks || !sum)
        goto out;
    uint64_t rng = s->o->seed ^ (uint64_t)llround(temperature * 1000.0) * 0x2545f4914f6cdd1dull;
    for (int b = 0; b < B; b++) {
        wkv__self_kv_copy(&ctx->self, b, 0, 0);
        memcpy(logits + (size_t)b * V, first_logits, (size_t)V * sizeof *logits);
    }
    for (int step = 0; step < L; step++) {
        int n_live = 0;
        for (int b = 0; b < B; b++) {
            if (done[b])
                continue;
            float *lg = logits + (size_t)b * V;
            wkv__rules_apply(s->m, &s->rules, seq + (size_t)b * (L + 1), len[b], lg);
            int tok = sample_token(lg, V, temperature, &rng);
            sum[b] += wkv__logprob(lg, V, tok);
            if (tok == s->eot) {
                done[b] = 1;
                continue;
            }
            seq[(size_t)b * (L + 1) + len[b]++] = tok;
            if (s->n_init + len[b] > s->n_ctx || step + 1 == L) {
                done[b] = 1;
                continue;
            }
            slots[n_live] = b;
            toks[n_live++] = tok;
        }
        if (n_live == 0)
            break;
        /* decode the live candidates; their logits land in rows 0..n_live-1 */
        if (wkv__decoder_batch(ctx, slots, toks, n_live, logits) != 0)
            goto out;
        for (int i = n_live - 1; i >= 0; i--)
            if (slots[i] != i)
                memcpy(logits + (size_t)slots[i] * V, logits + (size_t)i * V, (size_t)V * sizeof *logits);
    }
    int best = 0;
    double best_score = -INFINITY;
    for (int b = 0; b < B; b++) {
        double sc = rank_score(s, sum[b], len[b]);
        if (sc > best_score) {
            best_score = sc;
            best = b;
        }
    }
    memcpy(res->tokens, seq + (size_t)best * (L + 1), (size_t)len[best] * sizeof *seq);
    res->n_tokens = len[best];
    res->sum_logprob = sum[best];
    rc = 0;
out:
    wkv__free(logits);
    wkv__free(seq);
    wkv__free(len);
    wkv__free(done);
    wkv__free(slots);
    wkv__free(toks);
    wkv__free(sum);
    return rc;
}

int wkv_decode_window(wkv_context *ctx, const int *prompt, int n_prompt,
                      const wkv_options *o, wkv_window_result *res, char **error)
{
    return wkv__decode_window_draft(ctx, prompt, n_prompt, NULL, 0, o, res, error);
}

int wkv__decode_window_draft(wkv_context *ctx, const int *prompt, int n_prompt,
                             const int *draft, int n_draft, const wkv_options *o,
                             wkv_window_result *res, char **error)
{
    return wkv__decode_window_prefix(ctx, prompt, n_prompt, NULL, 0, draft, n_draft, o, res,
                                     error);
}

int wkv__decode_window_prefix(wkv_context *ctx, const int *prompt, int n_prompt,
                              const int *prefix, int n_prefix, const int *draft, int n_draft,
                              const wkv_options *o, wkv_window_result *res, char **error)
{
    const wkv_model *m = ctx->model;
    const int n_vocab = m->hp.n_vocab, n_ctx = m->hp.n_text_ctx;
    memset(res, 0, sizeof *res);
    ctx->n_steps = 0;
    if (!ctx->cross.valid) {
        wkv__set_error(error, "wkv_decode_window: no window encoded");
        return -1;
    }
    if (o->beam_size > 32 || o->best_of > 32 || o->beam_size < 0) {
        wkv__set_error(error, "beam size %d / best_of %d out of range (0..32)", o->beam_size,
                      o->best_of);
        return -1;
    }
    int *init = wkv__malloc((size_t)n_ctx * sizeof *init);
    int sot_index;
    int n_init = init ? wkv__initial_tokens(m, prompt, n_prompt, o, init, &sot_index, error) : -1;
    if (n_init >= 0 && n_prefix > 0) {
        /* the reference's prefix: forced after the start sequence, sampling after it */
        if (n_prefix > n_ctx - 1 - n_init) {
            wkv__set_error(error, "a prefix of %d tokens does not fit the text context", n_prefix);
            n_init = -1;
        }
        for (int i = 0; n_init >= 0 && i < n_prefix; i++) {
            if (prefix[i] < 0 || prefix[i] >= n_vocab) {
                wkv__set_error(error, "prefix token %d out of range", prefix[i]);
                n_init = -1;
                break;
            }
            init[n_init + i] = prefix[i];
        }
        n_init = n_init >= 0 ? n_init + n_prefix : -1;
    }
    int sample_len = o->sample_len > 0 ? o->sample_len : n_ctx / 2;
    res->tokens = wkv__malloc((size_t)(sample_len + 1) * sizeof *res->tokens);
    if (n_init < 0 || !res->tokens) {
        if (init && n_init >= 0)
            wkv__set_error(error, "out of memory");
        wkv__free(init);
        wkv_window_result_clear(res);
        return -1;
    }
    res->language = wkv_model_is_multilingual(m) ? init[sot_index + 1] : -1;

    search s = {
        .ctx = ctx, .m = m, .o = o,
        .n_init = n_init, .sample_len = sample_len, .n_vocab = n_vocab, .n_ctx = n_ctx,
        .eot = m->sp.eot,
    };
    wkv__rules_init(&s.rules, o, n_init);
    if (ctx->cross.n_frames < m->hp.n_audio_ctx)
        s.rules.max_ts_index = ctx->cross.n_frames;
    float *logits = ctx->logits;
    wkv_decode_reset(ctx);
    int rc = wkv_decode(ctx, init, n_init, logits);
    wkv__free(init);
    if (rc != 0) {
        wkv__set_error(error, "decoder failed on the initial tokens");
        wkv_window_result_clear(res);
        return -1;
    }
    /* no_speech_prob: raw logits at the sot position of the first pass */
    float *sot_logits = wkv__malloc((size_t)n_vocab * sizeof *sot_logits);
    if (sot_logits && wkv__decoder_logits_at(ctx, sot_index, sot_logits) == 0)
        res->no_speech_prob = wkv__prob(sot_logits, n_vocab, m->sp.nospeech);
    wkv__free(sot_logits);

    double t = o->temperature > 0 ? o->temperature : 0.0;
    if (t > 0)
        rc = sampling(&s, logits, res, t);
    else if (o->beam_size > 0)
        rc = beam_search(&s, logits, res);
    else
        rc = greedy(&s, logits, draft, ctx->drafts && draft ? n_draft : 0, res);
    if (rc != 0) {
        wkv__set_error(error, "decoder failed");
        wkv_window_result_clear(res);
        return -1;
    }
    res->avg_logprob = res->sum_logprob / (res->n_tokens + 1);
    res->temperature = t;
    res->text = wkv_tokens_to_text(m, res->tokens, res->n_tokens, 0);
    if (!res->text) {
        wkv__set_error(error, "out of memory");
        wkv_window_result_clear(res);
        return -1;
    }
    wkv__text_strip(res->text);
    res->compression_ratio = wkv__compression_ratio(res->text);
    ctx->stats.windows++;
    return 0;
}

int wkv_detect_language(wkv_context *ctx, const float *mel, float *probs, char **error)
{
    const wkv_model *m = ctx->model;
    const wkv_specials *sp = &m->sp;
    if (!wkv_model_is_multilingual(m)) {
        wkv__set_error(error, "language detection needs a multilingual model");
        return -1;
    }
    int sot = sp->sot;
    if (wkv_encode(ctx, mel) != 0 || wkv_decode(ctx, &sot, 1, ctx->logits) != 0) {
        wkv__set_error(error, "language detection: decoder failed");
        return -1;
    }
    /* softmax over the language tokens only */
    const float *lg = ctx->logits + sp->lang_begin;
    float mx = -INFINITY;
    int best = 0;
    for (int i = 0; i < sp->n_langs; i++)
        if (lg[i] > mx) {
            mx = lg[i];
            best = i;
        }
    double sum = 0;
    for (int i = 0; i < sp->n_langs; i++)
        sum += exp((double)lg[i] - mx);
    for (int i = 0; probs && i < sp->n_langs; i++)
        probs[i] = (float)(exp((double)lg[i] - mx) / sum);
    wkv_decode_reset(ctx);
    return sp->lang_begin + best;
}
