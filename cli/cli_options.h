/* whisperkv-transcribe's command line: its main options, parsed and checked together
 * with the word options (word_options.c), the VAD options (cli_vad.c) and GStreamer's. */
#ifndef CLI_OPTIONS_H
#define CLI_OPTIONS_H

#include <glib.h>

#include "output.h"
#include "whisperkv.h"

/* What the rest of the CLI reads from the command line. */
typedef struct {
    const char *file;         /* the audio: a file name or a URI */
    const char *model;        /* -m, NULL when not given (cli_find_model) */
    const cli_format *format; /* -o */
    const char *output_file;  /* --output-file as given; NULL or "-": stdout */
    const char *language;     /* a code ("en" when not given), or "auto" */
    gboolean detect;          /* language "auto" */
    gboolean translate;
    int threads;
    const char *compute_type; /* NULL: auto */
    const char *kv_cache;     /* NULL: auto */
    gboolean progress, verbose;
    gboolean live, realtime;  /* --realtime implies live */
    int step_ms, latency_ms;  /* live */
    int alignatt, frame_threshold_ms; /* live: --commit-policy (alignatt by default); -1: default */
    int max_held_ms;                  /* live, alignatt: --max-held; 0: the default */
    int run_ms;               /* live, virtual clock: a run's time (0: measured) */
    int batch_size;           /* --batch-size: 0, the long form; N, chunks N at a time */
    gboolean no_drafts;       /* --no-drafts: greedy steps without a draft */
    gboolean from_json;       /* --from-json: file is -o json output to write again */
    const char *dump_mel, *dump_encoder; /* debug outputs, NULL when not asked for */
    int *logit_ids, n_logit_ids;         /* --logits TOKENS (logit_ids: cli_args_clear) */
    const char *logits_path;
    /* The decoding options given (mel_norm included); language and translate are set
     * once the model is known. */
    wkv_options decode;
} cli_args;

/* Parses and checks the command line into *args.  Returns 0, or 2 (the exit status of
 * bad options) after saying on stderr what is wrong. */
int cli_args_parse(int *argc, char ***argv, cli_args *args);
void cli_args_clear(cli_args *args);

/* The model file: -m, $WHISPERKV_MODEL, models/ggml-base.en.bin, the first
 * models/ggml-*.bin; NULL when there is none (else g_free it). */
char *cli_find_model(const cli_args *args);

#endif
