/* The sandbox state machine, pure (unit tested):
 *
 *   creating ──created──▶ running ──pause──▶ pausing ──paused──▶ paused
 *      │                    ▲  ◀──pause_failed──┘                    │
 *      │                    └──resumed── resuming ◀──resume──────────┘
 *      │                       (resume_failed: back to paused)
 *      │                    │
 *   create_failed      kill/expire/died
 *      ▼                    ▼
 *   stopped ◀──destroyed── stopping
 *
 * Stopped sandboxes are deleted from the store, so "stopped" is never
 * listed; a row in "creating" or "stopping" after a restart means lizardd
 * died mid-way, and recovery finishes the job (destroy + delete).
 *
 * Warm pools (snapshots): pooling ──created──▶ pooled ──handout──▶ running.
 * Pool rows are not the users' sandboxes: not listed, not counted toward
 * caps, no deadline. */
#ifndef LZ_LIFECYCLE_H
#define LZ_LIFECYCLE_H

#include <stdint.h>

enum sandbox_status {
    SB_CREATING,
    SB_RUNNING,
    SB_PAUSING,
    SB_PAUSED,
    SB_RESUMING,
    SB_STOPPING,
    SB_STOPPED,
    SB_POOLING,
    SB_POOLED,
    SB_STATUS_COUNT
};

enum sandbox_event {
    EV_CREATED,
    EV_CREATE_FAILED,
    EV_KILL, /* DELETE, expiry, or the sandbox's PID 1 died */
    EV_DESTROYED,
    EV_PAUSE,
    EV_PAUSED,
    EV_PAUSE_FAILED,
    EV_RESUME,
    EV_RESUMED,
    EV_RESUME_FAILED,
    EV_HANDOUT, /* a pooled copy becomes a user's sandbox (restore) */
};

/* Returns 0 and *next, or -1 when the event is not allowed in that state
 * (the API answers 409). */
int lifecycle_next(enum sandbox_status from, enum sandbox_event ev, enum sandbox_status *next);
const char *lifecycle_status_name(enum sandbox_status s);
/* Returns -1 for an unknown name. */
int lifecycle_status_parse(const char *name, enum sandbox_status *out);

/* Deadline for a lifetime of timeout_ms from now_ms; 0 (no expiry) for 0. */
int64_t lifecycle_deadline(int64_t now_ms, int64_t timeout_ms);
/* 1 when a sandbox with this deadline must stop at now_ms (never before). */
int lifecycle_expired(int64_t deadline_ms, int64_t now_ms);

#endif
