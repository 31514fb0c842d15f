/* --from-json: segments (and their words) read back from -o json and handed to the same
 * writers as a transcription's.  Every member read is type-checked; a document that is
 * not ours fails with the path of the first bad member. */
#include "cli_from_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "word_options.h"

/* The number `name` of obj into *v (integers too); FALSE if absent or not a number. */
static gboolean get_number(JsonObject *obj, const char *name, double *v)
{
    JsonNode *n = json_object_get_member(obj, name);
    if (!n || !JSON_NODE_HOLDS_VALUE(n))
        return FALSE;
    GType t = json_node_get_value_type(n);
    if (t == G_TYPE_DOUBLE)
        *v = json_node_get_double(n);
    else if (t == G_TYPE_INT64)
        *v = (double)json_node_get_int(n);
    else
        return FALSE;
    return isfinite(*v);
}

/* The string `name` of obj, NULL if absent or not a string. */
static const char *get_string(JsonObject *obj, const char *name)
{
    JsonNode *n = json_object_get_member(obj, name);
    if (!n || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
        return NULL;
    return json_node_get_string(n);
}

/* The array `name` of obj, NULL if absent or not an array. */
static JsonArray *get_array(JsonObject *obj, const char *name)
{
    JsonNode *n = json_object_get_member(obj, name);
    return n && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

/* What one segment needs while the writers read it. */
typedef struct {
    wkv_segment seg;
    int *tokens;
    wkv_word *words;
} seg_buf;

static void seg_buf_clear(seg_buf *b)
{
    g_free(b->tokens);
    g_free(b->words);
    memset(b, 0, sizeof *b);
}

/* segments[i] into b; FALSE with a message naming the member. */
static gboolean read_segment(JsonArray *segs, guint i, gboolean want_words, seg_buf *b,
                             char **msg)
{
    JsonNode *node = json_array_get_element(segs, i);
    JsonObject *o = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
    wkv_segment *s = &b->seg;
    if (!o) {
        *msg = g_strdup_printf("segments[%u] is not an object", i);
        return FALSE;
    }
    s->text = get_string(o, "text");
    if (!get_number(o, "start", &s->start) || !get_number(o, "end", &s->end) || !s->text) {
        *msg = g_strdup_printf("segments[%u] needs numbers start and end and a string text",
                               i);
        return FALSE;
    }
    double v;
    s->seek = get_number(o, "seek", &v) && v >= 0 && v < 1e15 ? (int64_t)v : 0;
    s->avg_logprob = get_number(o, "avg_logprob", &v) ? v : NAN;
    s->no_speech_prob = get_number(o, "no_speech_prob", &v) ? v : NAN;
    s->compression_ratio = get_number(o, "compression_ratio", &v) ? v : NAN;
    s->temperature = get_number(o, "temperature", &v) ? v : NAN;
    s->language = get_string(o, "language");
    JsonArray *tokens = get_array(o, "tokens");
    guint nt = tokens ? json_array_get_length(tokens) : 0;
    if (nt > 448 * 64) { /* far more than any window decodes */
        *msg = g_strdup_printf("segments[%u].tokens: %u tokens", i, nt);
        return FALSE;
    }
    b->tokens = g_new0(int, nt + 1);
    for (guint k = 0; k < nt; k++) {
        JsonNode *t = json_array_get_element(tokens, k);
        if (!JSON_NODE_HOLDS_VALUE(t) || json_node_get_value_type(t) != G_TYPE_INT64 ||
            json_node_get_int(t) < 0 || json_node_get_int(t) > G_MAXINT) {
            *msg = g_strdup_printf("segments[%u].tokens[%u] is not a token id", i, k);
            return FALSE;
        }
        b->tokens[k] = (int)json_node_get_int(t);
    }
    s->tokens = b->tokens;
    s->n_tokens = (int)nt;
    if (!want_words)
        return TRUE;
    JsonArray *words = get_array(o, "words");
    if (!words) {
        *msg = g_strdup_printf("segments[%u] has no words (the document was written "
                               "without --word-timestamps)", i);
        return FALSE;
    }
    guint nw = json_array_get_length(words);
    if (nw > G_MAXINT / 2) {
        *msg = g_strdup_printf("segments[%u].words: %u words", i, nw);
        return FALSE;
    }
    b->words = g_new0(wkv_word, nw + 1);
    for (guint k = 0; k < nw; k++) {
        JsonNode *wn = json_array_get_element(words, k);
        JsonObject *w = JSON_NODE_HOLDS_OBJECT(wn) ? json_node_get_object(wn) : NULL;
        wkv_word *d = &b->words[k];
        double p = 0;
        d->word = w ? get_string(w, "word") : NULL;
        if (!d->word || !get_number(w, "start", &d->start) || !get_number(w, "end", &d->end) ||
            !get_number(w, "probability", &p)) {
            *msg = g_strdup_printf("segments[%u].words[%u] needs a string word and numbers "
                                   "start, end and probability", i, k);
            return FALSE;
        }
        d->probability = (float)p;
    }
    s->words = b->words;
    s->n_words = (int)nw;
    return TRUE;
}

/* The document's segments to the writer (NULL: only checks them); FALSE with a
 * message. */
static gboolean write_all(JsonObject *root, cli_output *out, gboolean want_words, char **msg)
{
    JsonArray *segs = get_array(root, "segments");
    if (!segs) {
        *msg = g_strdup("no segments array: not a document of -o json");
        return FALSE;
    }
    if (out)
        cli_output_begin(out);
    guint n = json_array_get_length(segs);
    for (guint i = 0; i < n; i++) {
        seg_buf b = {0};
        gboolean ok = read_segment(segs, i, want_words, &b, msg);
        if (ok && out)
            cli_output_segment(out, &b.seg);
        seg_buf_clear(&b);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

int cli_from_json_run(const cli_args *a, char **msg)
{
    JsonParser *parser = json_parser_new_immutable();
    GError *gerr = NULL;
    if (!json_parser_load_from_file(parser, a->file, &gerr)) {
        *msg = g_strdup(gerr->message); /* it names the file */
        g_error_free(gerr);
        g_object_unref(parser);
        return 1;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        *msg = g_strdup_printf("%s: not a JSON object", a->file);
        g_object_unref(parser);
        return 1;
    }
    JsonObject *obj = json_node_get_object(root);
    cue_options cues;
    gboolean want_words = cli_word_options_cues(&cues);
    char *bad = NULL;
    /* the whole document checked before anything is written: a bad one writes nothing */
    if (!write_all(obj, NULL, want_words, &bad)) {
        *msg = g_strdup_printf("%s: %s", a->file, bad);
        g_free(bad);
        g_object_unref(parser);
        return 1;
    }
    FILE *f = stdout;
    if (a->output_file && strcmp(a->output_file, "-") != 0 &&
        !(f = g_fopen(a->output_file, "w"))) {
        *msg = g_strdup_printf("cannot write '%s': %s", a->output_file, g_strerror(errno));
        g_object_unref(parser);
        return 1;
    }
    cli_output *out = cli_output_new(a->format, f);
    if (want_words) {
        const char *heads = get_string(obj, "alignment_heads");
        cli_output_set_words(out, &cues, heads ? heads : "default");
    }
    int st = 0;
    write_all(obj, out, want_words, &bad); /* checked above */
    /* the format's end needs no model (txt, srt and vtt) */
    if (!cli_output_finish(out, NULL, NULL, 0, NULL)) {
        *msg = g_strdup_printf("cannot write '%s': %s",
                               a->output_file ? a->output_file : "stdout",
                               g_strerror(errno));
        st = 1;
    }
    cli_output_free(out);
    if (f != stdout && fclose(f) != 0 && st == 0) {
        *msg = g_strdup_printf("cannot write '%s': %s", a->output_file, g_strerror(errno));
        st = 1;
    }
    g_object_unref(parser);
    return st;
}
