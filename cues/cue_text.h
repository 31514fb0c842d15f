/* A cue's text as the reference's writers make it, and its highlighted form
 * (openai/whisper's utils.py, SubtitlesWriter.iterate_result with highlight_words).
 * Shared by the CLI's SRT/VTT writer (cli/subtitles.c) and the element's
 * text-unit=cue with highlight-words, so both cut the same sub-cues with the same
 * text. */
#ifndef CUE_TEXT_H
#define CUE_TEXT_H

#include "cue_cut.h"

/* Seconds rounded to whole ms as the writers round (Python's round(t * 1000)); the
 * writers' timestamps are equal exactly when these are. */
gint64 cue_ms(double t);

/* WebVTT's escape of c ('&', '<', '>' as "&amp;", "&lt;", "&gt;") appended to dst:
 * TRUE, or FALSE (nothing appended) for any other byte.  The one escaper of the CLI's
 * and the element's WebVTT text. */
gboolean cue_vtt_escape(GString *dst, unsigned char c);

/* The cue's words joined: control characters but '\n' dropped, vtt: '&', '<', '>'
 * escaped; word `mark` underlined (-1: none) as the reference's
 * re.sub(r"^(\s*)(.*)$", r"\1<u>\2</u>") does.  g_free. */
char *cue_text(const cue_word *q, guint n, gboolean vtt, int mark);

/* One part of the cue q[0..n) as written: [start, end) seconds, the word marked (-1:
 * none; cue_text makes its text). */
typedef void (*cue_part_cb)(const cue_word *q, guint n, double start, double end,
                                int mark, void *user);
/* The parts a cue is written as: itself, unmarked; or with highlight, per word a part
 * with it marked, and before a word that starts after the previous part ended (at whole
 * ms) a plain one over the gap. */
void cue_parts(const cue_word *q, guint n, gboolean highlight, cue_part_cb cb,
                   void *user);

#endif
