/* The input audio (streaming thread): the caps the sink takes and how a buffer's samples
 * become what the model hears, 16-kHz mono F32.
 *
 * The sink takes the raw audio audioconvert produces (any format, rate, channel count,
 * either layout), so the filter passes a film's 48-kHz stereo on untouched.  What the
 * model gets is made the way `audioconvert ! audioresample ! <F32LE, 16 kHz, mono>` makes
 * it, with the same GstAudioConverter set up as those two elements set theirs up: one
 * converter to F32 mono at the input's rate (audioconvert's defaults), one from that to
 * 16 kHz (audioresample's defaults: Kaiser, quality 4), so that the text is the text of
 * that pipeline.  F32LE or S16LE mono at 16 kHz, the format the model reads, is copied as
 * it comes (the queue converts S16 itself) without a converter.
 *
 * The resampler keeps the last few input samples as history: what it owes for them is
 * drained (zeros pushed in, as audioresample does at EOS and SEGMENT) before a stretch
 * ends, and forgotten at a flush. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

static void free_converters(GstWhisperInput *in)
{
    g_clear_pointer(&in->mix, gst_audio_converter_free);
    g_clear_pointer(&in->resample, gst_audio_converter_free);
    in->direct_width = 0;
    in->have_caps = FALSE;
    in->fed = FALSE;
}

void gst_whisper_input_clear(GstWhisper *self)
{
    GstWhisperInput *in = &self->in;
    free_converters(in);
    g_clear_pointer(&in->mono, g_free);
    g_clear_pointer(&in->out, g_free);
    in->mono_cap = in->out_cap = 0;
}

void gst_whisper_input_reset(GstWhisper *self)
{
    if (self->in.resample)
        gst_audio_converter_reset(self->in.resample);
    self->in.fed = FALSE;
}

/* audioresample's converter options at its defaults (gst-plugins-base 1.22,
 * gstaudioresample.c, make_options). */
static GstStructure *resample_options(gint in_rate, gint out_rate)
{
    GstStructure *o = gst_structure_new_empty("resampler-options");
    gst_audio_resampler_options_set_quality(GST_AUDIO_RESAMPLER_METHOD_KAISER,
                                            GST_AUDIO_RESAMPLER_QUALITY_DEFAULT, in_rate,
                                            out_rate, o);
    gst_structure_set(o, GST_AUDIO_CONVERTER_OPT_RESAMPLER_METHOD,
                      GST_TYPE_AUDIO_RESAMPLER_METHOD, GST_AUDIO_RESAMPLER_METHOD_KAISER,
                      GST_AUDIO_RESAMPLER_OPT_FILTER_MODE, GST_TYPE_AUDIO_RESAMPLER_FILTER_MODE,
                      GST_AUDIO_RESAMPLER_FILTER_MODE_AUTO,
                      GST_AUDIO_RESAMPLER_OPT_FILTER_MODE_THRESHOLD, G_TYPE_UINT, 1048576u,
                      GST_AUDIO_RESAMPLER_OPT_FILTER_INTERPOLATION,
                      GST_TYPE_AUDIO_RESAMPLER_FILTER_INTERPOLATION,
                      GST_AUDIO_RESAMPLER_FILTER_INTERPOLATION_CUBIC, NULL);
    return o;
}

static void refuse_caps(GstWhisper *self, GstCaps *caps, const gchar *why)
{
    GstCaps *tmpl = gst_pad_get_pad_template_caps(self->sinkpad);
    gchar *offered = gst_caps_to_string(caps), *takes = gst_caps_to_string(tmpl);
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
        ("The audio's format is not one %s takes (%s)", GST_ELEMENT_NAME(self), why),
        ("offered: %s; takes: %s (put audioconvert before it for other raw audio; "
         "compressed audio needs a decoder, e.g. decodebin)", offered, takes));
    g_free(offered);
    g_free(takes);
    gst_caps_unref(tmpl);
}

gboolean gst_whisper_input_set_caps(GstWhisper *self, GstCaps *caps, GstWhisperSamples *tail)
{
    GstWhisperInput *in = &self->in;
    GstAudioInfo info;
    memset(tail, 0, sizeof(*tail));
    if (!gst_audio_info_from_caps(&info, caps)) {
        refuse_caps(self, caps, "not raw audio it can read");
        return FALSE;
    }
    /* the same format again (a renegotiation that ended where it began): the
     * resampler goes on, its history kept */
    if (in->have_caps && gst_audio_info_is_equal(&info, &in->info))
        return TRUE;
    GstAudioFormat fmt = GST_AUDIO_INFO_FORMAT(&info);
    gboolean direct = GST_AUDIO_INFO_RATE(&info) == WKV_SAMPLE_RATE &&
                      GST_AUDIO_INFO_CHANNELS(&info) == 1 &&
                      (fmt == GST_AUDIO_FORMAT_S16LE || fmt == GST_AUDIO_FORMAT_F32LE);
    GstAudioConverter *mix = NULL, *resample = NULL;
    if (!direct) {
        /* F32 mono at the input's rate, as audioconvert makes it */
        GstAudioInfo mono;
        gst_audio_info_set_format(&mono, GST_AUDIO_FORMAT_F32, GST_AUDIO_INFO_RATE(&info), 1,
                                  NULL);
        if (fmt != GST_AUDIO_FORMAT_F32 || GST_AUDIO_INFO_CHANNELS(&info) != 1 ||
            GST_AUDIO_INFO_LAYOUT(&info) != GST_AUDIO_LAYOUT_INTERLEAVED) {
            mix = gst_audio_converter_new(GST_AUDIO_CONVERTER_FLAG_NONE, &info, &mono, NULL);
            if (!mix) {
                refuse_caps(self, caps, "no converter from it to mono");
                return FALSE;
            }
        }
        if (GST_AUDIO_INFO_RATE(&info) != WKV_SAMPLE_RATE) {
            GstAudioInfo out;
            gst_audio_info_set_format(&out, GST_AUDIO_FORMAT_F32, WKV_SAMPLE_RATE, 1, NULL);
            resample = gst_audio_converter_new(GST_AUDIO_CONVERTER_FLAG_VARIABLE_RATE, &mono,
                &out, resample_options(GST_AUDIO_INFO_RATE(&info), WKV_SAMPLE_RATE));
            if (!resample) {
                g_clear_pointer(&mix, gst_audio_converter_free);
                refuse_caps(self, caps, "no resampler from its rate to 16 kHz");
                return FALSE;
            }
        }
    }
    /* what the old resampler owes belongs to the audio before (the new caps continue
     * the stretch) */
    if (!gst_whisper_input_drain(self, tail)) {
        g_clear_pointer(&mix, gst_audio_converter_free);
        g_clear_pointer(&resample, gst_audio_converter_free);
        return FALSE;
    }
    free_converters(in);
    in->info = info;
    in->have_caps = TRUE;
    in->direct_width = direct ? (fmt == GST_AUDIO_FORMAT_S16LE ? 2 : 4) : 0;
    in->mix = mix;
    in->resample = resample;
    GST_INFO_OBJECT(self, "input %" GST_PTR_FORMAT ": %s", caps,
                    direct ? "read as it is" : resample ? "converted and resampled to 16 kHz"
                                                        : "converted to mono F32");
    return TRUE;
}

gboolean gst_whisper_input_have_caps(GstWhisper *self)
{
    return self->in.have_caps;
}

/* `*buf` (of `*cap` floats) grown to hold n floats; FALSE when it cannot (ERROR posted). */
static gboolean ensure(GstWhisper *self, float **buf, gsize *cap, gsize n, const gchar *what)
{
    if (n <= *cap)
        return TRUE;
    float *p = gst_whisper_try_renew(*buf, n, sizeof(float));
    if (!p) {
        gst_whisper_alloc_error(self, what, n, sizeof(float));
        return FALSE;
    }
    *buf = p;
    *cap = n;
    return TRUE;
}

/* Runs the resampler on n mono samples (NULL: n zeros, the drain); the output in
 * in->out, its count in *out_n. */
static gboolean resample(GstWhisper *self, float *mono, gsize n, gsize *out_n)
{
    GstWhisperInput *in = &self->in;
    gsize m = gst_audio_converter_get_out_frames(in->resample, n);
    *out_n = 0;
    if (m == 0)
        return TRUE;
    if (!ensure(self, &in->out, &in->out_cap, m, "the resampled audio"))
        return FALSE;
    gpointer src[1] = {mono}, dst[1] = {in->out};
    if (!gst_audio_converter_samples(in->resample, GST_AUDIO_CONVERTER_FLAG_NONE,
                                     mono ? src : NULL, n, dst, m)) {
        GST_ELEMENT_ERROR(self, STREAM, FORMAT, (NULL), ("the audio could not be resampled"));
        return FALSE;
    }
    *out_n = m;
    return TRUE;
}

gboolean gst_whisper_input_map(GstWhisper *self, GstBuffer *buf, GstWhisperSamples *s)
{
    GstWhisperInput *in = &self->in;
    memset(s, 0, sizeof(*s));
    if (in->direct_width) {
        if (!gst_buffer_map(buf, &s->map, GST_MAP_READ)) {
            GST_ELEMENT_ERROR(self, RESOURCE, READ, (NULL), ("cannot map a buffer"));
            return FALSE;
        }
        s->mapped = TRUE;
        if (s->map.size % in->direct_width)
            GST_WARNING_OBJECT(self, "a buffer of %" G_GSIZE_FORMAT " bytes: its last partial "
                               "sample is ignored", s->map.size);
        s->data = s->map.data;
        s->n = s->map.size / in->direct_width;
        s->s16 = in->direct_width == 2;
        return TRUE;
    }
    GstAudioBuffer ab;
    if (!gst_audio_buffer_map(&ab, &in->info, buf, GST_MAP_READ)) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ, (NULL),
                          ("cannot map a buffer of %" G_GSIZE_FORMAT " bytes as %d-channel "
                           "audio", gst_buffer_get_size(buf), GST_AUDIO_INFO_CHANNELS(&in->info)));
        return FALSE;
    }
    gsize frames = ab.n_samples;
    gboolean ok = TRUE;
    float *mono = ab.planes[0];
    if (in->mix && frames > 0) {
        ok = ensure(self, &in->mono, &in->mono_cap, frames, "the converted audio");
        if (ok) {
            gpointer dst[1] = {in->mono};
            ok = gst_audio_converter_samples(in->mix, GST_AUDIO_CONVERTER_FLAG_NONE, ab.planes,
                                             frames, dst, frames);
            if (!ok)
                GST_ELEMENT_ERROR(self, STREAM, FORMAT, (NULL),
                                  ("the audio could not be converted to mono"));
        }
        mono = in->mono;
    }
    if (ok && in->resample) {
        ok = frames == 0 || resample(self, mono, frames, &s->n);
        in->fed = in->fed || frames > 0;
        s->data = (const guint8 *)in->out;
    } else if (ok) {
        /* 16 kHz already, another format or layout: the mix's output */
        s->data = (const guint8 *)mono;
        s->n = frames;
    }
    gst_audio_buffer_unmap(&ab);
    return ok;
}

void gst_whisper_input_unmap(GstBuffer *buf, GstWhisperSamples *s)
{
    if (s->mapped)
        gst_buffer_unmap(buf, &s->map);
    s->mapped = FALSE;
}

gboolean gst_whisper_input_drain(GstWhisper *self, GstWhisperSamples *s)
{
    GstWhisperInput *in = &self->in;
    memset(s, 0, sizeof(*s));
    if (!in->resample || !in->fed)
        return TRUE; /* nothing owed since the last reset */
    gsize latency = gst_audio_converter_get_max_latency(in->resample);
    gboolean ok = latency == 0 || resample(self, NULL, latency, &s->n);
    s->data = (const guint8 *)in->out;
    gst_audio_converter_reset(in->resample);
    in->fed = FALSE;
    return ok;
}
