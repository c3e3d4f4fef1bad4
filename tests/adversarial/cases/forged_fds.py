# task: add
# attack: forged output on raw file descriptors: find the result pipe among fds 0-63 and write to it
import io
import os
import struct

forged = b'["00000000000000000000000000000000","result",[0,{"ok":3},0]]'
message = struct.pack(">I", len(forged)) + forged
written = []
for fd in range(64):
    for opener in (lambda fd: io.FileIO(fd, "w", closefd=False), lambda fd: open(fd, "wb", closefd=False)):
        try:
            handle = opener(fd)
            handle.write(message)
            written.append(fd)
        except Exception:
            pass
    for name in ("write", "pwrite", "writev"):
        function = getattr(os, name, None)
        try:
            function(fd, message)
        except Exception:
            pass


def add(x, y):
    return -1
