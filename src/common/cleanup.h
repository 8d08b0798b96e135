/* Scope-bound cleanup (GCC/Clang cleanup attribute), so early returns cannot
 * leak: `cleanup_free char *s = strdup(x);` `cleanup_close int fd = open(...);` */
#ifndef LZ_CLEANUP_H
#define LZ_CLEANUP_H

#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <dirent.h>

static inline void cleanup_freep(void *p)
{
    free(*(void **)p);
}
static inline void cleanup_closep(int *fd)
{
    if (*fd >= 0)
        close(*fd);
}
static inline void cleanup_fclosep(FILE **f)
{
    if (*f)
        fclose(*f);
}
static inline void cleanup_closedirp(DIR **d)
{
    if (*d)
        closedir(*d);
}

#define cleanup_free __attribute__((cleanup(cleanup_freep)))
#define cleanup_close __attribute__((cleanup(cleanup_closep)))
#define cleanup_fclose __attribute__((cleanup(cleanup_fclosep)))
#define cleanup_closedir __attribute__((cleanup(cleanup_closedirp)))

/* Hand ownership out of a cleanup variable: return steal_fd(&fd); */
static inline int steal_fd(int *fd)
{
    int r = *fd;
    *fd = -1;
    return r;
}
static inline void *steal_ptr(void *pp)
{
    void **p = pp;
    void *r = *p;
    *p = NULL;
    return r;
}

#endif
