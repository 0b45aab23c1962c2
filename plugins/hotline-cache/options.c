/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's -plugin options (hotline-cache.c's header lists them):
 * each parsed into the model's configuration or the plugin's settings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotline-cache.h"

struct cm_config config = {
	.cores = 1, .line_bytes = 64, .store_buffer_entries = 32, .store_buffer_window = 64,
};
const char *out_path;
uint32_t line_shift;		/* log2(line_bytes) */
int cpu_from_guest;
uint64_t cpu_number_offset;
uint64_t vmemmap_base;
uint32_t page_size = 64;
char options_text[1024];


static int parse_u32(const char *value, uint32_t *out_value)
{
	char *end;
	unsigned long v = strtoul(value, &end, 0);

	if (!*value || *end || v > UINT32_MAX)
		return 0;
	*out_value = (uint32_t)v;
	return 1;
}

static int parse_u64(const char *value, uint64_t *out_value)
{
	char *end;

	*out_value = strtoull(value, &end, 0);
	return *value && !*end;
}

static int parse_inclusion(const char *value, uint32_t *out_value)
{
	for (uint32_t i = 0; cm_inclusion_name(i); i++)
		if (!strcmp(value, cm_inclusion_name(i))) {
			*out_value = i;
			return 1;
		}
	return 0;
}

static int parse_cache(const char *value, struct cm_cache_config *c)
{
	char extra;
	unsigned int size, assoc, latency;

	if (sscanf(value, "%u:%u:%u%c", &size, &assoc, &latency, &extra) != 3)
		return 0;
	*c = (struct cm_cache_config){ size, assoc, latency };
	return 1;
}

int parse_option(const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char *v = eq ? eq + 1 : "";
	size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);
	char key[32];

	if (klen >= sizeof(key))
		return 0;
	memcpy(key, arg, klen);
	key[klen] = '\0';
	if (!strcmp(key, "out"))
		return (out_path = v), *v != '\0';
	if (!strcmp(key, "cpus"))
		return parse_u32(v, &config.cores);
	if (!strcmp(key, "line"))
		return parse_u32(v, &config.line_bytes);
	if (!strcmp(key, "l1i"))
		return parse_cache(v, &config.l1i);
	if (!strcmp(key, "l1d"))
		return parse_cache(v, &config.l1d);
	if (!strcmp(key, "l2"))
		return parse_cache(v, &config.l2);
	if (!strcmp(key, "l3"))
		return parse_cache(v, &config.l3);
	if (!strcmp(key, "inclusion"))
		return parse_inclusion(v, &config.inclusion);
	if (!strcmp(key, "memory"))
		return parse_u32(v, &config.memory_latency);
	if (!strcmp(key, "peer"))
		return parse_u32(v, &config.peer_latency);
	if (!strcmp(key, "sb"))
		return sscanf(v, "%u:%u", &config.store_buffer_entries,
			      &config.store_buffer_window) == 2;
	if (!strcmp(key, "cpu")) {
		cpu_from_guest = !strcmp(v, "guest");
		return cpu_from_guest || !strcmp(v, "index");
	}
	if (!strcmp(key, "vmemmap"))
		return parse_u64(v, &vmemmap_base);
	if (!strcmp(key, "page_size"))
		return parse_u32(v, &page_size) && page_size > 0;
	if (!strcmp(key, "quantum"))
		return parse_u64(v, &quantum) && quantum > 0;
	if (!strcmp(key, "interleave")) {
		weave_blocks = !strcmp(v, "block");
		return weave_blocks || !strcmp(v, "turn");
	}
	if (!strcmp(key, "phase"))
		return parse_u64(v, &phase);
	if (!strcmp(key, "cpu_number"))
		return parse_u64(v, &cpu_number_offset);
	return 0;
}
