/* core/vad*.c against whisper.cpp 1.9.3's Silero VAD (shared/testvectors/vad/):
 * probabilities within 1e-3 of whisper.cpp's on jfk, gb0 and synth-gaps, the speech
 * segments of every parameter set equal to the centisecond, streaming in arbitrary
 * pieces (two streams interleaved on one model) bitwise equal to the whole input,
 * the VAD-filtered audio and both timestamp mappings of mapping-gb0.json, and the
 * loader's refusals (truncated, corrupted, a Whisper model, NaN weights) each a
 * clear message naming the file and offset.
 * usage: test_vad WHISPER_MODEL (any Whisper ggml file, to be refused) */
#include "testutil.h"
#include "wav.h"
#include "whisperkv.h"

#include <float.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_REL "models/for-tests-silero-v6.2.0-ggml.bin"

static JsonObject *load_json(JsonParser **parser, const char *rel)
{
    GError *err = NULL;
    *parser = json_parser_new();
    if (!json_parser_load_from_file(*parser, tu_shared_path(rel), &err)) {
        fprintf(stderr, "%s: %s\n", rel, err->message);
        exit(1);
    }
    return json_node_get_object(json_parser_get_root(*parser));
}

static wav_data read_wav(const char *rel)
{
    wav_data w;
    char err[256];
    if (wav_read(tu_shared_path(rel), &w, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", rel, err);
        exit(1);
    }
    return w;
}

static void params_from_json(JsonObject *o, wkv_vad_params *p)
{
    p->threshold = (float)json_object_get_double_member(o, "threshold");
    p->min_speech_duration_ms = (int)json_object_get_int_member(o, "min_speech_duration_ms");
    p->min_silence_duration_ms = (int)json_object_get_int_member(o, "min_silence_duration_ms");
    p->speech_pad_ms = (int)json_object_get_int_member(o, "speech_pad_ms");
    p->samples_overlap = (float)json_object_get_double_member(o, "samples_overlap");
    JsonNode *max = json_object_get_member(o, "max_speech_duration_s");
    p->max_speech_duration_s = JSON_NODE_HOLDS_NULL(max) ? FLT_MAX : (float)json_node_get_double(max);
}

/* The segments of probs under one run's parameters against its segments_cs. */
static void check_segments(const char *name, const char *which, const float *probs, int64_t n,
                           JsonObject *run)
{
    wkv_vad_params p;
    params_from_json(json_object_get_object_member(run, "params"), &p);
    JsonArray *want = json_object_get_array_member(run, "segments_cs");
    wkv_vad_segment *segs;
    char *error = NULL;
    int got = wkv_vad_segments(probs, n, &p, &segs, &error);
    int nw = (int)json_array_get_length(want);
    CHECK(got == nw, "%s (%s probs, min silence %d, max speech %g): %d segments, expected %d",
          name, which, p.min_silence_duration_ms, p.max_speech_duration_s, got, nw);
    for (int i = 0; i < got && i < nw; i++) {
        JsonArray *w = json_array_get_array_element(want, (guint)i);
        int64_t ws = json_array_get_int_element(w, 0), we = json_array_get_int_element(w, 1);
        CHECK(segs[i].start == ws && segs[i].end == we,
              "%s (%s probs): segment %d is [%lld, %lld] cs, expected [%lld, %lld]", name, which,
              i, (long long)segs[i].start, (long long)segs[i].end, (long long)ws, (long long)we);
    }
    free(segs);
    free(error);
}

/* Probabilities and every run's segments of one vector file. */
static void check_vectors(const wkv_vad_model *m, const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "testvectors/vad/%s.json", name);
    JsonParser *parser;
    JsonObject *o = load_json(&parser, rel);
    wav_data w = read_wav(json_object_get_string_member(o, "wav"));
    CHECK((int64_t)w.n == json_object_get_int_member(o, "n_samples"), "%s: %zu samples", name, w.n);
    snprintf(rel, sizeof rel, "testvectors/vad/%s.probs.f32", name);
    size_t n_ref;
    float *ref = tu_read_f32(tu_shared_path(rel), &n_ref);
    CHECK(ref != NULL, "%s missing", rel);
    float *probs;
    char *error = NULL;
    int64_t n = wkv_vad_probs(m, w.samples, w.n, &probs, &error);
    CHECK(n == json_object_get_int_member(o, "n_probs") && (size_t)n == n_ref,
          "%s: %lld probabilities, expected %zu", name, (long long)n, n_ref);
    if (ref && n == (int64_t)n_ref) {
        double max = tu_max_abs_err(probs, ref, n_ref), sum = 0;
        for (size_t i = 0; i < n_ref; i++)
            sum += fabs(probs[i] - ref[i]);
        printf("%s: %zu probabilities, max |diff| %.2e, mean %.2e\n", name, n_ref, max,
               sum / n_ref);
        CHECK(max <= 1e-3, "%s: probabilities differ by %.3e (tolerance 1e-3)", name, max);
        JsonArray *runs = json_object_get_array_member(o, "runs");
        for (guint r = 0; r < json_array_get_length(runs); r++) {
            JsonObject *run = json_array_get_object_element(runs, r);
            check_segments(name, "whisper.cpp's", ref, n, run);
            check_segments(name, "our", probs, n, run);
            /* whisper.cpp truncates max_speech_duration_s to whole seconds: x.9 s
             * must give the segments of x s */
            JsonObject *par = json_object_get_object_member(run, "params");
            JsonNode *max = json_object_get_member(par, "max_speech_duration_s");
            if (!JSON_NODE_HOLDS_NULL(max)) {
                json_object_set_double_member(par, "max_speech_duration_s",
                                              json_node_get_double(max) + 0.9);
                check_segments(name, "whisper.cpp's, max speech + 0.9 s,", ref, n, run);
            }
        }
    }
    free(probs);
    free(ref);
    free(error);
    wav_free(&w);
    g_object_unref(parser);
}

/* Two streams on the same model, fed interleaved in pieces of 0 to 2999 samples,
 * give exactly the probabilities of each whole input. */
static void check_streaming(const wkv_vad_model *m)
{
    wav_data a = read_wav("speech/jfk/jfk.wav"), b = read_wav("testvectors/vad/synth-gaps.wav");
    const wav_data *in[2] = {&a, &b};
    float *whole[2], *got[2];
    int64_t nw[2];
    size_t ng[2] = {0, 0}, pos[2] = {0, 0};
    wkv_vad_stream *s[2];
    for (int k = 0; k < 2; k++) {
        nw[k] = wkv_vad_probs(m, in[k]->samples, in[k]->n, &whole[k], NULL);
        got[k] = calloc(WKV_VAD_MAX_PROBS(in[k]->n) + 1, sizeof(float));
        s[k] = wkv_vad_stream_new(m, NULL);
    }
    uint32_t seed = 12345;
    while (pos[0] < a.n || pos[1] < b.n) {
        for (int k = 0; k < 2; k++) {
            seed = seed * 1664525u + 1013904223u;
            size_t piece = (seed >> 8) % 3000;
            if (piece > in[k]->n - pos[k])
                piece = in[k]->n - pos[k];
            ng[k] += wkv_vad_push(s[k], in[k]->samples + pos[k], piece, got[k] + ng[k]);
            pos[k] += piece;
            CHECK(wkv_vad_pending(s[k]) == (int)(pos[k] % WKV_VAD_CHUNK), "pending samples");
        }
    }
    for (int k = 0; k < 2; k++) {
        ng[k] += (size_t)wkv_vad_finish(s[k], got[k] + ng[k]);
        CHECK((int64_t)ng[k] == nw[k], "stream %d: %zu probabilities, whole input %lld", k, ng[k],
              (long long)nw[k]);
        CHECK((int64_t)ng[k] == nw[k] && !memcmp(got[k], whole[k], ng[k] * sizeof(float)),
              "stream %d: the probabilities differ from the whole input's", k);
        float dummy;
        CHECK(wkv_vad_finish(s[k], &dummy) == 0, "a second finish gives nothing");
        /* reset: the same input again gives the same first probability */
        wkv_vad_stream_reset(s[k]);
        float p0;
        CHECK(wkv_vad_push(s[k], in[k]->samples, WKV_VAD_CHUNK, &p0) == 1 && p0 == whole[k][0],
              "stream %d after reset: first probability differs", k);
        wkv_vad_stream_free(s[k]);
        free(whole[k]);
        free(got[k]);
    }
    wav_free(&a);
    wav_free(&b);
}

static int64_t jint(JsonArray *a, guint i)
{
    return json_array_get_int_element(a, i);
}

/* mapping-gb0.json: the filtered audio, the table points, segment and token times. */
static void check_mapping(void)
{
    JsonParser *parser;
    JsonObject *o = load_json(&parser, "testvectors/vad/mapping-gb0.json");
    wav_data w = read_wav(json_object_get_string_member(o, "wav"));
    JsonArray *vs = json_object_get_array_member(o, "vad_segments_cs");
    int n_segs = (int)json_array_get_length(vs);
    wkv_vad_segment *segs = calloc((size_t)n_segs, sizeof *segs);
    for (int i = 0; i < n_segs; i++) {
        JsonArray *x = json_array_get_array_element(vs, (guint)i);
        segs[i].start = jint(x, 0);
        segs[i].end = jint(x, 1);
    }
    wkv_vad_params p;
    wkv_vad_params_default(&p);
    float *f;
    size_t nf;
    wkv_vad_map *map;
    char *error = NULL;
    CHECK(wkv_vad_filter(w.samples, w.n, segs, n_segs, &p, &f, &nf, &map, &error) == 0, "filter: %s",
          error ? error : "");
    JsonObject *fo = json_object_get_object_member(o, "filtered");
    CHECK((int64_t)nf == json_object_get_int_member(fo, "n_samples"), "filtered: %zu samples", nf);
    JsonArray *pieces = json_object_get_array_member(fo, "pieces");
    size_t covered = 0;
    for (guint i = 0; i < json_array_get_length(pieces) && f; i++) {
        JsonArray *x = json_array_get_array_element(pieces, i);
        int64_t a = jint(x, 0), b = jint(x, 1), at = jint(x, 2);
        CHECK(at + (b - a) <= (int64_t)nf &&
                  !memcmp(f + at, w.samples + a, (size_t)(b - a) * sizeof(float)),
              "piece %u [%lld, %lld) -> %lld not copied", i, (long long)a, (long long)b, (long long)at);
        covered += (size_t)(b - a);
        if (i + 1 < json_array_get_length(pieces))
            for (int k = 0; k < 1600 && at + (b - a) + k < (int64_t)nf; k++)
                if (f[at + (b - a) + k] != 0.0f) {
                    CHECK(0, "piece %u: no silence after it", i);
                    break;
                }
    }
    CHECK(covered + 1600 * (json_array_get_length(pieces) - 1) == nf, "pieces do not fill it");
    JsonArray *table = json_object_get_array_member(o, "table");
    for (guint i = 0; i < json_array_get_length(table); i++) {
        JsonArray *x = json_array_get_array_element(table, i);
        int64_t o0, o1;
        wkv_vad_map_segment(map, jint(x, 0), jint(x, 0) + 1000, &o0, &o1);
        CHECK(o0 == jint(x, 1), "table point %u: %lld -> %lld, expected %lld", i,
              (long long)jint(x, 0), (long long)o0, (long long)jint(x, 1));
    }
    static const char *const kinds[2] = {"segment_times", "token_times"};
    for (int k = 0; k < 2; k++) {
        JsonArray *t = json_object_get_array_member(o, kinds[k]);
        CHECK(json_array_get_length(t) > 0, "%s: none", kinds[k]);
        for (guint i = 0; i < json_array_get_length(t); i++) {
            JsonArray *x = json_array_get_array_element(t, i);
            int64_t o0, o1;
            (k ? wkv_vad_map_token : wkv_vad_map_segment)(map, jint(x, 0), jint(x, 1), &o0, &o1);
            CHECK(o0 == jint(x, 2) && o1 == jint(x, 3),
                  "%s %u: [%lld, %lld] -> [%lld, %lld], expected [%lld, %lld]", kinds[k], i,
                  (long long)jint(x, 0), (long long)jint(x, 1), (long long)o0, (long long)o1,
                  (long long)jint(x, 2), (long long)jint(x, 3));
        }
    }
    wkv_vad_map_free(map);
    free(f);
    free(segs);
    free(error);
    wav_free(&w);
    g_object_unref(parser);
}

/* ---------------------------------------------------------------- loader */

static uint8_t *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*n);
    if (b && fread(b, 1, *n, f) != *n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

static void put_i32(uint8_t *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(u >> (8 * i));
}

/* Loading `data` must fail with a message that holds `want` (and an offset). */
static void expect_refused(const uint8_t *data, size_t n, const char *what, const char *want)
{
    char *error = NULL;
    wkv_vad_model *m = wkv_vad_model_load_memory(data, n, &error);
    CHECK(m == NULL, "%s: loaded", what);
    CHECK(error && strstr(error, "(memory): offset ") && (!want || strstr(error, want)),
          "%s: message \"%s\" lacks \"%s\"", what, error ? error : "(none)", want ? want : "");
    wkv_vad_model_free(m);
    free(error);
}

static void check_loader(const char *whisper_model)
{
    size_t n;
    uint8_t *file = read_all(tu_shared_path(MODEL_REL), &n);
    CHECK(file && n == 885098, "%s: %zu bytes", MODEL_REL, file ? n : 0);
    if (!file)
        return;
    uint8_t *b = malloc(n);
    char *error = NULL;
    wkv_vad_model *m = wkv_vad_model_load_memory(file, n, &error);
    CHECK(m != NULL, "from memory: %s", error ? error : "");
    wkv_vad_model_free(m);

    /* truncated anywhere: every header byte, around every record, then a stride */
    static const size_t records[] = {106, 99238, 99800, 149012, 149318, 173954, 174260, 223472,
                                     224034, 486226, 748418, 750508, 752598, 752901, 752946};
    for (size_t cut = 0; cut < 160; cut++)
        expect_refused(file, cut, "truncated header", cut ? "offset" : NULL);
    for (size_t r = 1; r < sizeof records / sizeof *records; r++)
        for (size_t d = 0; d < 60; d += 7)
            expect_refused(file, records[r] + d, "truncated at a record", "offset");
    for (size_t cut = 1000; cut < n; cut += 40961)
        expect_refused(file, cut, "truncated", "offset");
    expect_refused(file, n - 1, "one byte short", "unexpected end of file");

    struct {
        size_t at;
        int32_t v;
        const char *what, *want;
    } bad[] = {
        {0, 0x46554747, "GGUF magic", "GGUF"},
        {4, 51864, "a Whisper n_vocab", "Whisper model"},
        {4, 9, "model type length", "model type length"},
        {30, 1024, "n_window", "n_window is 1024"},
        {38, 5, "n_encoder_layers", "n_encoder_layers"},
        {46, 64, "a layer's out_channels", "out_channels"},
        {102, 2, "final_conv_out", "final_conv_out"},
        {106, 5, "n_dims", "n_dims"},
        {106, 2, "n_dims other", "unknown tensor"},
        {110, 100000, "name length", "name length"},
        {114, 0, "F32 for an F16 tensor", "type 0"},
        {114, 8, "a quantized type", "type 8"},
        {118, 4, "ne", "wrong shape"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memcpy(b, file, n);
        put_i32(b + bad[i].at, bad[i].v);
        expect_refused(b, n, bad[i].what, bad[i].want);
    }
    memcpy(b, file, n);
    b[10] = 'X'; /* silero-16k -> siXero-16k */
    expect_refused(b, n, "model type", "model type \"siXero-16k\"");
    memcpy(b, file, n);
    b[130] = 'Y'; /* in the first tensor's name */
    expect_refused(b, n, "tensor name", "unknown tensor");
    memcpy(b, file, n);
    b[224034 + 12 + 8 + 28] = 0; /* "_model.decoder.rnn.weight_ih" -> ".._hh": twice */
    b[224034 + 12 + 8 + 26] = 'h';
    expect_refused(b, n, "duplicate", "twice");
    memcpy(b, file, n);
    b[99238 - 2] = 0x00; /* the last f16 of encoder 0's weight: NaN */
    b[99238 - 1] = 0x7e;
    expect_refused(b, n, "NaN weight", "not finite");
    expect_refused(file, 106, "header only", "no tensors");

    /* a Whisper model given as the VAD model: refused, naming the file */
    error = NULL;
    m = wkv_vad_model_load(whisper_model, &error);
    CHECK(!m && error && strstr(error, whisper_model) && strstr(error, "Whisper model"),
          "Whisper model as VAD: %s", error ? error : "(loaded)");
    wkv_vad_model_free(m);
    free(error);
    error = NULL;
    m = wkv_vad_model_load("/nonexistent/vad.bin", &error);
    CHECK(!m && error && strstr(error, "/nonexistent/vad.bin"), "missing file: %s",
          error ? error : "(loaded)");
    free(error);

    /* any single corrupted byte of the header and first record: loads or refuses */
    uint32_t seed = 99;
    for (int i = 0; i < 400; i++) {
        memcpy(b, file, n);
        seed = seed * 1664525u + 1013904223u;
        b[(seed >> 8) % 300] ^= (uint8_t)(1 + (seed >> 24) % 255);
        error = NULL;
        m = wkv_vad_model_load_memory(b, n, &error);
        CHECK(m || (error && strstr(error, "offset")), "flip %d: no message", i);
        wkv_vad_model_free(m);
        free(error);
    }
    free(b);
    free(file);
}

/* jfk.wav with whisper.cpp's default VAD parameters (whisper_full with params.vad):
 * segment times interpolate on the table (overlap held at the segment's end, the
 * inserted silence spanning the pause); token times snap to the nearer edge of the
 * hole, its midpoint (195 + 215) / 2 = 205 going to the end. */
static void check_jfk_mapping(void)
{
    wav_data w = read_wav("speech/jfk/jfk.wav");
    const wkv_vad_segment segs[4] = {{32, 227}, {327, 441}, {538, 768}, {816, 1062}};
    wkv_vad_params p;
    wkv_vad_params_default(&p);
    float *f;
    size_t nf;
    wkv_vad_map *map;
    CHECK(wkv_vad_filter(w.samples, w.n, segs, 4, &p, &f, &nf, &map, NULL) == 0, "jfk filter");
    CHECK(nf == 135200, "jfk filtered: %zu samples", nf);
    static const int64_t seg_in[][2] = {{100, 132}, {200, 227}, {210, 277}, {900, 1062}, {0, 32}};
    for (size_t i = 0; i < sizeof seg_in / sizeof *seg_in; i++) {
        int64_t o0, o1;
        wkv_vad_map_segment(map, seg_in[i][0], seg_in[i][0], &o0, &o1);
        CHECK(o0 == seg_in[i][1] && o1 == o0 + 10, "jfk segment time %lld -> %lld (%lld)",
              (long long)seg_in[i][0], (long long)o0, (long long)o1);
    }
    static const int64_t tok_in[][2] = {{210, 327}, {205, 227}, {206, 327}, {196, 227}, {100, 132}};
    for (size_t i = 0; i < sizeof tok_in / sizeof *tok_in; i++) {
        int64_t o0, o1;
        wkv_vad_map_token(map, tok_in[i][0], tok_in[i][0], &o0, &o1);
        CHECK(o0 == tok_in[i][1] && o1 == o0 + 1, "jfk token time %lld -> %lld (%lld)",
              (long long)tok_in[i][0], (long long)o0, (long long)o1);
    }
    wkv_vad_map_free(map);
    free(f);
    wav_free(&w);
}

/* Edge inputs: no audio, one sample, no segments to filter, a push of nothing. */
static void check_edges(const wkv_vad_model *m)
{
    float *probs = (float *)1, one = 0.25f, p;
    CHECK(wkv_vad_probs(m, NULL, 0, &probs, NULL) == 0 && probs == NULL, "no audio: probabilities");
    CHECK(wkv_vad_probs(m, &one, 1, &probs, NULL) == 1 && probs[0] >= 0 && probs[0] <= 1,
          "one sample: one probability");
    free(probs);
    wkv_vad_stream *s = wkv_vad_stream_new(m, NULL);
    CHECK(wkv_vad_push(s, NULL, 0, &p) == 0 && wkv_vad_finish(s, &p) == 0, "empty stream");
    wkv_vad_stream_free(s);
    wkv_vad_params prm;
    wkv_vad_params_default(&prm);
    float *f = (float *)1;
    size_t nf = 1;
    wkv_vad_map *map = NULL;
    CHECK(wkv_vad_filter(&one, 1, NULL, 0, &prm, &f, &nf, &map, NULL) == 0 && !f && nf == 0 && map,
          "no segments: nothing to transcribe");
    int64_t o0, o1;
    wkv_vad_map_segment(map, 123, 456, &o0, &o1);
    CHECK(o0 == 123 && o1 == 456, "no segments: times unchanged");
    wkv_vad_map_free(map);
    const wkv_vad_segment bad = {50, 20};
    CHECK(wkv_vad_filter(&one, 1, &bad, 1, &prm, &f, &nf, &map, NULL) == -1, "end before start");
}

typedef struct {
    const wkv_vad_model *m;
    const wav_data *w;
    float *probs;
    int64_t n;
} thread_job;

static void *thread_run(void *arg)
{
    thread_job *j = arg;
    j->n = wkv_vad_probs(j->m, j->w->samples, j->w->n, &j->probs, NULL);
    return NULL;
}

/* One model shared by two threads at once: each gets the single-thread result. */
static void check_threads(const wkv_vad_model *m)
{
    wav_data w = read_wav("speech/jfk/jfk.wav");
    float *ref;
    int64_t n = wkv_vad_probs(m, w.samples, w.n, &ref, NULL);
    thread_job j[2] = {{m, &w, NULL, 0}, {m, &w, NULL, 0}};
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
        CHECK(pthread_create(&t[k], NULL, thread_run, &j[k]) == 0, "pthread_create");
    for (int k = 0; k < 2; k++) {
        pthread_join(t[k], NULL);
        CHECK(j[k].n == n && !memcmp(j[k].probs, ref, (size_t)n * sizeof *ref),
              "thread %d: probabilities differ from one thread's", k);
        free(j[k].probs);
    }
    free(ref);
    wav_free(&w);
}

static void check_params(void)
{
    wkv_vad_params p;
    wkv_vad_params_default(&p);
    CHECK(!wkv_vad_params_check(&p), "defaults refused");
    CHECK(p.threshold == 0.5f && p.min_speech_duration_ms == 250 &&
              p.min_silence_duration_ms == 100 && p.max_speech_duration_s == FLT_MAX &&
              p.speech_pad_ms == 30 && p.samples_overlap == 0.1f,
          "whisper.cpp's defaults");
    p.threshold = NAN;
    CHECK(wkv_vad_params_check(&p) != NULL, "NaN threshold accepted");
    wkv_vad_params_default(&p);
    p.speech_pad_ms = -1;
    wkv_vad_segment *s;
    char *error = NULL;
    float probs[4] = {1, 1, 1, 1};
    CHECK(wkv_vad_segments(probs, 4, &p, &s, &error) == -1 && error, "negative pad accepted");
    free(error);
    wkv_vad_params_default(&p);
    CHECK(wkv_vad_segments(probs, 0, &p, &s, NULL) == 0 && !s, "no probabilities: segments");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_vad WHISPER_MODEL\n");
        return 2;
    }
    tu_require_shared("the Silero VAD model and the VAD vectors");
    char *error = NULL;
    wkv_vad_model *m = wkv_vad_model_load(tu_shared_path(MODEL_REL), &error);
    CHECK(m != NULL, "load: %s", error ? error : "");
    if (!m)
        return tu_finish("vad");
    int v[3];
    wkv_vad_model_version(m, v);
    CHECK(v[0] == 6 && v[1] == 2 && v[2] == 0, "version %d.%d.%d", v[0], v[1], v[2]);
    check_params();
    check_edges(m);
    check_threads(m);
    check_vectors(m, "jfk");
    check_vectors(m, "gb0");
    check_vectors(m, "synth-gaps");
    check_streaming(m);
    check_mapping();
    check_jfk_mapping();
    check_loader(argv[1]);
    wkv_vad_model_free(m);
    return tu_finish("vad");
}
