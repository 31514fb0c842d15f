/* A cue's text and its highlighted sub-cues (cue_text.h). */
#include "cue_text.h"

#include <math.h>
#include <string.h>

gint64 cue_ms(double t)
{
    return (gint64)nearbyint((t > 0 ? t : 0) * 1000.0);
}

gboolean cue_vtt_escape(GString *dst, unsigned char c)
{
    const char *e = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : NULL;
    if (e)
        g_string_append(dst, e);
    return e != NULL;
}

/* Text as written: control characters but '\n' dropped, WebVTT's escapes. */
static void append_text(GString *dst, const char *s, gboolean vtt)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 && c != '\n')
            continue;
        if (!(vtt && cue_vtt_escape(dst, c)))
            g_string_append_c(dst, (char)c);
    }
}

/* '.' stops at a newline and '$' may stand before a final one, so a word with an
 * inner newline stays as it is. */
char *cue_text(const cue_word *q, guint n, gboolean vtt, int mark)
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
        size_t len = strlen(rest);
        const char *nl = strchr(rest, '\n');
        if (nl && nl != rest + len - 1) {
            append_text(s, w, vtt);
            continue;
        }
        char *ws = g_strndup(w, (gsize)(rest - w)), *body = g_strndup(rest, nl ? len - 1 : len);
        append_text(s, ws, vtt);
        g_string_append(s, "<u>");
        append_text(s, body, vtt);
        g_string_append(s, nl ? "</u>\n" : "</u>");
        g_free(ws);
        g_free(body);
    }
    return g_string_free(s, FALSE);
}

void cue_parts(const cue_word *q, guint n, gboolean highlight, cue_part_cb cb,
                   void *user)
{
    if (n == 0)
        return;
    if (!highlight) {
        cb(q, n, q[0].start, q[n - 1].end, -1, user);
        return;
    }
    double prev = q[0].start;
    for (guint i = 0; i < n; i++) {
        if (cue_ms(prev) != cue_ms(q[i].start))
            cb(q, n, prev, q[i].start, -1, user);
        cb(q, n, q[i].start, q[i].end, (int)i, user);
        prev = q[i].end;
    }
}
