"""Content hashes that name artifacts: the same inputs always give the same key."""

import hashlib
import json
from pathlib import Path


def hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hash_json(value) -> str:
    """Hash of a JSON-able value, independent of dict order."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def hash_files(paths: list[Path], root: Path) -> dict[str, str]:
    """{path relative to root: sha256} for the given files."""
    return {str(p.relative_to(root)): hash_file(p) for p in sorted(paths)}


def short(key: str) -> str:
    return key[:16]
