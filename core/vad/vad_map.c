/* Transcribing with VAD as whisper.cpp 1.9.3's whisper_full does (whisper_vad and
 * the whisper_full_get_*_t0/t1 functions): the audio it decodes (each speech segment
 * with samples_overlap seconds of the audio after it, then 0.1 s of zeros) and the
 * two mappings of times on that audio back to the input: one interpolated over a
 * table of points for segment times, one per segment for token times.  Times are
 * centiseconds. */
#include "base/util.h"
#include "whisperkv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SILENCE (WKV_SAMPLE_RATE / 10) /* fixed 0.1 s, not samples_overlap */

typedef struct {
    int64_t processed, original;
} map_point;

typedef struct {
    int64_t orig_start, orig_end, vad_start, vad_end;
} map_seg;

struct wkv_vad_map {
    map_point *pts;
    int n_pts;
    map_seg *segs;
    int n_segs;
};

static int64_t samples_to_cs(int64_t samples)
{
    return (int64_t)((double)samples / WKV_SAMPLE_RATE * 100.0 + 0.5);
}

static int64_t cs_to_samples(int64_t cs)
{
    return (int64_t)((double)cs / 100.0 * WKV_SAMPLE_RATE + 0.5);
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Sorted by processed time (stable: points were appended nearly in order), then of
 * equal processed times only the first is kept. */
static void sort_unique(wkv_vad_map *m)
{
    for (int i = 1; i < m->n_pts; i++) {
        map_point x = m->pts[i];
        int j = i;
        for (; j > 0 && m->pts[j - 1].processed > x.processed; j--)
            m->pts[j] = m->pts[j - 1];
        m->pts[j] = x;
    }
    int n = 0;
    for (int i = 0; i < m->n_pts; i++)
        if (n == 0 || m->pts[n - 1].processed != m->pts[i].processed)
            m->pts[n++] = m->pts[i];
    m->n_pts = n;
}

/* The copy loop; out is NULL for the first pass (sizes only). */
static int64_t copy_pieces(const float *pcm, int64_t n, const wkv_vad_segment *segs, int n_segs,
                           int64_t overlap, float *out, wkv_vad_map *m)
{
    int64_t offset = 0;
    for (int i = 0; i < n_segs; i++) {
        const int last = i == n_segs - 1;
        int64_t a = min64(cs_to_samples(segs[i].start), n - 1);
        int64_t b = min64(cs_to_samples(segs[i].end), n - 1);
        const int64_t own = b - a; /* the overlap is not the segment's own audio */
        if (!last)
            b = min64(b + overlap, n - 1);
        if (b - a <= 0)
            continue;
        map_seg *s = &m->segs[m->n_segs++];
        s->orig_start = segs[i].start;
        s->orig_end = segs[i].end;
        s->vad_start = samples_to_cs(offset);
        s->vad_end = samples_to_cs(offset + own);
        m->pts[m->n_pts++] = (map_point){s->vad_start, s->orig_start};
        m->pts[m->n_pts++] = (map_point){s->vad_end, s->orig_end};
        if (out)
            memcpy(out + offset, pcm + a, (size_t)(b - a) * sizeof *out);
        offset += b - a;
        if (!last) {
            m->pts[m->n_pts++] = (map_point){samples_to_cs(offset), s->orig_end};
            m->pts[m->n_pts++] = (map_point){samples_to_cs(offset + SILENCE), segs[i + 1].start};
            offset += SILENCE; /* out is zeroed */
        }
    }
    return offset;
}

int wkv_vad_filter(const float *pcm, size_t n, const wkv_vad_segment *segs, int n_segs,
                   const wkv_vad_params *p, float **out, size_t *n_out, wkv_vad_map **map,
                   char **error)
{
    *out = NULL;
    *n_out = 0;
    *map = NULL;
    const char *bad = wkv_vad_params_check(p);
    if (bad || n_segs < 0 || (n_segs > 0 && !segs) || (n > 0 && !pcm)) {
        wkv__set_error(error, "%s", bad ? bad : "bad arguments to wkv_vad_filter");
        return -1;
    }
    for (int i = 0; i < n_segs; i++)
        if (segs[i].start < 0 || segs[i].end < segs[i].start ||
            segs[i].end > (int64_t)1 << 40) {
            wkv__set_error(error, "speech segment %d is not a valid time range", i);
            return -1;
        }
    wkv_vad_map *m = wkv__calloc(1, sizeof *m);
    if (!m)
        goto oom;
    *map = m;
    if (n_segs == 0 || n == 0)
        return 0;
    m->pts = wkv__malloc((size_t)n_segs * 4 * sizeof *m->pts);
    m->segs = wkv__malloc((size_t)n_segs * sizeof *m->segs);
    if (!m->pts || !m->segs)
        goto oom;
    const int64_t overlap = (int64_t)(p->samples_overlap * WKV_SAMPLE_RATE);
    int64_t len = copy_pieces(pcm, (int64_t)n, segs, n_segs, overlap, NULL, m);
    if (len > 0) {
        float *buf = wkv__calloc((size_t)len, sizeof *buf);
        if (!buf)
            goto oom;
        m->n_pts = m->n_segs = 0;
        copy_pieces(pcm, (int64_t)n, segs, n_segs, overlap, buf, m);
        *out = buf;
        *n_out = (size_t)len;
    }
    sort_unique(m);
    return 0;
oom:
    wkv_vad_map_free(m);
    *map = NULL;
    wkv__set_error(error, "out of memory for the VAD-filtered audio");
    return -1;
}

void wkv_vad_map_free(wkv_vad_map *m)
{
    if (!m)
        return;
    wkv__free(m->pts);
    wkv__free(m->segs);
    wkv__free(m);
}

/* map_processed_to_original_time */
static int64_t map_table(const wkv_vad_map *m, int64_t t)
{
    if (m->n_pts == 0)
        return t;
    if (t <= m->pts[0].processed)
        return m->pts[0].original;
    if (t >= m->pts[m->n_pts - 1].processed)
        return m->pts[m->n_pts - 1].original;
    int lo = 0, hi = m->n_pts - 1; /* first point with processed >= t */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (m->pts[mid].processed < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    const map_point *u = &m->pts[lo], *l = u - 1;
    if (u->processed == t)
        return u->original;
    return l->original + (t - l->processed) * (u->original - l->original) /
                             (u->processed - l->processed);
}

void wkv_vad_map_segment(const wkv_vad_map *m, int64_t t0, int64_t t1, int64_t *o0, int64_t *o1)
{
    *o0 = map_table(m, t0);
    *o1 = map_table(m, t1);
    if (m->n_pts > 0 && *o1 - *o0 < 10) /* whisper.cpp's minimum segment: 0.1 s */
        *o1 = *o0 + 10;
}

/* whisper_map_token_time_segment_aware */
static int64_t map_by_segment(const wkv_vad_map *m, int64_t t)
{
    if (m->n_segs == 0)
        return t;
    if (t <= m->segs[0].vad_start)
        return m->segs[0].orig_start;
    if (t >= m->segs[m->n_segs - 1].vad_end)
        return m->segs[m->n_segs - 1].orig_end;
    for (int i = 0; i < m->n_segs; i++) {
        const map_seg *s = &m->segs[i];
        if (t >= s->vad_start && t <= s->vad_end) {
            int64_t vd = s->vad_end - s->vad_start;
            if (vd <= 0)
                return s->orig_start;
            return s->orig_start + (t - s->vad_start) * (s->orig_end - s->orig_start) / vd;
        }
        if (i + 1 < m->n_segs && t > s->vad_end && t < s[1].vad_start) {
            int64_t mid = (s->vad_end + s[1].vad_start) / 2;
            return t <= mid ? s->orig_end : s[1].orig_start;
        }
    }
    return t;
}

void wkv_vad_map_token(const wkv_vad_map *m, int64_t t0, int64_t t1, int64_t *o0, int64_t *o1)
{
    *o0 = map_by_segment(m, t0);
    *o1 = map_by_segment(m, t1);
    if (m->n_segs > 0 && *o1 < *o0 + 1)
        *o1 = *o0 + 1;
}

static int64_t to_cs(double s)
{
    return llround(s * 100.0);
}

void wkv_vad_map_result(const wkv_vad_map *m, const wkv_segment *seg, wkv_segment *out,
                        wkv_word *words)
{
    *out = *seg;
    int64_t a, b, unused;
    wkv_vad_map_segment(m, to_cs(seg->start), to_cs(seg->end), &a, &b);
    out->start = (double)a / 100.0;
    out->end = (double)b / 100.0;
    wkv_vad_map_segment(m, seg->seek, seg->seek, &out->seek, &unused);
    if (seg->n_words <= 0 || !words)
        return;
    for (int i = 0; i < seg->n_words; i++) {
        words[i] = seg->words[i];
        wkv_vad_map_token(m, to_cs(seg->words[i].start), to_cs(seg->words[i].end), &a, &b);
        words[i].start = (double)a / 100.0;
        words[i].end = (double)b / 100.0;
    }
    out->words = words;
}
