/* Word alignment of one window (the reference's timing.find_alignment): a decoder pass
 * over the window's text that records the alignment heads' cross-attention, turned
 * into a token x frame matrix (softmax over frames, standardization over tokens,
 * median filter, mean over heads) whose DTW path gives each token's first frame.
 * Source: openai/whisper's timing.py (find_alignment, median_filter, dtw); the
 * alignment heads are whisper/__init__.py's _ALIGNMENT_HEADS, or model.py's default
 * (every head of the last half of the decoder layers). */
#include "words/align.h"
#include "base/util.h"
#include "kernels/ops.h"
#include "base/sgemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- heads */

/* The released checkpoints' tables (the reference's _ALIGNMENT_HEADS, decoded):
 * dimensions that identify them, then (layer, head) pairs ending with -1. */
typedef struct {
    const char *name, *alias;
    int n_layer, n_head, n_state, n_vocab, n_mels;
    signed char pairs[48];
} heads_table;

static const heads_table TABLES[] = {
    {"tiny.en", NULL, 4, 6, 384, 51864, 80,
     {1, 0, 2, 0, 2, 5, 3, 0, 3, 1, 3, 2, 3, 3, 3, 4, -1}},
    {"tiny", NULL, 4, 6, 384, 51865, 80, {2, 2, 3, 0, 3, 2, 3, 3, 3, 4, 3, 5, -1}},
    {"base.en", NULL, 6, 8, 512, 51864, 80, {3, 3, 4, 7, 5, 1, 5, 5, 5, 7, -1}},
    {"base", NULL, 6, 8, 512, 51865, 80,
     {3, 1, 4, 2, 4, 3, 4, 7, 5, 1, 5, 2, 5, 4, 5, 6, -1}},
    {"small.en", NULL, 12, 12, 768, 51864, 80,
     {6, 6, 7, 0, 7, 3, 7, 8, 8, 2, 8, 5, 8, 7, 9, 0, 9, 4, 9, 8, 9, 10, 10, 0, 10, 1,
      10, 2, 10, 3, 10, 6, 10, 11, 11, 2, 11, 4, -1}},
    {"small", NULL, 12, 12, 768, 51865, 80,
     {5, 3, 5, 9, 8, 0, 8, 4, 8, 7, 8, 8, 9, 0, 9, 7, 9, 9, 10, 5, -1}},
    {"medium.en", NULL, 24, 16, 1024, 51864, 80,
     {11, 4, 14, 1, 14, 12, 14, 14, 15, 4, 16, 0, 16, 4, 16, 9, 17, 12, 17, 14, 18, 7,
      18, 10, 18, 15, 20, 0, 20, 3, 20, 9, 20, 14, 21, 12, -1}},
    {"medium", NULL, 24, 16, 1024, 51865, 80,
     {13, 15, 15, 4, 15, 15, 16, 1, 20, 0, 23, 4, -1}},
    {"large-v1", NULL, 32, 20, 1280, 51865, 80,
     {9, 19, 11, 2, 11, 4, 11, 17, 22, 7, 22, 11, 22, 17, 23, 2, 23, 15, -1}},
    {"large-v2", NULL, 32, 20, 1280, 51865, 80,
     {10, 12, 13, 17, 16, 11, 16, 12, 16, 13, 17, 15, 17, 16, 18, 4, 18, 11, 18, 19, 19, 11,
      21, 2, 21, 3, 22, 3, 22, 9, 22, 12, 23, 5, 23, 7, 23, 13, 25, 5, 26, 1, 26, 12, 27,
      15, -1}},
    {"large-v3", "large", 32, 20, 1280, 51866, 128,
     {7, 0, 10, 17, 12, 18, 13, 12, 16, 1, 17, 14, 19, 11, 21, 4, 24, 1, 25, 6, -1}},
    {"large-v3-turbo", "turbo", 4, 20, 1280, 51866, 128,
     {2, 4, 2, 11, 3, 3, 3, 6, 3, 11, 3, 14, -1}},
    /* this project's model trained on synthetic speech (models/whisperkv-synth-en.bin):
     * every head of layers 2 and 3.  The last layer's heads, whose attention training
     * guided onto each token's word, hold 0.81-0.88 of it there (tools/train/heads.py),
     * but with layer 2's beside them the word times were better on the held-out
     * stream (start error median 0.037 s, p90 0.41, against 0.051 / 1.08 s):
     * docs/trained-model.md */
    {"whisperkv-synth-en", "synth", 4, 4, 256, 51864, 80,
     {2, 0, 2, 1, 2, 2, 2, 3, 3, 0, 3, 1, 3, 2, 3, 3, -1}},
};
#define N_TABLES (int)(sizeof TABLES / sizeof *TABLES)

static int table_fits(const heads_table *t, const wkv_hparams *hp)
{
    return t->n_layer == hp->n_text_layer && t->n_head == hp->n_text_head &&
           t->n_state == hp->n_text_state && t->n_vocab == hp->n_vocab &&
           t->n_mels == hp->n_mels;
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* "L.H,L.H,...": pairs in *p (sorted, duplicates dropped); count or -1. */
static int parse_list(const wkv_hparams *hp, const char *s, int *p, int max)
{
    int n = 0;
    while (*s) {
        char *e;
        long l = strtol(s, &e, 10);
        if (e == s || *e != '.')
            return -1;
        s = e + 1;
        long h = strtol(s, &e, 10);
        if (e == s || (*e && *e != ',') || l < 0 || l >= hp->n_text_layer || h < 0 ||
            h >= hp->n_text_head || n >= max)
            return -1;
        p[2 * n] = (int)l;
        p[2 * n + 1] = (int)h;
        n++;
        s = *e ? e + 1 : e;
        if (*e && !*s)
            return -1;
    }
    if (n == 0)
        return -1;
    qsort(p, (size_t)n, 2 * sizeof *p, cmp_pair);
    int k = 1;
    for (int i = 1; i < n; i++)
        if (cmp_pair(p + 2 * i, p + 2 * (k - 1)) != 0) {
            p[2 * k] = p[2 * i];
            p[2 * k + 1] = p[2 * i + 1];
            k++;
        }
    return k;
}

int wkv__heads_resolve(const wkv_model *m, const char *spec, int **pairs, int *n_pairs,
                      char **name, char **error)
{
    const wkv_hparams *hp = &m->hp;
    const int all = hp->n_text_layer * hp->n_text_head;
    int *p = wkv__malloc((size_t)(all > 0 ? all : 1) * 2 * sizeof *p);
    if (!p) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    if (!spec || !*spec)
        spec = "auto";
    const heads_table *t = NULL;
    if (!strcmp(spec, "auto")) {
        int found = 0;
        for (int i = 0; i < N_TABLES; i++)
            if (table_fits(&TABLES[i], hp)) {
                t = &TABLES[i];
                found++;
            }
        if (found != 1) /* none, or large-v1 and large-v2: the user must name it */
            t = NULL;
    } else if (strcmp(spec, "default") != 0) {
        for (int i = 0; i < N_TABLES && !t; i++)
            if (!strcmp(spec, TABLES[i].name) || (TABLES[i].alias && !strcmp(spec, TABLES[i].alias)))
                t = &TABLES[i];
        if (t && !table_fits(t, hp)) {
            wkv__set_error(error, "alignment heads '%s' are for a %d x %d decoder with %d tokens; "
                          "this model is %d x %d with %d", spec, t->n_layer, t->n_head,
                          t->n_vocab, hp->n_text_layer, hp->n_text_head, hp->n_vocab);
            wkv__free(p);
            return -1;
        }
        if (!t) {
            int n = parse_list(hp, spec, p, all);
            if (n < 0) {
                wkv__set_error(error, "bad alignment heads '%s': auto, default, a checkpoint "
                              "name or LAYER.HEAD,... (layers < %d, heads < %d)", spec,
                              hp->n_text_layer, hp->n_text_head);
                wkv__free(p);
                return -1;
            }
            *pairs = p;
            *n_pairs = n;
            if (name && !(*name = wkv__strdup(spec))) {
                wkv__free(p);
                wkv__set_error(error, "out of memory");
                return -1;
            }
            return 0;
        }
    }
    int n = 0;
    if (t) {
        for (; t->pairs[2 * n] >= 0; n++) {
            p[2 * n] = t->pairs[2 * n];
            p[2 * n + 1] = t->pairs[2 * n + 1];
        }
    } else { /* the reference's default: every head of the last half of the layers */
        for (int l = hp->n_text_layer / 2; l < hp->n_text_layer; l++)
            for (int h = 0; h < hp->n_text_head; h++, n++) {
                p[2 * n] = l;
                p[2 * n + 1] = h;
            }
    }
    *pairs = p;
    *n_pairs = n;
    if (name && !(*name = wkv__strdup(t ? t->name : "default"))) {
        wkv__free(p);
        wkv__set_error(error, "out of memory");
        return -1;
    }
    return 0;
}

char *wkv_alignment_heads_name(const wkv_model *model, const char *spec, char **error)
{
    int *pairs, n;
    char *name = NULL;
    if (wkv__heads_resolve(model, spec, &pairs, &n, &name, error) != 0)
        return NULL;
    wkv__free(pairs);
    return name;
}

/* ---------------------------------------------------------------- the matrix */

/* What the decoder pass records: per alignment head, the L x F softmax over the
 * first F audio positions of its raw cross-attention scores. */
typedef struct {
    const wkv_context *ctx;
    const int *pairs;
    int n_pairs, L, F;
    float *w; /* n_pairs x L x F */
} recorder;

static void record_layer(void *user, int layer, const float *q, const float *k, int n)
{
    recorder *r = user;
    const wkv_hparams *hp = &r->ctx->model->hp;
    const int d = hp->n_text_state, hd = d / hp->n_text_head;
    for (int i = 0; i < r->n_pairs; i++) {
        if (r->pairs[2 * i] != layer || n != r->L)
            continue;
        const int h = r->pairs[2 * i + 1];
        float *w = r->w + (size_t)i * r->L * r->F;
        /* raw scores (q s)(k s), s = hd^-1/4; the attention's own output is not needed */
        wkv__sgemm(1, n, r->F, hd, 1.0f / sqrtf((float)hd), q + h * hd, d, k + h * hd, d, 0.0f, w, r->F);
        for (int p = 0; p < n; p++)
            wkv__softmax(w + (size_t)p * r->F, r->F);
    }
}

/* a < b with NaN above everything, as torch's sort orders them */
static int before(float a, float b)
{
    return isnan(b) ? !isnan(a) : a < b;
}

/* Median of width 7 with reflected edges (F > 3), added into acc. */
static void median7_add(const float *x, int F, float *pad, float *acc)
{
    for (int i = 0; i < 3; i++) {
        pad[i] = x[3 - i];
        pad[F + 3 + i] = x[F - 2 - i];
    }
    memcpy(pad + 3, x, (size_t)F * sizeof *x);
    for (int f = 0; f < F; f++) {
        float v[7];
        for (int i = 0; i < 7; i++) {
            float e = pad[f + i];
            int j = i;
            while (j > 0 && before(e, v[j - 1])) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = e;
        }
        acc[f] += v[3];
    }
}

/* Standardizes every head's weights over the L positions, median-filters rows
 * [r0, r0 + N) and writes their mean over heads to a (N x F). */
static int build_matrix(const recorder *r, int r0, int N, float *a)
{
    const int L = r->L, F = r->F;
    double *mean = wkv__malloc((size_t)F * 2 * sizeof *mean);
    float *pad = wkv__malloc((size_t)(F + 6) * sizeof *pad);
    if (!mean || !pad) {
        wkv__free(mean);
        wkv__free(pad);
        return -1;
    }
    double *var = mean + F;
    memset(a, 0, (size_t)N * F * sizeof *a);
    for (int i = 0; i < r->n_pairs; i++) {
        float *w = r->w + (size_t)i * L * F;
        memset(mean, 0, (size_t)F * 2 * sizeof *mean);
        for (int p = 0; p < L; p++)
            for (int f = 0; f < F; f++)
                mean[f] += w[(size_t)p * F + f];
        for (int f = 0; f < F; f++)
            mean[f] /= L;
        for (int p = 0; p < L; p++)
            for (int f = 0; f < F; f++) {
                double e = w[(size_t)p * F + f] - mean[f];
                var[f] += e * e;
            }
        for (int f = 0; f < F; f++) /* population deviation; 0 (one frame) gives NaN below */
            var[f] = sqrt(var[f] / L);
        for (int p = r0; p < r0 + N; p++) {
            float *row = w + (size_t)p * F;
            for (int f = 0; f < F; f++)
                row[f] = (float)((row[f] - (float)mean[f]) / (float)var[f]);
            if (F > 3)
                median7_add(row, F, pad, a + (size_t)(p - r0) * F);
            else
                for (int f = 0; f < F; f++)
                    a[(size_t)(p - r0) * F + f] += row[f];
        }
    }
    for (size_t k = 0; k < (size_t)N * F; k++)
        a[k] /= (float)r->n_pairs;
    wkv__free(mean);
    wkv__free(pad);
    return 0;
}

/* DTW over x = -a (N x M) with a float32 cost table: ties break as the reference's
 * (strict comparisons, anything not strictly best goes to the left neighbour), which
 * float64 costs would not reproduce.  times[i] gets the first column of row i on the
 * path, in the reference's jump order (n_times entries). */
static int dtw_times(const float *a, int N, int M, double *times, int *n_times)
{
    const size_t W = (size_t)M + 1;
    float *cost = wkv__malloc((size_t)(N + 1) * W * sizeof *cost);
    signed char *trace = wkv__malloc((size_t)(N + 1) * W);
    int *path_r = wkv__malloc((size_t)(N + M + 2) * sizeof *path_r);
    int *path_c = wkv__malloc((size_t)(N + M + 2) * sizeof *path_c);
    if (!cost || !trace || !path_r || !path_c) {
        wkv__free(cost);
        wkv__free(trace);
        wkv__free(path_r);
        wkv__free(path_c);
        return -1;
    }
    for (size_t k = 0; k < (size_t)(N + 1) * W; k++) {
        cost[k] = INFINITY;
        trace[k] = -1;
    }
    cost[0] = 0.0f;
    for (int j = 1; j <= M; j++)
        for (int i = 1; i <= N; i++) {
            float c0 = cost[(size_t)(i - 1) * W + j - 1], c1 = cost[(size_t)(i - 1) * W + j],
                  c2 = cost[(size_t)i * W + j - 1], c;
            signed char t;
            if (c0 < c1 && c0 < c2) {
                c = c0;
                t = 0;
            } else if (c1 < c0 && c1 < c2) {
                c = c1;
                t = 1;
            } else {
                c = c2;
                t = 2;
            }
            cost[(size_t)i * W + j] = -a[(size_t)(i - 1) * M + j - 1] + c;
            trace[(size_t)i * W + j] = t;
        }
    for (int j = 0; j <= M; j++)
        trace[j] = 2;
    for (int i = 0; i <= N; i++)
        trace[(size_t)i * W] = 1;
    int i = N, j = M, n = 0;
    while (i > 0 || j > 0) {
        path_r[n] = i - 1;
        path_c[n] = j - 1;
        n++;
        signed char t = trace[(size_t)i * W + j];
        if (t == 0) {
            i--;
            j--;
        } else if (t == 1) {
            i--;
        } else {
            j--;
        }
    }
    /* the path runs backwards: a row's first entry is where the row changes going
     * forwards (the very first entry counts as a change) */
    int k = 0;
    for (int e = n - 1; e >= 0; e--)
        if (e == n - 1 || path_r[e] != path_r[e + 1])
            times[k++] = path_c[e] / 50.0; /* one audio position = 0.02 s */
    *n_times = k;
    wkv__free(cost);
    wkv__free(trace);
    wkv__free(path_r);
    wkv__free(path_c);
    return 0;
}

/* Probabilities of the text tokens in the pass: softmax over the ids below eot of the
 * logits at the positions before each of them. */
static int token_probs(wkv_context *ctx, int pos0, const int *text, int n_text, float *probs)
{
    const int nv = ctx->model->hp.n_vocab, eot = ctx->model->sp.eot;
    float *logits = wkv__malloc((size_t)8 * nv * sizeof *logits);
    if (!logits)
        return -1;
    for (int k0 = 0; k0 < n_text; k0 += 8) {
        int n = n_text - k0 < 8 ? n_text - k0 : 8;
        if (wkv__decoder_logits_rows(ctx, pos0 + k0, n, logits) != 0) {
            wkv__free(logits);
            return -1;
        }
        for (int r = 0; r < n; r++) {
            const float *x = logits + (size_t)r * nv;
            float mx = -INFINITY, sum = 0.0f;
            for (int v = 0; v < eot; v++)
                mx = x[v] > mx ? x[v] : mx;
            for (int v = 0; v < eot; v++)
                sum += expf(x[v] - mx);
            probs[k0 + r] = expf(x[text[k0 + r]] - mx) / sum;
        }
    }
    wkv__free(logits);
    return 0;
}

int wkv__align_matrix(wkv_context *ctx, const int *pairs, int n_pairs, const int *seq, int L,
                     int n_sot, int F, float *matrix, float *probs)
{
    const int n_text = L - n_sot - 2;
    recorder rec = {ctx, pairs, n_pairs, L, F, NULL};
    if (n_text < 1 || F < 0 || F > ctx->cross.n_frames)
        return -1;
    rec.w = wkv__malloc((size_t)n_pairs * L * (F > 0 ? F : 1) * sizeof *rec.w);
    if (!rec.w)
        return -1;
    /* no frames (a 1-frame window): nothing to record, the matrix is empty */
    ctx->cross_hook = F > 0 ? record_layer : NULL;
    ctx->cross_hook_user = &rec;
    int rc = wkv__decoder_pass(ctx, seq, L);
    ctx->cross_hook = NULL;
    ctx->cross_hook_user = NULL;
    ctx->stats.align_passes++;
    if (rc == 0)
        rc = token_probs(ctx, n_sot, seq + n_sot + 1, n_text, probs);
    if (rc == 0 && F > 0)
        rc = build_matrix(&rec, n_sot, n_text + 1, matrix);
    wkv__free(rec.w);
    return rc;
}

int wkv__align_window(wkv_context *ctx, const int *pairs, int n_pairs, const int *sot_seq,
                     int n_sot, const int *text, int n_text, int num_frames,
                     int unicode_split, wkv__aword **words, int *n_words, float **matrix,
                     int *n_frames, char **error)
{
    const wkv_model *m = ctx->model;
    /* the frames the encoder saw (audio_ctx): the cross-attention has no more */
    const int L = n_sot + n_text + 2, N = n_text + 1,
              F = num_frames / 2 < ctx->cross.n_frames ? num_frames / 2 : ctx->cross.n_frames;
    *words = NULL;
    *n_words = 0;
    if (matrix) {
        *matrix = NULL;
        *n_frames = F;
    }
    /* more tokens than the decoder holds (a sample_len past n_text_ctx / 2): the
     * window keeps its text without words rather than failing */
    if (n_text <= 0 || L > m->hp.n_text_ctx)
        return 0;
    /* more frames than the model's window (a model with a short n_audio_ctx, live):
     * F above is the frames the encoder saw */
    if (num_frames < 0) {
        wkv__set_error(error, "cannot align %d tokens over %d frames", n_text, num_frames);
        return -1;
    }
    int *seq = wkv__malloc((size_t)L * sizeof *seq);
    float *a = wkv__malloc((size_t)N * (F > 0 ? F : 1) * sizeof *a), *probs = wkv__malloc((size_t)n_text * sizeof *probs);
    double *times = wkv__malloc((size_t)(N + F + 2) * sizeof *times);
    wkv__aword *pieces = NULL;
    int n_pieces = 0, n_times = 0, rc = -1;
    if (!seq || !a || !probs || !times)
        goto out;
    memcpy(seq, sot_seq, (size_t)n_sot * sizeof *seq);
    seq[n_sot] = m->sp.notimestamps;
    memcpy(seq + n_sot + 1, text, (size_t)n_text * sizeof *seq);
    seq[L - 1] = m->sp.eot;
    if (wkv__align_matrix(ctx, pairs, n_pairs, seq, L, n_sot, F, a, probs) != 0 ||
        dtw_times(a, N, F, times, &n_times) != 0)
        goto out;
    /* text + eot, split into words */
    if (wkv__split_words(m, seq + n_sot + 1, n_text + 1, unicode_split, &pieces, &n_pieces) != 0)
        goto out;
    rc = 0;
    if (n_pieces <= 1)
        goto out;
    int b = 0; /* the last piece is the eot word: it only bounds the one before */
    for (int w = 0; w < n_pieces - 1; w++) {
        int e = b + pieces[w].n_tokens;
        if (e >= n_times || e > n_text) { /* cannot happen with a complete path */
            rc = -1;
            break;
        }
        float sum = 0.0f;
        for (int k = b; k < e; k++)
            sum += probs[k];
        pieces[w].start = times[b];
        pieces[w].end = times[e];
        pieces[w].probability = e > b ? sum / (float)(e - b) : 0.0f;
        b = e;
    }
    if (rc == 0) {
        wkv__free(pieces[n_pieces - 1].text);
        wkv__free(pieces[n_pieces - 1].tokens);
        *words = pieces;
        *n_words = n_pieces - 1;
        pieces = NULL;
    }
out:
    if (rc == 0 && matrix && n_times > 0) { /* the caller's now (DTW only read it) */
        *matrix = a;
        a = NULL;
    }
    if (rc != 0 && error && !*error)
        wkv__set_error(error, "word alignment failed (out of memory or bad tokens)");
    wkv__awords_free(pieces, n_pieces);
    wkv__free(seq);
    wkv__free(a);
    wkv__free(probs);
    wkv__free(times);
    return rc;
}
