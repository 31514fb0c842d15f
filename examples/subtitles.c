/* The reference writers' cue cutting, word by word as segments arrive: a cue is
 * written once the next word opens another one, the last at the end. */
#include "subtitles.h"

#include <math.h>
#include <string.h>

typedef struct {
    char *text; /* the word as the cue shows it: maybe stripped, maybe "\n" first */
    double start, end;
} cue_word;

struct wkv_cues {
    wkv_cue_options o;
    gboolean vtt, preserve, started;
    int width, per_line;
    FILE *out;
    int line_len, line_count, n_cues;
    double last;
    GArray *cue; /* cue_word */
};

/* Python's str.isspace() */
static gboolean py_space(gunichar c)
{
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
           c == 0x202f || c == 0x205f || c == 0x3000;
}

/* Python's str.strip(), newly allocated */
static char *py_strip(const char *s)
{
    const char *a = s, *b = s + strlen(s);
    while (a < b && py_space(g_utf8_get_char(a)))
        a = g_utf8_next_char(a);
    while (b > a) {
        const char *p = g_utf8_find_prev_char(a, b);
        if (!p || !py_space(g_utf8_get_char(p)))
            break;
        b = p;
    }
    return g_strndup(a, (gsize)(b - a));
}

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
static char *cue_text(const wkv_cues *c, int mark)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < c->cue->len; i++) {
        const char *w = g_array_index(c->cue, cue_word, i).text;
        if ((int)i != mark) {
            append_text(s, w, c->vtt);
            continue;
        }
        const char *rest = w;
        while (*rest && py_space(g_utf8_get_char(rest)))
            rest = g_utf8_next_char(rest);
        size_t n = strlen(rest);
        const char *nl = strchr(rest, '\n');
        if (nl && nl != rest + n - 1) {
            append_text(s, w, c->vtt);
            continue;
        }
        char *ws = g_strndup(w, (gsize)(rest - w)), *body = g_strndup(rest, nl ? n - 1 : n);
        append_text(s, ws, c->vtt);
        g_string_append(s, "<u>");
        append_text(s, body, c->vtt);
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

static void emit(wkv_cues *c)
{
    GArray *q = c->cue;
    if (q->len == 0)
        return;
    char a[48], b[48];
    timestamp(g_array_index(q, cue_word, 0).start, c->vtt, a, sizeof a);
    timestamp(g_array_index(q, cue_word, q->len - 1).end, c->vtt, b, sizeof b);
    char *plain = cue_text(c, -1);
    if (!c->o.highlight_words) {
        write_cue(c, a, b, plain);
    } else {
        /* one cue per word underlined, and the plain text over the gaps between them */
        char prev[48];
        g_strlcpy(prev, a, sizeof prev);
        for (guint i = 0; i < q->len; i++) {
            char s[48], e[48];
            timestamp(g_array_index(q, cue_word, i).start, c->vtt, s, sizeof s);
            timestamp(g_array_index(q, cue_word, i).end, c->vtt, e, sizeof e);
            if (strcmp(prev, s) != 0)
                write_cue(c, prev, s, plain);
            char *marked = cue_text(c, (int)i);
            write_cue(c, s, e, marked);
            g_free(marked);
            g_strlcpy(prev, e, sizeof prev);
        }
    }
    g_free(plain);
    for (guint i = 0; i < q->len; i++)
        g_free(g_array_index(q, cue_word, i).text);
    g_array_set_size(q, 0);
    fflush(c->out);
}

wkv_cues *wkv_cues_new(const wkv_cue_options *opts, gboolean vtt, FILE *out)
{
    wkv_cues *c = g_new0(wkv_cues, 1);
    c->o = *opts;
    c->vtt = vtt;
    c->out = out;
    c->preserve = opts->max_line_count <= 0 || opts->max_line_width <= 0;
    c->width = opts->max_line_width > 0 ? opts->max_line_width : 1000;
    c->per_line = opts->max_words_per_line > 0 ? opts->max_words_per_line : 1000;
    c->line_count = 1;
    c->cue = g_array_new(FALSE, FALSE, sizeof(cue_word));
    return c;
}

void wkv_cues_segment(wkv_cues *c, const wkv_segment *seg)
{
    for (int k = 0; k < seg->n_words; k++) {
        const wkv_word *w = &seg->words[k];
        int i = k % c->per_line; /* index inside its chunk of per_line words */
        if (!c->started) { /* `last` starts at the first word's start */
            c->last = w->start;
            c->started = TRUE;
        }
        char *text = g_strdup(w->word);
        int len = (int)g_utf8_strlen(text, -1);
        gboolean long_pause = !c->preserve && w->start - c->last > 3.0;
        gboolean room = c->line_len + len <= c->width;
        gboolean seg_break = i == 0 && c->cue->len > 0 && c->preserve;
        if (c->line_len > 0 && room && !long_pause && !seg_break) {
            c->line_len += len;
        } else {
            char *stripped = py_strip(text);
            g_free(text);
            text = stripped;
            int stripped_len = (int)g_utf8_strlen(text, -1);
            if ((c->cue->len > 0 && c->o.max_line_count > 0 &&
                 (long_pause || c->line_count >= c->o.max_line_count)) ||
                seg_break) {
                emit(c);
                c->line_count = 1;
            } else if (c->line_len > 0) {
                c->line_count++;
                char *broken = g_strconcat("\n", text, NULL);
                g_free(text);
                text = broken;
            }
            c->line_len = stripped_len;
        }
        cue_word cw = {text, w->start, w->end};
        g_array_append_val(c->cue, cw);
        c->last = w->start;
    }
}

void wkv_cues_finish(wkv_cues *c)
{
    emit(c);
}

void wkv_cues_free(wkv_cues *c)
{
    if (!c)
        return;
    for (guint i = 0; i < c->cue->len; i++)
        g_free(g_array_index(c->cue, cue_word, i).text);
    g_array_free(c->cue, TRUE);
    g_free(c);
}
