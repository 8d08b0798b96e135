#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *log_program = "lizard";
static enum log_level log_min = LOG_LEVEL_INFO;

void log_init(const char *program, enum log_level min_level)
{
    log_program = program;
    log_min = min_level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    if (level < log_min)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* One fprintf per line so lines from different threads do not interleave. */
    fprintf(stderr, "%s: %s: %s\n", log_program, names[level], line);
}
