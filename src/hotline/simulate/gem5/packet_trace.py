"""gem5 packet traces: the files a MemTraceProbe writes, read (and, for tests,
written) with the protobuf library.

The message types come from hotline's own packet.proto beside this file (the
field numbers of gem5 v24.0's src/proto/packet.proto), through protoc's
generated classes (packet_pb2.py, made from it by Debian's protoc;
tests/test_protos.py checks that they are what protoc makes of it now).

File layout (gem5's src/proto/protoio.cc): gzip if the name ends in .gz (we
look at the gzip magic instead, as gem5's reader does), then the
little-endian 32-bit magic 0x356d6567 ("gem5"), then varint-length-delimited
messages: one PacketHeader, then Packets until the end of the file.
"""

import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator


from hotline.errors import HotlineError
from hotline.simulate.gem5 import packet_pb2

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

def message_classes() -> tuple[type, type]:
    """(PacketHeader, Packet): protoc's classes for packet.proto."""
    return packet_pb2.PacketHeader, packet_pb2.Packet


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
