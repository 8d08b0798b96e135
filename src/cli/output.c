/* Human output: aligned tables and small formatters; --json output. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void out_json(json_t *j)
{
    char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_ENCODE_ANY) : NULL;
    printf("%s\n", s ? s : "null");
    free(s);
}

struct table {
    int ncols;
    size_t nrows, cap;
    char **cells; /* row-major, row 0 = headers */
};

struct table *table_new(int ncols, const char *const headers[])
{
    struct table *t = calloc(1, sizeof(*t));
    if (t == NULL)
        abort();
    t->ncols = ncols;
    table_add(t, headers);
    return t;
}

void table_add(struct table *t, const char *const cells[])
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = realloc(t->cells, t->cap * t->ncols * sizeof(char *));
        if (t->cells == NULL)
            abort(); /* the CLI has no useful way on without memory */
    }
    for (int i = 0; i < t->ncols; i++) {
        char *s = strdup(cells[i] ? cells[i] : "-");
        if (s == NULL)
            abort();
        /* A newline or tab in a name would break the columns. */
        for (char *p = s; *p; p++)
            if (*p == '\n' || *p == '\t' || *p == '\r')
                *p = ' ';
        t->cells[t->nrows * t->ncols + i] = s;
    }
    t->nrows++;
}

void table_print_free(struct table *t)
{
    size_t *w = calloc(t->ncols, sizeof(size_t));
    if (w == NULL)
        abort();
    for (size_t r = 0; r < t->nrows; r++)
        for (int c = 0; c < t->ncols; c++) {
            size_t l = strlen(t->cells[r * t->ncols + c]);
            if (l > w[c])
                w[c] = l;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            if (c == t->ncols - 1)
                printf("%s\n", s);
            else
                printf("%-*s  ", (int)w[c], s);
            free(t->cells[r * t->ncols + c]);
        }
    }
    free(w);
    free(t->cells);
    free(t);
}

const char *out_field(json_t *obj, const char *key, char *buf, size_t n)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, n, "%s", json_is_true(v) ? "yes" : "no");
    else
        return NULL;
    return buf;
}

const char *out_bytes(double bytes, char *buf, size_t n)
{
    static const char units[] = "BKMGTP";
    int u = 0;
    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%.0fB", bytes);
    else
        snprintf(buf, n, bytes < 10 ? "%.1f%c" : "%.0f%c", bytes, units[u]);
    return buf;
}

const char *out_time(const char *iso, char *buf, size_t n)
{
    if (iso == NULL)
        return NULL;
    /* "YYYY-MM-DDTHH:MM:SS[.mmm]Z" -> "YYYY-MM-DD HH:MM:SS" (UTC). */
    snprintf(buf, n, "%.19s", iso);
    if (strlen(buf) == 19 && buf[10] == 'T')
        buf[10] = ' ';
    return buf;
}
