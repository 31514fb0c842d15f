/* --from-json: a JSON document this program wrote (-o json) written again as txt, srt
 * or vtt, with the cue options of this command line; no model and no audio.  The text
 * equals what the transcription would have written with those options: JSON numbers
 * round-trip exactly (json-glib writes 17 significant digits). */
#ifndef CLI_FROM_JSON_H
#define CLI_FROM_JSON_H

#include "cli_options.h"

/* Reads a->file and writes a->format to a->output_file (stdout: NULL or "-").
 * Returns 0, or 1 (an unreadable or malformed document, --word-timestamps on one
 * written without words, a failed write) with a one-line message in *msg (g_free it). */
int cli_from_json_run(const cli_args *a, char **msg);

#endif
