/* The language rule (language.h). */
#include "longform/language.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int wkv__own_language(char **owned, wkv_options *opts, const char *code)
{
    char *copy = wkv__strdup(code);
    if (!copy)
        return -1;
    wkv__free(*owned);
    *owned = copy;
    opts->language = copy;
    return 0;
}

int wkv__wants_detection(const wkv_model *m, const char *language)
{
    return wkv_model_is_multilingual(m) && (!language || !strcmp(language, "auto"));
}

const char *wkv__language_first_window(wkv_context *ctx, const float *mel, float *probs,
                                      char **error)
{
    const wkv_model *m = wkv_context_model(ctx);
    int lang = wkv_detect_language(ctx, mel, probs, error);
    return lang < 0 ? NULL : wkv_lang_code(m, lang);
}
