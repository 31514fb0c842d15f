/* The reference writers' cue cutting, word by word as segments arrive: a cue is
 * complete once the next word opens another one, the last at the end. */
#include "cue_cut.h"

#include <string.h>

struct cue_cutter {
    cue_cut_options o;
    cue_cb cb;
    void *user;
    gboolean preserve, started;
    int width, per_line;
    int line_len, line_count;
    double last;
    GArray *cue; /* cue_word */
};

gboolean wkv_py_space(gunichar c)
{
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
           c == 0x202f || c == 0x205f || c == 0x3000;
}

/* Python's str.strip(), newly allocated */
static char *py_strip(const char *s)
{
    const char *a = s, *b = s + strlen(s);
    while (a < b && wkv_py_space(g_utf8_get_char(a)))
        a = g_utf8_next_char(a);
    while (b > a) {
        const char *p = g_utf8_find_prev_char(a, b);
        if (!p || !wkv_py_space(g_utf8_get_char(p)))
            break;
        b = p;
    }
    return g_strndup(a, (gsize)(b - a));
}

static void clear_cue(cue_cutter *c)
{
    for (guint i = 0; i < c->cue->len; i++)
        g_free(g_array_index(c->cue, cue_word, i).text);
    g_array_set_size(c->cue, 0);
}

static void emit(cue_cutter *c)
{
    if (c->cue->len == 0)
        return;
    c->cb((const cue_word *)(void *)c->cue->data, c->cue->len, c->user);
    clear_cue(c);
}

cue_cutter *cue_cutter_new(const cue_cut_options *opts, cue_cb cb, void *user)
{
    cue_cutter *c = g_new0(cue_cutter, 1);
    c->o = *opts;
    c->cb = cb;
    c->user = user;
    /* the reference keeps the segments' own breaks unless both width and count are set */
    c->preserve = opts->max_line_count <= 0 || opts->max_line_width <= 0;
    c->width = opts->max_line_width > 0 ? opts->max_line_width : 1000;
    c->per_line = opts->max_words_per_line > 0 ? opts->max_words_per_line : 1000;
    c->line_count = 1;
    c->cue = g_array_new(FALSE, FALSE, sizeof(cue_word));
    return c;
}

void cue_cutter_segment(cue_cutter *c, const wkv_segment *seg)
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

gboolean cue_cutter_pending(const cue_cutter *c, double *start)
{
    if (c->cue->len == 0)
        return FALSE;
    *start = g_array_index(c->cue, cue_word, 0).start;
    return TRUE;
}

void cue_cutter_finish(cue_cutter *c)
{
    emit(c);
}

void cue_cutter_free(cue_cutter *c)
{
    if (!c)
        return;
    clear_cue(c);
    g_array_free(c->cue, TRUE);
    g_free(c);
}
