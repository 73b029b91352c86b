/*
 * key_estimate.h - joins on every column of a multi-column unique key
 * estimated as joins on a declared foreign key (key_estimate.c).
 */
#ifndef GPUHASH_KEY_ESTIMATE_H
#define GPUHASH_KEY_ESTIMATE_H

#pragma GCC visibility push(hidden)

extern bool gpuhash_unique_key_estimates;	/* gpuhash.unique_key_estimates */

extern void gpuhash_key_estimate_init(void);

#pragma GCC visibility pop

#endif
