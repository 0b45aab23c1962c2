"""bench/cost_by_function.py charges a profile's instructions to the source
function whose lines they are, inlined code included, and leaves a call's
inclusive cost out.  A callgrind profile written by hand, on lines of the
plugin's real sources; the sums below are worked out from it."""

import importlib.util

from hotline import paths

spec = importlib.util.spec_from_file_location("cost_by_function",
                                              paths.REPO / "bench" / "cost_by_function.py")
cost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cost)

MODEL = paths.REPO / "plugins" / "cachemodel" / "cachemodel.c"
WEAVE = paths.REPO / "plugins" / "hotline-cache" / "weave.c"


def line_of(path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_inlined_lines_go_to_their_own_function_and_calls_count_once(tmp_path):
    shadow = line_of(MODEL, "static bool shadow_access(")
    unlink = line_of(MODEL, "static void list_unlink(")
    deliver = line_of(WEAVE, "static uint32_t deliver(")
    profile = tmp_path / "callgrind.out"
    profile.write_text("\n".join([
        "events: Ir",
        f"fl=(1) {MODEL}",
        "fn=(1) cm_access",
        f"{shadow + 2} 100",
        f"{unlink + 1} 30",
        f"cfi=(2) {WEAVE}",            # the callee's file: named here, used below
        "cfn=(2) deliver",
        "calls=1 0",
        f"{shadow + 2} 5000",          # the call's inclusive cost: not counted
        "fi=(2)",                      # weave.c's code inlined into cm_access
        f"{deliver + 3} 7",
        "fe=(1)",
        f"{shadow + 3} 1",
        "fl=(3) /usr/lib/libc.c",
        "fn=(3) memset",
        "10 11",
        "",
    ]))
    functions = cost.by_function(profile)
    assert functions == {"cachemodel.c:shadow_access": 101, "cachemodel.c:list_unlink": 30,
                         "weave.c:deliver": 7, "(outside hotline)": 11}
    assert cost.by_group(functions) == {"3C shadows and first-touch sets": 131,
                                        "weave (hold and deliver)": 7, "other": 11}


def test_definitions_are_found_behind_attributes_and_declarations_are_not():
    names = [name for _, name in cost.functions(MODEL)]
    assert "access_line_unthreaded" in names      # static __attribute__((noinline)) void ...
    assert "access_line_slow" in names
    assert names.count("access_line_threaded") == 1    # declared, then defined
    assert "CM_RACE_POINT" not in names


def test_every_function_a_group_names_is_defined():
    defined = {f"{path.name}:{name}" for path in (paths.REPO / "plugins").rglob("*.[ch]")
               for _, name in cost.functions(path)}
    named = {m for members in cost.GROUPS.values() for m in members if not m.endswith(":*")}
    assert named <= defined, sorted(named - defined)
