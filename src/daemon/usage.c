/* Metering arithmetic (usage.h). */
#include "usage.h"

#include <string.h>
#include <time.h>

/* n decimal digits at s into *v. */
static int digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* "HH:MM[:SS[.fff]]" at s; returns the characters used or -1. */
static int parse_clock(const char *s, int *h, int *mi, int *sec, int *ms)
{
    const char *p = s;
    *sec = *ms = 0;
    if (digits(p, 2, h) < 0 || p[2] != ':' || digits(p + 3, 2, mi) < 0 || *h > 23 || *mi > 59)
        return -1;
    p += 5;
    if (*p == ':') {
        if (digits(p + 1, 2, sec) < 0 || *sec > 59)
            return -1;
        p += 3;
        if (*p == '.') {
            int n = 0, d;
            for (p++; *p >= '0' && *p <= '9'; p++, n++)
                if (n < 3 && digits(p, 1, &d) == 0)
                    *ms = *ms * 10 + d;
            if (n == 0)
                return -1;
            for (; n < 3; n++)
                *ms *= 10;
        }
    }
    return (int)(p - s);
}

/* "", "Z", "+HH:MM" or "-HH:MM": the offset east of UTC in minutes. */
static int parse_zone(const char *s, int *minutes)
{
    int h, m;
    *minutes = 0;
    if (*s == '\0' || strcmp(s, "Z") == 0)
        return 0;
    if ((*s != '+' && *s != '-') || strlen(s) != 6 || digits(s + 1, 2, &h) < 0 || s[3] != ':' ||
        digits(s + 4, 2, &m) < 0 || h > 23 || m > 59)
        return -1;
    *minutes = (*s == '-' ? -1 : 1) * (h * 60 + m);
    return 0;
}

int usage_parse_time(const char *s, int64_t *out_ms)
{
    int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0, zone = 0;
    if (strlen(s) < 10 || digits(s, 4, &y) < 0 || s[4] != '-' || digits(s + 5, 2, &mo) < 0 ||
        s[7] != '-' || digits(s + 8, 2, &d) < 0 || y < 1970 || mo < 1 || mo > 12 || d < 1 ||
        d > days_in_month(y, mo))
        return -1;
    if (s[10] != '\0') {
        if (s[10] != 'T' && s[10] != 't')
            return -1;
        int n = parse_clock(s + 11, &h, &mi, &sec, &ms);
        if (n < 0 || parse_zone(s + 11 + n, &zone) < 0)
            return -1;
    }
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = sec};
    int64_t t = (int64_t)timegm(&tm) - (int64_t)zone * 60;
    if (t < 0)
        return -1;
    *out_ms = t * 1000 + ms;
    return 0;
}

int64_t usage_month_start(int64_t t_ms)
{
    time_t t = (time_t)(t_ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    struct tm first = {.tm_year = tm.tm_year, .tm_mon = tm.tm_mon, .tm_mday = 1};
    return (int64_t)timegm(&first) * 1000;
}

int64_t usage_overlap_ms(int64_t start_ms, int64_t end_ms, int64_t now_ms, int64_t from_ms,
                         int64_t to_ms)
{
    int64_t end = end_ms ? end_ms : now_ms;
    int64_t a = start_ms > from_ms ? start_ms : from_ms;
    int64_t b = end < to_ms ? end : to_ms;
    return b > a ? b - a : 0;
}

double usage_compute_cost(int64_t ms, int64_t price_micros)
{
    return (double)ms / 3600000.0 * ((double)price_micros / 1e6);
}

double usage_gb_months(int64_t size_mb, int64_t ms)
{
    return (double)size_mb / 1024.0 * ((double)ms / (double)USAGE_MS_PER_MONTH);
}
