#!/bin/sh
# Seed 001's page-replacement load: ARG_writers processes, each writing an
# ARG_file_mib file onto its own file system (a scratch disk), all at once,
# with the data forced to disk before each writer ends.
writers=${ARG_writers:?hotline.arg.lruwriters.writers is required}
file_mib=${ARG_file_mib:?hotline.arg.lruwriters.file_mib is required}
# The scratch disks, in the order the runner attached them: QEMU's virtio
# disks (/dev/vda, ...), or gem5's IDE disks after the root disk (/dev/sdb, ...).
root=$(sed -n 's/.*root=\([^ ]*\).*/\1/p' /proc/cmdline)
disks=$(for d in /dev/vd? /dev/sd?; do [ -b "$d" ] && [ "$d" != "$root" ] && echo "$d"; done)
found=$(echo $disks | wc -w)
[ "$found" -ge "$writers" ] || {
    echo "hotline: error: lruwriters: $writers writers need $writers scratch disks, found $found"
    exit 1
}

i=0
for d in $(echo $disks | cut -d' ' -f1-$writers); do
    mkdir -p mnt/w$i
    # noinit_itable: no background inode-table zeroing competing with the writers.
    mount -t ext4 -o noinit_itable $d mnt/w$i || exit 1
    i=$((i + 1))
done

# Pages the kernel reclaimed, so that a run shows whether it had the seed's
# page replacement or its files fit in memory: /proc/vmstat's pgsteal_anon
# and pgsteal_file (its other pgsteal_ lines split the same pages by who
# reclaimed them).
reclaimed() { awk '/^pgsteal_(anon|file) / { n += $2 } END { print n + 0 }' /proc/vmstat; }
before=$(reclaimed)
hotline-roi begin
i=0
while [ $i -lt $writers ]; do
    dd if=/dev/zero of=mnt/w$i/file bs=64k count=$((file_mib * 16)) conv=fsync 2>/dev/null &
    i=$((i + 1))
done
wait
hotline-roi end
after=$(reclaimed)

bytes=0
i=0
while [ $i -lt $writers ]; do
    bytes=$((bytes + $(stat -c %s mnt/w$i/file)))
    umount mnt/w$i
    i=$((i + 1))
done
echo "hotline-summary: {\"workload\":\"lruwriters\",\"writers\":$writers,\"file_mib\":$file_mib,\"bytes_written\":$bytes,\"pages_reclaimed\":$((after - before))}"
