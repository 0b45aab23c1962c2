#!/bin/sh
# Seed 001's page-replacement load: ARG_writers processes, each writing an
# ARG_file_mib file onto its own file system (scratch disk /dev/vdX), all at
# once, with the data forced to disk before each writer ends.
writers=${ARG_writers:?hotline.arg.lruwriters.writers is required}
file_mib=${ARG_file_mib:?hotline.arg.lruwriters.file_mib is required}
disks=$(echo a b c d e f g h i j k l m n o p | cut -d' ' -f1-$writers)

i=0
for d in $disks; do
    [ -b /dev/vd$d ] || { echo "hotline: error: lruwriters: no scratch disk /dev/vd$d"; exit 1; }
    mkdir -p mnt/w$i
    # noinit_itable: no background inode-table zeroing competing with the writers.
    mount -t ext4 -o noinit_itable /dev/vd$d mnt/w$i || exit 1
    i=$((i + 1))
done

hotline-roi begin
i=0
while [ $i -lt $writers ]; do
    dd if=/dev/zero of=mnt/w$i/file bs=64k count=$((file_mib * 16)) conv=fsync 2>/dev/null &
    i=$((i + 1))
done
wait
hotline-roi end

bytes=0
i=0
while [ $i -lt $writers ]; do
    bytes=$((bytes + $(stat -c %s mnt/w$i/file)))
    umount mnt/w$i
    i=$((i + 1))
done
echo "hotline-summary: {\"workload\":\"lruwriters\",\"writers\":$writers,\"file_mib\":$file_mib,\"bytes_written\":$bytes}"
