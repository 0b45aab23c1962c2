# Shared by every scriptstorm script, as git's t/test-lib.sh is by its tests:
# sourced text that every script reads, and a helper that runs one test case
# in a subshell and reports it.
passed=0
failed=0

test_expect_success() {
    if ( eval "$2" ) > /dev/null 2>&1; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "not ok - $1" >&2
    fi
}

test_cmp() {
    cmp -s "$1" "$2"
}

test_done() {
    echo "$passed $failed" > "result.$script"
}
