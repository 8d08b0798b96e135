/* A wake-up point for a background thread: it sleeps until a deadline or
 * until another thread pokes it, whichever comes first. Pokes that arrive
 * while it is awake are not lost (the next wait returns at once). */
#ifndef LZ_WAKEUP_H
#define LZ_WAKEUP_H

#include <pthread.h>
#include <stdint.h>

struct wakeup {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int poked;
};

#define WAKEUP_INIT                                                                                \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0                                     \
    }

void wakeup_poke(struct wakeup *w);
/* Sleep until wall-clock time until_ms (Unix ms) or a poke. */
void wakeup_wait_until(struct wakeup *w, int64_t until_ms);

#endif
