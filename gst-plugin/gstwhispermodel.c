/* Shared, refcounted models keyed by their canonical path (VAD models apart: the
 * same file cannot be both, and each kind's loader refuses the other's). */
#include "gstwhispermodel.h"

#include <stdlib.h>
#include <string.h>

struct _GstWhisperModel {
    gchar *key;       /* canonical path */
    gchar *path;      /* as first given */
    wkv_model *model; /* immutable once loaded; or */
    wkv_vad_model *vad;
    wkv_decoder_group *group; /* share-decoder: made on first use, under cache_lock */
    guint refs;       /* under cache_lock */
};

static GMutex cache_lock;
static GHashTable *cache; /* key -> GstWhisperModel* */

G_DEFINE_QUARK(gst-whisper-model-error-quark, gst_whisper_model_error)

static gchar *canonical_key(const gchar *path, gboolean vad)
{
    char *real = realpath(path, NULL);
    gchar *key = g_strconcat(vad ? "vad:" : "", real ? real : path, NULL);
    free(real);
    return key;
}

static GstWhisperModel *acquire(const gchar *path, gboolean vad, GError **error)
{
    if (!path || !*path) {
        g_set_error(error, gst_whisper_model_error_quark(), 1,
                    vad ? "no VAD model file name" :
                          "no model: set the 'model' property or WHISPERKV_MODEL");
        return NULL;
    }
    gchar *key = canonical_key(path, vad);
    g_mutex_lock(&cache_lock);
    if (!cache)
        cache = g_hash_table_new(g_str_hash, g_str_equal);
    GstWhisperModel *m = g_hash_table_lookup(cache, key);
    if (m) {
        m->refs++;
        g_mutex_unlock(&cache_lock);
        g_free(key);
        return m;
    }
    /* Loading under the lock: a second element asking for the same file waits for
     * this load instead of loading it twice. */
    char *err = NULL;
    wkv_model *model = vad ? NULL : wkv_model_load(path, &err);
    wkv_vad_model *vad_model = vad ? wkv_vad_model_load(path, &err) : NULL;
    if (!model && !vad_model) {
        g_mutex_unlock(&cache_lock);
        g_set_error(error, gst_whisper_model_error_quark(), 2, "cannot load %smodel '%s': %s",
                    vad ? "VAD " : "", path, err ? err : "unknown error");
        free(err);
        g_free(key);
        return NULL;
    }
    m = g_new0(GstWhisperModel, 1);
    m->key = key;
    m->path = g_strdup(path);
    m->model = model;
    m->vad = vad_model;
    m->refs = 1;
    g_hash_table_insert(cache, m->key, m);
    g_mutex_unlock(&cache_lock);
    return m;
}

GstWhisperModel *gst_whisper_model_acquire(const gchar *path, GError **error)
{
    return acquire(path, FALSE, error);
}

GstWhisperModel *gst_whisper_vad_model_acquire(const gchar *path, GError **error)
{
    return acquire(path, TRUE, error);
}

void gst_whisper_model_release(GstWhisperModel *m)
{
    if (!m)
        return;
    g_mutex_lock(&cache_lock);
    if (--m->refs == 0) {
        g_hash_table_remove(cache, m->key);
        wkv_decoder_group_free(m->group); /* every element's context is gone */
        wkv_model_free(m->model);
        wkv_vad_model_free(m->vad);
        g_free(m->key);
        g_free(m->path);
        g_free(m);
    }
    g_mutex_unlock(&cache_lock);
}

const wkv_model *gst_whisper_model_get(const GstWhisperModel *m)
{
    return m ? m->model : NULL;
}

const wkv_vad_model *gst_whisper_vad_model_get(const GstWhisperModel *m)
{
    return m ? m->vad : NULL;
}

const gchar *gst_whisper_model_path(const GstWhisperModel *m)
{
    return m ? m->path : NULL;
}

guint gst_whisper_model_refcount(const GstWhisperModel *m)
{
    g_mutex_lock(&cache_lock);
    guint r = m ? m->refs : 0;
    g_mutex_unlock(&cache_lock);
    return r;
}

guint gst_whisper_model_users(const gchar *path)
{
    gchar *key = canonical_key(path, FALSE);
    g_mutex_lock(&cache_lock);
    GstWhisperModel *m = cache ? g_hash_table_lookup(cache, key) : NULL;
    guint r = m ? m->refs : 0;
    g_mutex_unlock(&cache_lock);
    g_free(key);
    return r;
}

guint gst_whisper_model_cache_size(void)
{
    g_mutex_lock(&cache_lock);
    guint n = cache ? g_hash_table_size(cache) : 0;
    g_mutex_unlock(&cache_lock);
    return n;
}

wkv_decoder_group *gst_whisper_model_decoder_group(GstWhisperModel *m, char **error)
{
    g_mutex_lock(&cache_lock);
    /* steps of up to 8 elements a pass (the decoder's single-row kernels), as many
     * passes at once as the machine has cores */
    if (!m->group && m->model)
        m->group = wkv_decoder_group_new(m->model, 8, 0, error);
    wkv_decoder_group *g = m->group;
    g_mutex_unlock(&cache_lock);
    return g;
}

void gst_whisper_model_decoder_group_stats(GstWhisperModel *m, wkv_decoder_group_stats *out)
{
    memset(out, 0, sizeof *out);
    g_mutex_lock(&cache_lock);
    if (m && m->group)
        wkv_decoder_group_get_stats(m->group, out);
    g_mutex_unlock(&cache_lock);
}
