"""The whisperkv engine through ctypes: the tokenizer the engine uses (so training
tokens equal what the engine encodes) and its forward pass (for the logits check).
Finds the library in a meson build directory (WHISPERKV_BUILD, default build/)."""
import ctypes
import os
import subprocess

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_dir():
    return os.environ.get("WHISPERKV_BUILD", os.path.join(ROOT, "build"))


def shared_dir():
    d = os.environ.get("WHISPERKV_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
    if not os.path.isdir(os.path.join(d, "models")):
        raise SystemExit(f"the shared data folder is missing ({d}); set WHISPERKV_SHARED")
    return d


class Hparams(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int32) for n in (
        "n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer",
        "n_text_ctx", "n_text_state", "n_text_head", "n_text_layer", "n_mels", "ftype")]


class Engine:
    def __init__(self, model_path):
        lib = ctypes.CDLL(os.path.join(build_dir(), "core", "libwhisperkv.so"))
        vp, cp, ip = ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)
        fp = ctypes.POINTER(ctypes.c_float)
        err = ctypes.POINTER(ctypes.c_char_p)
        for name, res, args in (
                ("wkv_model_load", vp, [cp, err]), ("wkv_model_free", None, [vp]),
                ("wkv_model_hparams", ctypes.POINTER(Hparams), [vp]),
                ("wkv_text_to_tokens", ctypes.c_int, [vp, cp, ip, ctypes.c_int]),
                ("wkv_context_new", vp, [vp, ctypes.c_int, err]),
                ("wkv_context_free", None, [vp]),
                ("wkv_context_set_compute_type", ctypes.c_int, [vp, ctypes.c_int, err]),
                ("wkv_encode", ctypes.c_int, [vp, fp]),
                ("wkv_encoder_output", fp, [vp]),
                ("wkv_decode", ctypes.c_int, [vp, ip, ctypes.c_int, fp]),
                ("wkv_decode_reset", None, [vp]),
                ("wkv_tokens_to_text", vp, [vp, ip, ctypes.c_int, ctypes.c_int])):
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
        self.lib = lib
        e = ctypes.c_char_p()
        self.model = lib.wkv_model_load(model_path.encode(), ctypes.byref(e))
        if not self.model:
            raise RuntimeError(f"wkv_model_load: {e.value.decode() if e.value else '?'}")
        self.hp = lib.wkv_model_hparams(self.model).contents
        self.ctx = None

    def tokens(self, text):
        b = text.encode()
        n = self.lib.wkv_text_to_tokens(self.model, b, None, 0)
        if n < 0:
            raise ValueError(f"cannot tokenize {text!r}")
        out = (ctypes.c_int * max(n, 1))()
        self.lib.wkv_text_to_tokens(self.model, b, out, n)
        return list(out[:n])

    def text(self, tokens):
        """The text of `tokens` (ids below <|endoftext|>), as the reference decodes it."""
        t = (ctypes.c_int * max(1, len(tokens)))(*tokens)
        p = self.lib.wkv_tokens_to_text(self.model, t, len(tokens), 1)
        s = ctypes.string_at(p).decode()
        ctypes.CDLL(None).free(ctypes.c_void_p(p))
        return s

    def context(self, threads=1, compute_type=None):
        e = ctypes.c_char_p()
        self.ctx = self.lib.wkv_context_new(self.model, threads, ctypes.byref(e))
        if not self.ctx:
            raise RuntimeError(e.value.decode())
        if compute_type is not None and self.lib.wkv_context_set_compute_type(
                self.ctx, compute_type, ctypes.byref(e)) != 0:
            raise RuntimeError(e.value.decode())

    def encode(self, mel):  # mel: float32 [n_mels, 3000]
        m = np.ascontiguousarray(mel, dtype=np.float32)
        if self.lib.wkv_encode(self.ctx, m.ctypes.data_as(ctypes.POINTER(ctypes.c_float))):
            raise RuntimeError("wkv_encode failed")
        p = self.lib.wkv_encoder_output(self.ctx)
        return np.ctypeslib.as_array(p, shape=(self.hp.n_audio_ctx, self.hp.n_audio_state)).copy()

    def decode(self, tokens):
        """Logits of the last position after appending `tokens` (from a reset cache)."""
        self.lib.wkv_decode_reset(self.ctx)
        t = (ctypes.c_int * len(tokens))(*tokens)
        out = np.zeros(self.hp.n_vocab, np.float32)
        if self.lib.wkv_decode(self.ctx, t, len(tokens),
                               out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))):
            raise RuntimeError("wkv_decode failed")
        return out


def vocab_engine(cache_dir):
    """An engine on a tiny random model carrying the real English vocabulary: enough
    for tokenizing (the vocabulary, not the weights, decides the tokens)."""
    path = os.path.join(cache_dir, "vocab-en.bin")
    if not os.path.exists(path):
        os.makedirs(cache_dir, exist_ok=True)
        src = os.path.join(shared_dir(), "models", "for-tests-ggml-tiny.en.bin")
        subprocess.run([os.path.join(build_dir(), "tests", "gen_model"), "--out", path,
                        "--size", "micro", "--vocab-from", src], check=True,
                       capture_output=True)
    return Engine(path)
