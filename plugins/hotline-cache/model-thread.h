/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model on its own host thread (model-thread.c): a ring of a few
 * slots that one thread (the producer: QEMU's vCPU thread, in round-robin
 * TCG) fills in turn and hands over in order, and a thread of the plugin's
 * own (the model thread) that consumes them in that order.  What a slot
 * holds is its user's (weave.c: a quantum window's held events).
 */
#ifndef HOTLINE_CACHE_MODEL_THREAD_H
#define HOTLINE_CACHE_MODEL_THREAD_H

#include <stdint.h>

/* A ring of `slots` slots (at least 2), each consumed on the model thread
 * by consume(slot), in the order they were handed.  The producer fills
 * slot 0 first.  The thread starts at the first slot handed. */
void model_thread_install(uint32_t slots, void (*consume)(uint32_t slot));

/* The producer hands the slot it filled (0, 1, ..., slots - 1, 0, ...) and
 * gets the next one to fill, once the model thread has consumed what it
 * held before: while every slot is handed and not yet consumed, the
 * producer waits (back-pressure; in QEMU the guest pauses). */
uint32_t model_thread_hand(void);

/* Waits until the model thread has consumed every slot handed. */
void model_thread_wait(void);

/* At the end: waits as model_thread_wait, then ends the model thread and
 * joins it.  Nothing if it never started. */
void model_thread_end(void);

#endif /* HOTLINE_CACHE_MODEL_THREAD_H */
