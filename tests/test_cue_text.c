/* The WebVTT escaper the CLI's writers and the element's cues share (cues/cue_text.c):
 * exactly '&', '<' and '>' become entities, every other byte stays; a cue's text is
 * escaped word by word while its highlight's <u></u> is not. */
#include "cue_text.h"

#include <stdio.h>
#include <string.h>

static int failures;

static void check(int ok, const char *what, const char *got)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s (got '%s')\n", what, got ? got : "");
        failures++;
    }
}

int main(void)
{
    /* every byte: an entity for the three, nothing appended (FALSE) for the rest */
    for (int c = 0; c < 256; c++) {
        GString *s = g_string_new(NULL);
        gboolean esc = cue_vtt_escape(s, (unsigned char)c);
        const char *want = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : "";
        char what[64];
        snprintf(what, sizeof what, "byte 0x%02x", c);
        check(esc == (*want != 0) && strcmp(s->str, want) == 0, what, s->str);
        g_string_free(s, TRUE);
    }
    cue_word w[2] = {{" a<b>&c", 0.0, 0.5}, {" d\x01", 0.5, 1.0}};
    char *t = cue_text(w, 2, TRUE, 0);
    check(strcmp(t, " <u>a&lt;b&gt;&amp;c</u> d") == 0, "vtt cue, first word marked", t);
    g_free(t);
    t = cue_text(w, 2, FALSE, -1);
    check(strcmp(t, " a<b>&c d") == 0, "srt cue: nothing escaped, controls dropped", t);
    g_free(t);
    printf("cue_text: %d failures\n", failures);
    return failures != 0;
}
