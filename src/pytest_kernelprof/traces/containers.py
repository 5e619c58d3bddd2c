"""What a file that is no trace is, where its first bytes tell: another archive or compression
(a zip of a CI artifact, xz, bzip2, zstd, a gzip inside the gzip) or text in UTF-16 or UTF-32.
The reader would call each "not UTF-8 at byte N"; the message says what it is and what to do."""

from __future__ import annotations

# (first bytes, what the file is: what to do), the longer first where one starts another.
_KINDS: tuple[tuple[bytes, str], ...] = (
    (
        b"PK\x03\x04",
        "a zip archive, not a trace (a GitHub artifact download?): unzip it and pass the .json.gz (or .json) inside",
    ),
    (b"PK\x05\x06", "an empty zip archive, not a trace: it holds no file"),
    (b"\xfd7zXZ\x00", "xz-compressed, not a trace as it is: decompress it (xz -dk FILE) and pass the .json it gives"),
    (b"BZh", "bzip2-compressed, not a trace as it is: decompress it (bunzip2 -k FILE) and pass the .json it gives"),
    (
        b"\x28\xb5\x2f\xfd",
        "zstd-compressed, not a trace as it is: decompress it (zstd -d FILE) and pass the .json it gives",
    ),
    (
        b"\xff\xfe\x00\x00",
        "UTF-32 text, not the UTF-8 of a trace: convert it (iconv -f UTF-32 -t UTF-8 FILE > trace.json)",
    ),
    (
        b"\x00\x00\xfe\xff",
        "UTF-32 text, not the UTF-8 of a trace: convert it (iconv -f UTF-32 -t UTF-8 FILE > trace.json)",
    ),
    (b"\xff\xfe", "UTF-16 text, not the UTF-8 of a trace: convert it (iconv -f UTF-16 -t UTF-8 FILE > trace.json)"),
    (b"\xfe\xff", "UTF-16 text, not the UTF-8 of a trace: convert it (iconv -f UTF-16 -t UTF-8 FILE > trace.json)"),
    # Without a byte order mark: '{' and a zero byte, in either order (the trace's first character).
    (b"{\x00", "UTF-16 text, not the UTF-8 of a trace: convert it (iconv -f UTF-16LE -t UTF-8 FILE > trace.json)"),
    (b"\x00{", "UTF-16 text, not the UTF-8 of a trace: convert it (iconv -f UTF-16BE -t UTF-8 FILE > trace.json)"),
)

_GZIP = b"\x1f\x8b"


def other_format(start: bytes | bytearray, *, gunzipped: bool = False) -> str | None:
    """What a file whose (decompressed, where ``gunzipped``) bytes begin with ``start`` is, and
    what to do, where its first bytes name another format; else None."""
    head = bytes(start[:8])
    if gunzipped and head.startswith(_GZIP):
        return (
            "gzipped twice (a gzip stream inside the gzip stream): decompress it once "
            "(gzip -dc FILE > trace.json.gz) and pass that"
        )
    return next((what for magic, what in _KINDS if head.startswith(magic)), None)
