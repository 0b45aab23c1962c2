"""The causes of a miss are spelled once, in schema.CAUSES (docs/causes.md
defines them); the C sources that write them out are read here and must
spell exactly those: the cache model's outcomes beyond "not-reached" and
"hit", and gem5's miss profile's causeNames."""

import re

from hotline import paths
from hotline.results import schema

CACHEMODEL = paths.REPO / "plugins" / "cachemodel"
MISS_PROFILE = paths.CONFIGS / "gem5" / "extras" / "miss_profile.cc"
# The outcomes that are not misses: the level was not reached, or it hit.
NOT_MISSES = {"CM_NOT_REACHED", "CM_HIT"}


def _initializer(source: str, declaration: str) -> str:
    """The text between the braces of the array that `declaration` (a
    regular expression) names."""
    found = re.search(declaration + r"\s*=\s*\{(.*?)\};", source, re.S)
    assert found, f"no {declaration!r} array in the source"
    return found.group(1)


def miss_profile_causes(source: str) -> tuple[str, ...]:
    return tuple(re.findall(r'"([^"]*)"', _initializer(source, r"causeNames\[\]")))


def cache_model_causes(header: str, source: str) -> tuple[str, ...]:
    """The outcome names of the misses, in enum cm_outcome's order."""
    enum = re.search(r"enum cm_outcome\s*\{(.*?)\}", header, re.S)
    assert enum, "no enum cm_outcome in cachemodel.h"
    order = [v for v in re.findall(r"\b(CM_\w+)\b", enum.group(1)) if v != "CM_NOUTCOMES"]
    named = dict(re.findall(r'\[(CM_\w+)\]\s*=\s*"([^"]*)"',
                            _initializer(source, r"outcome_names\[CM_NOUTCOMES\]")))
    assert set(named) == set(order), "outcome_names does not name every enum cm_outcome value"
    return tuple(named[v] for v in order if v not in NOT_MISSES)


def test_gem5s_miss_profile_spells_the_schemas_causes():
    assert miss_profile_causes(MISS_PROFILE.read_text()) == schema.CAUSES


def test_the_cache_models_miss_outcomes_are_the_schemas_causes():
    assert cache_model_causes((CACHEMODEL / "cachemodel.h").read_text(),
                              (CACHEMODEL / "cachemodel.c").read_text()) == schema.CAUSES


def test_a_drifted_spelling_in_the_extension_fails():
    source = 'const char *const causeNames[] = {"compulsory", "capacity", "conflict",\n' \
             '                                  "coherence", "{upgrade}"};'
    assert miss_profile_causes(source.replace("{upgrade}", "upgrade")) == schema.CAUSES
    assert miss_profile_causes(source.replace("{upgrade}", "stolen")) != schema.CAUSES
    assert miss_profile_causes(source.replace(', "{upgrade}"', "")) != schema.CAUSES


def test_a_drifted_spelling_in_the_cache_model_fails():
    header = "enum cm_outcome {\n\tCM_NOT_REACHED,\n\tCM_HIT,\n\tCM_COMPULSORY,\n" \
             "\tCM_CAPACITY,\n\tCM_CONFLICT,\n\tCM_COHERENCE,\n\tCM_UPGRADE,\n\tCM_NOUTCOMES\n};"
    source = 'static const char *const outcome_names[CM_NOUTCOMES] = {\n' \
             '\t[CM_NOT_REACHED] = "not-reached", [CM_HIT] = "hit", ' \
             '[CM_COMPULSORY] = "compulsory",\n\t[CM_CAPACITY] = "capacity", ' \
             '[CM_CONFLICT] = "conflict", [CM_COHERENCE] = "coherence",\n' \
             '\t[CM_UPGRADE] = "{upgrade}",\n};'
    assert cache_model_causes(header, source.replace("{upgrade}", "upgrade")) == schema.CAUSES
    assert cache_model_causes(header, source.replace("{upgrade}", "write-upgrade")) != \
        schema.CAUSES
