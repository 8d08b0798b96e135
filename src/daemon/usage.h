/* Metering arithmetic for GET /v1/usage, pure (unit tested): report
 * periods and how much of an interval falls in one. The intervals come
 * from the store (store.h "metering"). */
#ifndef LZ_USAGE_H
#define LZ_USAGE_H

#include <stdint.h>

#define USAGE_MS_PER_MONTH ((int64_t)30 * 86400 * 1000) /* a billing month: 30 days */

/* ISO 8601 to Unix ms: "YYYY-MM-DD" (midnight UTC) or
 * "YYYY-MM-DDTHH:MM[:SS[.fff]]" followed by "Z", "+HH:MM", "-HH:MM" or
 * nothing (UTC). Years 1970-9999. Returns -1 for anything else. */
int usage_parse_time(const char *s, int64_t *out_ms);
/* Midnight UTC of the first day of the month that holds t_ms. */
int64_t usage_month_start(int64_t t_ms);
/* Milliseconds of [start_ms, end_ms) inside [from_ms, to_ms); end_ms 0 is
 * an interval still open, which runs until now_ms. */
int64_t usage_overlap_ms(int64_t start_ms, int64_t end_ms, int64_t now_ms, int64_t from_ms,
                         int64_t to_ms);
/* Cost of ms of compute at price_micros (millionths) per hour. */
double usage_compute_cost(int64_t ms, int64_t price_micros);
/* GB-months of size_mb held for ms (GB = 1024 MB). */
double usage_gb_months(int64_t size_mb, int64_t ms);

#endif
