#!/usr/bin/env python3
"""Every allocation goes through the allocation functions (issue 33, item 1).

    check_alloc.py SOURCE_ROOT

core/: no direct malloc, calloc, realloc, reallocarray, strdup, strndup, aligned_alloc,
posix_memalign, memalign or valloc outside core/base/util.c, which holds wkv__malloc
and the others (the allocation-failure hook, wkv_debug_alloc_fail, sees only those).

gst-plugin/: GLib's allocators abort on failure, so the element's allocations sized by
its input (audio, speech, scratch) are the ones that matter; every call of g_malloc,
g_malloc0, g_new, g_new0, g_renew, g_realloc, g_memdup2, malloc, calloc or realloc
whose size is not a constant (g_new(T, 1) and sizeof only) must be listed in
ELEMENT_SIZED below with why, so a new one fails here until it is looked at.
Comments are left out.  Exits 1 and names each offending line.
"""
import pathlib
import re
import sys

CORE_ALLOWED = {"core/base/util.c"}
CORE_CALL = re.compile(
    r"(?<![A-Za-z0-9_>.])(malloc|calloc|realloc|reallocarray|strdup|strndup|aligned_alloc|"
    r"posix_memalign|memalign|valloc)\s*\(")
GLIB_CALL = re.compile(
    r"(?<![A-Za-z0-9_>.])(g_malloc0?|g_new0?|g_renew|g_realloc|g_memdup2|malloc|calloc|"
    r"realloc)\s*\(")

# The element's allocations sized by data, each looked at (file: substring of the line).
# They use GLib's aborting allocators; making them fail cleanly is left (reliability.md).
ELEMENT_SIZED = {
    ("gst-plugin/gstwhisperqueue.c", "g_renew(float, it->pcm, it->cap)"): "queued audio",
    ("gst-plugin/gstwhispervad.c", "g_new(float, n_speech + 1)"): "speech of a stretch",
    ("gst-plugin/gstwhisperworker.c", "g_renew(float, w->scratch, n)"): "a window's audio",
    ("gst-plugin/gstwhisperworker.c", "g_new(wkv_word, MAX(1, speech_seg->n_words))"):
        "a segment's words (at most a window's tokens)",
    ("gst-plugin/gstwhisperlive.c", "g_new(wkv_word, words->len + 1)"):
        "a live segment's words (at most a window's tokens)",
}


def strip_comments(text):
    """C text with comments blanked (line numbers kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def constant_size(line, m):
    """g_new(T, 1) / g_new0(T, 1), or a size made of sizeof and numbers only."""
    args = line[m.end():]
    depth, end = 1, 0
    for end, c in enumerate(args):
        depth += c == "("
        depth -= c == ")"
        if depth == 0:
            break
    args = args[:end]
    if m.group(1) in ("g_new", "g_new0"):
        return args.split(",", 1)[-1].strip() == "1"
    return re.fullmatch(r"[\s\d*+()]*(sizeof\s*\(?[\w\s*]+\)?[\s\d*+()]*)*", args) is not None


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    bad = []
    for path in sorted((root / "core").rglob("*.[ch]")):
        rel = path.relative_to(root).as_posix()
        if rel in CORE_ALLOWED:
            continue
        for no, line in enumerate(strip_comments(path.read_text()).splitlines(), 1):
            for m in CORE_CALL.finditer(line):
                bad.append(f"{rel}:{no}: direct {m.group(1)}(): use wkv__{m.group(1)} "
                           f"(base/util.h) so that allocation failure can be tested")
    seen = set()
    for path in sorted((root / "gst-plugin").glob("*.c")):
        rel = path.relative_to(root).as_posix()
        for no, line in enumerate(strip_comments(path.read_text()).splitlines(), 1):
            for m in GLIB_CALL.finditer(line):
                if constant_size(line, m):
                    continue
                key = next((k for k in ELEMENT_SIZED if k[0] == rel and k[1] in line), None)
                if key:
                    seen.add(key)
                    continue
                bad.append(f"{rel}:{no}: {m.group(1)}() sized by data, not in "
                           f"tools/check_alloc.py's ELEMENT_SIZED: {line.strip()}")
    for key in ELEMENT_SIZED:
        if key not in seen:
            bad.append(f"{key[0]}: ELEMENT_SIZED lists '{key[1]}', which is not there any more")
    for b in bad:
        print(b)
    print(f"check_alloc: {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
