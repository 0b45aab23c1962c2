/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hotline-cache's -plugin options (hotline-cache.c's header lists them):
 * each parsed into the model's configuration or the plugin's settings.
 * A value that is not exactly what its key takes is refused, so that a
 * typo fails the run instead of becoming a number: "-1" is no count, and
 * "12x" is not 12.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static struct options opts = {
	.cache = { .cores = 1, .line_bytes = 64, .store_buffer_entries = 32,
		   .store_buffer_window = 64 },
	.page_size = 64,
	.model_thread = 1,
};

const struct options *options(void)
{
	return &opts;
}

/* A number at the start of value: digits (decimal, or hex after 0x), no
 * sign or space before them, in range.  *end: the first character after. */
static int parse_number(const char *value, uint64_t *out_value, char **end)
{
	if (!isdigit((unsigned char)*value))
		return 0;
	errno = 0;
	*out_value = strtoull(value, end, 0);
	return errno == 0;
}

static int parse_u64(const char *value, uint64_t *out_value)
{
	char *end;

	return parse_number(value, out_value, &end) && !*end;
}

static int parse_u32(const char *value, uint32_t *out_value)
{
	uint64_t v;

	if (!parse_u64(value, &v) || v > UINT32_MAX)
		return 0;
	*out_value = (uint32_t)v;
	return 1;
}

/* n numbers of 32 bits separated by ':', and nothing else. */
static int parse_u32_list(const char *value, uint32_t *out_values, int n)
{
	char *end;

	for (int i = 0; i < n; i++) {
		uint64_t v;

		if (!parse_number(value, &v, &end) || v > UINT32_MAX ||
		    *end != (i + 1 < n ? ':' : '\0'))
			return 0;
		out_values[i] = (uint32_t)v;
		value = end + 1;
	}
	return 1;
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

/* SIZE:ASSOC:LATENCY */
static int parse_cache(const char *value, struct cm_cache_config *c)
{
	uint32_t v[3];

	if (!parse_u32_list(value, v, 3))
		return 0;
	*c = (struct cm_cache_config){ v[0], v[1], v[2] };
	return 1;
}

/* ENTRIES:WINDOW */
static int parse_store_buffer(const char *value, struct cm_config *c)
{
	uint32_t v[2];

	if (!parse_u32_list(value, v, 2))
		return 0;
	c->store_buffer_entries = v[0];
	c->store_buffer_window = v[1];
	return 1;
}

static int parse_key(const char *key, const char *v)
{
	struct cm_config *config = &opts.cache;

	if (!strcmp(key, "out"))
		return (opts.out_path = v), *v != '\0';
	if (!strcmp(key, "cpus"))
		return parse_u32(v, &config->cores);
	if (!strcmp(key, "line"))
		return parse_u32(v, &config->line_bytes);
	if (!strcmp(key, "l1i"))
		return parse_cache(v, &config->l1i);
	if (!strcmp(key, "l1d"))
		return parse_cache(v, &config->l1d);
	if (!strcmp(key, "l2"))
		return parse_cache(v, &config->l2);
	if (!strcmp(key, "l3"))
		return parse_cache(v, &config->l3);
	if (!strcmp(key, "inclusion"))
		return parse_inclusion(v, &config->inclusion);
	if (!strcmp(key, "memory"))
		return parse_u32(v, &config->memory_latency);
	if (!strcmp(key, "peer"))
		return parse_u32(v, &config->peer_latency);
	if (!strcmp(key, "sb"))
		return parse_store_buffer(v, config);
	if (!strcmp(key, "cpu")) {
		opts.cpu_from_guest = !strcmp(v, "guest");
		return opts.cpu_from_guest || !strcmp(v, "index");
	}
	if (!strcmp(key, "vmemmap"))
		return parse_u64(v, &opts.vmemmap_base);
	if (!strcmp(key, "page_size"))
		return parse_u32(v, &opts.page_size) && opts.page_size > 0;
	if (!strcmp(key, "quantum"))
		return parse_u64(v, &opts.quantum) && opts.quantum > 0;
	if (!strcmp(key, "interleave")) {
		opts.interleave_block = !strcmp(v, "block");
		return opts.interleave_block || !strcmp(v, "turn");
	}
	if (!strcmp(key, "model_thread")) {
		opts.model_thread = !strcmp(v, "on");
		return opts.model_thread || !strcmp(v, "off");
	}
	if (!strcmp(key, "phase"))
		return parse_u64(v, &opts.phase);
	if (!strcmp(key, "cpu_number"))
		return parse_u64(v, &opts.cpu_number_offset);
	return 0;
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
	if (!parse_key(key, v))
		return 0;
	/* The output's header shows the options as they were given, but out=
	 * and model_thread=, which change no count: the outputs of one run
	 * with the model thread and without it compare equal with cmp. */
	if (strncmp(arg, "out=", 4) && strncmp(arg, "model_thread=", 13) &&
	    strlen(opts.text) + strlen(arg) + 2 < sizeof(opts.text)) {
		strcat(opts.text, " ");
		strcat(opts.text, arg);
	}
	return 1;
}
