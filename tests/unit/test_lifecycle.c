/* The sandbox state machine and lifetime arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/daemon/lifecycle.h"

static void test_happy_path(void **state)
{
    (void)state;
    enum sandbox_status s;
    assert_int_equal(lifecycle_next(SB_CREATING, EV_CREATED, &s), 0);
    assert_int_equal(s, SB_RUNNING);
    assert_int_equal(lifecycle_next(SB_RUNNING, EV_KILL, &s), 0);
    assert_int_equal(s, SB_STOPPING);
    assert_int_equal(lifecycle_next(SB_STOPPING, EV_DESTROYED, &s), 0);
    assert_int_equal(s, SB_STOPPED);
}

static void test_pause_resume(void **state)
{
    (void)state;
    enum sandbox_status s;
    assert_int_equal(lifecycle_next(SB_RUNNING, EV_PAUSE, &s), 0);
    assert_int_equal(s, SB_PAUSING);
    assert_int_equal(lifecycle_next(SB_PAUSING, EV_PAUSE_FAILED, &s), 0);
    assert_int_equal(s, SB_RUNNING); /* a failed pause keeps it running */
    assert_int_equal(lifecycle_next(SB_PAUSED, EV_RESUME, &s), 0);
    assert_int_equal(lifecycle_next(SB_RESUMING, EV_RESUME_FAILED, &s), 0);
    assert_int_equal(s, SB_PAUSED); /* a failed resume keeps it paused */
}

static void test_invalid_transitions(void **state)
{
    (void)state;
    enum sandbox_status s = SB_RUNNING;
    assert_int_equal(lifecycle_next(SB_STOPPED, EV_KILL, &s), -1);
    assert_int_equal(lifecycle_next(SB_STOPPED, EV_CREATED, &s), -1);
    assert_int_equal(lifecycle_next(SB_PAUSED, EV_PAUSE, &s), -1);
    assert_int_equal(lifecycle_next(SB_RUNNING, EV_RESUME, &s), -1);
    assert_int_equal(lifecycle_next(SB_CREATING, EV_PAUSE, &s), -1);
    assert_int_equal(s, SB_RUNNING); /* untouched on failure */
}

static void test_kill_from_every_live_state(void **state)
{
    (void)state;
    enum sandbox_status live[] = {SB_CREATING, SB_RUNNING,  SB_PAUSING,
                                  SB_PAUSED,   SB_RESUMING, SB_STOPPING};
    for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
        enum sandbox_status s;
        assert_int_equal(lifecycle_next(live[i], EV_KILL, &s), 0);
        assert_int_equal(s, SB_STOPPING);
    }
}

static void test_pause_and_pool(void **state)
{
    (void)state;
    enum sandbox_status s;
    assert_int_equal(lifecycle_next(SB_RUNNING, EV_PAUSE, &s), 0);
    assert_int_equal(s, SB_PAUSING);
    assert_int_equal(lifecycle_next(SB_PAUSING, EV_PAUSE_FAILED, &s), 0);
    assert_int_equal(s, SB_RUNNING); /* a failed pause leaves it running */
    assert_int_equal(lifecycle_next(SB_RESUMING, EV_RESUME_FAILED, &s), 0);
    assert_int_equal(s, SB_PAUSED); /* a failed resume leaves it paused */
    assert_int_equal(lifecycle_next(SB_PAUSED, EV_PAUSE, &s), -1);
    assert_int_equal(lifecycle_next(SB_RUNNING, EV_RESUME, &s), -1);
    assert_int_equal(lifecycle_next(SB_POOLING, EV_CREATED, &s), 0);
    assert_int_equal(s, SB_POOLED);
    assert_int_equal(lifecycle_next(SB_POOLED, EV_HANDOUT, &s), 0);
    assert_int_equal(s, SB_RUNNING);
    /* a pooled copy is not a user's sandbox: no pause, no second handout */
    assert_int_equal(lifecycle_next(SB_POOLED, EV_PAUSE, &s), -1);
    assert_int_equal(lifecycle_next(SB_RUNNING, EV_HANDOUT, &s), -1);
}

static void test_names_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < SB_STATUS_COUNT; i++) {
        enum sandbox_status s;
        assert_int_equal(lifecycle_status_parse(lifecycle_status_name(i), &s), 0);
        assert_int_equal(s, i);
    }
    enum sandbox_status s;
    assert_int_equal(lifecycle_status_parse("bogus", &s), -1);
    assert_string_equal(lifecycle_status_name(99), "unknown");
}

static void test_deadlines(void **state)
{
    (void)state;
    assert_int_equal(lifecycle_deadline(1000, 0), 0); /* no expiry */
    assert_int_equal(lifecycle_deadline(1000, 300000), 301000);
    assert_false(lifecycle_expired(0, INT64_MAX)); /* never expires */
    assert_false(lifecycle_expired(5000, 4999));   /* never before */
    assert_true(lifecycle_expired(5000, 5000));
    assert_true(lifecycle_expired(5000, 9000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_happy_path),
        cmocka_unit_test(test_pause_resume),
        cmocka_unit_test(test_invalid_transitions),
        cmocka_unit_test(test_kill_from_every_live_state),
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_pause_and_pool),
        cmocka_unit_test(test_deadlines),
    };
    return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL);
}
