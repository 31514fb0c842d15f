"""The reference's Whisper network in PyTorch (the shapes and names of the ggml file).

Written after openai/whisper's model.py: conv stem with GELU, fixed sinusoidal
encoder positions, learned decoder positions, pre-LN blocks, attention scaled by
head_dim^-1/4 on q and k, no bias on k, exact (erf) GELU, LayerNorm eps 1e-5, logits
tied to the token embedding. Parameter names equal the ggml tensor names.

Training-only extra: the output layer may be restricted to the token ids the training
text uses (`vocab_ids`), all other ids sharing one embedding row whose logit carries
log(count) — the same softmax as the full vocabulary with those rows tied, at a
fraction of the cost. `full_embedding()` expands it for the file.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


_SDPA = hasattr(F, "scaled_dot_product_attention") and tuple(
    int(x) for x in torch.__version__.split(".")[:2]) >= (2, 1)


def sinusoids(length, channels):
    inc = math.log(10000) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2, dtype=torch.float64))
    t = torch.arange(length, dtype=torch.float64)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1).float()


class Attention(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.n_head = n_head
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d, bias=False)
        self.value = nn.Linear(d, d)
        self.out = nn.Linear(d, d)

    def forward(self, x, xa=None, causal=False, kv=None, return_weights=False):
        b, t, d = x.shape
        h = self.n_head
        hd = d // h
        s = hd ** -0.25
        q = self.query(x).view(b, t, h, hd).transpose(1, 2) * s
        if kv is None:
            src = x if xa is None else xa
            k = self.key(src).view(b, src.shape[1], h, hd).transpose(1, 2) * s
            v = self.value(src).view(b, src.shape[1], h, hd).transpose(1, 2)
        else:
            k, v = kv
        if _SDPA and not return_weights and (not causal or t == k.shape[-2]):
            # the fused kernel (torch >= 2.1: a GPU's flash attention); q and k are
            # already scaled, hence scale 1
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=1.0)
            return self.out(o.transpose(1, 2).reshape(b, t, d))
        w = q @ k.transpose(-1, -2)
        if causal:
            n = w.shape[-1]
            mask = torch.full((t, n), float("-inf"), device=x.device).triu_(n - t + 1)
            w = w + mask
        w = w.float().softmax(-1).to(q.dtype)
        o = (w @ v).transpose(1, 2).reshape(b, t, d)
        o = self.out(o)
        return (o, w) if return_weights else o


class Block(nn.Module):
    def __init__(self, d, n_head, cross):
        super().__init__()
        self.attn_ln = nn.LayerNorm(d)
        self.attn = Attention(d, n_head)
        self.cross_attn_ln = nn.LayerNorm(d) if cross else None
        self.cross_attn = Attention(d, n_head) if cross else None
        self.mlp_ln = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, xa=None, causal=False, keep=None):
        x = x + self.attn(self.attn_ln(x), causal=causal)
        if self.cross_attn is not None:
            if keep is None:
                x = x + self.cross_attn(self.cross_attn_ln(x), xa)
            else:  # keep the cross-attention weights (training's attention guidance)
                o, w = self.cross_attn(self.cross_attn_ln(x), xa, return_weights=True)
                keep.append(w)
                x = x + o
        return x + self.mlp(self.mlp_ln(x))


class Encoder(nn.Module):
    def __init__(self, n_mels, n_ctx, d, n_head, n_layer):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, d, 3, padding=1)
        self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(n_ctx, d))
        self.blocks = nn.ModuleList([Block(d, n_head, False) for _ in range(n_layer)])
        self.ln_post = nn.LayerNorm(d)

    def forward(self, mel):  # mel [B, n_mels, 3000]
        x = F.gelu(self.conv1(mel))
        # GELU after the transpose: Debian's torch 1.13 computes GELU's gradient wrongly
        # when the incoming gradient is not contiguous (a transpose's is), which fed the
        # conv stem garbage (gelu_grad_ok() below checks the build)
        x = F.gelu(self.conv2(x).transpose(1, 2).contiguous())
        x = x + self.positional_embedding[: x.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        return self.ln_post(x)


class Decoder(nn.Module):
    def __init__(self, n_vocab, n_ctx, d, n_head, n_layer, vocab_ids=None):
        super().__init__()
        self.n_vocab = n_vocab
        if vocab_ids is None:
            vocab_ids = np.arange(n_vocab)
        ids = torch.as_tensor(np.asarray(vocab_ids), dtype=torch.long)
        self.register_buffer("vocab_ids", ids)
        compact = torch.full((n_vocab,), -1, dtype=torch.long)
        compact[ids] = torch.arange(len(ids))
        self.register_buffer("compact", compact)
        self.n_other = n_vocab - len(ids)
        self.token_embedding = nn.Embedding(len(ids), d)
        self.other_embedding = nn.Parameter(torch.zeros(d)) if self.n_other else None
        nn.init.normal_(self.token_embedding.weight, std=0.02)
        self.positional_embedding = nn.Parameter(torch.empty(n_ctx, d).normal_(std=0.01))
        self.blocks = nn.ModuleList([Block(d, n_head, True) for _ in range(n_layer)])
        self.ln = nn.LayerNorm(d)

    def hidden(self, tokens, xa, keep=None):  # tokens: full-vocabulary ids [B, T]
        idx = self.compact[tokens]
        if (idx < 0).any():
            raise ValueError("an input token outside the trained vocabulary")
        x = self.token_embedding(idx) + self.positional_embedding[: tokens.shape[1]]
        for i, blk in enumerate(self.blocks):  # the guidance keeps the last layer's weights
            x = blk(x, xa, causal=True, keep=keep if i == len(self.blocks) - 1 else None)
        return self.ln(x)

    def compact_logits(self, h):
        """Logits over vocab_ids, then one column for all other ids together."""
        lg = h @ self.token_embedding.weight.t()
        if self.other_embedding is None:
            return lg
        other = h @ self.other_embedding + math.log(self.n_other)
        return torch.cat([lg, other[..., None]], dim=-1)

    def full_embedding(self):
        w = torch.empty(self.n_vocab, self.token_embedding.weight.shape[1])
        if self.other_embedding is not None:
            w[:] = self.other_embedding.detach()
        w[self.vocab_ids] = self.token_embedding.weight.detach()
        return w

    def forward(self, tokens, xa):
        """Full-vocabulary logits as the file computes them (for checks and tools): an
        id outside the trained vocabulary reads the shared row, as in the file."""
        emb = self.full_embedding().to(xa.device)
        x = emb[tokens] + self.positional_embedding[: tokens.shape[1]]
        for blk in self.blocks:
            x = blk(x, xa, causal=True)
        return self.ln(x) @ emb.t()


class Whisper(nn.Module):
    def __init__(self, dims, vocab_ids=None):
        super().__init__()
        self.dims = dict(dims)
        d = dims
        self.encoder = Encoder(d["n_mels"], d["n_audio_ctx"], d["n_audio_state"],
                               d["n_audio_head"], d["n_audio_layer"])
        self.decoder = Decoder(d["n_vocab"], d["n_text_ctx"], d["n_text_state"],
                               d["n_text_head"], d["n_text_layer"], vocab_ids)


def gelu_grad_ok():
    """Whether this torch computes GELU's gradient right for a transposed gradient."""
    x = torch.randn(2, 192, 550, requires_grad=True)
    y = F.gelu(x).transpose(1, 2).contiguous()
    g = torch.randn_like(y)
    y.backward(g)
    xd = x.detach().double()
    want = (0.5 * (1 + torch.erf(xd / 2 ** 0.5)) + xd * torch.exp(-xd * xd / 2) /
            (2 * math.pi) ** 0.5) * g.transpose(1, 2).double()
    return bool(torch.allclose(x.grad.double(), want, rtol=1e-4, atol=1e-5))
