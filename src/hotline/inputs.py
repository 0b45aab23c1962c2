"""The one way hotline reads a text file it did not just write itself (specs,
series, manifests, records, the kernel build's facts): as UTF-8, with every
failure one HotlineError naming the file and what is wrong."""

from pathlib import Path

from hotline.errors import HotlineError


# Larger than any spec, series, manifest or record hotline writes: a file
# past it (or /dev/zero) is not one of them, and is not read to the end.
MAX_BYTES = 64 << 20


def read_text(path: Path, limit: int = MAX_BYTES) -> str:
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:
            raise HotlineError(f"{path}: larger than {limit >> 20} MiB, which no file hotline "
                               "reads as text is: give the spec, manifest or record itself")
        return data.decode("utf-8")
    except FileNotFoundError:
        raise HotlineError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise HotlineError(f"{path}: a directory, not a file") from None
    except OSError as e:
        raise HotlineError(f"{path}: cannot be read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise HotlineError(f"{path}: not UTF-8 text (byte {e.object[e.start]:#04x} at offset "
                           f"{e.start}); hotline reads its text files as UTF-8") from None
