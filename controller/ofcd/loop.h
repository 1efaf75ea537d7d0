/* Private to controller/ofcd/: ofcd's event loop, after Redis's ae: file events
 * and timers, nothing else. One thread runs it; callbacks run to completion
 * and must not block. Linux only (epoll): the daemon needs SO_PEERCRED and
 * netlink anyway, so there is no second backend to pick.
 *
 * A file event fires when its fd is readable (LOOP_READ) or writable
 * (LOOP_WRITE); the fd has one callback, which gets the mask that fired.
 * A timer callback returns the milliseconds until it should fire again, or
 * LOOP_NOMORE to end. */
#ifndef OFC_CONTROLLER_OFCD_LOOP_H
#define OFC_CONTROLLER_OFCD_LOOP_H

#include <stdint.h>

#include "util/util.h"

#define LOOP_READ   1u
#define LOOP_WRITE  2u
#define LOOP_NOMORE (-1)

struct loop;

typedef void loop_file_fn(struct loop *l, int fd, void *ctx, unsigned mask);
typedef int64_t loop_timer_fn(struct loop *l, uint64_t id, void *ctx);

/* setsize: the largest fd + 1 the loop will watch. */
struct loop *loop_new(int setsize, struct ofc_error *err);
void loop_free(struct loop *l);

/* Watch fd for the events in mask, added to what it already waits for;
 * fn/ctx replace the fd's callback (fn NULL keeps the one it has). -1 when
 * fd >= setsize or epoll fails. */
int loop_add(struct loop *l, int fd, unsigned mask, loop_file_fn *fn, void *ctx);
/* Stop waiting for the events in mask (the callback stays for a later
 * loop_add). Safe to call from a callback, on any fd. */
void loop_del(struct loop *l, int fd, unsigned mask);
unsigned loop_mask(const struct loop *l, int fd);

/* A timer first firing after ms milliseconds. Ids start at 1. */
uint64_t loop_timer(struct loop *l, int64_t ms, loop_timer_fn *fn, void *ctx);
void loop_timer_del(struct loop *l, uint64_t id);

/* Process events until loop_stop(); returns 0, or -1 when epoll fails. */
int loop_run(struct loop *l, struct ofc_error *err);
/* Make loop_run return after the current iteration (from a callback). */
void loop_stop(struct loop *l);

#endif
