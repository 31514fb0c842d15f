/* Offline batching (whisperkv.h, wkv_transcribe_chunks): chunks of up to 30 s, each
 * decoded as one window without the previous text, batch_size of them side by side.
 *
 * A batch: each chunk's log-mel and encoder run in turn on the context (all threads
 * on one window), and its cross-KV cache is moved out of the context into the batch's
 * own (a swap of buffers, no copy); then one greedy search steps every window at once
 * (decode/batch.c); then, chunk by chunk with its cache moved back in, the fallback
 * temperatures where the result needs them, the segments, the words. */
#include "longform/window.h"
#include "longform/language.h"
#include "decode/batch.h"
#include "decode/pieces.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int wkv_chunks_plain(size_t n, wkv_chunk **chunks, char **error)
{
    const int64_t total = (int64_t)n;
    const int64_t count = (total + WKV_N_SAMPLES - 1) / WKV_N_SAMPLES;
    *chunks = NULL;
    if (count == 0)
        return 0;
    if (count > 0x7fffffff / 2 || !(*chunks = wkv__malloc((size_t)count * sizeof **chunks))) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    for (int64_t i = 0; i < count; i++) {
        int64_t s = i * WKV_N_SAMPLES, e = s + WKV_N_SAMPLES;
        (*chunks)[i] = (wkv_chunk){s, e < total ? e : total};
    }
    return (int)count;
}

int wkv_chunks_from_speech(const wkv_vad_segment *segs, int n_segs, size_t n, wkv_chunk **chunks,
                           char **error)
{
    const int64_t total = (int64_t)n, cs = WKV_SAMPLE_RATE / 100;
    /* each segment adds one chunk at most, plus one per 30 s of a longer one */
    int64_t cap = 1;
    for (int i = 0; i < n_segs; i++)
        cap += 2 + (segs[i].end - segs[i].start) * cs / WKV_N_SAMPLES;
    *chunks = NULL;
    if (n_segs < 0 || cap > 0x7fffffff / 2 ||
        !(*chunks = wkv__malloc((size_t)cap * sizeof **chunks))) {
        wkv__set_error(error, n_segs < 0 ? "negative segment count" : "out of memory");
        return -1;
    }
    int count = 0;
    int64_t cur_s = -1, cur_e = -1; /* the chunk being merged, in samples */
    for (int i = 0; i < n_segs; i++) {
        int64_t s = segs[i].start * cs, e = segs[i].end * cs;
        s = s < 0 ? 0 : s > total ? total : s;
        e = e > total ? total : e;
        s = s < cur_e ? cur_e : s; /* overlapping the previous one: its rest */
        if (e <= s) /* empty, past the end, or within the previous one */
            continue;
        if (cur_s >= 0 && e - cur_s <= WKV_N_SAMPLES) {
            cur_e = e; /* merged: the chunk still fits one window */
            continue;
        }
        if (cur_s >= 0)
            (*chunks)[count++] = (wkv_chunk){cur_s, cur_e};
        while (e - s > WKV_N_SAMPLES) { /* a segment longer than a window */
            (*chunks)[count++] = (wkv_chunk){s, s + WKV_N_SAMPLES};
            s += WKV_N_SAMPLES;
        }
        cur_s = s;
        cur_e = e;
    }
    if (cur_s >= 0)
        (*chunks)[count++] = (wkv_chunk){cur_s, cur_e};
    if (count == 0) {
        wkv__free(*chunks);
        *chunks = NULL;
    }
    return count;
}

typedef struct {
    wkv_context *ctx;
    const wkv_model *m;
    wkv_options o;
    char *language;          /* owned copy of o.language */
    int detect;              /* the language is still to be detected */
    wkv__cross_kv *cross;    /* one per window of a batch */
    int n_cross;
    int *size;               /* frames of each chunk of the batch */
    wkv_window_result *res;
    float *win;              /* n_mels x 3000 */
    wkv__words_state words;
    int count;               /* segments reported */
    int stopped;             /* a callback asked to stop */
} batcher;

static void swap_cross(wkv__cross_kv *a, wkv__cross_kv *b)
{
    wkv__cross_kv t = *a;
    *a = *b;
    *b = t;
}

/* Chunk c's window: its log-mel, the language (once), the encoder; the cross-KV cache
 * it filled moves into slot i.  *size: its frames (0: nothing to decode). */
static int encode_chunk(batcher *bt, const float *pcm, wkv_chunk c, int i, char **error)
{
    wkv_context *ctx = bt->ctx;
    double t0 = wkv__now_ms();
    wkv_mel *mel = wkv_mel_compute(bt->m, pcm + c.start, (size_t)(c.end - c.start), ctx->threads,
                                   error);
    if (!mel)
        return -1;
    ctx->stats.mel_ms += wkv__now_ms() - t0;
    int size = mel->content_frames < WKV_N_FRAMES ? (int)mel->content_frames : WKV_N_FRAMES;
    bt->size[i] = size;
    if (bt->detect) {
        /* as transcribe.py: detected on the first 3000 frames as computed */
        wkv_mel_window(mel, 0, WKV_N_FRAMES, bt->o.mel_norm, bt->win);
        const char *code = wkv__language_first_window(ctx, bt->win, NULL, error);
        if (!code || wkv__own_language(&bt->language, &bt->o, code) != 0) {
            if (error && !*error)
                wkv__set_error(error, "out of memory");
            wkv_mel_free(mel);
            return -1;
        }
        bt->detect = 0;
    }
    if (size > 0)
        wkv_mel_window(mel, 0, size, bt->o.mel_norm, bt->win);
    wkv_mel_free(mel);
    if (size <= 0)
        return 0;
    if (wkv__encode_window(ctx, bt->win, bt->o.audio_ctx, size) != 0) {
        wkv__set_error(error, "the encoder failed on the chunk at sample %lld",
                      (long long)c.start);
        return -1;
    }
    swap_cross(&ctx->cross, &bt->cross[i]);
    return 0;
}

/* A chunk's tokens as segments, times on the input (offset: the chunk's start).  As
 * the long form cuts a window (window.c), but for the text after the last timestamp
 * pair, which the long form decodes again from the pair's time and faster-whisper's
 * batched pipeline drops: here it is a segment from its timestamp to the chunk's end
 * (to its last timestamp when it has one; never before its start).  Returns the
 * count, or -1. */
static int chunk_segments(const batcher *bt, const wkv_window_result *r, double offset,
                          double duration, wkv__wseg *segs)
{
    const int tb = bt->m->sp.timestamp_begin, *t = r->tokens, n = r->n_tokens;
    wkv__piece *pc = NULL;
    int np = wkv__split_pieces(t, n, tb, &pc), ns = 0, n_pair = 0;
    if (np < 0)
        return -1;
    while (n_pair < np && pc[n_pair].pair)
        n_pair++;
    for (int k = 0; k < np; k++) {
        const wkv__piece *p = &pc[k];
        double start = 0, end = duration;
        if (n_pair == 0) { /* no pair: the whole window, to its last timestamp */
            for (int i = n - 1; i >= 0; i--)
                if (t[i] >= tb) {
                    if (t[i] != tb)
                        end = wkv__ts_seconds(t[i], tb);
                    break;
                }
        } else {
            start = wkv__ts_seconds(t[p->tok0], tb);
            if (p->pair || p->closed)
                end = wkv__ts_seconds(t[p->tok1 - 1], tb);
        }
        /* a tail whose timestamp is at or past the chunk's end (a confused model's, up
         * to 30 s) ends one timestamp step after it: never before its start, and not
         * at it, which would drop its text (emit's start == end rule) */
        end = end <= start ? start + 0.02 : end;
        segs[ns++] = (wkv__wseg){.start = offset + start, .end = offset + end,
                                .tokens = t + p->tok0, .n_tokens = p->tok1 - p->tok0};
        if (n_pair == 0)
            break;
    }
    wkv__free(pc);
    return ns;
}

/* Chunk i of the batch, decoded (bt->res[i]): the fallback if it needs it, its
 * segments and words, reported.  Its cross-KV cache is the context's meanwhile. */
static int finish_chunk(batcher *bt, wkv_chunk c, int i, wkv_segment_cb cb, void *user,
                        char **error)
{
    wkv_context *ctx = bt->ctx;
    wkv_window_result *r = &bt->res[i];
    const wkv_options *o = &bt->o;
    int rc = 0;
    swap_cross(&ctx->cross, &bt->cross[i]);
    if (o->beam_size > 0 || o->temperature > 0) { /* not batched: chunk by chunk */
        rc = wkv__decode_fallback(ctx, o, NULL, 0, 0, r, error);
    } else if (wkv__needs_fallback(o, r, o->temperature + o->temperature_increment)) {
        wkv_window_result_clear(r);
        rc = wkv__decode_fallback(ctx, o, NULL, 0, 1, r, error);
    }
    if (rc != 0 || wkv__result_is_silent(o, r))
        goto out;
    const int64_t seek = c.start / WKV_HOP;
    const double offset = (double)c.start / WKV_SAMPLE_RATE;
    const double duration = (double)bt->size[i] * WKV_HOP / WKV_SAMPLE_RATE;
    wkv__wseg *segs = wkv__calloc((size_t)r->n_tokens + 1, sizeof *segs);
    int ns = segs ? chunk_segments(bt, r, offset, duration, segs) : -1;
    if (ns < 0) {
        wkv__free(segs);
        wkv__set_error(error, "out of memory");
        rc = -1;
        goto out;
    }
    if (o->word_timestamps && ns > 0) {
        int sot[3], unicode;
        int n_sot = wkv__words_sot(bt->m, bt->language, o->translate, sot, &unicode);
        bt->words.last_speech = offset; /* as if the chunk were the whole input */
        rc = wkv__words_align(ctx, &bt->words, sot, n_sot, unicode, segs, ns, offset,
                              bt->size[i], error);
    }
    for (int k = 0; k < ns && rc == 0; k++) {
        int e = wkv__emit_segment(bt->m, r, seek, &segs[k], o->word_timestamps, NULL, cb, user,
                                  &bt->count);
        if (e < 0) {
            wkv__set_error(error, "out of memory");
            rc = -1;
        }
        bt->stopped |= e > 0;
        if (e > 0)
            break;
    }
    wkv__wsegs_clear(segs, ns);
    wkv__free(segs);
out:
    swap_cross(&ctx->cross, &bt->cross[i]);
    wkv_window_result_clear(r);
    return rc;
}

static void batcher_free(batcher *bt)
{
    for (int i = 0; i < bt->n_cross; i++)
        wkv__cross_kv_free(&bt->cross[i]);
    wkv__free(bt->cross);
    wkv__free(bt->size);
    wkv__free(bt->res);
    wkv__free(bt->win);
    wkv__free(bt->language);
    wkv__free(bt->words.pairs);
}

/* The batch's caches, shaped and typed as the context's. */
static int batcher_init(batcher *bt, wkv_context *ctx, const wkv_options *opts, int batch,
                        char **error)
{
    const wkv_hparams *hp = &ctx->model->hp;
    memset(bt, 0, sizeof *bt);
    bt->ctx = ctx;
    bt->m = ctx->model;
    bt->o = *opts;
    if (wkv__audio_ctx_check(opts->audio_ctx, error) != 0)
        return -1;
    bt->o.condition_on_previous_text = 0;
    bt->o.initial_prompt = NULL;
    bt->o.clip_timestamps = NULL;
    bt->o.hallucination_silence_threshold = 0;
    bt->language = wkv__strdup(opts->language ? opts->language : "en");
    bt->o.language = bt->language;
    bt->detect = wkv__wants_detection(bt->m, opts->language);
    bt->cross = wkv__calloc((size_t)batch, sizeof *bt->cross);
    bt->size = wkv__calloc((size_t)batch, sizeof *bt->size);
    bt->res = wkv__calloc((size_t)batch, sizeof *bt->res);
    bt->win = wkv__malloc((size_t)hp->n_mels * WKV_N_FRAMES * sizeof *bt->win);
    if (!bt->language || !bt->cross || !bt->size || !bt->res || !bt->win)
        goto oom;
    for (; bt->n_cross < batch; bt->n_cross++) {
        wkv__cross_kv *c = &bt->cross[bt->n_cross];
        if (wkv__cross_kv_init(c, hp->n_text_layer, hp->n_audio_ctx, hp->n_text_state) != 0 ||
            wkv__cross_kv_set_f16(c, wkv__cross_half(&ctx->cross)) != 0) {
            wkv__cross_kv_free(c);
            goto oom;
        }
    }
    bt->words.content_frames = -1;
    bt->words.prepend = opts->prepend_punctuations;
    bt->words.append = opts->append_punctuations;
    if (opts->word_timestamps &&
        wkv__heads_resolve(bt->m, opts->alignment_heads, &bt->words.pairs, &bt->words.n_pairs,
                          NULL, error) != 0)
        return -1;
    return 0;
oom:
    wkv__set_error(error, "batched transcription of %d windows: out of memory", batch);
    return -1;
}

/* One batch: chunks [c0, c1). */
static int run_batch(batcher *bt, const float *pcm, const wkv_chunk *chunks, int c0, int c1,
                     wkv_segment_cb cb, void *user, char **error)
{
    const int n = c1 - c0;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = encode_chunk(bt, pcm, chunks[c0 + i], i, error);
    if (rc != 0)
        return -1;
    /* the windows with frames, side by side (beam search and sampling: none here) */
    const int greedy = bt->o.beam_size <= 0 && !(bt->o.temperature > 0);
    int live[WKV_BATCH_MAX], n_live = 0;
    const wkv__cross_kv *cr[WKV_BATCH_MAX];
    wkv_window_result got[WKV_BATCH_MAX];
    for (int i = 0; i < n && greedy; i++)
        if (bt->size[i] > 0) {
            cr[n_live] = &bt->cross[i];
            live[n_live++] = i;
        }
    if (n_live > 0) {
        if (wkv__decode_windows(bt->ctx, cr, n_live, &bt->o, got, error) != 0)
            return -1;
        for (int k = 0; k < n_live; k++)
            bt->res[live[k]] = got[k];
    }
    for (int i = 0; i < n; i++) {
        if (bt->size[i] > 0 && !bt->stopped && rc == 0)
            rc = finish_chunk(bt, chunks[c0 + i], i, cb, user, error);
        else
            wkv_window_result_clear(&bt->res[i]);
    }
    return rc;
}

int wkv_transcribe_chunks(wkv_context *ctx, const float *pcm, size_t n, const wkv_chunk *chunks,
                          int n_chunks, int batch_size, const wkv_options *opts,
                          wkv_segment_cb on_segment, wkv_progress_cb on_progress, void *user,
                          char **error)
{
    if (batch_size < 1 || batch_size > WKV_BATCH_MAX || n_chunks < 0 || (n_chunks && !chunks)) {
        wkv__set_error(error, "batched transcription: batch size %d (1 .. %d), %d chunks",
                      batch_size, WKV_BATCH_MAX, n_chunks);
        return -1;
    }
    for (int i = 0; i < n_chunks; i++) {
        const wkv_chunk *c = &chunks[i];
        if (c->start < (i ? chunks[i - 1].end : 0) || c->end <= c->start ||
            c->end - c->start > WKV_N_SAMPLES || c->end > (int64_t)n) {
            wkv__set_error(error, "chunk %d [%lld, %lld) of %zu samples: chunks are in order, "
                          "do not overlap and are 1 .. %d samples", i, (long long)c->start,
                          (long long)c->end, n, WKV_N_SAMPLES);
            return -1;
        }
    }
    if (n_chunks == 0)
        return 0; /* no speech (VAD found none): nothing to set up */
    if (batch_size > n_chunks)
        batch_size = n_chunks;
    batcher bt;
    int rc = batcher_init(&bt, ctx, opts, batch_size, error);
    for (int c0 = 0; rc == 0 && c0 < n_chunks && !bt.stopped; c0 += batch_size) {
        int c1 = c0 + batch_size < n_chunks ? c0 + batch_size : n_chunks;
        rc = run_batch(&bt, pcm, chunks, c0, c1, on_segment, user, error);
        if (rc == 0 && on_progress)
            on_progress(chunks[c1 - 1].end / WKV_HOP, (int64_t)n / WKV_HOP, user);
    }
    /* the context's cache is one of the batch's now, of some earlier window */
    ctx->cross.valid = 0;
    int count = bt.count;
    batcher_free(&bt);
    return rc == 0 ? count : -1;
}
