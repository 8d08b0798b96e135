#include "lifecycle.h"

#include <string.h>

static const char *status_names[SB_STATUS_COUNT] = {
    "creating", "running", "pausing", "paused", "resuming",
    "stopping", "stopped", "pooling", "pooled",
};

struct transition {
    enum sandbox_status from;
    enum sandbox_event ev;
    enum sandbox_status to;
};

static const struct transition transitions[] = {
    {SB_CREATING, EV_CREATED, SB_RUNNING},
    {SB_CREATING, EV_CREATE_FAILED, SB_STOPPED},
    {SB_CREATING, EV_KILL, SB_STOPPING},
    {SB_RUNNING, EV_KILL, SB_STOPPING},
    {SB_RUNNING, EV_PAUSE, SB_PAUSING},
    {SB_PAUSING, EV_PAUSED, SB_PAUSED},
    {SB_PAUSING, EV_PAUSE_FAILED, SB_RUNNING},
    {SB_PAUSING, EV_KILL, SB_STOPPING},
    {SB_PAUSED, EV_RESUME, SB_RESUMING},
    {SB_PAUSED, EV_KILL, SB_STOPPING},
    {SB_RESUMING, EV_RESUMED, SB_RUNNING},
    {SB_RESUMING, EV_RESUME_FAILED, SB_PAUSED},
    {SB_RESUMING, EV_KILL, SB_STOPPING},
    {SB_STOPPING, EV_KILL, SB_STOPPING}, /* a second kill while stopping is harmless */
    {SB_STOPPING, EV_DESTROYED, SB_STOPPED},
    {SB_POOLING, EV_CREATED, SB_POOLED},
    {SB_POOLING, EV_CREATE_FAILED, SB_STOPPED},
    {SB_POOLING, EV_KILL, SB_STOPPING},
    {SB_POOLED, EV_HANDOUT, SB_RUNNING},
    {SB_POOLED, EV_KILL, SB_STOPPING},
};

int lifecycle_next(enum sandbox_status from, enum sandbox_event ev, enum sandbox_status *next)
{
    for (size_t i = 0; i < sizeof(transitions) / sizeof(transitions[0]); i++) {
        if (transitions[i].from == from && transitions[i].ev == ev) {
            *next = transitions[i].to;
            return 0;
        }
    }
    return -1;
}

const char *lifecycle_status_name(enum sandbox_status s)
{
    return (unsigned)s < SB_STATUS_COUNT ? status_names[s] : "unknown";
}

int lifecycle_status_parse(const char *name, enum sandbox_status *out)
{
    for (int i = 0; i < SB_STATUS_COUNT; i++) {
        if (strcmp(name, status_names[i]) == 0) {
            *out = (enum sandbox_status)i;
            return 0;
        }
    }
    return -1;
}

int64_t lifecycle_deadline(int64_t now_ms, int64_t timeout_ms)
{
    return timeout_ms == 0 ? 0 : now_ms + timeout_ms;
}

int lifecycle_expired(int64_t deadline_ms, int64_t now_ms)
{
    return deadline_ms != 0 && now_ms >= deadline_ms;
}
