/* Checks the JSON that `whisperkv-transcribe -o json` writes: it parses, and has the
 * model's hyper-parameters, the language, well-formed segments (times that never go
 * back, tokens as integers) and the timings.  Prints the numbers test_cli.sh needs:
 * "n_mels=.. n_vocab=.. n_audio_ctx=.. n_audio_state=.. segments=.. duration=..".
 * Exit status 0 when everything holds, 1 otherwise (each problem on stderr). */
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

static int problems;

static void problem(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

static void problem(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cli_json_check: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    problems++;
}

static JsonNode *member(JsonObject *obj, const char *where, const char *name)
{
    JsonNode *n = json_object_get_member(obj, name);
    if (!n)
        problem("%s: no \"%s\"", where, name);
    return n;
}

static gboolean is_int(JsonNode *n)
{
    return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_INT64;
}

static gboolean is_number(JsonNode *n)
{
    return n && JSON_NODE_HOLDS_VALUE(n) &&
           (json_node_get_value_type(n) == G_TYPE_INT64 ||
            json_node_get_value_type(n) == G_TYPE_DOUBLE);
}

static double number(JsonNode *n)
{
    return json_node_get_value_type(n) == G_TYPE_INT64 ? (double)json_node_get_int(n)
                                                       : json_node_get_double(n);
}

static gint64 int_member(JsonObject *obj, const char *where, const char *name)
{
    JsonNode *n = member(obj, where, name);
    if (n && !is_int(n)) {
        problem("%s.%s is not an integer", where, name);
        return -1;
    }
    return n ? json_node_get_int(n) : -1;
}

static double number_member(JsonObject *obj, const char *where, const char *name)
{
    JsonNode *n = member(obj, where, name);
    if (n && !is_number(n)) {
        problem("%s.%s is not a number", where, name);
        return 0;
    }
    return n ? number(n) : 0;
}

static JsonObject *object_member(JsonObject *obj, const char *where, const char *name)
{
    JsonNode *n = member(obj, where, name);
    if (n && !JSON_NODE_HOLDS_OBJECT(n)) {
        problem("%s.%s is not an object", where, name);
        return NULL;
    }
    return n ? json_node_get_object(n) : NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cli_json_check FILE.json\n");
        return 2;
    }
    JsonParser *parser = json_parser_new();
    GError *err = NULL;
    if (!json_parser_load_from_file(parser, argv[1], &err)) {
        problem("%s does not parse: %s", argv[1], err->message);
        g_error_free(err);
        g_object_unref(parser);
        return 1;
    }
    JsonNode *root_node = json_parser_get_root(parser);
    if (!root_node || !JSON_NODE_HOLDS_OBJECT(root_node)) {
        problem("the document is not an object");
        g_object_unref(parser);
        return 1;
    }
    JsonObject *root = json_node_get_object(root_node);

    static const char *const hparams[] = {
        "n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer", "n_text_ctx",
        "n_text_state", "n_text_head", "n_text_layer", "n_mels", "ftype",
    };
    gint64 hp[G_N_ELEMENTS(hparams)];
    for (size_t i = 0; i < G_N_ELEMENTS(hparams); i++)
        hp[i] = -1;
    JsonObject *model = object_member(root, "root", "model");
    if (model)
        for (size_t i = 0; i < G_N_ELEMENTS(hparams); i++) {
            hp[i] = int_member(model, "model", hparams[i]);
            if (hp[i] < 0)
                problem("model.%s is negative or missing", hparams[i]);
        }

    JsonNode *lang = member(root, "root", "language");
    if (lang && (!JSON_NODE_HOLDS_VALUE(lang) || json_node_get_value_type(lang) != G_TYPE_STRING ||
                 !*json_node_get_string(lang)))
        problem("language is not a non-empty string");

    int n_segments = 0;
    JsonNode *segs = member(root, "root", "segments");
    if (segs && !JSON_NODE_HOLDS_ARRAY(segs)) {
        problem("segments is not an array");
    } else if (segs) {
        JsonArray *arr = json_node_get_array(segs);
        n_segments = (int)json_array_get_length(arr);
        double prev_start = 0;
        gint64 prev_seek = 0;
        for (int i = 0; i < n_segments; i++) {
            char where[32];
            g_snprintf(where, sizeof where, "segments[%d]", i);
            JsonNode *sn = json_array_get_element(arr, (guint)i);
            if (!JSON_NODE_HOLDS_OBJECT(sn)) {
                problem("%s is not an object", where);
                continue;
            }
            JsonObject *s = json_node_get_object(sn);
            gint64 seek = int_member(s, where, "seek");
            double start = number_member(s, where, "start");
            double end = number_member(s, where, "end");
            if (seek < prev_seek)
                problem("%s: seek %" G_GINT64_FORMAT " goes back", where, seek);
            if (start < 0 || end < start)
                problem("%s: bad times %.3f -> %.3f", where, start, end);
            if (start < prev_start)
                problem("%s: start %.3f before the previous start %.3f", where, start,
                        prev_start);
            if (start + 1e-9 < seek * 0.01)
                problem("%s: start %.3f before its window (seek %" G_GINT64_FORMAT ")", where,
                        start, seek);
            prev_start = start;
            prev_seek = seek;
            JsonNode *text = member(s, where, "text");
            if (text && (!JSON_NODE_HOLDS_VALUE(text) ||
                         json_node_get_value_type(text) != G_TYPE_STRING))
                problem("%s.text is not a string", where);
            JsonNode *toks = member(s, where, "tokens");
            if (toks && !JSON_NODE_HOLDS_ARRAY(toks)) {
                problem("%s.tokens is not an array", where);
            } else if (toks) {
                JsonArray *ta = json_node_get_array(toks);
                guint nt = json_array_get_length(ta);
                if (nt == 0)
                    problem("%s.tokens is empty", where);
                for (guint k = 0; k < nt; k++) {
                    JsonNode *t = json_array_get_element(ta, k);
                    if (!is_int(t) || json_node_get_int(t) < 0 ||
                        (hp[0] > 0 && json_node_get_int(t) >= hp[0])) {
                        problem("%s.tokens[%u] is not a token id", where, k);
                        break;
                    }
                }
            }
            static const char *const scores[] = {"avg_logprob", "no_speech_prob",
                                                 "compression_ratio", "temperature"};
            for (size_t k = 0; k < G_N_ELEMENTS(scores); k++)
                number_member(s, where, scores[k]);
            double nsp = number_member(s, where, "no_speech_prob");
            if (nsp < 0 || nsp > 1)
                problem("%s.no_speech_prob %g is not a probability", where, nsp);
        }
    }

    JsonObject *timings = object_member(root, "root", "timings");
    if (timings) {
        static const char *const ms[] = {"load", "mel", "encode", "decode"};
        for (size_t i = 0; i < G_N_ELEMENTS(ms); i++)
            if (number_member(timings, "timings", ms[i]) < 0)
                problem("timings.%s is negative", ms[i]);
        if (int_member(timings, "timings", "windows") < 1)
            problem("timings.windows is below 1");
        if (int_member(timings, "timings", "tokens") < 1)
            problem("timings.tokens is below 1");
    }
    double duration = 0;
    if (json_object_has_member(root, "duration"))
        duration = number_member(root, "root", "duration");

    printf("n_mels=%" G_GINT64_FORMAT " n_vocab=%" G_GINT64_FORMAT " n_audio_ctx=%" G_GINT64_FORMAT
           " n_audio_state=%" G_GINT64_FORMAT " segments=%d duration=%.3f\n",
           hp[9], hp[0], hp[1], hp[2], n_segments, duration);
    g_object_unref(parser);
    return problems ? 1 : 0;
}
