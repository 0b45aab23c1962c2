"""hotline's TOML files (system and experiment specs, workload definitions)
read into pydantic models, every error one line naming the file and the key.

Models are strict: an integer key takes an integer, not `true` or "4"."""

import json
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from hotline.errors import HotlineError
from hotline.inputs import read_text


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _allowed_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    """The keys allowed where `loc` points, by walking the model's fields."""
    for part in loc[:-1]:
        if isinstance(part, int) or part not in model.model_fields:
            continue
        annotation = model.model_fields[part].annotation
        for candidate in getattr(annotation, "__args__", ()) + (annotation,):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                model = candidate
                break
    return sorted(model.model_fields)


def toml_value(value, limit: int = 60) -> str:
    """A value as it is written in TOML (true, "4", 1.5), for error messages,
    cut to `limit` characters."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def one_line(path: Path, model: type[BaseModel], error: ValidationError) -> str:
    first = error.errors()[0]
    loc = first["loc"]
    key = ".".join(str(p) for p in loc) or "(top level)"
    if first["type"] == "extra_forbidden":
        return f"{path}: unknown key '{key}'; allowed here: {', '.join(_allowed_keys(model, loc))}"
    if first["type"] == "missing":
        return f"{path}: missing key '{key}'"
    message = f"{path}: key '{key}': {first['msg']}"
    if first["type"].endswith("_type"):
        # "Input should be a valid integer": say what it was instead.
        message += f", not {toml_value(first['input'])}"
    return message


def read(path: Path) -> dict:
    """A TOML file's table, or a one-line error saying why it cannot be had."""
    if Path(path).is_dir():
        raise HotlineError(f"{path}: a directory, not a TOML file")
    text = read_text(path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise HotlineError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise HotlineError(f"{path}: nested too deeply to be a hotline spec (arrays or tables "
                           "inside one another hundreds of levels deep)") from None


def parse(path: Path, model: type[BaseModel]):
    """The file's contents as `model`."""
    return validate(path, read(path), model)


def validate(path: Path, table: dict, model: type[BaseModel]):
    """A table read from `path` (or made from it) as `model`."""
    try:
        return model.model_validate(table)
    except ValidationError as e:
        raise HotlineError(one_line(path, model, e)) from None
