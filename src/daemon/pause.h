/* Pause and resume (queued), waiting for a status, and the per-sandbox
 * operation lock that keeps pause, resume and snapshot of one sandbox from
 * interleaving. See docs/pause-snapshots.md. */
#ifndef LZ_PAUSE_H
#define LZ_PAUSE_H

#include <jansson.h>
#include "daemon.h"
#include "sandboxes.h"

/* Wake every waiter of sandbox_wait_status: call after any status change. */
void sandboxes_status_changed(void);

/* One runtime operation at a time per sandbox (pause, resume, snapshot). */
void sandbox_op_lock(const char *id);
void sandbox_op_unlock(const char *id);

/* Queue a pause (resume = 0) or resume of sandbox r: the status moves to
 * pausing/resuming now and a worker thread does the rest. 409 when r is
 * not running (pause) or paused (resume). */
int sandbox_pause_request(struct lizardd *d, const struct sandbox_record *r, int resume,
                          struct api_failure *fail);

/* Wait until sandbox id has status `want`, a pause/resume failed, it is
 * gone, or timeout_ms passed. Returns the answer of GET .../status
 * ({status, reached, error}), or NULL when the sandbox is gone. */
json_t *sandbox_wait_status(struct lizardd *d, const char *id, const char *want,
                            int64_t timeout_ms);

/* The status a paused sandbox's lifetime is shown with: expires_ms while
 * running, now + the frozen remainder while paused. */
int64_t sandbox_shown_deadline(const struct sandbox_record *r);

/* At start-up, before the lifecycle thread: a "pausing" row is rolled back
 * to running (thawed), a "resuming" row is finished (thawed, running). */
void pause_recover(struct lizardd *d);

#endif
