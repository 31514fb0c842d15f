/* --from-json: segments (and their words) read back from -o json and handed to the same
 * writers as a transcription's.  Only what txt, srt and vtt write is read (times, text,
 * language, words); every member read is type-checked, and a document that is not ours
 * fails with the path of the first bad member before anything is written. */
#include "cli_from_json.h"

#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "cli_common.h"
#include "word_options.h"

/* The finite number `name` of obj into *v (integers too); FALSE if absent or not one. */
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

/* The object at i of a, NULL if it is not one. */
static JsonObject *object_at(JsonArray *a, guint i)
{
    JsonNode *n = json_array_get_element(a, i);
    return JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

/* segments[i] into *s (strings point into the document; words into a new *words to
 * g_free); FALSE with a message naming the member. */
static gboolean read_segment(JsonObject *o, guint i, gboolean want_words, wkv_segment *s,
                             wkv_word **words, char **msg)
{
    s->text = o ? get_string(o, "text") : NULL;
    if (!s->text || !get_number(o, "start", &s->start) || !get_number(o, "end", &s->end)) {
        *msg = g_strdup_printf("segments[%u] needs numbers start and end and a string text",
                               i);
        return FALSE;
    }
    s->language = get_string(o, "language");
    if (!want_words)
        return TRUE;
    JsonArray *wa = get_array(o, "words");
    if (!wa) {
        *msg = g_strdup_printf("segments[%u] has no words (the document was written "
                               "without --word-timestamps)", i);
        return FALSE;
    }
    guint nw = json_array_get_length(wa);
    *words = g_new0(wkv_word, nw + 1);
    for (guint k = 0; k < nw; k++) {
        JsonObject *w = object_at(wa, k);
        wkv_word *d = &(*words)[k];
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
    s->words = *words;
    s->n_words = (int)nw;
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
    JsonArray *segs = root && JSON_NODE_HOLDS_OBJECT(root)
                          ? get_array(json_node_get_object(root), "segments") : NULL;
    if (!segs) {
        *msg = g_strdup_printf("%s: no segments array: not a document of -o json", a->file);
        g_object_unref(parser);
        return 1;
    }
    cue_options cues;
    const gboolean want_words = cli_word_options_cues(&cues);
    /* every segment read before anything is written: a bad document writes nothing */
    const guint n = json_array_get_length(segs);
    wkv_segment *seg = g_new0(wkv_segment, n + 1);
    wkv_word **words = g_new0(wkv_word *, n + 1);
    char *bad = NULL;
    for (guint i = 0; i < n && !bad; i++)
        read_segment(object_at(segs, i), i, want_words, &seg[i], &words[i], &bad);
    int st = 0;
    FILE *f = bad ? NULL : cli_open_output(a->output_file, msg);
    if (bad) {
        *msg = g_strdup_printf("%s: %s", a->file, bad);
        st = 1;
    } else if (!f) {
        st = 1;
    } else {
        cli_output *out = cli_output_new(a->format, f);
        if (want_words) {
            const char *heads = get_string(json_node_get_object(root), "alignment_heads");
            cli_output_set_words(out, &cues, heads ? heads : "default");
        }
        cli_output_begin(out);
        for (guint i = 0; i < n; i++)
            cli_output_segment(out, &seg[i]);
        /* txt, srt and vtt end without the model (the json writer's end needs it) */
        cli_output_finish(out, NULL, NULL, 0, NULL);
        cli_output_free(out);
        if (!cli_close_output(f, a->output_file, msg))
            st = 1;
    }
    g_free(bad);
    for (guint i = 0; i < n; i++)
        g_free(words[i]);
    g_free(words);
    g_free(seg);
    g_object_unref(parser);
    return st;
}
