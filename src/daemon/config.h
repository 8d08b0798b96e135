/* lizardd's server config (`--config FILE`, JSON): the size table with its
 * prices, the volume price and the limits. Parsing is pure (unit tested);
 * docs/config.md is the user's description of the format. */
#ifndef LZ_CONFIG_H
#define LZ_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include "../common/error.h"

#define CONFIG_MAX_SIZES 16

struct size_class {
    char name[16];
    int cpu_count;
    int memory_mb;
    double price_per_hour;
};

struct lizard_config {
    struct size_class sizes[CONFIG_MAX_SIZES]; /* always holds "default" */
    int nsizes;
    double volume_price_per_gb_month;
    int max_running_per_project;
    int max_sandboxes_per_host;
    int64_t disk_mb;
};

/* The embedded defaults: what lizardd uses without a config file. */
void config_defaults(struct lizard_config *c);
/* Apply the JSON document `text` over *c: keys present replace the values
 * in *c ("sizes" replaces the whole table). Unknown keys, wrong types and
 * out-of-range values fail with a message naming them; *c is then
 * unchanged. */
int config_parse(const char *text, struct lizard_config *c, lz_error *err);
/* config_parse of the file at path (the message names the file). */
int config_load(const char *path, struct lizard_config *c, lz_error *err);

#endif
