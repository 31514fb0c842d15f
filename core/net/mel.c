/* The audio front end: 16 kHz PCM -> log10 mel power (the first steps of
 * openai/whisper's audio.py log_mel_spectrogram, called with padding=N_SAMPLES as
 * transcribe.py calls it).
 *
 * The input is followed by 480000 zero samples (30 s), reflect-padded by 200 samples
 * at both ends (numpy/torch 'reflect': x[-k] = x[k], the edge sample is not
 * repeated), and cut into centred frames of 400 samples every 160 samples with a
 * periodic Hann window.  The last frame is dropped, so n_frames = (n + 480000) / 160.
 * Each frame's 201-bin power spectrum |X|^2 goes through the n_mels x 201 filter bank
 * and L = log10(max(mel, 1e-10)) is stored, n_mels x n_frames, row-major by band.
 *
 * Numerics: the DFT, the power and the filter products are computed in double (a
 * real FFT of 400 points made of one complex FFT of 200 = 2^3 * 5^2 points, mixed
 * radix, Stockham order), and only L is rounded to float.  The reference computes in
 * float32; double keeps us well inside its own rounding.
 *
 * Non-finite samples (NaN, +-Inf) are read as 0.0 before the STFT, so one bad
 * sample costs at most its own contribution instead of turning every frame that
 * overlaps it (and, through the maximum, the whole normalization) into NaN.
 *
 * No global mutable state: the tables (window, twiddles, filter extents) live in a
 * plan built inside each call and only read afterwards, shared by the worker threads.
 */
#include "base/util.h"
#include "net/mel.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEL_NFFT 400              /* samples per frame */
#define MEL_NBINS 201             /* MEL_NFFT / 2 + 1 */
#define MEL_NC 200                /* complex FFT length (MEL_NFFT / 2) */
#define MEL_PAD 200               /* reflect padding at each end (MEL_NFFT / 2) */
#define MEL_BLOCK 64              /* frames computed before writing to the rows */
#define MEL_MIN_FRAMES_THREAD 512 /* smaller jobs are not worth a thread */
#define MEL_MAX_THREADS 64
#define MEL_MAX_STAGES 4

typedef struct {
    double re, im;
} cpx;

/* Everything one call precomputes; read-only once built. */
typedef struct {
    int n_stages;
    int radix[MEL_MAX_STAGES];
    int tw_off[MEL_MAX_STAGES]; /* stage s: twiddles tw[tw_off[s] + p*(r-1) + k-1] */
    cpx tw[MEL_NC];             /* W_n^(p*k) of each stage's current length n */
    cpx post[MEL_NBINS];        /* W_400^k for splitting the real spectrum */
    double window[MEL_NFFT];    /* periodic Hann */
    const float *filters;
    int n_mels;
    int *lo, *hi;               /* nonzero extent of each filter row: [lo, hi) */
} mel_plan;

static void plan_init(mel_plan *pl)
{
    static const int radices[MEL_MAX_STAGES] = {4, 2, 5, 5}; /* 4*2*5*5 = 200 */
    const double two_pi = 6.283185307179586476925286766559;
    int n = MEL_NC, off = 0;
    pl->n_stages = MEL_MAX_STAGES;
    for (int s = 0; s < MEL_MAX_STAGES; s++) {
        int r = radices[s], m = n / r;
        pl->radix[s] = r;
        pl->tw_off[s] = off;
        for (int p = 0; p < m; p++)
            for (int k = 1; k < r; k++) {
                double a = -two_pi * (double)(p * k) / n;
                pl->tw[off + p * (r - 1) + k - 1] = (cpx){cos(a), sin(a)};
            }
        off += m * (r - 1);
        n = m;
    }
    for (int k = 0; k < MEL_NBINS; k++) {
        double a = -two_pi * k / MEL_NFFT;
        pl->post[k] = (cpx){cos(a), sin(a)};
    }
    for (int i = 0; i < MEL_NFFT; i++)
        pl->window[i] = 0.5 - 0.5 * cos(two_pi * i / MEL_NFFT);
}

static inline cpx cmul(cpx a, cpx b)
{
    return (cpx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

/* One Stockham decimation-in-frequency stage.  Current sub-transform length n = r*m,
 * stride s (s*n == MEL_NC): for p < m, q < s, with a_j = x[q + s*(p + j*m)],
 * y[q + s*(r*p + k)] = W_n^(p*k) * sum_j a_j W_r^(j*k).  After all stages the
 * result is in natural order. */
static void fft_stage(int r, int m, int s, const cpx *tw, const cpx *x, cpx *y)
{
    const int sm = s * m;
    switch (r) {
    case 2:
        for (int p = 0; p < m; p++) {
            const cpx w1 = tw[p];
            for (int q = 0; q < s; q++) {
                const cpx *a = x + q + s * p;
                cpx a0 = a[0], a1 = a[sm];
                cpx *o = y + q + s * 2 * p;
                o[0] = (cpx){a0.re + a1.re, a0.im + a1.im};
                o[s] = cmul((cpx){a0.re - a1.re, a0.im - a1.im}, w1);
            }
        }
        break;
    case 4:
        for (int p = 0; p < m; p++) {
            const cpx *w = tw + 3 * p;
            for (int q = 0; q < s; q++) {
                const cpx *a = x + q + s * p;
                cpx a0 = a[0], a1 = a[sm], a2 = a[2 * sm], a3 = a[3 * sm];
                cpx s02 = {a0.re + a2.re, a0.im + a2.im}, d02 = {a0.re - a2.re, a0.im - a2.im};
                cpx s13 = {a1.re + a3.re, a1.im + a3.im}, d13 = {a1.re - a3.re, a1.im - a3.im};
                cpx *o = y + q + s * 4 * p;
                o[0] = (cpx){s02.re + s13.re, s02.im + s13.im};
                /* y1 = d02 - i*d13, y2 = s02 - s13, y3 = d02 + i*d13 */
                o[s] = cmul((cpx){d02.re + d13.im, d02.im - d13.re}, w[0]);
                o[2 * s] = cmul((cpx){s02.re - s13.re, s02.im - s13.im}, w[1]);
                o[3 * s] = cmul((cpx){d02.re - d13.im, d02.im + d13.re}, w[2]);
            }
        }
        break;
    case 5: {
        const double c1 = 0.30901699437494742410229341718282; /* cos(2pi/5) */
        const double c2 = -0.80901699437494742410229341718282; /* cos(4pi/5) */
        const double s1 = 0.95105651629515357211643933337938; /* sin(2pi/5) */
        const double s2 = 0.58778525229247312916870595463907; /* sin(4pi/5) */
        for (int p = 0; p < m; p++) {
            const cpx *w = tw + 4 * p;
            for (int q = 0; q < s; q++) {
                const cpx *a = x + q + s * p;
                cpx a0 = a[0], a1 = a[sm], a2 = a[2 * sm], a3 = a[3 * sm], a4 = a[4 * sm];
                cpx b1 = {a1.re + a4.re, a1.im + a4.im}, d1 = {a1.re - a4.re, a1.im - a4.im};
                cpx b2 = {a2.re + a3.re, a2.im + a3.im}, d2 = {a2.re - a3.re, a2.im - a3.im};
                cpx t1 = {a0.re + c1 * b1.re + c2 * b2.re, a0.im + c1 * b1.im + c2 * b2.im};
                cpx t2 = {a0.re + c2 * b1.re + c1 * b2.re, a0.im + c2 * b1.im + c1 * b2.im};
                cpx u1 = {s1 * d1.re + s2 * d2.re, s1 * d1.im + s2 * d2.im};
                cpx u2 = {s2 * d1.re - s1 * d2.re, s2 * d1.im - s1 * d2.im};
                cpx *o = y + q + s * 5 * p;
                o[0] = (cpx){a0.re + b1.re + b2.re, a0.im + b1.im + b2.im};
                /* y1 = t1 - i*u1, y4 = t1 + i*u1, y2 = t2 - i*u2, y3 = t2 + i*u2 */
                o[s] = cmul((cpx){t1.re + u1.im, t1.im - u1.re}, w[0]);
                o[2 * s] = cmul((cpx){t2.re + u2.im, t2.im - u2.re}, w[1]);
                o[3 * s] = cmul((cpx){t2.re - u2.im, t2.im + u2.re}, w[2]);
                o[4 * s] = cmul((cpx){t1.re - u1.im, t1.im + u1.re}, w[3]);
            }
        }
        break;
    }
    }
}

/* Power spectrum of 400 windowed real samples: power[k] = |X[k]|^2, k = 0..200.
 * z[j] = x[2j] + i x[2j+1] goes through a 200-point complex FFT Z; then
 * X[k] = E[k] + W_400^k O[k] with E = (Z[k] + conj Z[-k]) / 2 (even samples) and
 * O = (Z[k] - conj Z[-k]) / 2i (odd samples). */
static void power_spectrum(const mel_plan *pl, const double *x, double *power, cpx *b0,
                           cpx *b1)
{
    for (int j = 0; j < MEL_NC; j++)
        b0[j] = (cpx){x[2 * j], x[2 * j + 1]};
    cpx *in = b0, *out = b1;
    int n = MEL_NC, s = 1;
    for (int st = 0; st < pl->n_stages; st++) {
        int r = pl->radix[st], m = n / r;
        fft_stage(r, m, s, pl->tw + pl->tw_off[st], in, out);
        cpx *t = in;
        in = out;
        out = t;
        n = m;
        s *= r;
    }
    const cpx *Z = in;
    for (int k = 0; k < MEL_NBINS; k++) {
        cpx zk = Z[k % MEL_NC], zn = Z[(MEL_NC - k) % MEL_NC];
        double er = 0.5 * (zk.re + zn.re), ei = 0.5 * (zk.im - zn.im);
        double or_ = 0.5 * (zk.im + zn.im), oi = -0.5 * (zk.re - zn.re);
        cpx w = pl->post[k];
        double xr = er + w.re * or_ - w.im * oi;
        double xi = ei + w.re * oi + w.im * or_;
        power[k] = xr * xr + xi * xi;
    }
}

static inline double clean_sample(float v)
{
    return isfinite(v) ? (double)v : 0.0;
}

typedef struct {
    const mel_plan *pl;
    const float *pcm; /* stream samples [s0, s0 + n) */
    int64_t s0, n;
    int64_t stream_len; /* samples of real audio; zeros follow it */
    int64_t out_f0;   /* stream frame of data's first column */
    int64_t n_frames; /* columns of data */
    int64_t f0, f1;   /* stream frames of this job */
    float *data;
    float max;
    int failed;
} mel_job;

static void *mel_worker(void *arg)
{
    mel_job *job = arg;
    const mel_plan *pl = job->pl;
    const int n_mels = pl->n_mels;
    double x[MEL_NFFT], power[MEL_NBINS];
    cpx b0[MEL_NC], b1[MEL_NC];
    float *blk = wkv__malloc(sizeof(float) * (size_t)n_mels * MEL_BLOCK);
    float vmax = -INFINITY;
    if (!blk) {
        job->failed = 1;
        return NULL;
    }
    for (int64_t fb = job->f0; fb < job->f1; fb += MEL_BLOCK) {
        int nb = (int)(job->f1 - fb < MEL_BLOCK ? job->f1 - fb : MEL_BLOCK);
        for (int b = 0; b < nb; b++) {
            int64_t start = (fb + b) * WKV_HOP - MEL_PAD; /* stream sample index */
            if (start >= job->s0 && start + MEL_NFFT <= job->s0 + job->n &&
                start + MEL_NFFT <= job->stream_len) {
                const float *src = job->pcm + (start - job->s0);
                for (int i = 0; i < MEL_NFFT; i++)
                    x[i] = pl->window[i] * clean_sample(src[i]);
            } else {
                for (int i = 0; i < MEL_NFFT; i++) {
                    int64_t idx = start + i;
                    if (idx < 0)
                        idx = -idx; /* reflect at the stream's start */
                    /* after the audio come zeros (30 s of them, and their reflection) */
                    x[i] = idx < job->stream_len
                               ? pl->window[i] * clean_sample(job->pcm[idx - job->s0])
                               : 0.0;
                }
            }
            power_spectrum(pl, x, power, b0, b1);
            for (int mb = 0; mb < n_mels; mb++) {
                const float *f = pl->filters + (size_t)mb * MEL_NBINS;
                double acc = 0.0;
                for (int k = pl->lo[mb]; k < pl->hi[mb]; k++)
                    acc += (double)f[k] * power[k];
                float L = (float)log10(acc > 1e-10 ? acc : 1e-10);
                blk[(size_t)mb * MEL_BLOCK + b] = L;
                if (L > vmax)
                    vmax = L;
            }
        }
        for (int mb = 0; mb < n_mels; mb++)
            memcpy(job->data + (size_t)mb * (size_t)job->n_frames + (size_t)(fb - job->out_f0),
                   blk + (size_t)mb * MEL_BLOCK, sizeof(float) * (size_t)nb);
    }
    wkv__free(blk);
    job->max = vmax;
    return NULL;
}

/* Frames [f0, f0 + n_frames) of the log-mel of a stream of stream_len samples
 * (INT64_MAX: not ended yet) of which pcm holds [s0, s0 + n). */
static wkv_mel *mel_range(const float *filters, int n_mels, const float *pcm, int64_t s0,
                          int64_t n, int64_t stream_len, int64_t f0, int64_t n_frames,
                          int threads, char **error)
{
    if (!filters || n_mels <= 0) {
        wkv__set_error(error, "mel: no filter bank (n_mels %d)", n_mels);
        return NULL;
    }
    if ((!pcm && n > 0) || n < 0 || s0 < 0 || f0 < 0 || n_frames < 0) {
        wkv__set_error(error, "mel: bad arguments");
        return NULL;
    }
    if (n_frames > INT64_MAX / WKV_HOP / 2 || f0 > INT64_MAX / WKV_HOP / 2 ||
        (uint64_t)n_frames > SIZE_MAX / sizeof(float) / (size_t)n_mels) {
        wkv__set_error(error, "mel: %lld frames is too long", (long long)n_frames);
        return NULL;
    }
    /* the samples these frames read: reflection at 0 reads [0, 200] */
    int64_t need_lo = f0 * WKV_HOP - MEL_PAD > 0 ? f0 * WKV_HOP - MEL_PAD : 0;
    int64_t need_hi = n_frames ? (f0 + n_frames - 1) * WKV_HOP + MEL_PAD : need_lo;
    if (f0 * WKV_HOP < MEL_PAD + 1 && need_hi < MEL_PAD + 1)
        need_hi = MEL_PAD + 1;
    if (need_hi > stream_len)
        need_hi = stream_len;
    if (n_frames && (s0 > need_lo || s0 + n < need_hi)) {
        wkv__set_error(error, "mel: frames %lld..%lld need samples %lld..%lld, have %lld..%lld",
                      (long long)f0, (long long)(f0 + n_frames), (long long)need_lo,
                      (long long)need_hi, (long long)s0, (long long)(s0 + n));
        return NULL;
    }

    wkv_mel *mel = wkv__calloc(1, sizeof *mel);
    mel_plan *pl = wkv__calloc(1, sizeof *pl);
    int *ext = wkv__malloc(sizeof(int) * 2 * (size_t)n_mels);
    float *data = wkv__malloc(sizeof(float) * (size_t)n_mels * (size_t)(n_frames ? n_frames : 1));
    if (!mel || !pl || !ext || !data) {
        wkv__free(mel);
        wkv__free(pl);
        wkv__free(ext);
        wkv__free(data);
        wkv__set_error(error, "mel: out of memory for %d x %lld frames", n_mels,
                      (long long)n_frames);
        return NULL;
    }
    plan_init(pl);
    pl->filters = filters;
    pl->n_mels = n_mels;
    pl->lo = ext;
    pl->hi = ext + n_mels;
    for (int mb = 0; mb < n_mels; mb++) {
        const float *f = filters + (size_t)mb * MEL_NBINS;
        int lo = 0, hi = MEL_NBINS;
        while (lo < hi && f[lo] == 0.0f)
            lo++;
        while (hi > lo && f[hi - 1] == 0.0f)
            hi--;
        pl->lo[mb] = lo;
        pl->hi[mb] = hi;
    }

    int nt = threads < 1 ? 1 : threads;
    if (nt > MEL_MAX_THREADS)
        nt = MEL_MAX_THREADS;
    if ((int64_t)nt * MEL_MIN_FRAMES_THREAD > n_frames)
        nt = (int)(n_frames / MEL_MIN_FRAMES_THREAD) > 0 ? (int)(n_frames / MEL_MIN_FRAMES_THREAD)
                                                        : 1;
    mel_job jobs[MEL_MAX_THREADS];
    pthread_t tid[MEL_MAX_THREADS];
    int started[MEL_MAX_THREADS];
    for (int t = 0; t < nt; t++) {
        jobs[t] = (mel_job){.pl = pl, .pcm = pcm, .s0 = s0, .n = n, .stream_len = stream_len,
                            .out_f0 = f0, .n_frames = n_frames,
                            .f0 = f0 + n_frames * t / nt, .f1 = f0 + n_frames * (t + 1) / nt,
                            .data = data, .max = -INFINITY};
        started[t] = 0;
    }
    for (int t = 1; t < nt; t++)
        started[t] = pthread_create(&tid[t], NULL, mel_worker, &jobs[t]) == 0;
    mel_worker(&jobs[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            mel_worker(&jobs[t]); /* no thread: do its share here */
    }
    float vmax = -INFINITY;
    int failed = 0;
    for (int t = 0; t < nt; t++) {
        failed |= jobs[t].failed;
        if (jobs[t].max > vmax)
            vmax = jobs[t].max;
    }
    wkv__free(ext);
    wkv__free(pl);
    if (failed) {
        wkv__free(data);
        wkv__free(mel);
        wkv__set_error(error, "mel: out of memory");
        return NULL;
    }
    mel->n_mels = n_mels;
    mel->n_frames = n_frames;
    mel->content_frames = n_frames;
    mel->max = vmax;
    mel->data = data;
    return mel;
}

wkv_mel *wkv__mel_compute_filters(const float *filters, int n_mels, const float *pcm, size_t n,
                                 int threads, char **error)
{
    if (n > (size_t)(INT64_MAX / 4) - WKV_N_SAMPLES) {
        wkv__set_error(error, "mel: input of %zu samples is too long", n);
        return NULL;
    }
    /* the reference: the input followed by 30 s of zeros, every frame of that */
    int64_t n_frames = ((int64_t)n + WKV_N_SAMPLES) / WKV_HOP;
    wkv_mel *mel = mel_range(filters, n_mels, pcm, 0, (int64_t)n, (int64_t)n, 0, n_frames,
                             threads, error);
    if (mel)
        mel->content_frames = n_frames - WKV_N_FRAMES;
    return mel;
}

wkv_mel *wkv_mel_compute_range(const wkv_model *model, const float *pcm, size_t n, int64_t s0,
                               int64_t stream_len, int64_t f0, int64_t n_frames, int threads,
                               char **error)
{
    if (!model) {
        wkv__set_error(error, "mel: no model");
        return NULL;
    }
    return mel_range(wkv_model_mel_filters(model), wkv_model_hparams(model)->n_mels, pcm, s0,
                     (int64_t)n, stream_len < 0 ? INT64_MAX : stream_len, f0, n_frames,
                     threads, error);
}

wkv_mel *wkv_mel_compute(const wkv_model *model, const float *pcm, size_t n, int threads,
                         char **error)
{
    if (!model) {
        wkv__set_error(error, "mel: no model");
        return NULL;
    }
    const wkv_hparams *hp = wkv_model_hparams(model);
    const float *filters = wkv_model_mel_filters(model);
    if (!hp || !filters) {
        wkv__set_error(error, "mel: the model has no mel filter bank");
        return NULL;
    }
    return wkv__mel_compute_filters(filters, hp->n_mels, pcm, n, threads, error);
}

void wkv_mel_free(wkv_mel *mel)
{
    if (!mel)
        return;
    wkv__free(mel->data);
    wkv__free(mel);
}

void wkv_mel_window(const wkv_mel *mel, int64_t seek, int size, wkv_mel_norm norm, float *out)
{
    if (!mel || !out)
        return;
    const int n_mels = mel->n_mels;
    if (seek < 0 || seek >= mel->n_frames || size < 0)
        size = 0;
    if (size > WKV_N_FRAMES)
        size = WKV_N_FRAMES;
    if (size > 0 && (int64_t)size > mel->n_frames - seek)
        size = (int)(mel->n_frames - seek);

    float M = mel->max;
    if (norm == WKV_MEL_WINDOW && size > 0) {
        M = -INFINITY;
        for (int mb = 0; mb < n_mels; mb++) {
            const float *row = mel->data + (size_t)mb * (size_t)mel->n_frames + (size_t)seek;
            for (int i = 0; i < size; i++)
                if (row[i] > M)
                    M = row[i];
        }
    }
    const float floor_ = M - 8.0f;
    for (int mb = 0; mb < n_mels; mb++) {
        float *o = out + (size_t)mb * WKV_N_FRAMES;
        if (size > 0) {
            const float *row = mel->data + (size_t)mb * (size_t)mel->n_frames + (size_t)seek;
            for (int i = 0; i < size; i++) {
                float x = row[i] > floor_ ? row[i] : floor_;
                o[i] = (x + 4.0f) / 4.0f;
            }
        }
        for (int i = size; i < WKV_N_FRAMES; i++)
            o[i] = 0.0f;
    }
}
