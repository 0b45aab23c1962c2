"""The cache model on its own host thread (model_thread=on, the default with
interleave=block; plugins/hotline-cache/model-thread.c and weave.c).

  - The ring alone (model-thread.c with a small driver, built as the other
    C helpers of the tests are): the model thread consumes the slots in the
    order they were handed; when every slot is handed and none consumed, the
    producer waits (back-pressure) until the model thread frees the oldest;
    model_thread_wait returns once everything handed is consumed; the
    thread ends at model_thread_end having consumed everything, and a
    failure on it ends the process the plugin's way (fail.c).
  - The plugin under QEMU: the same runs (cachebench, whose ping-pong and
    false sharing the weave interleaves, and roimarkers, every marker:
    begin, reset, dump, end) with model_thread=off and on write the same
    output files, byte for byte, dumps included, and the same tables.
  - The option: on and off are taken, and left out of the output's header
    (so that the two outputs compare with cmp); anything else is refused.

The replay's side (bench/replay.c with model_thread=on, also under
ThreadSanitizer) is in tests/test_bench_replay.py."""

import subprocess
from pathlib import Path

import pytest

from hotline import paths, specs
from hotline.experiment import run_experiment
from hotline.simulate.qemu import plugin_output, plugins
from tests.conftest import require_tools

PLUGIN = plugins.PLUGINS / "hotline-cache"

# ---- the ring alone ------------------------------------------------------------

DRIVER = r"""
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fail.h"
#include "model-thread.h"
#include "options.h"

#define MOST 200000
static uint64_t data[16];		/* per slot: what the producer put in it */
static uint64_t seen[MOST];		/* what the model thread found, in its order */
static uint32_t seen_slot[MOST];
static size_t consumed;			/* atomically */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open = 1, delay_us, fail_at = -1, blocked = 1;

static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void consume(uint32_t slot)
{
	size_t i = __atomic_load_n(&consumed, __ATOMIC_ACQUIRE);
	sigset_t mask;

	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	if (!sigismember(&mask, SIGTERM) || !sigismember(&mask, SIGINT))
		blocked = 0;
	pthread_mutex_lock(&gate_lock);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	if (delay_us)
		usleep(delay_us);
	if ((int)i == fail_at)
		checked(NULL, "a test's window", 100);
	seen[i] = data[slot];
	seen_slot[i] = slot;
	__atomic_store_n(&consumed, i + 1, __ATOMIC_RELEASE);
}

static size_t done(void)
{
	return __atomic_load_n(&consumed, __ATOMIC_ACQUIRE);
}

/* Hands n slots, numbered from first on; returns the slot to fill next. */
static uint32_t produce(uint32_t slot, uint64_t first, uint64_t n)
{
	for (uint64_t k = first; k < first + n; k++) {
		data[slot] = k;
		slot = model_thread_hand();
	}
	return slot;
}

static int returned;

static void *hand_one(void *arg)
{
	*(uint32_t *)arg = model_thread_hand();
	__atomic_store_n(&returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argv[1];
	uint32_t slots = (uint32_t)atoi(argv[2]);
	uint64_t n = argc > 3 ? strtoull(argv[3], NULL, 0) : 0;

	delay_us = argc > 4 ? atoi(argv[4]) : 0;
	model_thread_install(slots, consume);
	if (!strcmp(mode, "order")) {
		int before = threads(), during;
		uint32_t slot = produce(0, 0, n);

		during = threads();
		model_thread_end();
		size_t wrong = 0;

		for (size_t i = 0; i < done(); i++)
			wrong += seen[i] != i || seen_slot[i] != i % slots;
		printf("consumed %zu wrong %zu next %u blocked %d threads %d %d %d\n", done(), wrong,
		       slot, blocked, before, during, threads());
	} else if (!strcmp(mode, "full")) {
		pthread_t helper;
		uint32_t next = 99;

		gate_open = 0;
		uint32_t slot = produce(0, 0, slots - 1);	/* each returns at once */

		printf("handed %u consumed %zu\n", slots - 1, done());
		data[slot] = slots - 1;
		pthread_create(&helper, NULL, hand_one, &next);
		usleep(300000);
		printf("returned while full %d consumed %zu\n",
		       __atomic_load_n(&returned, __ATOMIC_ACQUIRE), done());
		pthread_mutex_lock(&gate_lock);
		gate_open = 1;
		pthread_cond_broadcast(&gate_cond);
		pthread_mutex_unlock(&gate_lock);
		pthread_join(helper, NULL);
		printf("returned after %d next %u consumed at least 1: %d\n", returned, next,
		       done() >= 1);
		model_thread_end();
		printf("consumed %zu\n", done());
	} else if (!strcmp(mode, "wait")) {
		produce(0, 0, n);
		model_thread_wait();
		printf("after wait consumed %zu of %llu\n", done(), (unsigned long long)n);
		model_thread_end();
	} else if (!strcmp(mode, "unstarted")) {
		model_thread_wait();
		model_thread_end();
		printf("threads %d\n", threads());
	} else if (!strcmp(mode, "again")) {
		uint32_t slot = produce(0, 0, n);

		model_thread_end();
		produce(slot, n, n);
		model_thread_end();
		size_t wrong = 0;

		for (size_t i = 0; i < done(); i++)
			wrong += seen[i] != i;
		printf("consumed %zu wrong %zu threads %d\n", done(), wrong, threads());
	} else if (!strcmp(mode, "fail")) {
		/* The model thread fails at window 1 while the producer keeps handing
		 * (and then waits, the ring full): the process ends, status 1, one
		 * line, and the output is gone. */
		parse_option(argv[5]);
		FILE *out = fopen(options()->out_path, "w");

		fputs("counts\n", out);
		fclose(out);
		fail_at = 1;
		produce(0, 0, n);
		model_thread_end();
		printf("not reached\n");
	}
	return 0;
}
"""


def build_driver(tmp_path: Path, *flags: str) -> Path:
    require_tools("gcc")
    (tmp_path / "driver.c").write_text(DRIVER)
    binary = tmp_path / "ring"
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", *flags,
                    f"-I{PLUGIN}", f"-I{plugins.MODEL}", f"-I{plugins.PLUGINS}", "-o", str(binary),
                    str(tmp_path / "driver.c"), str(PLUGIN / "model-thread.c"),
                    str(PLUGIN / "fail.c"), str(PLUGIN / "options.c"),
                    str(plugins.MODEL / "cachemodel.c")], check=True)
    return binary


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    return build_driver(tmp_path_factory.mktemp("ring"))


def drive(binary: Path, *args) -> str:
    ran = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


@pytest.mark.parametrize("slots, delay_us", [(2, 0), (4, 0), (3, 50)])
def test_the_model_thread_consumes_every_slot_in_the_order_handed(ring, slots, delay_us):
    n = 100_000 if not delay_us else 2_000
    # Slots 0, 1, ... in turn; the thread exists from the first slot handed
    # to the end (the driver's one thread before, two during, one after),
    # and runs with SIGINT and SIGTERM blocked, as QEMU's threads do.
    assert drive(ring, "order", slots, n, delay_us) == \
        f"consumed {n} wrong 0 next {n % slots} blocked 1 threads 1 2 1\n"


@pytest.mark.parametrize("slots", [2, 4])
def test_a_full_ring_makes_the_producer_wait_for_the_oldest_slot(ring, slots):
    # The model thread is held inside the first slot: the producer hands
    # slots - 1 more without waiting, and the next hand, which would reuse
    # the slot being consumed, waits until it is consumed.
    assert drive(ring, "full", slots).splitlines() == [
        f"handed {slots - 1} consumed 0",
        "returned while full 0 consumed 0",
        "returned after 1 next 0 consumed at least 1: 1",
        f"consumed {slots}",
    ]


def test_waiting_returns_once_everything_handed_is_consumed(ring):
    assert drive(ring, "wait", 3, 200, 500) == "after wait consumed 200 of 200\n"


def test_the_end_without_a_start_and_a_start_after_an_end(ring):
    assert drive(ring, "unstarted", 2) == "threads 1\n"
    assert drive(ring, "again", 3, 1000) == "consumed 2000 wrong 0 threads 1\n"


def test_a_failure_on_the_model_thread_ends_the_run_the_plugins_way(ring, tmp_path):
    out = tmp_path / "hotline-cache.out"
    ran = subprocess.run([str(ring), "fail", "2", "50", "1000", f"out={out}"],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 1 and ran.stdout == ""
    assert ran.stderr == ("hotline-cache: out of memory for a test's window (100 bytes more); "
                          "the run's counts are lost\n")
    assert not out.exists()


def test_the_ring_races_on_no_plain_word(tmp_path):
    try:
        binary = build_driver(tmp_path, "-fsanitize=thread", "-g")
    except subprocess.CalledProcessError:
        pytest.skip("gcc cannot build with -fsanitize=thread here")
    ran = subprocess.run([str(binary), "order", "2", "20000", "0"], capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0 and "ThreadSanitizer" not in ran.stderr, ran.stderr
    assert ran.stdout.startswith("consumed 20000 wrong 0 ")


# ---- the option ------------------------------------------------------------------

def run_empty_machine(plugin, out: Path, options: list[str]):
    """QEMU with the plugin on a machine with no CPU, quit from the monitor
    (as tests/test_plugin_contract.py runs it)."""
    argument = plugin.qemu_argument(out, options)
    return subprocess.run(["qemu-system-x86_64", "-M", "none", "-display", "none",
                           "-nodefaults", "-monitor", "stdio", "-plugin", argument],
                          input="quit\n", capture_output=True, text=True, timeout=60)


def test_model_thread_takes_on_and_off_and_the_header_leaves_it_out(tmp_path):
    require_tools("gcc", "qemu-system-x86_64")
    plugin = plugins.build_plugin("hotline-cache")
    system = specs.load_system("skylake-4core")
    options = plugins.cache_options(system)
    for setting in ("on", "off"):
        out = tmp_path / f"{setting}.out"
        ran = run_empty_machine(plugin, out, [*options, f"model_thread={setting}"])
        assert ran.returncode == 0, ran.stderr
        assert plugin_output.read(out)["options"] == options
    ran = run_empty_machine(plugin, tmp_path / "bad.out", [*options, "model_thread=yes"])
    assert ran.returncode != 0 and "bad option 'model_thread=yes'" in ran.stderr


# ---- the plugin under QEMU, with the model thread and without ---------------------

SPEC = """description = "the model on its own thread and on the vCPU thread"
variants = ["baseline"]
systems = ["skylake-4core"]
workloads = [{ name = "cachebench", scale = "smoke" }, { name = "roimarkers", scale = "smoke" }]

[qemu]
plugin = "hotline-cache"
"""


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The spec's runs (deterministic mode, the default quantum, woven) with
    model_thread=off and =on, each into a results tree of its own:
    {setting: run directories in plan order}."""
    require_tools("qemu-system-x86_64", "make", "gcc")
    tmp = tmp_path_factory.mktemp("model-thread")
    spec = tmp / "model-thread.toml"
    spec.write_text(SPEC)
    original = plugins.plugin_options
    runs = {}
    with pytest.MonkeyPatch.context() as mp:
        for setting in ("off", "on"):
            mp.setattr(plugins, "plugin_options",
                       lambda *a, s=setting, **k: [*original(*a, **k), f"model_thread={s}"])
            mp.setenv("HOTLINE_RESULTS", str(tmp / setting))
            results = run_experiment(spec, rerun=True)
            assert all(r.failure is None for r in results), [r.failure for r in results]
            runs[setting] = [r.directory for r in results]
    return runs


def outputs(directory: Path) -> list[str]:
    """The plugin's output files (OUT, OUT.dumpN) and the tables made of them."""
    return sorted(p.name for p in directory.iterdir()
                  if p.name.startswith("hotline-cache.out") or p.suffix == ".parquet")


@pytest.mark.boot
def test_each_run_was_made_as_the_setting_says_and_woven(both):
    for setting, directories in both.items():
        for directory in directories:
            command = (directory / "command.sh").read_text()
            assert f",model_thread={setting}" in command and ",interleave=block" in command


@pytest.mark.boot
def test_the_model_thread_writes_the_same_files_byte_for_byte(both):
    for off, on in zip(both["off"], both["on"]):
        names = outputs(off)
        assert "hotline-cache.out" in names and "misses.parquet" in names
        assert outputs(on) == names
        for name in names:
            assert (off / name).read_bytes() == (on / name).read_bytes(), \
                f"{off.name}: {name} differs with the model thread"
    # roimarkers' dump, written at its marker: what the model thread had
    # consumed by then was exactly the region's accesses up to it.
    assert any((d / "hotline-cache.out.dump1").is_file() for d in both["on"])


@pytest.mark.boot
def test_the_runs_did_count_the_sharing_the_weave_interleaves(both):
    # Not an empty comparison: cachebench's region has coherence misses with
    # their thieves, and every count adds up.
    for directory in both["on"]:
        counts = plugin_output.read(directory / "hotline-cache.out")
        assert plugin_output.disagreements(counts) == []
    cachebench = next(d for d in both["on"] if "cachebench" in d.name)
    assert plugin_output.read(cachebench / "hotline-cache.out")["stolen"]["count"].sum() > 1000
