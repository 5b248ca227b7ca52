/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Percentiles of a syscall row from its log2 latency histogram
 * (doc/metrics.md, "Syscall latency"): the bucket that holds the rank
 * ceil(q × n), interpolated linearly inside it by the rank's position
 * among the bucket's calls, clamped to the row's maximum. The true value
 * lies in the same bucket [2^b, 2^(b+1)), so the estimate is within a
 * factor of 2 of it whatever the distribution inside the bucket.
 */
#include "syscalls/sc_window.h"

void
sc_hist_bounds(unsigned b, uint64_t *lo, uint64_t *hi)
{
	*lo = b == 0 ? 0 : (uint64_t)1 << b;
	*hi = b + 1 >= SC_HIST_N ? UINT64_MAX : (uint64_t)1 << (b + 1);
}

uint64_t
sc_row_errors(const struct sc_row *r)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < SC_ERR__MAX; i++)
		n += r->errors[i];
	return n;
}

/* lo + (hi − lo) × k / n without overflow for the spans used here */
static uint64_t
interp(uint64_t lo, uint64_t hi, uint64_t k, uint64_t n)
{
	long double span = (long double)(hi - lo);

	return lo + (uint64_t)(span * (long double)k / (long double)n);
}

uint64_t
sc_hist_quantile(const uint64_t hist[SC_HIST_N], uint64_t fast,
    uint64_t floor_ns, uint64_t max_ns, double q)
{
	uint64_t n = fast, cum, rank, lo, hi, v;
	long double x;
	unsigned b;

	for (b = 0; b < SC_HIST_N; b++)
		n += hist[b];
	if (n == 0 || !(q > 0))
		return 0;
	if (q > 1)
		q = 1;
	/* ceil(q × n), a product a rounding above an integer taken as it */
	x = (long double)q * (long double)n;
	rank = (uint64_t)x;
	if (x - (long double)rank > 1e-9L * (x + 1))
		rank++;
	if (rank == 0)
		rank = 1;
	if (rank > n)
		rank = n;
	if (rank <= fast) /* among the calls under the floor */
		return interp(0, floor_ns, rank, fast);
	cum = fast;
	for (b = 0; b < SC_HIST_N; b++) {
		if (hist[b] == 0 || cum + hist[b] < rank) {
			cum += hist[b];
			continue;
		}
		sc_hist_bounds(b, &lo, &hi);
		if (fast && lo < floor_ns)
			lo = floor_ns < hi ? floor_ns : lo;
		if (hi == UINT64_MAX) /* the open bucket ends at the max */
			hi = max_ns > lo ? max_ns : lo;
		v = interp(lo, hi, rank - cum, hist[b]);
		if (max_ns && v > max_ns)
			v = max_ns;
		return v;
	}
	return max_ns; /* not reached: rank <= n */
}
