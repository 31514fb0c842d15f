/* The CLI's word-timestamp and subtitle-cue options (--word-timestamps and the
 * options that need it, --clip-timestamps): their own option group, kept out of the
 * main file. */
#ifndef CLI_WORD_OPTIONS_H
#define CLI_WORD_OPTIONS_H

#include <glib.h>

#include "output.h"
#include "whisperkv.h"

/* The group to add to the option context (its options are used as --name). */
GOptionGroup *cli_word_option_group(void);
/* After parsing: NULL, or a one-line reason the options are wrong (exit 2; g_free). */
char *cli_word_options_check(void);
/* Sets the word options on opts and tells the output; with "auto" heads, says on
 * stderr which it picked.  FALSE with a reason (a bad --alignment-heads for this
 * model: exit 2). */
gboolean cli_word_options_apply(const wkv_model *model, wkv_options *opts, cli_output *out,
                                char **error);
/* --word-timestamps was given; *cues: the cue options (--from-json's writers). */
gboolean cli_word_options_cues(cue_options *cues);

#endif
