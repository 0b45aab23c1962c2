# One scriptstorm script (instance number $script), in the manner of a git
# test: a handful of cases, each running small programs through pipes and
# comparing what they print with what is expected.
. ../lib.sh
n=$((50 + script % 50))
mkdir -p "work.$script" && cd "work.$script" || exit 1

test_expect_success 'seq and wc agree' '
    seq 1 $n > numbers &&
    test "$(wc -l < numbers)" -eq $n
'
test_expect_success 'sort is idempotent' '
    sort -r numbers | sort -n > sorted &&
    test_cmp numbers sorted
'
test_expect_success 'tr round trip' '
    head -n $n ../../words | tr a-z A-Z | tr A-Z a-z > words &&
    head -n $n ../../words | test_cmp - words
'
test_expect_success 'sed and cut' '
    sed "s/^/line /" numbers | cut -d" " -f2 > cut &&
    test_cmp numbers cut
'
test_expect_success 'grep counts' '
    test "$(grep -c 7 numbers)" -eq "$(grep 7 numbers | wc -l)"
'
test_expect_success 'uniq after sort' '
    cat numbers numbers | sort -n | uniq > once &&
    test_cmp numbers once
'
cd .. && rm -rf "work.$script"
test_done
