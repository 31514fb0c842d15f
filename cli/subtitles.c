/* SubRip and WebVTT text of the cues cues/cue_cut.c cuts, written as each is
 * complete. */
#include "subtitles.h"

#include "cue_text.h"

#include <string.h>

struct cue_writer {
    gboolean vtt, highlight;
    FILE *out;
    int n_cues;
    cue_cutter *cut;
};

void cli_timestamp_ms(gint64 ms, gboolean hours, char sep, char *buf, size_t size)
{
    gint64 h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60;
    if (!hours && h == 0)
        g_snprintf(buf, size, "%02" G_GINT64_FORMAT ":%02" G_GINT64_FORMAT "%c%03" G_GINT64_FORMAT,
                   m, s, sep, ms % 1000);
    else
        g_snprintf(buf, size, "%02" G_GINT64_FORMAT ":%02" G_GINT64_FORMAT ":%02" G_GINT64_FORMAT
                   "%c%03" G_GINT64_FORMAT, h, m, s, sep, ms % 1000);
}

/* The reference's writers: Python's round (cue_ms), hours in vtt only when > 0. */
static void timestamp(double t, gboolean vtt, char *buf, size_t size)
{
    cli_timestamp_ms(cue_ms(t), !vtt, vtt ? '.' : ',', buf, size);
}

static void write_cue(cue_writer *c, const char *a, const char *b, const char *text)
{
    if (c->vtt)
        fprintf(c->out, "%s --> %s\n%s\n\n", a, b, text);
    else
        fprintf(c->out, "%d\n%s --> %s\n%s\n\n", ++c->n_cues, a, b, text);
}

static void write_part(const cue_word *q, guint n, double start, double end, int mark,
                       void *user)
{
    cue_writer *c = user;
    char a[48], b[48];
    timestamp(start, c->vtt, a, sizeof a);
    timestamp(end, c->vtt, b, sizeof b);
    char *text = cue_text(q, n, c->vtt, mark);
    write_cue(c, a, b, text);
    g_free(text);
}

static void emit(const cue_word *q, guint n, void *user)
{
    cue_writer *c = user;
    cue_parts(q, n, c->highlight, write_part, c);
    fflush(c->out);
}

cue_writer *cue_writer_new(const cue_options *opts, gboolean vtt, FILE *out)
{
    cue_writer *c = g_new0(cue_writer, 1);
    c->vtt = vtt;
    c->highlight = opts->highlight_words;
    c->out = out;
    c->cut = cue_cutter_new(&opts->cut, emit, c);
    return c;
}

void cue_writer_segment(cue_writer *c, const wkv_segment *seg)
{
    cue_cutter_segment(c->cut, seg);
}

void cue_writer_finish(cue_writer *c)
{
    cue_cutter_finish(c->cut);
}

void cue_writer_free(cue_writer *c)
{
    if (!c)
        return;
    cue_cutter_free(c->cut);
    g_free(c);
}
