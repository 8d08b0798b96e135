/* The server config parser (src/daemon/config.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/daemon/config.h"

static const struct size_class *find(const struct lizard_config *c, const char *name)
{
    for (int i = 0; i < c->nsizes; i++)
        if (strcmp(c->sizes[i].name, name) == 0)
            return &c->sizes[i];
    return NULL;
}

static void test_defaults(void **state)
{
    (void)state;
    struct lizard_config c;
    config_defaults(&c);
    const struct size_class *d = find(&c, "default");
    assert_non_null(d);
    assert_int_equal(d->cpu_count, 4);
    assert_int_equal(d->memory_mb, 4096);
    assert_non_null(find(&c, "small"));
    assert_int_equal(c.max_running_per_project, 100);
    assert_int_equal(c.max_sandboxes_per_host, 1000);
    assert_int_equal(c.disk_mb, 10240);
    assert_true(c.volume_price_per_gb_month > 0);
}

static void test_full_file(void **state)
{
    (void)state;
    struct lizard_config c;
    config_defaults(&c);
    lz_error err;
    const char *text = "{\"sizes\": [{\"name\": \"default\", \"cpuCount\": 2, \"memoryMB\": 512,"
                       " \"pricePerHour\": 0.36},"
                       " {\"name\": \"xl\", \"cpuCount\": 8, \"memoryMB\": 16384,"
                       " \"pricePerHour\": 2}],"
                       " \"volumePricePerGBMonth\": 0.25, \"maxRunningPerProject\": 3,"
                       " \"maxSandboxesPerHost\": 7, \"diskMB\": 512}";
    assert_int_equal(config_parse(text, &c, &err), 0);
    assert_int_equal(c.nsizes, 2); /* the table is replaced, not merged */
    assert_null(find(&c, "small"));
    assert_int_equal(find(&c, "default")->memory_mb, 512);
    assert_true(find(&c, "default")->price_per_hour == 0.36);
    assert_true(find(&c, "xl")->price_per_hour == 2.0); /* an integer price is fine */
    assert_true(c.volume_price_per_gb_month == 0.25);
    assert_int_equal(c.max_running_per_project, 3);
    assert_int_equal(c.max_sandboxes_per_host, 7);
    assert_int_equal(c.disk_mb, 512);
}

static void test_partial_file_keeps_the_rest(void **state)
{
    (void)state;
    struct lizard_config c;
    config_defaults(&c);
    assert_int_equal(config_parse("{\"maxRunningPerProject\": 5}", &c, NULL), 0);
    assert_int_equal(c.max_running_per_project, 5);
    assert_int_equal(c.nsizes, 4);
    assert_int_equal(config_parse("{}", &c, NULL), 0);
    assert_int_equal(c.max_running_per_project, 5);
}

/* Each bad document fails, its message names the culprit, and the config
 * is left exactly as it was. */
static void test_rejects(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"maxRuning\": 3}", "unknown key 'maxRuning'"},
        {"{\"sizes\": [{\"name\": \"default\", \"cpuCount\": 1, \"memoryMB\": 64,"
         " \"pricePerHour\": 1, \"gpu\": 1}]}",
         "unknown key 'gpu' in sizes[0]"},
        {"{\"sizes\": [{\"name\": \"small\", \"cpuCount\": 1, \"memoryMB\": 64,"
         " \"pricePerHour\": 1}]}",
         "\"default\""},
        {"{\"sizes\": [{\"name\": \"default\", \"cpuCount\": 1, \"memoryMB\": 64,"
         " \"pricePerHour\": 1}, {\"name\": \"default\", \"cpuCount\": 1, \"memoryMB\": 64,"
         " \"pricePerHour\": 1}]}",
         "twice"},
        {"{\"sizes\": [{\"name\": \"default\", \"cpuCount\": 0, \"memoryMB\": 64,"
         " \"pricePerHour\": 1}]}",
         "'cpuCount' in sizes[0]"},
        {"{\"sizes\": [{\"name\": \"default\", \"cpuCount\": 1, \"memoryMB\": 64}]}",
         "sizes[0] needs 'pricePerHour'"},
        {"{\"sizes\": [{\"name\": \"default\", \"cpuCount\": 1, \"memoryMB\": 64,"
         " \"pricePerHour\": -1}]}",
         "'pricePerHour' in sizes[0]"},
        {"{\"sizes\": [{\"name\": \"Big One\", \"cpuCount\": 1, \"memoryMB\": 64,"
         " \"pricePerHour\": 1}]}",
         "sizes[0] needs a 'name'"},
        {"{\"sizes\": []}", "'sizes' must be an array"},
        {"{\"sizes\": {}}", "'sizes' must be an array"},
        {"{\"volumePricePerGBMonth\": \"0.1\"}", "'volumePricePerGBMonth'"},
        {"{\"maxRunningPerProject\": 0}", "'maxRunningPerProject'"},
        {"{\"maxSandboxesPerHost\": 1.5}", "'maxSandboxesPerHost'"},
        {"{\"diskMB\": 1}", "'diskMB'"},
        {"{\"diskMB\": 100, \"diskMB\": 200}", "duplicate"},
        {"[1]", "JSON object"},
        {"{\"diskMB\": ", "line 1"},
        {"", "line"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct lizard_config c, before;
        config_defaults(&c);
        before = c;
        lz_error err = {0};
        assert_int_equal(config_parse(bad[i].text, &c, &err), -1);
        if (strstr(err.msg, bad[i].want) == NULL)
            fail_msg("%s: message '%s' lacks '%s'", bad[i].text, err.msg, bad[i].want);
        assert_memory_equal(&c, &before, sizeof(c));
    }
}

static void test_load_names_the_file(void **state)
{
    (void)state;
    struct lizard_config c;
    config_defaults(&c);
    lz_error err;
    assert_int_equal(config_load("/nonexistent/lizard.json", &c, &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/lizard.json"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_full_file),
        cmocka_unit_test(test_partial_file_keeps_the_rest),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_load_names_the_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
