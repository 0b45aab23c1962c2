"""bench/groundtruth.py's arithmetic on numbers worked out by hand (the
baseline subtracted round by round, the median's interval from order
statistics, differences over paired rounds), and bench/groundtruth.c: it
compiles without warnings, natively and as a guest build, and a run of a
few iterations writes a well-formed line for every pattern.  No timing is
checked: speed goals live in bench/, never in the tests."""

import importlib.util
import json
import math
import platform
import subprocess

import pytest

from hotline import paths
from tests.conftest import require_tools

spec = importlib.util.spec_from_file_location("groundtruth",
                                              paths.REPO / "bench" / "groundtruth.py")
groundtruth = importlib.util.module_from_spec(spec)
spec.loader.exec_module(groundtruth)


def test_each_round_loses_its_own_baseline():
    assert groundtruth.net([10.0, 12.0, 11.0], [1.0, 2.0, 1.5]) == [9.0, 10.0, 9.5]
    with pytest.raises(ValueError, match="3 rounds against 2"):
        groundtruth.net([1.0, 2.0, 3.0], [1.0, 2.0])


def test_the_medians_interval_is_the_order_statistics_binomial_half_gives():
    # n = 15: P(B <= 3) = (1 + 15 + 105 + 455) / 2^15 = 576/32768, so
    # [x_(4), x_(12)] covers the median with 1 - 2 * 576/32768; one step
    # further in, P(B <= 4) = 1941/32768 gives 0.88, under 95%.
    values = [15, 3, 9, 1, 12, 7, 5, 14, 2, 11, 8, 4, 13, 6, 10]
    assert groundtruth.median_interval(values) == (4, 12, 1 - 2 * 576 / 32768)
    # n = 10: P(B <= 1) = 11/1024: [x_(2), x_(9)].
    assert groundtruth.median_interval(list(range(10, 0, -1))) == (2, 9, 1 - 2 * 11 / 1024)
    # n = 5 cannot reach 95%: the range, with the coverage it has (1 - 2/32).
    assert groundtruth.median_interval([5, 1, 4, 2, 3]) == (1, 5, 1 - 2 / 32)


def test_summary_gives_median_interval_and_range():
    s = groundtruth.summary([2.0, 4.0, 1.0, 3.0, 100.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    # sorted: 1..9, 100; median (5 + 6) / 2; interval [x_(2), x_(9)].
    assert s == {"median": 5.5, "interval": [2.0, 9.0], "coverage": round(1 - 22 / 1024, 4),
                 "range": [1.0, 100.0]}


def test_differences_are_taken_round_by_round():
    assert groundtruth.paired_differences([5.0, 7.0, 6.0], [1.0, 2.0, 3.0]) == [4.0, 5.0, 3.0]
    with pytest.raises(ValueError, match="not paired"):
        groundtruth.paired_differences([1.0], [1.0, 2.0])


def record(pattern: str, cycles: list[float], baseline: list[float]) -> dict:
    return {"pattern": pattern, "group": "forwarding", "timing": "loop",
            "baseline": "empty_loop", "iterations": 1000, "rounds": len(cycles),
            "cycles": cycles, "baseline_cycles": baseline}


def test_analyse_subtracts_then_pairs_the_rounds():
    ones = [1.0] * 10
    movb_net = [3.0, -1.0, 2.0, -2.0, 1.0, 0.0, 4.0, -3.0, 1.0, -1.0]
    records = [
        record("lock_andb_load", [21.0] * 10, ones),                 # net 20 every round
        record("lock_andq_load", [11.0, 12.0] * 5, [1.0, 2.0] * 5),  # net 10 every round
        record("movb_load", [v + 1.0 for v in movb_net], ones),
        record("movq_load", ones, ones),                              # net 0
        {"pattern": "pingpong", "group": "sharing", "timing": "threads",
         "skipped": "needs cpu 1, which this process may not use"},
    ]
    rows, differences = groundtruth.analyse(groundtruth.read_lines(
        "\n".join(json.dumps(r) for r in records)))
    assert [r["median"] for r in rows[:4]] == [20.0, 10.0, 0.5, 0.0]
    assert rows[1]["raw"]["median"] == 11.5 and rows[1]["baseline_summary"]["median"] == 1.5
    assert rows[4]["skipped"].startswith("needs cpu 1")
    by_name = {d["difference"]: d for d in differences}
    assert set(by_name) == {"lock_andb_load - lock_andq_load", "movb_load - movq_load"}
    c9 = by_name["lock_andb_load - lock_andq_load"]
    assert (c9["median"], c9["interval"], c9["excludes_zero"]) == (10.0, [10.0, 10.0], True)
    # movb's net less movq's 0: sorted -3 -2 -1 -1 0 1 1 2 3 4, median 0.5,
    # interval [x_(2), x_(9)] = [-2, 3], which holds 0.
    control = by_name["movb_load - movq_load"]
    assert (control["median"], control["interval"], control["excludes_zero"]) == \
        (0.5, [-2.0, 3.0], False)


def test_markdown_rounds_each_figure_to_a_tenth_and_leaves_skipped_patterns_out():
    result = {"patterns": [
        {"pattern": "a", "what": "lock andb, then its word", "median": 22.61,
         "interval": [22.609, 22.892], "range": [21.989, 24.049]},
        {"pattern": "b", "skipped": "needs two cores"}],
        "differences": [{"difference": "a - c", "bears_on": "C9: the byte lock",
                         "median": 11.698, "interval": [11.697, 12.038]}]}
    assert groundtruth.markdown(result).splitlines() == [
        "| pattern | median | 95% interval | range |", "|---|---|---|---|",
        "| lock andb, then its word | 22.6 | 22.6 to 22.9 | 22.0 to 24.0 |", "",
        "| difference, round by round | bears on | median | 95% interval |",
        "|---|---|---|---|", "| `a - c` | C9: the byte lock | 11.7 | 11.7 to 12.0 |"]


def test_bench_readme_records_the_committed_results_tables():
    """bench/README.md's two tables are the committed JSON's, as --markdown
    prints them: recording again means pasting them again."""
    recorded = json.loads((groundtruth.RESULTS / "groundtruth-host.json").read_text())
    assert groundtruth.markdown(recorded) in (paths.REPO / "bench" / "README.md").read_text()


def test_a_line_missing_what_the_statistics_need_is_refused():
    with pytest.raises(ValueError, match="line 1: no baseline_cycles"):
        groundtruth.read_lines(json.dumps({k: v for k, v in record("x", [1.0], [1.0]).items()
                                           if k != "baseline_cycles"}))
    with pytest.raises(ValueError, match="2 rounds but 1 values"):
        groundtruth.read_lines(json.dumps({**record("x", [1.0], [1.0]), "rounds": 2}))


@pytest.fixture
def program(tmp_path):
    """The program, compiled with the driver's flags and -Werror."""
    require_tools("gcc")
    if platform.machine() != "x86_64":
        pytest.skip(f"bench/groundtruth.c is x86-64 assembly; this is {platform.machine()}")
    binary = tmp_path / "groundtruth"
    done = subprocess.run(groundtruth.compile_command(binary, ["-Werror"]),
                          capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")
    return binary


def test_the_guest_build_compiles_without_warnings(program, tmp_path):
    done = subprocess.run(groundtruth.compile_command(
        tmp_path / "groundtruth-guest",
        ["-Werror", "-DHOTLINE_ROI", "-I", str(paths.REPO / "disk-images" / "roi")]),
        capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")


def listed(program) -> list[str]:
    out = subprocess.run([str(program), "--list"], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in out.stdout.splitlines()]


def test_a_short_run_writes_a_well_formed_line_for_every_pattern(program):
    done = subprocess.run([str(program), "--iterations", "50", "--rounds", "2"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    records = groundtruth.read_lines(done.stdout)
    assert [r["pattern"] for r in records] == listed(program)
    for r in records:
        if "skipped" in r:
            assert r["skipped"]
            continue
        assert 1 <= r["iterations"] <= 50 and r["rounds"] == 2    # handoff runs fewer
        assert r["baseline"] == ("empty_each" if r["timing"] == "each" else "empty_loop")
        assert all(math.isfinite(v) for v in r["cycles"] + r["baseline_cycles"])
        if r["timing"] == "threads":
            assert len(r["per_thread"]) == 2 and all(len(p) == 2 for p in r["per_thread"])
    groundtruth.analyse(records)


def test_the_driver_names_only_patterns_the_program_has(program):
    names = set(listed(program))
    named = {n for _, a, b, _ in groundtruth.DIFFERENCES for n in (a, b)}
    assert named | set(groundtruth.PERF_PATTERNS) <= names


def test_an_unknown_option_or_pattern_is_refused_by_name(program):
    for args, word in ((["--iterations", "1x"], "--iterations 1x"), (["--fast"], "--fast"),
                       (["no_such_pattern"], "no_such_pattern")):
        done = subprocess.run([str(program), *args], capture_output=True, text=True)
        assert done.returncode == 2 and word in done.stderr
