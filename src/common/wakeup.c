#include "wakeup.h"

#include <errno.h>
#include <time.h>

void wakeup_poke(struct wakeup *w)
{
    pthread_mutex_lock(&w->lock);
    w->poked = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

void wakeup_wait_until(struct wakeup *w, int64_t until_ms)
{
    /* pthread_cond_timedwait takes CLOCK_REALTIME, the clock of until_ms. */
    struct timespec ts = {.tv_sec = until_ms / 1000, .tv_nsec = (until_ms % 1000) * 1000000};
    pthread_mutex_lock(&w->lock);
    while (!w->poked) {
        if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) == ETIMEDOUT)
            break;
    }
    w->poked = 0;
    pthread_mutex_unlock(&w->lock);
}
