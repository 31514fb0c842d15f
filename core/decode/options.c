/* The decoding options' defaults: the reference's DecodingOptions and transcribe()
 * defaults (openai/whisper decoding.py, transcribe.py), with the long form's
 * thresholds. */
#include "whisperkv.h"

#include <string.h>

void wkv_options_default(wkv_options *o)
{
    memset(o, 0, sizeof *o);
    o->language = "en";
    o->timestamps = 1;
    o->condition_on_previous_text = 1;
    o->no_speech_threshold = 0.6f;
    o->logprob_threshold = -1.0f;
    o->mel_norm = WKV_MEL_GLOBAL;
    o->max_initial_timestamp = 1.0f;
    o->sample_len = 0; /* n_text_ctx / 2 */
    o->temperature = 0.0f;
    o->temperature_increment = 0.2f;
    o->beam_size = 0;
    o->patience = 1.0f;
    o->length_penalty = -1.0f;
    o->best_of = 5;
    o->compression_ratio_threshold = 2.4f;
    o->seed = 0;
}
