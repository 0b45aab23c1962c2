/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model on its own host thread (model_thread=on, with interleave=block).
 * In deterministic mode QEMU runs every vCPU on one host thread; with
 * model_thread=off the plugin's model runs on it too, inside the
 * callbacks, and the guest waits for every access's model.  The weave holds each quantum window's
 * events anyway (weave.c) and hands them to the model only at the window's
 * end; so the window can be handed to another host thread, which weaves it
 * and runs the model while the vCPU thread goes on with the next window.
 *
 * The ring: `slots` slots, filled in turn, 0, 1, ..., slots - 1, 0, ...
 * `handed` counts the slots the producer handed, `done` those the model
 * thread consumed, both under one mutex.  The producer fills slot handed %
 * slots, which is free while handed - done < slots (the model thread may be
 * consuming the oldest of the others).  The model thread consumes slot done
 * % slots whenever done < handed, in order, one at a time.  One lock and at
 * most one wake-up on each side a window (some 40,000 guest instructions at
 * the default quantum), none per event.
 *
 * Memory order: the producer writes a slot, then takes the lock to count it
 * handed; the model thread takes the lock to see it handed, then reads it.
 * Likewise everything the model wrote while consuming (the counts) comes
 * before it takes the lock to count the slot done, and model_thread_wait
 * returns only after it saw that count: whoever waited (a marker, the
 * report at exit) reads the counts complete.
 *
 * Back-pressure: when every slot is handed and none consumed since, the
 * producer waits in model_thread_hand for the oldest to be consumed.  In
 * QEMU that producer is the vCPU thread inside a block's callback, so the
 * guest (every vCPU: round-robin TCG) pauses until the model has caught up
 * one window: nothing is dropped, and the memory held stays that of the
 * ring's slots.
 *
 * The thread starts at the first slot handed (a run that never enters a
 * region of interest never starts it), with every signal blocked, as
 * QEMU's own threads are, so that no signal meant for the process (QEMU
 * takes SIGINT and SIGTERM through a signalfd, which needs them blocked in
 * every thread) is delivered to it.  It ends at model_thread_end, which the
 * report at exit calls once the last window is consumed; on a failure
 * (fail.c: an allocation or a call that fails, on either thread) it ends
 * with the process.
 *
 * Every pthread call is checked: one that fails stops the run (fail.c).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "fail.h"
#include "model-thread.h"

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;	/* the model thread waits: a slot handed, or the end */
static pthread_cond_t room = PTHREAD_COND_INITIALIZER;	/* the producer waits: a slot consumed */
static uint64_t handed, done;		/* under ring_lock */
static int ending;			/* under ring_lock: model_thread_end was called */
static uint32_t nslots;
static void (*consume_slot)(uint32_t slot);
static pthread_t thread;
static int started;			/* the producer's (and the exit's, once the producer is paused) */

static void lock_ring(void)
{
	checked_call(pthread_mutex_lock(&ring_lock), "pthread_mutex_lock");
}

static void unlock_ring(void)
{
	checked_call(pthread_mutex_unlock(&ring_lock), "pthread_mutex_unlock");
}

static void wait_for(pthread_cond_t *cond)
{
	checked_call(pthread_cond_wait(cond, &ring_lock), "pthread_cond_wait");
}

static void wake(pthread_cond_t *cond)
{
	checked_call(pthread_cond_broadcast(cond), "pthread_cond_broadcast");
}

void model_thread_install(uint32_t slots, void (*consume)(uint32_t slot))
{
	nslots = slots;
	consume_slot = consume;
}

/* The model thread: every slot handed, in order, until the end and nothing
 * left. */
static void *model_thread(void *unused)
{
	(void)unused;
	lock_ring();
	for (;;) {
		while (done == handed && !ending)
			wait_for(&work);
		if (done == handed)
			break;
		uint32_t slot = (uint32_t)(done % nslots);

		unlock_ring();
		consume_slot(slot);
		lock_ring();
		done++;
		wake(&room);
	}
	unlock_ring();
	return NULL;
}

static void start(void)
{
	sigset_t all, before;

	ending = 0;
	sigfillset(&all);
	checked_call(pthread_sigmask(SIG_SETMASK, &all, &before), "pthread_sigmask");
	checked_call(pthread_create(&thread, NULL, model_thread, NULL), "pthread_create");
	checked_call(pthread_sigmask(SIG_SETMASK, &before, NULL), "pthread_sigmask");
	started = 1;
}

uint32_t model_thread_hand(void)
{
	if (__builtin_expect(!started, 0))
		start();
	lock_ring();
	handed++;
	wake(&work);
	while (handed - done >= nslots)
		wait_for(&room);	/* back-pressure: the guest pauses here */
	unlock_ring();
	return (uint32_t)(handed % nslots);
}

void model_thread_wait(void)
{
	if (!started)
		return;
	lock_ring();
	while (done != handed)
		wait_for(&room);
	unlock_ring();
}

void model_thread_end(void)
{
	if (!started)
		return;
	lock_ring();
	ending = 1;
	wake(&work);
	unlock_ring();
	checked_call(pthread_join(thread, NULL), "pthread_join");
	started = 0;
}
