#!/usr/bin/env python3
"""Every allocation goes through the allocation functions (issue 33, item 1).

    check_alloc.py SOURCE_ROOT

core/: no direct malloc, calloc, realloc, reallocarray, strdup, strndup, aligned_alloc,
posix_memalign, memalign or valloc outside core/base/util.c, which holds wkv__malloc
and the others (the allocation-failure hook, wkv_debug_alloc_fail, sees only those).

gst-plugin/: GLib's allocators abort on failure, so the element's allocations sized by
its input (audio, speech, scratch, words) go through gst_whisper_try_renew /
gst_whisper_try_new (gst-plugin/gstwhisperalloc.c), which fail with an ERROR and count
in the same hook: a call of g_malloc, g_malloc0, g_new, g_new0, g_renew, g_realloc,
g_memdup2, malloc, calloc or realloc whose size is not a constant (g_new(T, 1) and
sizeof only) fails here, and so does a g_try_* allocation outside gstwhisperalloc.c
(it would escape the hook).  GLib's containers and strings (GArray, g_strdup) are not
looked at: docs/reliability.md, "Allocation failure".
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

ELEMENT_ALLOC = "gst-plugin/gstwhisperalloc.c"
GLIB_TRY = re.compile(
    r"(?<![A-Za-z0-9_>.])(g_try_malloc0?(_n)?|g_try_new0?|g_try_renew|g_try_realloc(_n)?)\s*\(")


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
    for path in sorted((root / "gst-plugin").glob("*.c")):
        rel = path.relative_to(root).as_posix()
        for no, line in enumerate(strip_comments(path.read_text()).splitlines(), 1):
            for m in GLIB_CALL.finditer(line):
                if not constant_size(line, m):
                    bad.append(f"{rel}:{no}: {m.group(1)}() sized by data aborts when memory "
                               f"is short: use gst_whisper_try_renew or gst_whisper_try_new "
                               f"({ELEMENT_ALLOC}) and post gst_whisper_alloc_error: "
                               f"{line.strip()}")
            if rel == ELEMENT_ALLOC:
                continue
            for m in GLIB_TRY.finditer(line):
                bad.append(f"{rel}:{no}: {m.group(1)}() outside {ELEMENT_ALLOC} escapes the "
                           f"allocation-failure hook: use gst_whisper_try_renew: {line.strip()}")
    for b in bad:
        print(b)
    print(f"check_alloc: {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
