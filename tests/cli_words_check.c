/* Compares whisperkv-transcribe's word-timestamp outputs with testvectors/<set>/words.json
 * (test_cli.sh runs it):
 *   cli_words_check list WORDS_JSON          one line per run and writer option set:
 *                                            "RUN<TAB>HEADS<TAB>LANGUAGE<TAB>WRITER<TAB>FLAGS"
 *   cli_words_check cues WORDS_JSON RUN WRITER srt|vtt FILE
 *                                            FILE equals the reference writer's bytes once
 *                                            the two deliberate differences are undone: C0
 *                                            controls but '\n' dropped, VTT's &amp; &lt; &gt;
 *   cli_words_check json WORDS_JSON RUN FILE  the segments' words of the CLI's JSON: text
 *                                            exact, times within 0.011 s, probabilities
 *                                            within 1e-3 and 2 % (ignored below 1e-30),
 *                                            and an "alignment_heads" string
 * Exit status 0 when equal, 1 otherwise (the first difference on stderr). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

static JsonObject *load(JsonParser *p, const char *path)
{
    GError *err = NULL;
    if (!json_parser_load_from_file(p, path, &err)) {
        fprintf(stderr, "cli_words_check: %s: %s\n", path, err->message);
        g_error_free(err);
        return NULL;
    }
    return json_node_get_object(json_parser_get_root(p));
}

static JsonObject *find_run(JsonObject *root, const char *name)
{
    JsonArray *runs = json_object_get_array_member(root, "runs");
    for (guint i = 0; i < json_array_get_length(runs); i++) {
        JsonObject *r = json_array_get_object_element(runs, i);
        if (!strcmp(json_object_get_string_member(r, "name"), name))
            return r;
    }
    fprintf(stderr, "cli_words_check: no run '%s'\n", name);
    return NULL;
}

static void option_flags(JsonObject *opts, GString *s)
{
    GList *names = json_object_get_members(opts);
    for (GList *l = names; l; l = l->next) {
        const char *k = l->data;
        char *flag = g_strdelimit(g_strdup(k), "_", '-');
        if (!strcmp(k, "highlight_words")) {
            if (json_object_get_boolean_member(opts, k))
                g_string_append_printf(s, " --%s", flag);
        } else {
            g_string_append_printf(s, " --%s %" G_GINT64_FORMAT, flag,
                                   json_object_get_int_member(opts, k));
        }
        g_free(flag);
    }
    g_list_free(names);
}

static int list(JsonObject *root)
{
    JsonArray *runs = json_object_get_array_member(root, "runs");
    for (guint i = 0; i < json_array_get_length(runs); i++) {
        JsonObject *r = json_array_get_object_element(runs, i);
        JsonObject *writers = json_object_get_object_member(r, "writers");
        GList *names = json_object_get_members(writers);
        for (GList *l = names; l; l = l->next) {
            GString *flags = g_string_new(NULL);
            option_flags(json_object_get_object_member(
                             json_object_get_object_member(writers, l->data), "options"),
                         flags);
            printf("%s\t%s\t%s\t%s\t%s\n", json_object_get_string_member(r, "name"),
                   json_object_get_string_member(r, "cli_alignment_heads"),
                   json_object_get_string_member(r, "language"), (const char *)l->data,
                   flags->str);
            g_string_free(flags, TRUE);
        }
        g_list_free(names);
    }
    return 0;
}

static char *drop_controls(const char *s)
{
    GString *o = g_string_new(NULL);
    for (; *s; s++)
        if ((unsigned char)*s >= 0x20 || *s == '\n')
            g_string_append_c(o, *s);
    return g_string_free(o, FALSE);
}

static char *unescape_vtt(const char *s)
{
    GString *o = g_string_new(NULL);
    while (*s) {
        if (g_str_has_prefix(s, "&amp;")) {
            g_string_append_c(o, '&');
            s += 5;
        } else if (g_str_has_prefix(s, "&lt;")) {
            g_string_append_c(o, '<');
            s += 4;
        } else if (g_str_has_prefix(s, "&gt;")) {
            g_string_append_c(o, '>');
            s += 4;
        } else {
            g_string_append_c(o, *s++);
        }
    }
    return g_string_free(o, FALSE);
}

static int cues(JsonObject *run, const char *writer, const char *fmt, const char *path)
{
    JsonObject *w = json_object_get_object_member(json_object_get_object_member(run, "writers"),
                                                  writer);
    if (!w || (strcmp(fmt, "srt") && strcmp(fmt, "vtt"))) {
        fprintf(stderr, "cli_words_check: no writer '%s' / format '%s'\n", writer, fmt);
        return 1;
    }
    char *got = NULL;
    if (!g_file_get_contents(path, &got, NULL, NULL)) {
        fprintf(stderr, "cli_words_check: cannot read %s\n", path);
        return 1;
    }
    char *want = drop_controls(json_object_get_string_member(w, fmt));
    char *mine = !strcmp(fmt, "vtt") ? unescape_vtt(got) : g_strdup(got);
    int rc = 0;
    if (strcmp(mine, want) != 0) {
        size_t i = 0;
        while (mine[i] && mine[i] == want[i])
            i++;
        fprintf(stderr, "cli_words_check: %s differs at byte %zu: got \"%.40s\", want \"%.40s\"\n",
                path, i, mine + i, want + i);
        rc = 1;
    }
    g_free(got);
    g_free(want);
    g_free(mine);
    return rc;
}

static int near_prob(double a, double b)
{
    double d = fabs(a - b);
    return d <= 1e-3 && (fabs(b) < 1e-30 || d <= 0.02 * fabs(b));
}

static int json_words(JsonObject *run, const char *path)
{
    JsonParser *p = json_parser_new();
    JsonObject *mine = load(p, path);
    int rc = 1;
    if (!mine)
        goto out;
    if (!json_object_has_member(mine, "alignment_heads")) {
        fprintf(stderr, "cli_words_check: %s: no alignment_heads\n", path);
        goto out;
    }
    JsonArray *got = json_object_get_array_member(mine, "segments");
    JsonArray *want = json_object_get_array_member(run, "segments");
    guint g = 0, n_words = 0;
    for (guint i = 0; i < json_array_get_length(want); i++) {
        JsonObject *ws = json_array_get_object_element(want, i);
        if (json_array_get_length(json_object_get_array_member(ws, "tokens")) == 0)
            continue; /* cleared: not reported */
        if (g >= json_array_get_length(got)) {
            fprintf(stderr, "cli_words_check: %s: segment %u missing\n", path, i);
            goto out;
        }
        JsonObject *gs = json_array_get_object_element(got, g++);
        JsonArray *gw = json_object_get_array_member(gs, "words");
        JsonArray *ww = json_object_get_array_member(ws, "words");
        if (!gw || json_array_get_length(gw) != json_array_get_length(ww)) {
            fprintf(stderr, "cli_words_check: %s: segment %u has %u words, want %u\n", path, i,
                    gw ? json_array_get_length(gw) : 0, json_array_get_length(ww));
            goto out;
        }
        for (guint k = 0; k < json_array_get_length(ww); k++) {
            JsonObject *a = json_array_get_object_element(gw, k);
            JsonObject *b = json_array_get_object_element(ww, k);
            const char *ta = json_object_get_string_member(a, "word");
            const char *tb = json_object_get_string_member(b, "word");
            double sa = json_object_get_double_member(a, "start"),
                   sb = json_object_get_double_member(b, "start"),
                   ea = json_object_get_double_member(a, "end"),
                   eb = json_object_get_double_member(b, "end"),
                   pa = json_object_get_double_member(a, "probability"),
                   pb = json_object_get_double_member(b, "probability");
            if (strcmp(ta, tb) || fabs(sa - sb) > 0.011 || fabs(ea - eb) > 0.011 ||
                !near_prob(pa, pb)) {
                fprintf(stderr, "cli_words_check: %s: word '%s' %.2f-%.2f p %g, want '%s' "
                        "%.2f-%.2f p %g\n", path, ta, sa, ea, pa, tb, sb, eb, pb);
                goto out;
            }
            n_words++;
        }
    }
    if (g != json_array_get_length(got)) {
        fprintf(stderr, "cli_words_check: %s: %u segments, want %u\n", path,
                json_array_get_length(got), g);
        goto out;
    }
    printf("words=%u\n", n_words);
    rc = 0;
out:
    g_object_unref(p);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cli_words_check list|cues|json WORDS_JSON ...\n");
        return 2;
    }
    JsonParser *p = json_parser_new();
    JsonObject *root = load(p, argv[2]);
    int rc = 1;
    if (root && !strcmp(argv[1], "list")) {
        rc = list(root);
    } else if (root && !strcmp(argv[1], "cues") && argc == 7) {
        JsonObject *run = find_run(root, argv[3]);
        rc = run ? cues(run, argv[4], argv[5], argv[6]) : 1;
    } else if (root && !strcmp(argv[1], "json") && argc == 5) {
        JsonObject *run = find_run(root, argv[3]);
        rc = run ? json_words(run, argv[4]) : 1;
    } else if (root) {
        fprintf(stderr, "cli_words_check: bad arguments\n");
        rc = 2;
    }
    g_object_unref(p);
    return rc;
}
