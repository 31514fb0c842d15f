"""The training loss, one for both trainers (train.py, train_gpu.py): next-token
cross-entropy over the compact output, a character CTC loss on the encoder output
(training only; per window over its characters, a silent window has none) and the
attention guidance (the query at position i predicts label i: its last-layer
cross-attention mass on the frames of that token's word, every head, as -log(mass))."""
import torch
import torch.nn.functional as F


def losses(model, ctc_head, mels, tok, lab, ctc_t, frames, ctc_len, span, use_ctc,
           use_guide, autocast_device, bf16=True):
    """(ce, ctc, guide) of a batch; all arguments already on the model's device."""
    dev = mels.device
    with torch.autocast(device_type=autocast_device, dtype=torch.bfloat16, enabled=bf16):
        xa = model.encoder(mels)
        keep = [] if use_guide else None
        h = model.decoder.hidden(tok, xa, keep)
        logits = model.decoder.compact_logits(h).float()
        ce = F.cross_entropy(logits.view(-1, logits.shape[-1]), lab.view(-1),
                             ignore_index=-100)
        lp = ctc_head(xa).float().log_softmax(-1).transpose(0, 1)
    ctc = torch.zeros((), device=dev)
    if use_ctc:
        per = F.ctc_loss(lp, ctc_t, frames, ctc_len, reduction="none", zero_infinity=True)
        ctc = (per / ctc_len.clamp(min=1)).mean()
    guide = torch.zeros((), device=dev)
    if use_guide:
        w = keep[-1].float()  # [B, H, T, frames]
        cw = torch.cat([torch.zeros_like(w[..., :1]), w.cumsum(-1)], dim=-1)
        ok = span[..., 0] >= 0
        s0 = span[..., 0].clamp(min=0)[:, None, :, None].expand(-1, w.shape[1], -1, 1)
        s1 = span[..., 1].clamp(min=1)[:, None, :, None].expand(-1, w.shape[1], -1, 1)
        mass = (cw.gather(-1, s1) - cw.gather(-1, s0)).squeeze(-1)  # [B, H, T]
        if ok.any():
            guide = -torch.log(mass.clamp(min=1e-6)).mean(1)[ok].mean()
    return ce, ctc, guide
