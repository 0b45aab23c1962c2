#!/bin/sh
# Seed 000's fork/exit storm: ARG_instances concurrent copies of the loop
#
#     while [ $count != 500 ]; do ( cat foo | wc -l ) > /dev/null; ...; done
#
# each running ARG_iterations times, all inside one region of interest.
instances=${ARG_instances:?hotline.arg.instances is required}
iterations=${ARG_iterations:?hotline.arg.iterations is required}

seq 1 100 > foo
if [ "$(cat foo | wc -l)" != 100 ]; then
    echo "hotline: error: forkstorm: cat foo | wc -l does not count 100 lines"
    exit 1
fi

doit() {
    ( cat $1 | wc -l )
}

loop() {
    count=0
    while [ $count != $iterations ]; do
        doit foo > /dev/null
        count=$(expr $count + 1)
    done
    echo $count > "done.$1"
}

hotline-roi begin
i=0
while [ $i != $instances ]; do
    loop $i &
    i=$(expr $i + 1)
done
wait
hotline-roi end

completed=0
for f in done.*; do completed=$(expr $completed + $(cat $f)); done
echo "hotline-summary: {\"workload\":\"forkstorm\",\"instances\":$instances,\"iterations\":$iterations,\"loops_completed\":$completed}"
