"""The one way hotline reads a text file it did not just write itself (specs,
series, manifests, records, the kernel build's facts): as UTF-8, with every
failure one HotlineError naming the file and what is wrong."""

from pathlib import Path

from hotline.errors import HotlineError


def read_text(path: Path) -> str:
    path = Path(path)
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise HotlineError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise HotlineError(f"{path}: a directory, not a file") from None
    except OSError as e:
        raise HotlineError(f"{path}: cannot be read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise HotlineError(f"{path}: not UTF-8 text (byte {e.object[e.start]:#04x} at offset "
                           f"{e.start}); hotline reads its text files as UTF-8") from None
