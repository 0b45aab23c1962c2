"""gem5 packet traces: the files a MemTraceProbe writes, read (and, for tests,
written) with the protobuf library.

The message types come from hotline's own packet.proto beside this file (the
field numbers of gem5 v24.0's src/proto/packet.proto).  Rather than vendor
protoc's output, the .proto is read here by a parser for the small part of
the language it uses (proto2 messages, nested messages, scalar fields) and
turned into descriptors, so the .proto stays the one definition.

File layout (gem5's src/proto/protoio.cc): gzip if the name ends in .gz (we
look at the gzip magic instead, as gem5's reader does), then the
little-endian 32-bit magic 0x356d6567 ("gem5"), then varint-length-delimited
messages: one PacketHeader, then Packets until the end of the file.
"""

import gzip
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import BinaryIO, Iterator

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from hotline.errors import HotlineError
from hotline.inputs import read_text

PROTO = Path(__file__).with_name("packet.proto")
MAGIC = b"gem5"

# MemCmd::Command of gem5 v24.0 (src/mem/packet.hh, in declaration order;
# MemFenceReq is SwapResp + 3).  The trace stores the number.
MEM_CMDS = (
    "InvalidCmd", "ReadReq", "ReadResp", "ReadRespWithInvalidate", "WriteReq", "WriteResp",
    "WriteCompleteResp", "WritebackDirty", "WritebackClean", "WriteClean", "CleanEvict",
    "SoftPFReq", "SoftPFExReq", "HardPFReq", "SoftPFResp", "HardPFResp", "WriteLineReq",
    "UpgradeReq", "SCUpgradeReq", "UpgradeResp", "SCUpgradeFailReq", "UpgradeFailResp",
    "ReadExReq", "ReadExResp", "ReadCleanReq", "ReadSharedReq", "LoadLockedReq",
    "StoreCondReq", "StoreCondFailReq", "StoreCondResp", "LockedRMWReadReq",
    "LockedRMWReadResp", "LockedRMWWriteReq", "LockedRMWWriteResp", "SwapReq", "SwapResp",
)
CMD = {name: number for number, name in enumerate(MEM_CMDS)}

# Request flags of gem5 v24.0 (src/mem/request.hh) that the trace's 32-bit
# flags field keeps and hotline reads.
FLAG_INST_FETCH = 0x00000100
FLAG_UNCACHEABLE = 0x00000400
FLAG_LOCKED_RMW = 0x00100000
FLAG_PREFETCH = 0x01000000
FLAG_PT_WALK = 0x20000000

_SCALARS = {
    "uint32": descriptor_pb2.FieldDescriptorProto.TYPE_UINT32,
    "uint64": descriptor_pb2.FieldDescriptorProto.TYPE_UINT64,
    "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    "int64": descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "bytes": descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
}
_LABELS = {
    "required": descriptor_pb2.FieldDescriptorProto.LABEL_REQUIRED,
    "optional": descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    "repeated": descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
}
_TOKEN = re.compile(r'\s+|//[^\n]*|"[^"]*"|[A-Za-z_][\w.]*|\d+|[{}=;\[\]]')


def _tokens(text: str) -> list[str]:
    tokens, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise HotlineError(f"{PROTO}: cannot read the .proto at {text[pos:pos + 20]!r}")
        if not m.group().isspace() and not m.group().startswith("//"):
            tokens.append(m.group())
        pos = m.end()
    return tokens


def parse_proto(text: str) -> descriptor_pb2.FileDescriptorProto:
    """A FileDescriptorProto for a proto2 file of messages with scalar and
    message-typed fields (what packet.proto uses; anything else is refused)."""
    tokens = _tokens(text)
    file = descriptor_pb2.FileDescriptorProto(name=PROTO.name, syntax="proto2")
    pos = 0
    known, pending = set(), []   # message full names; message-typed fields to resolve

    def take(expected: str | None = None) -> str:
        nonlocal pos
        token = tokens[pos]
        if expected is not None and token != expected:
            raise HotlineError(f"{PROTO}: expected '{expected}', found '{token}'")
        pos += 1
        return token

    def message(into, scope: str) -> None:
        msg = into.add(name=take())
        full = f"{scope}.{msg.name}"
        known.add(full)
        take("{")
        while tokens[pos] != "}":
            if tokens[pos] == "message":
                take()
                message(msg.nested_type, full)
                continue
            label, type_name, name = take(), take(), take()
            take("=")
            number = int(take())
            if label not in _LABELS:
                raise HotlineError(f"{PROTO}: field '{name}': unknown label '{label}'")
            field = msg.field.add(name=name, number=number, label=_LABELS[label])
            if type_name in _SCALARS:
                field.type = _SCALARS[type_name]
            else:
                field.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
                pending.append((field, full, type_name))
            if tokens[pos] == "[":  # options such as [default = 0]: proto2 defaults suffice
                while take() != "]":
                    pass
            take(";")
        take("}")

    while pos < len(tokens):
        word = take()
        if word == "syntax":
            take("=")
            if take() != '"proto2"':
                raise HotlineError(f"{PROTO}: only proto2 is supported")
            take(";")
        elif word == "package":
            file.package = take()
            take(";")
        elif word == "message":
            message(file.message_type, f".{file.package}" if file.package else "")
        else:
            raise HotlineError(f"{PROTO}: unexpected '{word}'")
    # A message type name is looked up from the innermost scope outwards.
    for field, scope, type_name in pending:
        candidates = [f"{scope.rsplit('.', n)[0]}.{type_name}" for n in range(scope.count("."))]
        found = next((c for c in candidates if c in known), None)
        if found is None:
            raise HotlineError(f"{PROTO}: field '{field.name}': unknown type '{type_name}'")
        field.type_name = found
    return file


@cache
def message_classes() -> tuple[type, type]:
    """(PacketHeader, Packet) message classes built from packet.proto."""
    pool = descriptor_pool.DescriptorPool()
    file = pool.Add(parse_proto(read_text(PROTO)))
    package = file.package
    header = pool.FindMessageTypeByName(f"{package}.PacketHeader")
    packet = pool.FindMessageTypeByName(f"{package}.Packet")
    return message_factory.GetMessageClass(header), message_factory.GetMessageClass(packet)


@dataclass(frozen=True)
class Header:
    obj_id: str
    tick_freq: int
    requestors: dict[int, str]


def _open(path: Path) -> BinaryIO:
    with open(path, "rb") as f:
        compressed = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if compressed else open(path, "rb")


_CHUNK = 1 << 20


def _messages(stream: BinaryIO) -> Iterator[bytes]:
    """The varint-length-delimited messages of a stream, read in large chunks
    (a trace of a Linux boot holds tens of millions of them)."""
    buf, pos = b"", 0

    def fill(need: int) -> bool:
        nonlocal buf, pos
        while len(buf) - pos < need:
            more = stream.read(max(_CHUNK, need))
            if not more:
                return False
            buf, pos = buf[pos:] + more, 0
        return True

    while True:
        fill(10)  # a varint32 has at most 5 bytes; 10 covers any varint
        if pos == len(buf):
            return
        size = shift = 0
        while True:
            if pos == len(buf):
                raise EOFError("file ends inside a length prefix")
            byte = buf[pos]
            pos += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        if not fill(size):
            raise EOFError("file ends inside a message")
        yield buf[pos:pos + size]
        pos += size


def read_trace(path: Path) -> tuple[Header, Iterator]:
    """The trace's header, and an iterator over its Packet messages.  A file
    cut short (gem5 killed before it closed its streams) ends the iteration
    with a HotlineError naming the file."""
    header_cls, packet_cls = message_classes()
    stream = _open(path)
    try:
        if stream.read(4) != MAGIC:
            raise HotlineError(f"{path}: not a gem5 packet trace (no 'gem5' magic)")
        messages = _messages(stream)  # one reader: it buffers ahead
        first = next(messages, None)
    except (EOFError, OSError) as e:
        raise HotlineError(f"{path}: unreadable packet trace: {e}") from None
    if first is None:
        raise HotlineError(f"{path}: packet trace has no header")
    msg = header_cls.FromString(first)
    header = Header(msg.obj_id, msg.tick_freq, {e.key: e.value for e in msg.id_strings})

    def packets():
        try:
            for data in messages:
                yield packet_cls.FromString(data)
        except (EOFError, OSError) as e:
            raise HotlineError(f"{path}: packet trace cut short: {e}") from None
        finally:
            stream.close()
    return header, packets()


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def write_trace(path: Path, header: Header, packets: list[dict]) -> None:
    """Write a trace as gem5 does (gzip if the name ends in .gz); packets are
    dicts of Packet fields.  For tests and for hand-made examples."""
    header_cls, packet_cls = message_classes()
    msg = header_cls(obj_id=header.obj_id, tick_freq=header.tick_freq)
    for key, value in sorted(header.requestors.items()):
        msg.id_strings.add(key=key, value=value)
    chunks = [MAGIC]
    for m in [msg] + [packet_cls(**p) for p in packets]:
        data = m.SerializeToString()
        chunks += [_varint(len(data)), data]
    blob = b"".join(chunks)
    if path.suffix == ".gz":
        with gzip.open(path, "wb") as f:
            f.write(blob)
    else:
        path.write_bytes(blob)
