/* whisperkv-transcribe --live: the file through the core's stream (whisperkv.h,
 * wkv_stream) as a live source would deliver it. */
#ifndef CLI_LIVE_H
#define CLI_LIVE_H

#include <stddef.h>

#include "cli_options.h"
#include "output.h"
#include "whisperkv.h"

/* Feeds pcm (n samples) through a stream with args' --step, --latency and --realtime,
 * writes the finals to out as they commit, then sets out's `live` summary and says it
 * on stderr.  *language gets the stream's language (g_free it).  Returns the number of
 * finals, or -1 with *err. */
int cli_run_live(wkv_context *ctx, const float *pcm, size_t n, const wkv_options *opts,
                 const cli_args *args, cli_output *out, char **language, char **err);

#endif
