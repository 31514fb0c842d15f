/* SubRip and WebVTT text of the cues cues/cue_cut.c cuts, written as each is
 * complete. */
#include "subtitles.h"

#include <math.h>
#include <string.h>

struct wkv_cues {
    gboolean vtt, highlight;
    FILE *out;
    int n_cues;
    wkv_cue_cutter *cut;
};

/* Python's round(seconds * 1000) then [HH:]MM:SS.mmm (vtt: hours only when > 0) */
static void timestamp(double t, gboolean vtt, char *buf, size_t size)
{
    gint64 ms = (gint64)nearbyint((t > 0 ? t : 0) * 1000.0);
    gint64 h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60;
    if (vtt && h == 0)
        g_snprintf(buf, size, "%02" G_GINT64_FORMAT ":%02" G_GINT64_FORMAT ".%03" G_GINT64_FORMAT,
                   m, s, ms % 1000);
    else
        g_snprintf(buf, size, "%02" G_GINT64_FORMAT ":%02" G_GINT64_FORMAT ":%02" G_GINT64_FORMAT
                   "%c%03" G_GINT64_FORMAT, h, m, s, vtt ? '.' : ',', ms % 1000);
}

/* Text as written: control characters but '\n' dropped, WebVTT's escapes. */
static void append_text(GString *dst, const char *s, gboolean vtt)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 && c != '\n')
            continue;
        if (vtt && c == '&')
            g_string_append(dst, "&amp;");
        else if (vtt && c == '<')
            g_string_append(dst, "&lt;");
        else if (vtt && c == '>')
            g_string_append(dst, "&gt;");
        else
            g_string_append_c(dst, (char)c);
    }
}

/* The cue's text with word `mark` underlined (-1: none), as the reference's
 * re.sub(r"^(\s*)(.*)$", r"\1<u>\2</u>") does: '.' stops at a newline and '$' may
 * stand before a final one, so a word with an inner newline stays as it is. */
static char *cue_text(const wkv_cue_word *q, guint n, gboolean vtt, int mark)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < n; i++) {
        const char *w = q[i].text;
        if ((int)i != mark) {
            append_text(s, w, vtt);
            continue;
        }
        const char *rest = w;
        while (*rest && wkv_py_space(g_utf8_get_char(rest)))
            rest = g_utf8_next_char(rest);
        size_t n = strlen(rest);
        const char *nl = strchr(rest, '\n');
        if (nl && nl != rest + n - 1) {
            append_text(s, w, vtt);
            continue;
        }
        char *ws = g_strndup(w, (gsize)(rest - w)), *body = g_strndup(rest, nl ? n - 1 : n);
        append_text(s, ws, vtt);
        g_string_append(s, "<u>");
        append_text(s, body, vtt);
        g_string_append(s, nl ? "</u>\n" : "</u>");
        g_free(ws);
        g_free(body);
    }
    return g_string_free(s, FALSE);
}

static void write_cue(wkv_cues *c, const char *a, const char *b, const char *text)
{
    if (c->vtt)
        fprintf(c->out, "%s --> %s\n%s\n\n", a, b, text);
    else
        fprintf(c->out, "%d\n%s --> %s\n%s\n\n", ++c->n_cues, a, b, text);
}

static void emit(const wkv_cue_word *q, guint n, void *user)
{
    wkv_cues *c = user;
    char a[48], b[48];
    timestamp(q[0].start, c->vtt, a, sizeof a);
    timestamp(q[n - 1].end, c->vtt, b, sizeof b);
    char *plain = cue_text(q, n, c->vtt, -1);
    if (!c->highlight) {
        write_cue(c, a, b, plain);
    } else {
        /* one cue per word underlined, and the plain text over the gaps between them */
        char prev[48];
        g_strlcpy(prev, a, sizeof prev);
        for (guint i = 0; i < n; i++) {
            char s[48], e[48];
            timestamp(q[i].start, c->vtt, s, sizeof s);
            timestamp(q[i].end, c->vtt, e, sizeof e);
            if (strcmp(prev, s) != 0)
                write_cue(c, prev, s, plain);
            char *marked = cue_text(q, n, c->vtt, (int)i);
            write_cue(c, s, e, marked);
            g_free(marked);
            g_strlcpy(prev, e, sizeof prev);
        }
    }
    g_free(plain);
    fflush(c->out);
}

wkv_cues *wkv_cues_new(const wkv_cue_options *opts, gboolean vtt, FILE *out)
{
    wkv_cues *c = g_new0(wkv_cues, 1);
    c->vtt = vtt;
    c->highlight = opts->highlight_words;
    c->out = out;
    c->cut = wkv_cue_cutter_new(&opts->cut, emit, c);
    return c;
}

void wkv_cues_segment(wkv_cues *c, const wkv_segment *seg)
{
    wkv_cue_cutter_segment(c->cut, seg);
}

void wkv_cues_finish(wkv_cues *c)
{
    wkv_cue_cutter_finish(c->cut);
}

void wkv_cues_free(wkv_cues *c)
{
    if (!c)
        return;
    wkv_cue_cutter_free(c->cut);
    g_free(c);
}
