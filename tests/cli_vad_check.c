/* Reads what test_cli.sh compares for the CLI's VAD options:
 *   cli_vad_check runs VECTORS.json    one line per run: "ARGS|SEGMENTS", the run's
 *                                      cli_args (space-separated) and its segments
 *   cli_vad_check speech OUT.json      the --vad-only JSON: "SEGMENTS|n_probs"; fails
 *                                      unless "vad" has n_probs and every parameter
 *   cli_vad_check within OUT.json VECTORS.json
 *                                      the transcription's segments each start inside
 *                                      a speech segment of the vectors' first run and
 *                                      end inside one or within 0.1 s after it; so do
 *                                      their words (start within 0.1 s after one too)
 *   cli_vad_check probs DUMP.f32 REF.f32  max |diff| <= 1e-3, same count
 *   cli_vad_check pauses JFK LDC OUT.wav  writes scripts/pauses-wav.py's recording
 *                                      (JFK, 15 s of zeros, LDC, 15 s of zeros, JFK)
 *                                      and prints its zero stretches "A-B C-D" (s)
 *   cli_vad_check quiet OUT.json A-B [C-D ...]
 *                                      --live JSON: it has a "live" summary with runs,
 *                                      at least one segment, and no segment starts or
 *                                      ends inside a stretch (0.2 s in from its edges)
 * SEGMENTS is "start-end start-end ..." in seconds with two decimals.  Exit status 0
 * when all holds, 1 otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "wav.h"

static JsonObject *load(JsonParser *p, const char *path)
{
    GError *err = NULL;
    if (!json_parser_load_from_file(p, path, &err)) {
        fprintf(stderr, "cli_vad_check: %s: %s\n", path, err->message);
        exit(1);
    }
    JsonNode *root = json_parser_get_root(p);
    if (!JSON_NODE_HOLDS_OBJECT(root)) {
        fprintf(stderr, "cli_vad_check: %s: not an object\n", path);
        exit(1);
    }
    return json_node_get_object(root);
}

static void print_segments(JsonArray *a)
{
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *s = json_array_get_object_element(a, i);
        printf("%s%.2f-%.2f", i ? " " : "", json_object_get_double_member(s, "start"),
               json_object_get_double_member(s, "end"));
    }
}

static int runs(const char *path)
{
    JsonParser *p = json_parser_new();
    JsonArray *r = json_object_get_array_member(load(p, path), "runs");
    for (guint i = 0; i < json_array_get_length(r); i++) {
        JsonObject *run = json_array_get_object_element(r, i);
        JsonArray *args = json_object_get_array_member(run, "cli_args");
        for (guint k = 0; k < json_array_get_length(args); k++)
            printf("%s%s", k ? " " : "", json_array_get_string_element(args, k));
        printf("|");
        print_segments(json_object_get_array_member(run, "segments"));
        printf("\n");
    }
    g_object_unref(p);
    return 0;
}

static int speech(const char *path)
{
    static const char *const params[] = {"threshold", "min_speech_duration_ms",
                                         "min_silence_duration_ms", "max_speech_duration_s",
                                         "speech_pad_ms", "samples_overlap"};
    JsonParser *p = json_parser_new();
    JsonObject *o = load(p, path);
    JsonObject *vad = json_object_has_member(o, "vad") ? json_object_get_object_member(o, "vad") : NULL;
    JsonArray *sp = json_object_has_member(o, "speech") ? json_object_get_array_member(o, "speech") : NULL;
    int ok = vad && sp && json_object_has_member(vad, "n_probs");
    for (size_t i = 0; ok && i < G_N_ELEMENTS(params); i++)
        ok = json_object_has_member(vad, params[i]);
    if (ok) {
        print_segments(sp);
        printf("|%" G_GINT64_FORMAT "\n", json_object_get_int_member(vad, "n_probs"));
    } else {
        fprintf(stderr, "cli_vad_check: %s: no speech array or incomplete vad object\n", path);
    }
    g_object_unref(p);
    return !ok;
}

/* Whether t lies in one of the speech segments sp (5 ms rounding), or up to `after`
 * seconds past its end. */
static int inside(JsonArray *sp, double t, double after)
{
    for (guint k = 0; k < json_array_get_length(sp); k++) {
        JsonObject *v = json_array_get_object_element(sp, k);
        if (t >= json_object_get_double_member(v, "start") - 0.005 &&
            t <= json_object_get_double_member(v, "end") + 0.005 + after)
            return 1;
    }
    return 0;
}

static int within(const char *out, const char *vectors)
{
    JsonParser *p = json_parser_new(), *q = json_parser_new();
    JsonArray *segs = json_object_get_array_member(load(p, out), "segments");
    JsonArray *runs = json_object_get_array_member(load(q, vectors), "runs");
    JsonArray *sp = json_object_get_array_member(json_array_get_object_element(runs, 0), "segments");
    int bad = json_array_get_length(segs) == 0;
    for (guint i = 0; i < json_array_get_length(segs); i++) {
        JsonObject *s = json_array_get_object_element(segs, i);
        double t0 = json_object_get_double_member(s, "start"), t1 = json_object_get_double_member(s, "end");
        if (!inside(sp, t0, 0) || !inside(sp, t1, 0.1)) {
            fprintf(stderr, "cli_vad_check: segment %u [%.2f, %.2f] is outside the speech\n", i, t0, t1);
            bad = 1;
        }
        /* with --word-timestamps the words are mapped onto the input's timeline too */
        JsonArray *words = json_object_has_member(s, "words") ? json_object_get_array_member(s, "words") : NULL;
        guint nw = words ? json_array_get_length(words) : 0;
        if (nw > 0) {
            /* the reference sets a segment's times from its words; whisper.cpp maps
             * segment and token times by different rules (0.14 s apart seen), while
             * words left on the speech-only timeline are off by the silence cut
             * before them (jfk's pauses: about 1 s each) */
            double f = json_object_get_double_member(json_array_get_object_element(words, 0), "start");
            double l = json_object_get_double_member(json_array_get_object_element(words, nw - 1), "end");
            if (fabs(f - t0) > 0.5 || fabs(l - t1) > 0.5) {
                fprintf(stderr, "cli_vad_check: segment %u [%.2f, %.2f] but its words span "
                        "[%.2f, %.2f]\n", i, t0, t1, f, l);
                bad = 1;
            }
        }
        for (guint k = 0; k < nw; k++) {
            JsonObject *w = json_array_get_object_element(words, k);
            double w0 = json_object_get_double_member(w, "start");
            double w1 = json_object_get_double_member(w, "end");
            if (!inside(sp, w0, 0.1) || !inside(sp, w1, 0.1)) {
                fprintf(stderr, "cli_vad_check: segment %u word %u [%.2f, %.2f] is outside the "
                        "speech\n", i, k, w0, w1);
                bad = 1;
            }
        }
    }
    if (!json_array_get_length(segs))
        fprintf(stderr, "cli_vad_check: no segments\n");
    g_object_unref(p);
    g_object_unref(q);
    return bad;
}

static float *read_f32(const char *path, size_t *n)
{
    gchar *data;
    gsize len;
    if (!g_file_get_contents(path, &data, &len, NULL) || len % 4) {
        fprintf(stderr, "cli_vad_check: cannot read %s as f32\n", path);
        exit(1);
    }
    *n = len / 4;
    return (float *)data; /* the test hosts are little-endian, as the files */
}

static int probs(const char *dump, const char *ref)
{
    size_t n, m;
    float *a = read_f32(dump, &n), *b = read_f32(ref, &m);
    double max = n == m ? 0 : INFINITY;
    for (size_t i = 0; i < n && n == m; i++)
        max = fmax(max, fabs((double)a[i] - b[i]));
    printf("%zu probabilities, max |diff| %.2e\n", n, max);
    g_free(a);
    g_free(b);
    return !(max <= 1e-3);
}

static int put_le(FILE *f, unsigned v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        if (fputc((int)((v >> (8 * i)) & 0xff), f) == EOF)
            return -1;
    return 0;
}

static int pauses(const char *jfk_path, const char *ldc_path, const char *out)
{
    wav_data jfk, ldc;
    char err[256];
    if (wav_read(jfk_path, &jfk, err, sizeof err) || wav_read(ldc_path, &ldc, err, sizeof err)) {
        fprintf(stderr, "cli_vad_check: %s\n", err);
        return 1;
    }
    const size_t gap = 15 * 16000;
    const size_t n = 2 * jfk.n + ldc.n + 2 * gap;
    const float *parts[5] = {jfk.samples, NULL, ldc.samples, NULL, jfk.samples};
    const size_t lens[5] = {jfk.n, gap, ldc.n, gap, jfk.n};
    FILE *f = fopen(out, "wb");
    int bad = !f || fputs("RIFF", f) == EOF || put_le(f, (unsigned)(36 + 2 * n), 4) ||
              fputs("WAVEfmt ", f) == EOF || put_le(f, 16, 4) || put_le(f, 1, 2) ||
              put_le(f, 1, 2) || put_le(f, 16000, 4) || put_le(f, 32000, 4) ||
              put_le(f, 2, 2) || put_le(f, 16, 2) || fputs("data", f) == EOF ||
              put_le(f, (unsigned)(2 * n), 4);
    for (int p = 0; p < 5 && !bad; p++)
        for (size_t i = 0; i < lens[p] && !bad; i++) {
            /* the reader gave s16 / 32768: back to the same s16 */
            long v = parts[p] ? lround(parts[p][i] * 32768.0) : 0;
            bad = put_le(f, (unsigned)(v < -32768 ? -32768 : v > 32767 ? 32767 : v) & 0xffff,
                         2);
        }
    if (f && fclose(f) != 0)
        bad = 1;
    if (bad)
        fprintf(stderr, "cli_vad_check: cannot write %s\n", out);
    else
        printf("%.4f-%.4f %.4f-%.4f\n", jfk.n / 16000.0, (jfk.n + gap) / 16000.0,
               (jfk.n + gap + ldc.n) / 16000.0, (jfk.n + 2 * gap + ldc.n) / 16000.0);
    wav_free(&jfk);
    wav_free(&ldc);
    return bad;
}

static int quiet(const char *path, int n_spans, char **spans)
{
    JsonParser *p = json_parser_new();
    JsonObject *root = load(p, path);
    int bad = 0;
    if (!json_object_has_member(root, "live") ||
        !json_object_has_member(json_object_get_object_member(root, "live"), "runs")) {
        fprintf(stderr, "cli_vad_check: %s: no live summary with runs\n", path);
        bad = 1;
    }
    JsonArray *segs = json_object_has_member(root, "segments")
                          ? json_object_get_array_member(root, "segments") : NULL;
    guint n = segs ? json_array_get_length(segs) : 0;
    if (n == 0) {
        fprintf(stderr, "cli_vad_check: %s: no segment\n", path);
        bad = 1;
    }
    for (int k = 0; k < n_spans; k++) {
        double a, b;
        if (sscanf(spans[k], "%lf-%lf", &a, &b) != 2) {
            fprintf(stderr, "cli_vad_check: bad stretch '%s'\n", spans[k]);
            bad = 1;
            continue;
        }
        for (guint i = 0; i < n; i++) {
            JsonObject *s = json_array_get_object_element(segs, i);
            double t[2] = {json_object_get_double_member(s, "start"),
                           json_object_get_double_member(s, "end")};
            for (int j = 0; j < 2; j++)
                if (t[j] > a + 0.2 && t[j] < b - 0.2) {
                    fprintf(stderr, "cli_vad_check: segment %u (%.2f-%.2f '%s') in %s\n", i,
                            t[0], t[1], json_object_get_string_member(s, "text"), spans[k]);
                    bad = 1;
                }
        }
    }
    g_object_unref(p);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "pauses"))
        return pauses(argv[2], argv[3], argv[4]);
    if (argc >= 4 && !strcmp(argv[1], "quiet"))
        return quiet(argv[2], argc - 3, argv + 3);
    if (argc == 3 && !strcmp(argv[1], "runs"))
        return runs(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "speech"))
        return speech(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "within"))
        return within(argv[2], argv[3]);
    if (argc == 4 && !strcmp(argv[1], "probs"))
        return probs(argv[2], argv[3]);
    fprintf(stderr, "usage: cli_vad_check runs|speech|within|probs|pauses|quiet ...\n");
    return 2;
}
