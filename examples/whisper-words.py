#!/usr/bin/env python3
"""The words of a recording, each with its time, read from the bus: a small
application using the whisperkvtranscriber element through GObject introspection.

  examples/whisper-words.py MODEL FILE

Every final segment is a `whisper-segment` element message; with word-timestamps on
(the transcriber's default) it carries a `words` list of `whisper-word` structures
(word, start, end in ns, probability).  Prints "start - end word" lines.  Needs
python3-gi and gir1.2-gstreamer-1.0; without the plugin installed, run it with
GST_PLUGIN_PATH=build/gst-plugin (or in `meson devenv -C build`).
"""
import sys
import warnings

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

# GValueArray (how PyGObject hands a GstValueList over) is deprecated in GLib, not gone
warnings.filterwarnings("ignore", category=DeprecationWarning)


def on_message(bus, msg, loop):
    if msg.type == Gst.MessageType.ELEMENT:
        s = msg.get_structure()
        if s.get_name() == "whisper-segment" and s.get_value("final"):
            # `words` is a GstValueList: get_list gives it as a GValueArray
            ok, words = s.get_list("words") if s.has_field("words") else (False, None)
            for i in range(words.n_values if ok else 0):
                w = words.get_nth(i)
                print(f"{w.get_value('start') / 1e9:.2f} - {w.get_value('end') / 1e9:.2f} "
                      f"{w.get_value('word').strip()}", flush=True)
    elif msg.type == Gst.MessageType.ERROR:
        err, dbg = msg.parse_error()
        print(f"error: {err.message} ({dbg})", file=sys.stderr)
        loop.quit()
        loop.failed = True
    elif msg.type == Gst.MessageType.EOS:
        loop.quit()


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    Gst.init(None)
    pipe = Gst.parse_launch(
        "filesrc name=src ! decodebin ! whisperkvtranscriber name=w ! fakesink")
    pipe.get_by_name("src").set_property("location", sys.argv[2])
    pipe.get_by_name("w").set_property("model", sys.argv[1])
    loop = GLib.MainLoop()
    loop.failed = False
    bus = pipe.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message, loop)
    pipe.set_state(Gst.State.PLAYING)
    loop.run()
    pipe.set_state(Gst.State.NULL)
    return 1 if loop.failed else 0


if __name__ == "__main__":
    sys.exit(main())
