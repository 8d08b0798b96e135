/* The port proxy's Host/token/cookie parsing (src/daemon/proxy_parse.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/daemon/proxy_parse.h"

static void test_host(void **state)
{
    (void)state;
    int port = 0;
    char id[64];
    assert_int_equal(
        proxy_parse_host("3000-sb_abc123.localhost:7400", "localhost", &port, id, sizeof(id)), 0);
    assert_int_equal(port, 3000);
    assert_string_equal(id, "sb_abc123");
    /* no port, upper case (hosts are case-insensitive), longer domain */
    assert_int_equal(proxy_parse_host("65535-SB_ABC.Lizard.Example.com", "lizard.example.com",
                                      &port, id, sizeof(id)),
                     0);
    assert_int_equal(port, 65535);
    assert_string_equal(id, "sb_abc");
}

static void test_host_rejects(void **state)
{
    (void)state;
    int port = 0;
    char id[64];
    static const char *bad[] = {
        "127.0.0.1:7400",             /* the API */
        "localhost",                  /* the API */
        "3000-sb_abc.localhost:",     /* empty port */
        "3000-sb_abc.localhost:7x",   /* bad port */
        "3000-sb_abc.otherhost",      /* another domain */
        "3000-sb_abc.evil-localhost", /* suffix without the dot */
        "3000-sb_abc",                /* no domain */
        "0-sb_abc.localhost",         /* port 0 */
        "03000-sb_abc.localhost",     /* leading zero */
        "65536-sb_abc.localhost",     /* too big */
        "999999-sb_abc.localhost",    /* far too big */
        "3000sb_abc.localhost",       /* no dash */
        "3000-.localhost",            /* no id */
        "3000-key_abc.localhost",     /* not a sandbox id */
        "3000-sb_a.b.localhost",      /* dot in the id */
        "3000-sb_../x.localhost",     /* path characters */
        "-sb_abc.localhost",          /* no port */
        ".localhost",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (proxy_parse_host(bad[i], "localhost", &port, id, sizeof(id)) != -1)
            fail_msg("accepted %s", bad[i]);
    }
    assert_int_equal(proxy_parse_host(NULL, "localhost", &port, id, sizeof(id)), -1);
    /* an id that does not fit */
    assert_int_equal(proxy_parse_host("1-sb_abcdef.localhost", "localhost", &port, id, 6), -1);
}

static void test_cookies(void **state)
{
    (void)state;
    char out[128], name[PROXY_COOKIE_NAME_MAX];
    proxy_cookie_name(3000, name);
    assert_string_equal(name, "lizard_token_3000");
    const char *c = "a=1; lizard_token_3000=tok; lizard_token_30001=other;b=2";
    assert_int_equal(proxy_cookie_get(c, name, out, sizeof(out)), 1);
    assert_string_equal(out, "tok");
    assert_int_equal(proxy_cookie_get("lizard_token_30001=x", name, out, sizeof(out)), 0);
    assert_int_equal(proxy_cookie_get(c, name, out, 3), -1); /* does not fit */
    assert_int_equal(proxy_cookie_strip(c, name, out, sizeof(out)),
                     (long)strlen("a=1; lizard_token_30001=other; b=2"));
    assert_string_equal(out, "a=1; lizard_token_30001=other; b=2");
    assert_int_equal(proxy_cookie_strip(" lizard_token_3000=x ; ", name, out, sizeof(out)), 0);
    assert_string_equal(out, "");
    assert_int_equal(proxy_cookie_strip(c, name, out, 5), -1);
}

static void test_target_strip(void **state)
{
    (void)state;
    char out[256];
    static const char *cases[][2] = {
        {"/", "/"},
        {"/?lizard_token=abc", "/"},
        {"/a/b?x=1&lizard_token=abc&y=2", "/a/b?x=1&y=2"},
        {"/?lizard%5Ftoken=abc&x", "/?x"}, /* encoded name: found, so stripped */
        {"/?lizard_token&lizard_token=2", "/"},
        {"/?lizard_tokens=1", "/?lizard_tokens=1"},
        {"/p?&&x=1", "/p?x=1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_true(proxy_target_strip(cases[i][0], out, sizeof(out)) >= 0);
        assert_string_equal(out, cases[i][1]);
    }
    assert_int_equal(proxy_target_strip("/abcdef", out, 4), -1);
}

/* Parse a request head from text (kept in buf). */
static void parse(char *buf, struct http_head *h)
{
    const char *why;
    assert_int_equal(http_parse_request_head(buf, strlen(buf), h, &why), 0);
}

static void test_request_token(void **state)
{
    (void)state;
    static const struct {
        const char *head;
        int port, r;
        const char *tok, *from;
    } cases[] = {
        /* the header wins over the query and the cookie */
        {"GET /?lizard_token=q HTTP/1.1\r\nX-Lizard-Access-Token: hdr\r\n"
         "Cookie: lizard_token_80=c\r\n\r\n",
         80, 1, "hdr", "header"},
        {"GET /?lizard_token=q%21 HTTP/1.1\r\nCookie: lizard_token_80=c\r\n\r\n", 80, 1, "q!",
         "query"},
        {"GET / HTTP/1.1\r\nCookie: a=b\r\nCookie: lizard_token_80=c\r\n\r\n", 80, 1, "c",
         "cookie"},
        /* another port's cookie is not this port's token */
        {"GET / HTTP/1.1\r\nCookie: lizard_token_80=c\r\n\r\n", 81, 0, NULL, NULL},
        {"GET /?lizard_token=%zz HTTP/1.1\r\n\r\n", 80, -1, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[512], tok[PROXY_TOKEN_MAX];
        const char *from = NULL;
        struct http_head h;
        snprintf(buf, sizeof(buf), "%s", cases[i].head);
        parse(buf, &h);
        assert_int_equal(proxy_request_token(&h, h.target, cases[i].port, tok, sizeof(tok), &from),
                         cases[i].r);
        if (cases[i].r == 1) {
            assert_string_equal(tok, cases[i].tok);
            assert_string_equal(from, cases[i].from);
        }
    }
}

static void test_build_head(void **state)
{
    (void)state;
    char buf[512], out[512];
    struct http_head h;
    snprintf(buf, sizeof(buf),
             "POST /up?lizard_token=t&a=1 HTTP/1.1\r\nHost: 80-sb_x.localhost\r\n"
             "x-lizard-access-token: t\r\nCookie: lizard_token_80=t\r\n"
             "Cookie: k=v; lizard_token_80=t\r\nContent-Length: 3\r\n\r\n");
    parse(buf, &h);
    long n = proxy_build_head(&h, "/up?a=1", 80, out, sizeof(out));
    assert_true(n > 0);
    assert_string_equal(out, "POST /up?a=1 HTTP/1.1\r\nHost: 80-sb_x.localhost\r\n"
                             "Cookie: k=v\r\nContent-Length: 3\r\n\r\n");
    assert_int_equal(n, (long)strlen(out));
    assert_int_equal(proxy_build_head(&h, "/up?a=1", 80, out, 20), -1);

    snprintf(buf, sizeof(buf), "GET / HTTP/1.0\r\n\r\n");
    parse(buf, &h);
    assert_true(proxy_build_head(&h, "/", 80, out, sizeof(out)) > 0);
    assert_string_equal(out, "GET / HTTP/1.0\r\n\r\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host),          cmocka_unit_test(test_host_rejects),
        cmocka_unit_test(test_cookies),       cmocka_unit_test(test_target_strip),
        cmocka_unit_test(test_request_token), cmocka_unit_test(test_build_head),
    };
    return cmocka_run_group_tests_name("proxy_parse", tests, NULL, NULL);
}
