/* Metering arithmetic (src/daemon/usage.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "../../src/daemon/usage.h"

static void test_parse_time(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t ms;
    } good[] = {
        {"1970-01-01", 0},
        {"2024-02-29", 1709164800000},
        {"2024-02-29T00:00:00Z", 1709164800000},
        {"2024-02-29T00:00Z", 1709164800000},
        {"2024-02-29T00:00:00", 1709164800000},
        {"2024-02-29T01:30:00+01:30", 1709164800000},
        {"2024-02-28T23:00:00-01:00", 1709164800000},
        {"2024-02-29T00:00:01.5Z", 1709164801500},
        {"2024-02-29T00:00:01.123456Z", 1709164801123},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int64_t ms = -1;
        if (usage_parse_time(good[i].s, &ms) != 0 || ms != good[i].ms)
            fail_msg("%s -> %lld, want %lld", good[i].s, (long long)ms, (long long)good[i].ms);
    }
    static const char *const bad[] = {
        "",
        "2024",
        "2024-13-01",
        "2023-02-29",
        "2024-00-10",
        "2024-01-32",
        "24-01-01",
        "2024-01-01 ",
        "2024/01/01",
        "2024-01-01T",
        "2024-01-01T25:00Z",
        "2024-01-01T10:60Z",
        "1969-12-31",
        "2024-01-01T10:00:00.Z",
        "2024-01-01T10:00+1",
        "2024-01-01T10:00:00ZZ",
        "yesterday",
        "2024-01-01x",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ms;
        if (usage_parse_time(bad[i], &ms) != -1)
            fail_msg("'%s' was accepted", bad[i]);
    }
}

static void test_month_start(void **state)
{
    (void)state;
    int64_t ms;
    assert_int_equal(usage_parse_time("2024-03-17T12:34:56Z", &ms), 0);
    int64_t want;
    assert_int_equal(usage_parse_time("2024-03-01", &want), 0);
    assert_int_equal(usage_month_start(ms), want);
    assert_int_equal(usage_month_start(want), want);
}

static void test_overlap(void **state)
{
    (void)state;
    assert_int_equal(usage_overlap_ms(100, 200, 1000, 0, 1000), 100);
    assert_int_equal(usage_overlap_ms(100, 200, 1000, 150, 1000), 50);
    assert_int_equal(usage_overlap_ms(100, 200, 1000, 0, 120), 20);
    assert_int_equal(usage_overlap_ms(100, 200, 1000, 200, 300), 0); /* [from, to) */
    assert_int_equal(usage_overlap_ms(100, 0, 400, 0, 1000), 300);   /* open: until now */
    assert_int_equal(usage_overlap_ms(100, 0, 400, 0, 250), 150);
    assert_int_equal(usage_overlap_ms(500, 0, 400, 0, 1000), 0);
}

static void test_costs(void **state)
{
    (void)state;
    /* One hour at 0.36/h; a 1024 MB volume for 30 days is one GB-month. */
    assert_true(usage_compute_cost(3600000, 360000) > 0.3599999 &&
                usage_compute_cost(3600000, 360000) < 0.3600001);
    assert_true(usage_compute_cost(1000, 360000) > 0.0000999 &&
                usage_compute_cost(1000, 360000) < 0.0001001);
    assert_true(usage_gb_months(1024, USAGE_MS_PER_MONTH) == 1.0);
    assert_true(usage_gb_months(512, USAGE_MS_PER_MONTH / 2) == 0.25);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_month_start),
        cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_costs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
