"""The protobuf classes hotline writes with (pprof_pb2.py for pprof's
profiles) are what protoc makes of the .proto files beside them now: the
.proto is the one definition, and a change to it without the classes made
again fails here.  To make them again (Debian's protobuf-compiler):

    protoc --python_out=src/hotline/report -I src/hotline/report src/hotline/report/pprof.proto
"""

import shutil
import subprocess

import pytest

from hotline import paths

PROTOS = [paths.REPO / "src" / "hotline" / "report" / "pprof.proto"]


@pytest.mark.parametrize("proto", PROTOS, ids=lambda p: p.name)
def test_the_generated_classes_are_protocs_of_the_proto(proto, tmp_path):
    if shutil.which("protoc") is None:
        pytest.skip("protoc is not installed (Debian's protobuf-compiler; ./hotline test "
                    "installs it)")
    subprocess.run(["protoc", f"--python_out={tmp_path}", "-I", str(proto.parent),
                    str(proto)], check=True)
    generated = proto.with_name(f"{proto.stem}_pb2.py")
    assert (tmp_path / generated.name).read_bytes() == generated.read_bytes()
