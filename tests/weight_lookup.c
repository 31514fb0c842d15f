/* See weight_lookup.h. */
#include "weight_lookup.h"
#include "model/quant.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    size_t off;
} slot_name;

#define LS(n, f) {n, offsetof(wkv__layer, f)}
static const slot_name LAYER_SLOTS[] = {
    LS("attn_ln.weight", attn_ln_w),        LS("attn_ln.bias", attn_ln_b),
    LS("attn.query.weight", attn_q_w),      LS("attn.query.bias", attn_q_b),
    LS("attn.key.weight", attn_k_w),        LS("attn.value.weight", attn_v_w),
    LS("attn.value.bias", attn_v_b),        LS("attn.out.weight", attn_o_w),
    LS("attn.out.bias", attn_o_b),          LS("cross_attn_ln.weight", cross_ln_w),
    LS("cross_attn_ln.bias", cross_ln_b),   LS("cross_attn.query.weight", cross_q_w),
    LS("cross_attn.query.bias", cross_q_b), LS("cross_attn.key.weight", cross_k_w),
    LS("cross_attn.value.weight", cross_v_w), LS("cross_attn.value.bias", cross_v_b),
    LS("cross_attn.out.weight", cross_o_w), LS("cross_attn.out.bias", cross_o_b),
    LS("mlp_ln.weight", mlp_ln_w),          LS("mlp_ln.bias", mlp_ln_b),
    LS("mlp.0.weight", mlp0_w),             LS("mlp.0.bias", mlp0_b),
    LS("mlp.2.weight", mlp2_w),             LS("mlp.2.bias", mlp2_b),
};
#define WS(n, f) {n, offsetof(wkv__weights, f)}
static const slot_name GLOBAL_SLOTS[] = {
    WS("encoder.conv1.weight", conv1_w),
    WS("encoder.conv1.bias", conv1_b),
    WS("encoder.conv2.weight", conv2_w),
    WS("encoder.conv2.bias", conv2_b),
    WS("encoder.positional_embedding", enc_pos),
    WS("encoder.ln_post.weight", enc_ln_w),
    WS("encoder.ln_post.bias", enc_ln_b),
    WS("decoder.token_embedding.weight", tok_emb),
    WS("decoder.positional_embedding", dec_pos),
    WS("decoder.ln.weight", dec_ln_w),
    WS("decoder.ln.bias", dec_ln_b),
};

/* The block a "encoder.blocks.N." / "decoder.blocks.N." name is in, and where the
 * rest of the name starts; NULL for other names. */
static const wkv__layer *block_of(const wkv_model *m, const char *name, const char **rest)
{
    int layer, n = 0;
    char part[16];
    if (sscanf(name, "%15[a-z].blocks.%d.%n", part, &layer, &n) != 2 || n == 0)
        return NULL;
    *rest = name + n;
    return strcmp(part, "decoder") == 0 ? &m->w.dec[layer] : &m->w.enc[layer];
}

/* The loaded pointer for a tensor name (the test's own mapping). */
const float *weight_for(const wkv_model *m, const char *name)
{
    for (size_t i = 0; i < sizeof GLOBAL_SLOTS / sizeof *GLOBAL_SLOTS; i++)
        if (strcmp(name, GLOBAL_SLOTS[i].name) == 0)
            return *(float *const *)(const void *)((const char *)&m->w + GLOBAL_SLOTS[i].off);
    const char *rest;
    const wkv__layer *l = block_of(m, name, &rest);
    for (size_t i = 0; l && i < sizeof LAYER_SLOTS / sizeof *LAYER_SLOTS; i++)
        if (strcmp(rest, LAYER_SLOTS[i].name) == 0)
            return *(float *const *)(const void *)((const char *)l + LAYER_SLOTS[i].off);
    return NULL;
}

const wkv__mat *mat_for(const wkv_model *m, const char *name)
{
    static const slot_name mats[] = {
        LS("attn.query.weight", attn_q),       LS("attn.key.weight", attn_k),
        LS("attn.value.weight", attn_v),       LS("attn.out.weight", attn_o),
        LS("cross_attn.query.weight", cross_q), LS("cross_attn.out.weight", cross_o),
        LS("cross_attn.key.weight", cross_k),  LS("cross_attn.value.weight", cross_v),
        LS("mlp.0.weight", mlp0),              LS("mlp.2.weight", mlp2),
    };
    if (strcmp(name, "decoder.token_embedding.weight") == 0)
        return &m->w.tok;
    if (strcmp(name, "encoder.conv1.weight") == 0)
        return &m->w.conv1;
    if (strcmp(name, "encoder.conv2.weight") == 0)
        return &m->w.conv2;
    const char *rest;
    const wkv__layer *l = block_of(m, name, &rest);
    for (size_t i = 0; l && i < sizeof mats / sizeof *mats; i++)
        if (strcmp(rest, mats[i].name) == 0)
            return (const wkv__mat *)(const void *)((const char *)l + mats[i].off);
    return NULL;
}

const uint16_t *half_for(const wkv_model *m, const char *name)
{
    const wkv__mat *v = mat_for(m, name);
    return v && v->type == WKV_TYPE_F16 ? v->data : NULL;
}

const uint8_t *blocks_for(const wkv_model *m, const char *name)
{
    const wkv__mat *v = mat_for(m, name);
    return v && wkv__quant_block_bytes(v->type) ? v->data : NULL;
}
